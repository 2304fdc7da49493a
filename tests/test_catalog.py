"""io.sparklance.spark.LanceCatalog: Lance datasets as SQL tables, by path identifier and in
a root directory laid out as pylance's directory namespace lays out root tables. Every
expected value is pylance's: what it reads from the tables we changed, and what its own
delete does on a twin."""

from __future__ import annotations

import shutil

import lance
import pyarrow as pa
import pytest
from lance.namespace import DirectoryNamespace

from support import lance_catalog as catalog


def table(start, n):
    ids = list(range(start, start + n))
    return pa.table({"id": pa.array(ids, pa.int64()), "s": [f"r{i}" for i in ids]})


def rows_of(ds_or_table):
    t = ds_or_table.to_table() if hasattr(ds_or_table, "to_table") else ds_or_table
    return sorted(zip(t["id"].to_pylist(), t["s"].to_pylist()))


def spark_rows(spark, sql):
    return sorted(tuple(r) for r in spark.sql(sql).collect())


@pytest.fixture
def twins(tmp_path):
    """Two identical datasets pylance wrote: 3 fragments of 20 rows."""
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    for p in (ours, theirs):
        lance.write_dataset(table(0, 20), p)
        lance.write_dataset(table(20, 20), p, mode="append")
        lance.write_dataset(table(40, 20), p, mode="append")
    return ours, theirs


def test_path_identifier_reads_inserts_and_overwrites(spark, twins):
    ours, _ = twins
    c = catalog(spark)
    assert spark_rows(spark, f"select id, s from {c}.`{ours}`") == rows_of(lance.dataset(ours))
    spark.sql(f"insert into {c}.`{ours}` values (100, 'x'), (101, 'y')")
    ds = lance.dataset(ours)
    assert type(ds.read_transaction(ds.version).operation).__name__ == "Append"
    assert (100, "x") in rows_of(ds) and ds.count_rows() == 62
    spark.sql(f"insert overwrite {c}.`{ours}` values (7, 'z')")
    ds = lance.dataset(ours)
    assert rows_of(ds) == [(7, "z")]
    assert type(ds.read_transaction(ds.version).operation).__name__ == "Overwrite"
    ds.validate()


@pytest.mark.parametrize(
    "where", ["id % 3 = 0", "id >= 20 and id < 40", "s = 'r5'", "id < 0", "id >= 0"]
)
def test_delete_from_path_identifier_as_pylance_delete(spark, twins, where):
    ours, theirs = twins
    c = catalog(spark)
    spark.sql(f"delete from {c}.`{ours}` where {where}")
    lance.dataset(theirs).delete(where)
    a, b = lance.dataset(ours), lance.dataset(theirs)
    a.validate()
    assert a.version == b.version
    assert rows_of(a) == rows_of(b)

    def frags(ds):
        return [
            (
                f.metadata.id,
                f.metadata.physical_rows,
                None
                if f.metadata.deletion_file is None
                else (
                    f.metadata.deletion_file.file_type,
                    f.metadata.deletion_file.num_deleted_rows,
                ),
            )
            for f in ds.get_fragments()
        ]

    assert frags(a) == frags(b)
    assert type(a.read_transaction(a.version).operation).__name__ == "Delete"
    # pylance keeps deleting and appending on our result.
    for ds_path in (ours, theirs):
        lance.dataset(ds_path).delete("id = 44")
        lance.write_dataset(table(200, 3), ds_path, mode="append")
    assert rows_of(lance.dataset(ours)) == rows_of(lance.dataset(theirs))


def test_time_travel_in_sql(spark, twins):
    ours, _ = twins
    c = catalog(spark)
    lance.dataset(ours).delete("id < 10")
    for v in (1, 2, 3):
        got = spark_rows(spark, f"select id, s from {c}.`{ours}` version as of {v}")
        assert got == rows_of(lance.dataset(ours, version=v))
    lance.dataset(ours).tags.create("before_delete", 3)
    got = spark_rows(spark, f"select id, s from {c}.`{ours}` version as of 'before_delete'")
    assert got == rows_of(lance.dataset(ours, version=3))


