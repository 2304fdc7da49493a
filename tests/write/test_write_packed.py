"""Spark writes packed struct columns (``lance-encoding:packed``) as pylance 14.0.2 writes them.

A struct field whose Spark metadata says ``lance-encoding:packed`` = "true" is one column of
row-wise packed children: 2.0 ``PackedStruct`` pages, 2.1/2.2 mini-block pages compressed with
``PackedStruct(Flat)``. The same rows are written by pylance (the reference, with the Arrow
schema our dataset ends up with) and by Spark, then:
  * pylance reads our dataset value by value as it reads its own;
  * every page of our file has exactly the encoding pylance's page has (layout, compression,
    child bit widths, levels), and the fragments list the same fields / column indices;
  * the Lance schema keeps ``lance-encoding:packed``;
  * pylance appends to / deletes from our dataset and Spark reads the result as pylance does;
  * Spark appends to a pylance packed dataset, and read-then-overwrite keeps the column packed.
What pylance refuses (booleans, strings before 2.2, null children, null structs in 2.0) fails
with an error naming the column. In 2.2, string and binary children make the column a
``VariablePackedStruct`` full-zip column, each string child compressed per page as pylance
compresses it (plain, FSST, or zstd per value).
"""

import datetime
import decimal
import glob
import os
import re

import lance
import pyarrow as pa
import pytest
from lance.file import LanceFileReader
from pyspark.sql import types as T

from helpers import lance_rows, spark_rows
from support import short_error

PACKED = {"lance-encoding:packed": "true"}
FORMATS = ["2.0", "2.1", "2.2"]
N = 3000

CHILDREN = T.StructType(
    [
        T.StructField("i", T.IntegerType()),
        T.StructField("l", T.LongType()),
        T.StructField("f", T.FloatType()),
        T.StructField("d", T.DoubleType()),
        T.StructField("day", T.DateType()),
        T.StructField("ts", T.TimestampType()),
        T.StructField("dec", T.DecimalType(12, 3)),
        T.StructField("s", T.ShortType()),
        T.StructField("b", T.ByteType()),
    ]
)
SMALL = T.StructType([T.StructField("x", T.IntegerType()), T.StructField("y", T.IntegerType())])


def schema(meta=PACKED):
    return T.StructType(
        [
            T.StructField("id", T.LongType(), False),
            T.StructField("p", CHILDREN, True, metadata=meta),
            T.StructField("q", SMALL, True, metadata=meta),
            T.StructField(
                "o",
                T.StructType(
                    [
                        T.StructField("z", T.IntegerType()),
                        T.StructField("inner", SMALL, True, metadata=meta),
                    ]
                ),
                True,
            ),
        ]
    )


def rows(start, n, null_structs):
    def null(i, k):
        return null_structs and i % k == 0

    t0 = datetime.datetime(2021, 3, 4, 5, 6, 7, tzinfo=datetime.timezone.utc)
    out = []
    for i in range(start, start + n):
        p = (
            None
            if null(i, 7)
            else (
                i * 3 - 1000,
                i * 1_000_003,
                i / 8,
                i * 1.25,
                datetime.date(2000, 1, 1) + datetime.timedelta(days=i),
                t0 + datetime.timedelta(seconds=i * 37),
                decimal.Decimal(i * 7 - 500) / 1000,
                i % 3000 - 1500,
                i % 256 - 128,
            )
        )
        q = None if null(i, 5) else (i % 11, 7)
        inner = None if null(i, 3) else (i, -i)
        out.append((i, p, q, (i % 4, inner)))
    return out


def spark_write(spark, path, data, fmt=None, mode="errorifexists", meta=PACKED):
    w = spark.createDataFrame(data, schema(meta)).coalesce(1).write.format("lance").mode(mode)
    if fmt:
        w = w.option("data_storage_version", fmt)
    w.save(str(path))


def as_arrow(data, arrow_schema):
    names = [f.name for f in arrow_schema]

    def conv(v, t):
        if v is None:
            return None
        if pa.types.is_struct(t):
            return {t.field(k).name: conv(v[k], t.field(k).type) for k in range(t.num_fields)}
        return v

    return pa.Table.from_pylist(
        [{n: conv(r[k], arrow_schema.field(n).type) for k, n in enumerate(names)} for r in data],
        schema=arrow_schema,
    )


def page_encodings(path):
    """Per data file, per column, every page's encoding as pylance prints it (row counts removed)."""
    out = []
    for f in sorted(glob.glob(os.path.join(str(path), "data", "*.lance"))):
        md = LanceFileReader(f).metadata()
        out.append(
            [
                [
                    re.sub(
                        r"num_(items|visible_items|values|rep_values|def_values): \d+",
                        "",
                        re.sub(r"\s+", " ", str(p.encoding)),
                    )
                    for p in c.pages
                ]
                for c in md.columns
            ]
        )
    return out


