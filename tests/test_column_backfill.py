"""Column backfill (issue 15, data evolution): LanceTable.merge / add_columns(df, on=...)
add columns computed in Spark to an existing table, one new data file per fragment, as
pylance's ``merge(data, left_on, right_on)`` does on a twin — the same schema and field ids,
rows, data files per fragment, version metadata and operation; pylance keeps appending,
deleting, indexing and compacting the result as its own."""

from __future__ import annotations

import os

import lance
import pyarrow as pa
import pytest
from pyspark.sql.types import (
    ArrayType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from spark_lance import LanceTable
from support import TWIN_PARAMS, make_twins, twin_id

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("v", pa.string())])

NEW_ARROW = pa.schema(
    [
        pa.field("key", pa.int64()),
        pa.field("score", pa.float64()),
        pa.field("tag", pa.string()),
        pa.field("st", pa.struct([pa.field("a", pa.int32()), pa.field("b", pa.string())])),
        pa.field("xs", pa.list_(pa.int64())),
    ]
)
NEW_SPARK = StructType(
    [
        StructField("key", LongType()),
        StructField("score", DoubleType()),
        StructField("tag", StringType()),
        StructField(
            "st", StructType([StructField("a", IntegerType()), StructField("b", StringType())])
        ),
        StructField("xs", ArrayType(LongType())),
    ]
)


def data(start, count):
    ids = list(range(start, start + count))
    return pa.table({"id": ids, "v": [f"r{i}" for i in ids]}, schema=SCHEMA)


def make(path, version, stable):
    """Three fragments by pylance (an appended one among them), deleted rows in two."""
    lance.write_dataset(
        data(0, 250),
        path,
        max_rows_per_file=100,
        data_storage_version=version,
        enable_stable_row_ids=stable,
    )
    lance.write_dataset(data(250, 50), path, mode="append")
    lance.dataset(path).delete("id % 37 = 5 or id = 120")


@pytest.fixture(params=TWIN_PARAMS, ids=twin_id)
def twins(request, tmp_path):
    return make_twins(tmp_path, make, *request.param)


def source_rows(keys):
    """New values for `keys`: nulls, nested values and empty lists among them."""
    return [
        (
            k,
            None if k % 11 == 0 else k / 4,
            f"t{k}" if k % 3 else None,
            None if k % 13 == 0 else {"a": k % 7, "b": f"b{k}"},
            [] if k % 5 == 0 else list(range(k % 4)),
        )
        for k in keys
    ]


def both(spark, rows, key="key", table=None):
    """The source as a Spark DataFrame and as an Arrow table. Lance 2.0 stores no null
    structs (pylance's merge refuses them there too): on a 2.0 `table`, no struct column."""
    arrow = pa.Table.from_pylist([dict(zip(NEW_ARROW.names, r)) for r in rows], NEW_ARROW)
    df = spark.createDataFrame(rows, NEW_SPARK)
    if table and lance.dataset(table).data_storage_version == "2.0":
        arrow, df = arrow.drop_columns(["st"]), df.drop("st")
    if key != "key":
        arrow = arrow.rename_columns([key if n == "key" else n for n in arrow.column_names])
        df = df.withColumnRenamed("key", key)
    return df, arrow


def view(path):
    """What pylance reads of a dataset; validate() must pass."""
    ds = lance.dataset(path)
    ds.validate()
    t = ds.to_table(
        with_row_id=True,
        columns=ds.schema.names + ["_row_created_at_version", "_row_last_updated_at_version"],
    )

    def fields(f):
        return (f.name(), f.id(), [fields(c) for c in f.children()])

    return {
        "schema": str(pa.schema([f.remove_metadata() for f in ds.schema])),
        "fields": [fields(f) for f in ds.lance_schema.fields()],
        "rows": sorted(t.to_pylist(), key=lambda r: r["id"]),
        "fragments": [
            (
                f.metadata.id,
                f.metadata.physical_rows,
                [
                    (sorted(x.fields), x.file_major_version, x.file_minor_version)
                    for x in f.metadata.files
                ],
                f.metadata.deletion_file is not None,
            )
            for f in ds.get_fragments()
        ],
        "operation": type(ds.read_transaction(ds.version).operation).__name__,
        "version": ds.version,
    }


