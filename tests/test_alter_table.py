"""ALTER TABLE on Lance tables (io.sparklance.spark.LanceCatalog, path identifiers and the
session catalog): each change is the Lance transaction pylance commits for it, and every
expected value is what pylance reports for its own change of a twin dataset."""

from __future__ import annotations

import itertools

import lance
import pyarrow as pa
import pytest

from support import lance_catalog as catalog

_names = itertools.count()

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("n", pa.int64()),
        pa.field("v", pa.string()),
        pa.field("s", pa.struct([pa.field("a", pa.int32()), pa.field("b", pa.string())])),
    ]
)


def data(start, count):
    ids = list(range(start, start + count))
    return pa.table(
        {
            "id": ids,
            "n": [i * 10 for i in ids],
            "v": [f"r{i}" for i in ids],
            "s": [{"a": i % 7, "b": f"b{i}"} for i in ids],
        },
        schema=SCHEMA,
    )


@pytest.fixture
def twins(tmp_path):
    """Two identical pylance datasets: two fragments of 10 rows, a deleted row."""
    paths = str(tmp_path / "ours"), str(tmp_path / "theirs")
    for p in paths:
        lance.write_dataset(data(0, 10), p)
        lance.write_dataset(data(10, 10), p, mode="append")
        lance.dataset(p).delete("id = 3")
    return paths


def fields(ds):
    def one(f):
        return (f.name(), f.id(), [one(c) for c in f.children()])

    return [one(f) for f in ds.lance_schema.fields()]


def view(path):
    """What pylance reads of a dataset: schema (types, nullability), field ids, rows,
    fragments and data files, config, the last operation; validate() must pass."""
    ds = lance.dataset(path)
    ds.validate()
    t = ds.to_table()
    return {
        "schema": str(pa.schema([f.remove_metadata() for f in ds.schema])),
        "fields": fields(ds),
        "rows": sorted(t.to_pylist(), key=lambda r: r.get("id", r.get("v")) or 0),
        "fragments": [
            (f.metadata.id, [sorted(x.fields) for x in f.metadata.files])
            for f in ds.get_fragments()
        ],
        "config": dict(ds.config()),
        "operation": type(ds.read_transaction(ds.version).operation).__name__,
        "version": ds.version,
    }


def spark_rows(spark, sql):
    return sorted(
        (r.asDict(recursive=True) for r in spark.sql(sql).collect()),
        key=lambda r: r.get("id", 0) or 0,
    )


def pylance_rows(path, columns=None):
    t = lance.dataset(path).to_table(columns=columns)
    return sorted(t.to_pylist(), key=lambda r: r.get("id", 0) or 0)


def test_add_columns_as_pylance_adds_null_columns(spark, twins):
    ours, theirs = twins
    c = catalog(spark)
    spark.sql(f"alter table {c}.`{ours}` add columns (z int, w string)")
    lance.dataset(theirs).add_columns([pa.field("z", pa.int32()), pa.field("w", pa.string())])
    assert view(ours) == view(theirs)
    # Spark reads the new columns as pylance does (nulls), and writes them.
    assert spark_rows(spark, f"select * from {c}.`{ours}`") == pylance_rows(ours)
    spark.sql(
        f"insert into {c}.`{ours}` values (100, 1, 'x', named_struct('a', 1, 'b', 'y'), 7, 'w7')"
    )
    row = [r for r in pylance_rows(ours) if r["id"] == 100][0]
    assert (row["z"], row["w"]) == (7, "w7")
    # pylance keeps going on ours as on its own.
    for p in twins:
        lance.dataset(p).add_columns({"q": "id * 2"})
        lance.dataset(p).delete("id = 5")
    assert [r for r in pylance_rows(ours, ["id", "q", "z"]) if r["id"] != 100] == pylance_rows(
        theirs, ["id", "q", "z"]
    )