def layout(ds):
    return [
        (list(df.fields), list(df.column_indices))
        for fr in ds.get_fragments()
        for df in fr.metadata.files
    ]


def packed_field_names(arrow_schema):
    out = []

    def walk(f, prefix):
        if (f.metadata or {}).get(b"lance-encoding:packed") == b"true":
            out.append(prefix + f.name)
        if pa.types.is_struct(f.type):
            for k in range(f.type.num_fields):
                walk(f.type.field(k), prefix + f.name + ".")

    for f in arrow_schema:
        walk(f, "")
    return out


def assert_packed_page(encs, version):
    flat = " ".join(p for f in encs for c in f for p in c)
    assert "PackedStruct" in flat, f"no packed struct page in a {version} file"


@pytest.mark.parametrize("version", FORMATS)
def test_spark_packed_write_matches_pylance(spark, tmp_path, version):
    data = rows(0, N, null_structs=version != "2.0")
    sp, pl = tmp_path / "spark", tmp_path / "pylance"
    spark_write(spark, sp, data, version)
    ours = lance.dataset(str(sp))
    assert packed_field_names(ours.schema) == ["p", "q", "o.inner"]
    ref = lance.write_dataset(as_arrow(data, ours.schema), str(pl), data_storage_version=version)
    assert lance_rows(ours.to_table()) == lance_rows(ref.to_table())
    assert lance_rows(ours.to_table()) == lance_rows(as_arrow(data, ours.schema))
    assert layout(ours) == layout(ref)
    assert page_encodings(sp) == page_encodings(pl)
    assert_packed_page(page_encodings(sp), version)
    ours.validate()
    assert spark_rows(spark.read.format("lance").load(str(sp))) == lance_rows(ref.to_table())


@pytest.mark.parametrize("version", FORMATS)
def test_pylance_appends_and_deletes_on_spark_packed_dataset(spark, tmp_path, version):
    nulls = version != "2.0"
    sp = tmp_path / "spark"
    spark_write(spark, sp, rows(0, 500, nulls), version)
    ds = lance.dataset(str(sp))
    ds = lance.write_dataset(as_arrow(rows(500, 300, nulls), ds.schema), str(sp), mode="append")
    ds.delete("id % 10 = 3")
    ds = lance.dataset(str(sp))
    assert ds.count_rows() == 800 - 80
    assert spark_rows(spark.read.format("lance").load(str(sp))) == lance_rows(ds.to_table())
    # Spark appends after pylance: the dataset's Lance schema keeps the columns packed.
    spark_write(spark, sp, rows(800, 200, nulls), mode="append", meta=None)
    ds = lance.dataset(str(sp))
    assert packed_field_names(ds.schema) == ["p", "q", "o.inner"]
    encs = page_encodings(sp)
    assert len(encs) == 3 and _same_kinds(encs[2], encs[0])
    assert_packed_page([encs[2]], version)
    assert spark_rows(spark.read.format("lance").load(str(sp))) == lance_rows(ds.to_table())
    assert lance_rows(ds.to_table()) == lance_rows(
        as_arrow([r for r in rows(0, 1000, nulls) if r[0] % 10 != 3 or r[0] >= 800], ds.schema)
    )


def _same_kinds(a, b):
    """Pages of two files choose the same encodings (chunk-independent parts of the dump)."""

    def kinds(f):
        pattern = r"[A-Z][A-Za-z]+(?=\()|bits_per_value: \[[^\]]*\]"
        return [[re.findall(pattern, p) for p in c] for c in f]

    return kinds(a) == kinds(b)


@pytest.mark.parametrize("version", FORMATS)
def test_spark_appends_to_and_overwrites_pylance_packed_dataset(spark, tmp_path, version):
    nulls = version != "2.0"
    tmpl = tmp_path / "template"
    spark_write(spark, tmpl, rows(0, 10, nulls), version)
    arrow_schema = lance.dataset(str(tmpl)).schema
    pl = tmp_path / "pylance"
    lance.write_dataset(
        as_arrow(rows(0, 700, nulls), arrow_schema), str(pl), data_storage_version=version
    )
    ref_encs = page_encodings(pl)
    assert_packed_page(ref_encs, version)
    # Append: the DataFrame carries no metadata, the dataset's schema says packed.
    spark_write(spark, pl, rows(700, 700, nulls), mode="append", meta=None)
    ds = lance.dataset(str(pl))
    encs = page_encodings(pl)
    assert len(encs) == 2 and encs[1] == encs[0]
    assert lance_rows(ds.to_table()) == lance_rows(as_arrow(rows(0, 1400, nulls), arrow_schema))
    # Read-then-overwrite keeps the column packed.
    out = tmp_path / "copy"
    # One task, so the copy is one file as pylance writes it.
    spark.read.format("lance").load(str(pl)).coalesce(1).write.format("lance").option(
        "data_storage_version", version
    ).save(str(out))
    copy = lance.dataset(str(out))
    assert packed_field_names(copy.schema) == ["p", "q", "o.inner"]
    assert lance_rows(copy.to_table()) == lance_rows(ds.to_table())
    # ...with the pages pylance writes for the same 1400 rows.
    same = lance.write_dataset(
        as_arrow(rows(0, 1400, nulls), arrow_schema),
        str(tmp_path / "same"),
        data_storage_version=version,
    )
    assert page_encodings(out) == page_encodings(tmp_path / "same")
    assert layout(copy) == layout(same)