def keep_going(path):
    """pylance appends, deletes, compacts and indexes (in that order: pylance 14 cannot read
    back its own Rewrite transaction once it remapped an index)."""
    lance.write_dataset(lance.dataset(path).to_table(filter="id < 30"), path, mode="append")
    lance.dataset(path).delete("id = 7")
    lance.dataset(path).optimize.compact_files()
    lance.dataset(path).create_scalar_index("id", "BTREE")


def test_merge_on_a_column_as_pylance_merges(spark, twins):
    ours, theirs = twins
    # Keys matching some rows (deleted ones among them), others matching none.
    df, arrow = both(spark, source_rows(list(range(3, 320, 2))), table=ours)
    LanceTable(spark, ours).merge(df, "id", "key")
    lance.dataset(theirs).merge(arrow, left_on="id", right_on="key")
    assert view(ours) == view(theirs)
    rows = sorted(
        (r.asDict(recursive=True) for r in spark.read.format("lance").load(ours).collect()),
        key=lambda r: r["id"],
    )
    assert rows == sorted(lance.dataset(ours).to_table().to_pylist(), key=lambda r: r["id"])
    for p in (ours, theirs):
        keep_going(p)
    assert view(ours) == view(theirs)


def test_add_columns_with_a_dataframe_and_the_same_key_name(spark, twins):
    ours, theirs = twins
    df, arrow = both(spark, source_rows(range(0, 300, 3)), key="id", table=ours)
    LanceTable(spark, ours).add_columns(df, on="id")
    lance.dataset(theirs).merge(arrow, left_on="id")
    assert view(ours) == view(theirs)


def test_a_source_matching_no_row_adds_null_columns_as_pylance(spark, twins):
    ours, theirs = twins
    df, arrow = both(spark, source_rows(range(1000, 1010)), table=ours)
    LanceTable(spark, ours).merge(df, "id", "key")
    lance.dataset(theirs).merge(arrow, left_on="id", right_on="key")
    assert view(ours) == view(theirs)


@pytest.mark.parametrize("meta", ["_rowaddr", "_rowid"])
def test_merge_on_row_addresses_and_row_ids(spark, twins, meta):
    ours, theirs = twins
    t = lance.dataset(theirs).to_table(
        columns=["id"], with_row_id=True, with_row_address=True, filter="id % 4 = 1"
    )
    keys = t.column(meta).to_pylist()
    rows = [(k,) + r[1:] for k, r in zip(keys, source_rows(t.column("id").to_pylist()))]
    df, arrow = both(spark, rows, key=meta, table=ours)
    arrow = arrow.set_column(0, meta, pa.array(keys, pa.uint64()))
    LanceTable(spark, ours).merge(df, meta)
    lance.dataset(theirs).merge(arrow, left_on=meta)
    assert view(ours) == view(theirs)


def files_under(path):
    return sorted(
        os.path.relpath(os.path.join(d, f), path) for d, _, fs in os.walk(path) for f in fs
    )


def test_a_row_matched_twice_fails_and_leaves_nothing(spark, twins):
    ours, _ = twins
    before = files_under(ours)
    df, _ = both(spark, source_rows([4, 8, 8, 12]))
    with pytest.raises(Exception, match="several source rows match"):
        LanceTable(spark, ours).merge(df, "id", "key")
    assert files_under(ours) == before
    assert lance.dataset(ours).version == 3


@pytest.mark.parametrize(
    "left,right,words",
    [
        ("nope", "key", ["no top-level column 'nope'"]),
        ("id", "nope", ["no key column 'nope'"]),
        ("_fragid", "key", ["'_fragid' does not identify a row"]),
        ("id", None, ["no key column 'id'"]),
    ],
)
def test_bad_keys_are_refused_naming_them(spark, twins, left, right, words):
    ours, _ = twins
    df, _ = both(spark, source_rows([1, 2]))
    with pytest.raises(Exception) as e:
        LanceTable(spark, ours).merge(df, left, right)
    for w in words:
        assert w in str(e.value)
    assert lance.dataset(ours).version == 3