def test_root_tables_are_pylance_directory_namespace_tables(spark, tmp_path):
    root = tmp_path / "warehouse"
    root.mkdir()
    lance.write_dataset(table(0, 4), str(root / "made_by_pylance.lance"))
    c = catalog(spark, root)
    spark.sql(f"create table {c}.events (id bigint, s string) using lance")
    ds = lance.dataset(str(root / "events.lance"))
    assert ds.count_rows() == 0 and ds.schema.names == ["id", "s"]
    spark.sql(f"insert into {c}.events values (1, 'a'), (2, 'b')")
    assert rows_of(lance.dataset(str(root / "events.lance"))) == [(1, "a"), (2, "b")]
    shown = sorted(r[1] for r in spark.sql(f"show tables in {c}").collect())
    assert shown == ["events", "made_by_pylance"]
    listed = (
        DirectoryNamespace(root=str(root))
        .list_tables(__import__("lance_namespace").ListTablesRequest(id=[]))
        .tables
    )
    assert sorted(listed) == shown
    assert spark_rows(spark, f"select id, s from {c}.made_by_pylance") == rows_of(table(0, 4))
    with pytest.raises(Exception, match="already exists|ALREADY_EXISTS"):
        spark.sql(f"create table {c}.events (id bigint) using lance")
    spark.sql(f"drop table {c}.events")
    assert not (root / "events.lance").exists()
    assert sorted(r[1] for r in spark.sql(f"show tables in {c}").collect()) == ["made_by_pylance"]


def test_partitioned_and_located_tables_are_refused(spark, tmp_path):
    c = catalog(spark, tmp_path)
    with pytest.raises(Exception, match="not partitioned"):
        spark.sql(f"create table {c}.p (id bigint, d int) using lance partitioned by (d)")
    with pytest.raises(Exception, match="LOCATION"):
        spark.sql(f"create table {c}.q (id bigint) using lance location '{tmp_path}/q'")
    assert not list(tmp_path.iterdir())
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_ctas_and_write_to(spark, tmp_path):
    root = tmp_path / "wh"
    root.mkdir()
    c = catalog(spark, root)
    spark.sql(
        f"create table {c}.made using lance as select id, cast(id as string) as s from range(5)"
    )
    assert rows_of(lance.dataset(str(root / "made.lance"))) == [(i, str(i)) for i in range(5)]
    df = spark.range(3).selectExpr("id * 10 as id", "'w' as s")
    df.writeTo(f"{c}.written").create()
    assert rows_of(lance.dataset(str(root / "written.lance"))) == [(0, "w"), (10, "w"), (20, "w")]
    df.writeTo(f"{c}.written").append()
    assert lance.dataset(str(root / "written.lance")).count_rows() == 6
    spark.range(2).selectExpr("id", "'o' as s").writeTo(f"{c}.written").overwrite(
        __import__("pyspark.sql.functions", fromlist=["lit"]).lit(True)
    )
    assert rows_of(lance.dataset(str(root / "written.lance"))) == [(0, "o"), (1, "o")]


def test_ctas_and_rtas_commit_one_version_with_the_data(spark, tmp_path):
    root = tmp_path / "wh2"
    root.mkdir()
    c = catalog(spark, root)
    spark.sql(f"create table {c}.t using lance as select id, 's' as s from range(3)")
    ds = lance.dataset(str(root / "t.lance"))
    assert ds.version == 1 and rows_of(ds) == [(0, "s"), (1, "s"), (2, "s")]
    assert type(ds.read_transaction(1).operation).__name__ == "Overwrite"
    spark.sql(f"replace table {c}.t using lance as select id, 'r' as s from range(2)")
    ds = lance.dataset(str(root / "t.lance"))
    assert ds.version == 2 and rows_of(ds) == [(0, "r"), (1, "r")]
    spark.sql(f"create or replace table {c}.u using lance as select 1L as id, 'x' as s")
    assert rows_of(lance.dataset(str(root / "u.lance"))) == [(1, "x")]
    with pytest.raises(Exception, match="already exists|ALREADY_EXISTS"):
        spark.sql(f"create table {c}.t using lance as select 5L as id, 'y' as s")
    assert lance.dataset(str(root / "t.lance")).version == 2