def test_add_struct_fields_as_pylance_adds_them(spark, twins):
    ours, theirs = twins
    c = catalog(spark)
    spark.sql(f"alter table {c}.`{ours}` add columns (s.c string, s.d struct<e: int>, t int)")
    lance.dataset(theirs).add_columns(
        pa.schema(
            [
                pa.field(
                    "s",
                    pa.struct(
                        [
                            pa.field("c", pa.string()),
                            pa.field("d", pa.struct([pa.field("e", pa.int32())])),
                        ]
                    ),
                )
            ]
        )
    )
    lance.dataset(theirs).add_columns(pa.field("t", pa.int32()))
    want = view(theirs)
    got = view(ours)
    assert (got.pop("version"), want.pop("version")) == (
        lance.dataset(theirs).version - 1,
        lance.dataset(theirs).version,
    )
    assert got == want
    assert spark_rows(spark, f"select * from {c}.`{ours}`") == pylance_rows(ours)
    # pylance's own result reads in Spark as pylance reads it, pruned to new children too.
    assert spark_rows(spark, f"select * from {c}.`{theirs}`") == pylance_rows(theirs)
    assert spark_rows(spark, f"select id, s.c, s.d.e, s.a from {c}.`{theirs}` where id > 2") == [
        {"id": r["id"], "c": None, "e": None, "a": r["s"]["a"]}
        for r in pylance_rows(theirs)
        if r["id"] > 2
    ]
    spark.sql(
        f"insert into {c}.`{ours}` select 100, 1, 'x', named_struct('a', 1, 'b', 'y', "
        "'c', 'z', 'd', named_struct('e', 5)), 6"
    )
    row = [r for r in pylance_rows(ours) if r["id"] == 100][0]
    assert row["s"] == {"a": 1, "b": "y", "c": "z", "d": {"e": 5}} and row["t"] == 6
    with pytest.raises(Exception, match="not a struct"):
        spark.sql(f"alter table {c}.`{ours}` add columns (v.x int)")


def test_add_column_after_a_drop_takes_a_new_field_id(spark, twins):
    ours, theirs = twins
    c = catalog(spark)
    spark.sql(f"alter table {c}.`{ours}` drop column s")
    spark.sql(f"alter table {c}.`{ours}` add column z bigint")
    lance.dataset(theirs).drop_columns(["s"])
    lance.dataset(theirs).add_columns(pa.field("z", pa.int64()))
    assert view(ours) == view(theirs)


@pytest.mark.parametrize("cols", [["n"], ["v", "s"], ["s.a"]])
def test_drop_columns_as_pylance_drops_them(spark, twins, cols):
    ours, theirs = twins
    c = catalog(spark)
    spark.sql(f"alter table {c}.`{ours}` drop columns {', '.join(cols)}")
    lance.dataset(theirs).drop_columns(cols)
    assert view(ours) == view(theirs)
    assert spark_rows(spark, f"select * from {c}.`{ours}`") == pylance_rows(ours)
    # The dropped data is still there in the older version.
    old = lance.dataset(ours).version - 1
    assert spark_rows(spark, f"select * from {c}.`{ours}` version as of {old}") == sorted(
        lance.dataset(ours, version=old).to_table().to_pylist(), key=lambda r: r["id"]
    )


@pytest.mark.parametrize("col,new", [("v", "vv"), ("s.b", "bb")])
def test_rename_column_as_pylance_renames_it(spark, twins, col, new):
    ours, theirs = twins
    c = catalog(spark)
    spark.sql(f"alter table {c}.`{ours}` rename column {col} to {new}")
    lance.dataset(theirs).alter_columns({"path": col, "name": new})
    assert view(ours) == view(theirs)
    assert spark_rows(spark, f"select * from {c}.`{ours}`") == pylance_rows(ours)