def test_existing_columns_and_empty_sources_are_refused(spark, twins):
    ours, _ = twins
    t = LanceTable(spark, ours)
    df, _ = both(spark, source_rows([1, 2]))
    with pytest.raises(Exception, match="'V' already exist and 'score', 'st', 'xs' do not"):
        t.merge(df.withColumnRenamed("tag", "V"), "id", "key")
    with pytest.raises(Exception, match="fragment 0 stores them with other columns"):
        t.merge(df.select("key", "tag").withColumnRenamed("tag", "v"), "id", "key")
    with pytest.raises(Exception, match="no column besides the key"):
        t.merge(df.select("key"), "id", "key")
    with pytest.raises(ValueError, match="on="):
        t.add_columns(df)
    assert lance.dataset(ours).version == 3


def test_null_structs_on_lance_2_0_fail_as_pylance_and_leave_nothing(spark, tmp_path):
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    for p in (ours, theirs):
        make(p, "2.0", False)
    before = files_under(ours)
    df, arrow = both(spark, source_rows([4, 8]))
    with pytest.raises(Exception, match="null structs"):
        LanceTable(spark, ours).merge(df, "id", "key")
    with pytest.raises(OSError, match="null values"):
        lance.dataset(theirs).merge(arrow, left_on="id", right_on="key")
    assert files_under(ours) == before
    assert lance.dataset(ours).version == lance.dataset(theirs).version == 3


def test_embeddings_backfilled_as_vectors_as_pylance(spark, tmp_path):
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    for p in (ours, theirs):
        make(p, "2.2", False)
    keys = list(range(0, 300, 2))
    embs = [[k / 10, -k / 10, 1.0] for k in keys]
    df = spark.createDataFrame(list(zip(keys, embs)), "id long, emb array<float>")
    LanceTable(spark, ours).add_columns(df, on="id", vector_columns="emb:3")
    arrow = pa.table(
        {"id": pa.array(keys, pa.int64()), "emb": pa.array(embs, pa.list_(pa.float32(), 3))}
    )
    lance.dataset(theirs).merge(arrow, left_on="id")
    assert view(ours) == view(theirs)
    assert str(lance.dataset(ours).schema.field("emb").type) == "fixed_size_list<item: float>[3]"


def test_columns_added_without_values_are_filled_in_place(spark, twins):
    """ALTER TABLE ADD COLUMNS, then a backfill of those columns: a DataReplacement that
    leaves the table pylance's merge of the same values makes (but the operation and the
    row versions); a second backfill replaces the values."""
    ours, theirs = twins
    df, arrow = both(spark, source_rows(range(0, 300, 3)), key="id", table=ours)
    df = df.select("id", "score", "tag")
    LanceTable(spark, ours).add_columns({"score": "double", "tag": "string"})
    LanceTable(spark, ours).add_columns(df, on="id")
    lance.dataset(theirs).merge(arrow.select(["id", "score", "tag"]), left_on="id")

    def same(v):
        v = dict(v)
        v["rows"] = [{k: x for k, x in r.items() if not k.startswith("_row_")} for r in v["rows"]]
        return {k: v[k] for k in ("schema", "fields", "rows", "fragments")}

    assert same(view(ours)) == same(view(theirs))
    assert view(ours)["operation"] == "DataReplacement"
    again = spark.createDataFrame([(3, 0.5, "again")], "id long, score double, tag string")
    LanceTable(spark, ours).add_columns(again, on="id")
    got = {r["id"]: (r["score"], r["tag"]) for r in lance.dataset(ours).to_table().to_pylist()}
    assert got[3] == (0.5, "again") and got[6] == (None, None)
    keep_going(ours)
    assert view(ours)["rows"]