def test_replace_table_without_a_query_commits_the_schema_as_pylance_overwrites(spark, tmp_path):
    """REPLACE TABLE / CREATE OR REPLACE TABLE with columns and no AS SELECT: an empty
    Overwrite with the new schema (history kept) or a new empty table, as pylance's
    write_dataset of an empty table does."""
    root = tmp_path / "wh3"
    root.mkdir()
    c = catalog(spark, root)
    spark.sql(f"create table {c}.t (id bigint, s string) using lance")
    spark.sql(f"insert into {c}.t values (1, 'a')")
    spark.sql(f"replace table {c}.t (x int) using lance tblproperties ('team' = 'ml')")
    spark.sql(f"create or replace table {c}.u (y double) using lance")
    twin = str(tmp_path / "twin")
    lance.write_dataset(
        pa.table({"id": pa.array([], pa.int64()), "s": pa.array([], pa.string())}), twin
    )
    lance.write_dataset(table(1, 1).set_column(1, "s", pa.array(["a"])), twin, mode="append")
    lance.write_dataset(pa.table({"x": pa.array([], pa.int32())}), twin, mode="overwrite")
    ours, theirs = lance.dataset(str(root / "t.lance")), lance.dataset(twin)
    assert [v["version"] for v in ours.versions()] == [v["version"] for v in theirs.versions()]
    assert ours.schema == theirs.schema and ours.count_rows() == 0
    assert type(ours.read_transaction(3).operation).__name__ == "Overwrite"
    assert ours.config().get("team") == "ml"
    assert lance.dataset(str(root / "t.lance"), version=2).count_rows() == 1
    u = lance.dataset(str(root / "u.lance"))
    assert u.version == 1 and u.schema == pa.schema([pa.field("y", pa.float64())])
    with pytest.raises(Exception, match="not found|NOT_FOUND|cannot be found"):
        spark.sql(f"replace table {c}.nothing (x int) using lance")


def test_namespaces_are_pylance_directory_namespaces(spark, tmp_path):
    import io

    from lance_namespace import (
        CreateNamespaceRequest,
        CreateTableRequest,
        DescribeTableRequest,
        ListNamespacesRequest,
        ListTablesRequest,
    )

    root = tmp_path / "nsroot"
    root.mkdir()
    ns = DirectoryNamespace(root=str(root))
    ns.create_namespace(CreateNamespaceRequest(id=["made_by_pylance"]))
    buf = io.BytesIO()
    t = table(0, 3)
    with pa.ipc.new_stream(buf, t.schema) as w:
        w.write_table(t)
    ns.create_table(CreateTableRequest(id=["made_by_pylance", "t"]), buf.getvalue())

    c = catalog(spark, root)
    assert [r[0] for r in spark.sql(f"show namespaces in {c}").collect()] == ["made_by_pylance"]
    assert spark_rows(spark, f"select id, s from {c}.made_by_pylance.t") == rows_of(t)
    spark.sql(f"create namespace {c}.sales")
    spark.sql(f"create table {c}.sales.orders using lance as select id, 'o' as s from range(2)")
    spark.sql(f"insert into {c}.made_by_pylance.t values (9, 'n')")

    # pylance sees what Spark made, where Spark put it.
    assert sorted(ns.list_namespaces(ListNamespacesRequest(id=[])).namespaces) == [
        "made_by_pylance",
        "sales",
    ]
    assert ns.list_tables(ListTablesRequest(id=["sales"])).tables == ["orders"]
    loc = ns.describe_table(DescribeTableRequest(id=["sales", "orders"])).location
    assert rows_of(lance.dataset(loc)) == [(0, "o"), (1, "o")]
    loc = ns.describe_table(DescribeTableRequest(id=["made_by_pylance", "t"])).location
    assert (9, "n") in rows_of(lance.dataset(loc))

    with pytest.raises(Exception, match="NON_EMPTY|not empty|SCHEMA_NOT_EMPTY"):
        spark.sql(f"drop namespace {c}.sales")
    spark.sql(f"drop table {c}.sales.orders")
    assert ns.list_tables(ListTablesRequest(id=["sales"])).tables == []
    spark.sql(f"drop namespace {c}.sales")
    assert ns.list_namespaces(ListNamespacesRequest(id=[])).namespaces == ["made_by_pylance"]
    with pytest.raises(Exception, match="NOT_FOUND|not found|cannot be found"):
        spark.sql(f"select * from {c}.nowhere.t").collect()


def test_truncate_and_purge(spark, tmp_path):
    root = tmp_path / "wh3"
    root.mkdir()
    c = catalog(spark, root)
    spark.sql(f"create table {c}.t using lance as select id, 's' as s from range(5)")
    spark.sql(f"truncate table {c}.t")
    ds = lance.dataset(str(root / "t.lance"))
    assert ds.count_rows() == 0 and ds.version == 2
    assert type(ds.read_transaction(2).operation).__name__ == "Delete"
    assert lance.dataset(str(root / "t.lance"), version=1).count_rows() == 5
    spark.sql(f"drop table {c}.t purge")
    assert not (root / "t.lance").exists()