def test_drop_not_null_as_pylance_alters_nullability(spark, twins):
    ours, theirs = twins
    c = catalog(spark)
    spark.sql(f"alter table {c}.`{ours}` alter column id drop not null")
    lance.dataset(theirs).alter_columns({"path": "id", "nullable": True})
    assert view(ours) == view(theirs)
    # Every column named: Spark 3.5 and 4.0 fill no missing column of a v2 table.
    spark.sql(f"insert into {c}.`{ours}` (id, n, v, s) values (null, 1, null, null)")
    assert lance.dataset(ours).to_table(filter="id is null").num_rows == 1


def test_column_comment_is_field_metadata(spark, twins):
    ours, _ = twins
    c = catalog(spark)
    spark.sql(f"alter table {c}.`{ours}` alter column v comment 'the value'")
    spark.sql(f"alter table {c}.`{ours}` add column z int comment 'new one'")
    ds = lance.dataset(ours)
    assert ds.schema.field("v").metadata[b"comment"] == b"the value"
    assert ds.schema.field("z").metadata[b"comment"] == b"new one"
    assert type(ds.read_transaction(ds.version - 1).operation).__name__ == "UpdateConfig"
    described = {r.col_name: r.comment for r in spark.sql(f"describe table {c}.`{ours}`").collect()}
    assert (described["v"], described["z"], described["n"]) == ("the value", "new one", None)


def test_create_table_column_comments(spark, tmp_path):
    c = catalog(spark, tmp_path)
    spark.sql(f"create table {c}.t (id bigint comment 'the id', s string) using lance")
    schema = lance.dataset(str(tmp_path / "t.lance")).schema
    assert schema.field("id").metadata[b"comment"] == b"the id"
    assert not schema.field("s").metadata
    assert "id BIGINT COMMENT 'the id'" in spark.sql(f"show create table {c}.t").collect()[0][0]