def _refused(spark, path, struct, value, version, *, expect):
    sch = T.StructType(
        [
            T.StructField("id", T.LongType(), False),
            T.StructField("bad", struct, True, metadata=PACKED),
        ]
    )
    with pytest.raises(Exception) as e:
        spark.createDataFrame([(0, value), (1, value)], sch).write.format("lance").option(
            "data_storage_version", version
        ).save(str(path))
    msg = short_error(e.value, 4000)
    assert "'bad'" in msg and expect in msg, msg
    assert (
        not os.path.exists(os.path.join(str(path), "_versions"))
        or lance.dataset(str(path)).count_rows() == 0
    )


@pytest.mark.parametrize("version", FORMATS)
def test_what_pylance_refuses_is_refused_naming_the_column(spark, tmp_path, version):
    _refused(
        spark,
        tmp_path / "bool",
        T.StructType([T.StructField("a", T.IntegerType()), T.StructField("flag", T.BooleanType())]),
        (1, True),
        version,
        expect="boolean",
    )
    _refused(spark, tmp_path / "nullchild", SMALL, (1, None), version, expect="null")
    _refused(
        spark,
        tmp_path / "list",
        T.StructType([T.StructField("a", T.ArrayType(T.IntegerType()))]),
        ([1],),
        version,
        expect="fixed-width",
    )
    # pylance refuses strings before 2.2 (2.2 writes them as a VariablePackedStruct, below).
    if version != "2.2":
        _refused(
            spark,
            tmp_path / "str",
            T.StructType([T.StructField("a", T.StringType())]),
            ("x",),
            version,
            expect="variable",
        )
    _refused(
        spark,
        tmp_path / "nullstr",
        T.StructType([T.StructField("a", T.StringType())]),
        (None,),
        version,
        expect="null" if version == "2.2" else "variable",
    )
    if version == "2.0":
        sch = T.StructType(
            [
                T.StructField("id", T.LongType(), False),
                T.StructField("bad", SMALL, True, metadata=PACKED),
            ]
        )
        with pytest.raises(Exception) as e:
            spark.createDataFrame([(0, None)], sch).write.format("lance").option(
                "data_storage_version", "2.0"
            ).save(str(tmp_path / "nullstruct"))
        assert "'bad'" in short_error(e.value, 4000)


@pytest.mark.parametrize("version", FORMATS)
def test_pylance_refuses_the_same_inputs(tmp_path, version):
    """The refusals above mirror pylance's own: it fails on the same packed structs, when writing
    or (booleans in 2.1/2.2: it writes a file it cannot decode) when reading back."""

    def fails(name, arr):
        t = pa.Table.from_arrays(
            [arr], schema=pa.schema([pa.field("bad", arr.type, metadata=PACKED)])
        )
        with pytest.raises(BaseException):
            lance.write_dataset(t, str(tmp_path / name), data_storage_version=version).to_table()

    fails(
        "bool",
        pa.StructArray.from_arrays(
            [pa.array([1, 2], pa.int32()), pa.array([True, False])], ["a", "flag"]
        ),
    )
    fails(
        "nullchild",
        pa.StructArray.from_arrays(
            [pa.array([1, None], pa.int32()), pa.array([1, 2], pa.int32())], ["x", "y"]
        ),
    )
    if version != "2.2":
        fails("str", pa.StructArray.from_arrays([pa.array(["x", "y"])], ["a"]))
    fails("nullstr", pa.StructArray.from_arrays([pa.array(["x", None])], ["a"]))


def test_packed_on_a_non_struct_column_is_ignored_as_pylance_does(spark, tmp_path):
    sch = T.StructType(
        [
            T.StructField("id", T.LongType(), False),
            T.StructField("v", T.IntegerType(), True, metadata=PACKED),
        ]
    )
    spark.createDataFrame([(i, i * 2) for i in range(50)], sch).coalesce(1).write.format(
        "lance"
    ).save(str(tmp_path / "sp"))
    t = pa.table(
        {
            "id": pa.array(range(50), pa.int64()),
            "v": pa.array([i * 2 for i in range(50)], pa.int32()),
        }
    )
    t = t.cast(
        pa.schema(
            [pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.int32(), metadata=PACKED)]
        )
    )
    lance.write_dataset(t, str(tmp_path / "pl"))
    assert page_encodings(tmp_path / "sp") == page_encodings(tmp_path / "pl")
    assert lance_rows(lance.dataset(str(tmp_path / "sp")).to_table()) == lance_rows(t)