def test_rename_table_as_pylance_directory_namespace_sees_it(spark, tmp_path):
    from lance_namespace import CreateNamespaceRequest, DescribeTableRequest, ListTablesRequest

    root = tmp_path / "renroot"
    root.mkdir()
    ns = DirectoryNamespace(root=str(root))
    ns.create_namespace(CreateNamespaceRequest(id=["db"]))
    ns.create_namespace(CreateNamespaceRequest(id=["db2"]))
    lance.write_dataset(table(0, 4), str(root / "listed.lance"))  # a listed root table
    c = catalog(spark, root)
    spark.sql(f"create table {c}.db.t using lance as select id, 'x' as s from range(3)")
    spark.sql(f"create table {c}.rt using lance as select id, 'y' as s from range(2)")
    want = {
        n: rows_of(lance.dataset(ns.describe_table(DescribeTableRequest(id=i)).location))
        for n, i in [("t", ["db", "t"]), ("rt", ["rt"]), ("listed", ["listed"])]
    }

    def listed(ident):
        return sorted(ns.list_tables(ListTablesRequest(id=ident)).tables)

    def rows_at(ident):
        return rows_of(lance.dataset(ns.describe_table(DescribeTableRequest(id=ident)).location))

    # In a namespace: an unqualified new name stays in the table's namespace.
    spark.sql(f"alter table {c}.db.t rename to t2")
    assert listed(["db"]) == ["t2"] and rows_at(["db", "t2"]) == want["t"]
    spark.sql(f"alter table {c}.db.t2 rename to db2.t3")
    assert listed(["db"]) == [] and listed(["db2"]) == ["t3"]
    assert rows_at(["db2", "t3"]) == want["t"]
    assert spark_rows(spark, f"select id, s from {c}.db2.t3") == want["t"]
    # Root tables are named by their directory: it moves with the name.
    spark.sql(f"alter table {c}.rt rename to rt2")
    spark.sql(f"alter table {c}.listed rename to listed2")
    assert listed([]) == ["listed2", "rt2"]
    assert not (root / "rt.lance").exists() and not (root / "listed.lance").exists()
    assert rows_at(["rt2"]) == want["rt"] and rows_at(["listed2"]) == want["listed"]
    # A root table moved into a namespace leaves no listed directory behind.
    spark.sql(f"alter table {c}.rt2 rename to db.moved")
    assert listed([]) == ["listed2"] and listed(["db"]) == ["moved"]
    assert rows_at(["db", "moved"]) == want["rt"]
    spark.sql(f"insert into {c}.db.moved values (7, 'z')")
    assert (7, "z") in rows_at(["db", "moved"])

    with pytest.raises(Exception, match="ALREADY_EXISTS|already exists"):
        spark.sql(f"alter table {c}.listed2 rename to db2.t3")
    with pytest.raises(Exception, match="NOT_FOUND|not found|cannot be found"):
        spark.sql(f"alter table {c}.nope rename to other")
    with pytest.raises(Exception, match="moving its directory"):
        spark.sql(f"alter table {c}.`{root / 'listed2.lance'}` rename to x")
    assert listed([]) == ["listed2"]


def test_save_as_table_and_lancedb_sees_root_tables(spark, tmp_path):
    lancedb = pytest.importorskip("lancedb")
    root = tmp_path / "ldb"
    root.mkdir()
    c = catalog(spark, root)
    df = spark.range(4).selectExpr("id", "cast(id as string) as s")
    df.write.format("lance").saveAsTable(f"{c}.saved")
    df.write.format("lance").mode("append").saveAsTable(f"{c}.saved")
    spark.sql(f"create table {c}.made using lance as select 7 as id, 'x' as s")
    db = lancedb.connect(str(root))
    names = db.table_names() if hasattr(db, "table_names") else db.list_tables()
    assert sorted(names) == ["made", "saved"]
    for name in ["made", "saved"]:
        assert rows_of(db.open_table(name).to_arrow()) == spark_rows(
            spark, f"select id, s from {c}.{name}"
        )
    assert len(db.open_table("saved").to_arrow()) == 8
    # A table LanceDB creates at the root is a table of the catalog.
    db.create_table("from_lancedb", pa.table({"id": [5], "s": ["y"]}))
    assert spark_rows(spark, f"select id, s from {c}.from_lancedb") == [(5, "y")]