def test_describe_and_show_create_table_round_trip(spark, tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    c = catalog(spark, root)
    spark.sql(
        f"create table {c}.t (id bigint comment 'the id', s string) using lance "
        "tblproperties ('k' = 'v', 'lance.data_storage_version' = '2.1')"
    )
    spark.sql(f"insert into {c}.t values (1, 'a')")
    ds = lance.dataset(str(root / "t.lance"))
    assert ds.data_storage_version == "2.1" and ds.config() == {"k": "v"}
    info = {r[0]: r[1] for r in spark.sql(f"describe table extended {c}.t").collect()}
    assert info["Location"] == str(root / "t.lance")
    for p in [f"lance.version={ds.version}", "lance.data_storage_version=2.1", "k=v"]:
        assert p in info["Table Properties"], info
    ddl = spark.sql(f"show create table {c}.t").collect()[0][0]
    spark.sql(f"drop table {c}.t")
    spark.sql(ddl)  # re-creates the same table: schema, comments, config, file version
    again = lance.dataset(str(root / "t.lance"))
    assert (again.version, again.data_storage_version, again.config()) == (1, "2.1", {"k": "v"})
    assert again.schema == ds.schema
    with pytest.raises(Exception, match="lance.version"):
        spark.sql(f"alter table {c}.t set tblproperties ('lance.version' = '9')")
    with pytest.raises(Exception, match="data_storage_version"):
        spark.sql(
            f"create table {c}.u (id bigint) using lance options "
            "(data_storage_version '2.2') tblproperties ('lance.data_storage_version' = "
            "'2.0')"
        )


def test_column_encodings_as_table_properties(spark, tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    c = catalog(spark, root)
    spark.sql(
        f"create table {c}.t (id bigint, s string) using lance tblproperties "
        "('lance.encoding.s.compression' = 'zstd', 'k' = 'v')"
    )
    spark.sql(
        f"create table {c}.u using lance tblproperties "
        "('lance.encoding.s.compression' = 'lz4') as select id, cast(id as string) s "
        "from range(100)"
    )
    for name, codec in [("t", b"zstd"), ("u", b"lz4")]:
        ds = lance.dataset(str(root / f"{name}.lance"))
        assert ds.schema.field("s").metadata == {b"lance-encoding:compression": codec}
        assert b"lance-encoding:compression" not in (ds.schema.field("id").metadata or {})
        shown = {r[0]: r[1] for r in spark.sql(f"show tblproperties {c}.{name}").collect()}
        assert shown["lance.encoding.s.compression"] == codec.decode()
    assert lance.dataset(str(root / "t.lance")).config() == {"k": "v"}
    assert sorted(lance.dataset(str(root / "u.lance")).to_table()["s"].to_pylist()) == sorted(
        str(i) for i in range(100)
    )
    ddl = spark.sql(f"show create table {c}.t").collect()[0][0]
    spark.sql(f"drop table {c}.t")
    spark.sql(ddl)
    assert lance.dataset(str(root / "t.lance")).schema.field("s").metadata == {
        b"lance-encoding:compression": b"zstd"
    }
    with pytest.raises(Exception, match="encoding"):
        spark.sql(f"alter table {c}.t set tblproperties ('lance.encoding.s.compression' = 'lz4')")
    with pytest.raises(Exception, match="no column 'nope'"):
        spark.sql(
            f"create table {c}.w (id bigint) using lance tblproperties "
            "('lance.encoding.nope.compression' = 'zstd')"
        )
    # A refused CREATE leaves no table behind in the namespace.
    assert sorted(r.tableName for r in spark.sql(f"show tables in {c}").collect()) == ["t", "u"]


def test_tblproperties_are_the_table_config(spark, twins):
    ours, theirs = twins
    c = catalog(spark)
    spark.sql(f"alter table {c}.`{ours}` set tblproperties ('a' = '1', 'b' = '2')")
    lance.dataset(theirs).update_config({"a": "1", "b": "2"})
    assert view(ours) == view(theirs)
    spark.sql(f"alter table {c}.`{ours}` unset tblproperties ('a')")
    lance.dataset(theirs).delete_config_keys(["a"])
    assert view(ours) == view(theirs)
    shown = {r[0]: r[1] for r in spark.sql(f"show tblproperties {c}.`{ours}`").collect()}
    assert {k: shown[k] for k in lance.dataset(theirs).config()} == dict(
        lance.dataset(theirs).config()
    )
    assert "a" not in shown
    # A key pylance sets shows in Spark.
    lance.dataset(ours).update_config({"from_pylance": "yes"})
    shown = {r[0]: r[1] for r in spark.sql(f"show tblproperties {c}.`{ours}`").collect()}
    assert shown["from_pylance"] == "yes"


def test_create_table_properties_in_the_first_version(spark, tmp_path):
    c = catalog(spark, tmp_path / "root")
    (tmp_path / "root").mkdir()
    spark.sql(f"create table {c}.t (id bigint) tblproperties ('k' = 'v')")
    ds = lance.dataset(str(tmp_path / "root" / "t.lance"))
    assert ds.version == 1 and ds.config() == {"k": "v"}
    spark.sql(f"create table {c}.u tblproperties ('k2' = 'v2') as select id from range(3)")
    ds = lance.dataset(str(tmp_path / "root" / "u.lance"))
    assert ds.version == 1 and ds.config() == {"k2": "v2"} and ds.count_rows() == 3


def test_schema_changes_through_the_session_catalog(spark, twins):
    ours, theirs = twins
    s = spark.newSession()
    s.conf.set("spark.sql.catalog.spark_catalog", "io.sparklance.spark.LanceSessionCatalog")
    t = f"alt_session_{next(_names)}"
    s.sql(f"create table {t} using lance location '{ours}'")
    s.sql(f"alter table {t} add columns (z int)")
    s.sql(f"alter table {t} rename column v to vv")
    s.sql(f"alter table {t} set tblproperties ('x' = 'y')")
    theirs_ds = lance.dataset(theirs)
    theirs_ds.add_columns(pa.field("z", pa.int32()))
    lance.dataset(theirs).alter_columns({"path": "v", "name": "vv"})
    lance.dataset(theirs).update_config({"x": "y"})
    assert view(ours) == view(theirs)
    assert [f.name for f in s.table(t).schema.fields] == ["id", "n", "vv", "s", "z"]
    s.sql(f"drop table {t}")
    assert lance.dataset(ours).count_rows() == 19


NUMS = pa.schema(
    [
        pa.field("id", pa.int64()),
        pa.field("b", pa.int8()),
        pa.field("sm", pa.int16()),
        pa.field("a", pa.int32()),
        pa.field("f", pa.float32()),
        pa.field("dec", pa.decimal128(10, 2)),
        pa.field("dec2", pa.decimal128(10, 2)),
    ]
)


def nums(start, count):
    import decimal

    ids = list(range(start, start + count))
    return pa.table(
        {
            "id": ids,
            "b": [None if i % 5 == 0 else (i * 37) % 256 - 128 for i in ids],
            "sm": [-(i * 1001) for i in ids],
            "a": [None if i % 4 == 0 else i * 100003 - 2**31 + 7 for i in ids],
            "f": [i / 3 - 2.5 for i in ids],
            "dec": [decimal.Decimal(f"{(-1) ** i * i * 1234567}.{i % 100:02d}") for i in ids],
            "dec2": [None if i % 3 == 0 else decimal.Decimal(f"-{i}.5{i % 10}") for i in ids],
        },
        schema=NUMS,
    )


@pytest.mark.parametrize(
    "col,sql_type,arrow_type",
    [
        ("a", "bigint", pa.int64()),
        ("b", "int", pa.int32()),
        ("sm", "bigint", pa.int64()),
        ("f", "double", pa.float64()),
        ("dec", "decimal(12,2)", pa.decimal128(12, 2)),
        ("dec2", "decimal(13,4)", pa.decimal128(13, 4)),
        ("late", "bigint", pa.int64()),
    ],
)
def test_alter_column_type_as_pylance_casts(spark, tmp_path, col, sql_type, arrow_type):
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    for p in (ours, theirs):
        lance.write_dataset(nums(0, 10), p)
        lance.dataset(p).add_columns(pa.field("late", pa.int32()))  # absent from fragment 0
        lance.write_dataset(
            nums(10, 10).append_column("late", pa.array(range(10), pa.int32())), p, mode="append"
        )
        lance.dataset(p).delete("id = 3 or id = 12")
    c = catalog(spark)
    spark.sql(f"alter table {c}.`{ours}` alter column {col} type {sql_type}")
    lance.dataset(theirs).alter_columns({"path": col, "data_type": arrow_type})
    assert view(ours) == view(theirs)
    assert spark_rows(spark, f"select * from {c}.`{ours}`") == pylance_rows(ours)
    for p in (ours, theirs):  # pylance keeps going on ours as on its own
        lance.write_dataset(lance.dataset(p).to_table(filter="id < 4"), p, mode="append")
        lance.dataset(p).delete("id = 5")
        lance.dataset(p).optimize.compact_files()
    assert view(ours) == view(theirs)


@pytest.mark.parametrize(
    "stmt,words",
    [
        ("alter column n type string", ["type"]),
        ("alter column n type int", ["type"]),
        ("alter column n type double", ["type", "int64"]),  # pylance casts no integer to float
        ("add column z int not null", ["'z'", "NOT NULL"]),
        ("add column z int first", ["'z'"]),
        ("drop column nope", ["nope"]),
        ("rename column v to n", ["`n`", "already exists"]),  # Spark's own check
        ("alter column n set not null", ["non-nullable", "n"]),  # Spark's own check
        ("drop columns id, n, v, s", ["every column"]),
    ],
)
def test_changes_lance_cannot_make_are_refused(spark, twins, stmt, words):
    ours, _ = twins
    c = catalog(spark)
    before = lance.dataset(ours).version
    with pytest.raises(Exception) as e:
        spark.sql(f"alter table {c}.`{ours}` {stmt}")
    for w in words:
        assert w.lower() in str(e.value).lower(), str(e.value)
    assert lance.dataset(ours).version == before