VAR_CHILDREN = T.StructType(
    [
        T.StructField("i", T.IntegerType()),
        T.StructField("s", T.StringType()),
        T.StructField("b", T.BinaryType()),
        T.StructField("l", T.LongType()),
    ]
)


def var_rows(start, n, kind):
    """Rows of (id, p): p null every 6th row; its strings short, FSST-sized text, or long."""

    def text(i):
        if kind == "short":
            return f"s{i % 13}" * (i % 3)
        if kind == "fsst":
            return f"the quick brown fox {i % 97} jumps over the lazy dog {i}"
        return ("lorem ipsum dolor " * 2200)[: 33_000 + i % 50]

    return [
        (
            i,
            None
            if i % 6 == 0
            else (i * 7 - 50, text(i), bytes([i % 256]) * (i % 4), i * 1_000_003),
        )
        for i in range(start, start + n)
    ]


def var_write(spark, path, data, mode="errorifexists", meta=PACKED, fmt="2.2"):
    sch = T.StructType(
        [
            T.StructField("id", T.LongType(), False),
            T.StructField("p", VAR_CHILDREN, True, metadata=meta),
        ]
    )
    w = spark.createDataFrame(data, sch).coalesce(1).write.format("lance").mode(mode)
    if fmt:
        w = w.option("data_storage_version", fmt)
    w.save(str(path))


@pytest.mark.parametrize("kind,n", [("short", 3000), ("fsst", 3000), ("long", 12)])
def test_spark_variable_packed_write_matches_pylance(spark, tmp_path, kind, n):
    data = var_rows(0, n, kind)
    sp, pl = tmp_path / "spark", tmp_path / "pylance"
    var_write(spark, sp, data)
    ours = lance.dataset(str(sp))
    assert packed_field_names(ours.schema) == ["p"]
    ref = lance.write_dataset(as_arrow(data, ours.schema), str(pl), data_storage_version="2.2")
    assert lance_rows(ours.to_table()) == lance_rows(ref.to_table())
    encs = page_encodings(sp)
    assert "VariablePackedStruct" in " ".join(encs[0][1])
    # The same encodings, FSST's symbol tables aside (this connector trains its own).
    assert _without_symbols(encs) == _without_symbols(page_encodings(pl))
    assert layout(ours) == layout(ref)
    ours.validate()
    assert spark_rows(spark.read.format("lance").load(str(sp))) == lance_rows(ref.to_table())


def _without_symbols(encs):
    return [
        [[re.sub(r'symbol_table: b"(?:[^"\\]|\\.)*"', "symbol_table", p) for p in c] for c in f]
        for f in encs
    ]


def test_variable_packed_appends_both_ways(spark, tmp_path):
    """pylance appends to and deletes from Spark's variable packed dataset, Spark appends to
    pylance's (the DataFrame without metadata: the dataset says packed), and each reads all."""
    sp, pl = tmp_path / "spark", tmp_path / "pylance"
    var_write(spark, sp, var_rows(0, 400, "short"))
    schema_ = lance.dataset(str(sp)).schema
    ds = lance.write_dataset(as_arrow(var_rows(400, 300, "fsst"), schema_), str(sp), mode="append")
    ds.delete("id % 10 = 3")
    var_write(spark, sp, var_rows(700, 300, "short"), mode="append", meta=None, fmt=None)
    ds = lance.dataset(str(sp))
    expected = [r for r in var_rows(0, 400, "short") + var_rows(400, 300, "fsst") if r[0] % 10 != 3]
    expected += var_rows(700, 300, "short")
    assert lance_rows(ds.to_table()) == lance_rows(as_arrow(expected, schema_))
    assert spark_rows(spark.read.format("lance").load(str(sp))) == lance_rows(ds.to_table())
    ds.validate()
    lance.write_dataset(
        as_arrow(var_rows(0, 500, "fsst"), schema_), str(pl), data_storage_version="2.2"
    )
    var_write(spark, pl, var_rows(500, 500, "fsst"), mode="append", meta=None, fmt=None)
    encs = page_encodings(pl)
    assert len(encs) == 2 and _same_kinds(encs[1], encs[0])
    ds = lance.dataset(str(pl))
    assert lance_rows(ds.to_table()) == lance_rows(as_arrow(var_rows(0, 1000, "fsst"), schema_))
    assert spark_rows(spark.read.format("lance").load(str(pl))) == lance_rows(ds.to_table())
