"""io.sparklance.spark.LanceSessionCatalog as spark_catalog: Lance tables in Spark's built-in
catalog (managed tables under the warehouse directory, dropped with their data; external
tables at a LOCATION, kept on DROP), other providers untouched, and lance.`path`."""

from __future__ import annotations

import itertools
import os

import lance
import pyarrow as pa
import pytest

_names = itertools.count()
_run = __import__("uuid").uuid4().hex[:8]


@pytest.fixture
def session(spark, tmp_path):
    s = spark.newSession()
    s.conf.set("spark.sql.catalog.spark_catalog", "io.sparklance.spark.LanceSessionCatalog")
    return s


def name():
    return f"lst_{_run}_{next(_names)}"


def rows(path):
    t = lance.dataset(str(path)).to_table()
    return sorted(zip(*(t[c].to_pylist() for c in t.column_names)))


def test_managed_table_lives_and_dies_with_its_dataset(session):
    t = name()
    session.sql(f"create table {t} (id bigint, s string) using lance")
    location = (
        session.sql(f"describe table extended {t}").where("col_name = 'Location'").collect()[0][1]
    )
    path = location.replace("file:", "")
    assert lance.dataset(path).count_rows() == 0
    session.sql(f"insert into {t} values (1, 'a'), (2, 'b')")
    assert rows(path) == [(1, "a"), (2, "b")]
    assert sorted(tuple(r) for r in session.sql(f"select * from {t}").collect()) == rows(path)
    session.sql(f"update {t} set s = 'z' where id = 2")
    assert rows(path) == [(1, "a"), (2, "z")]
    session.sql(f"delete from {t} where id = 1")
    assert rows(path) == [(2, "z")]
    kind = session.sql(f"describe table extended {t}").where("col_name = 'Type'").collect()[0][1]
    assert kind == "MANAGED"
    session.sql(f"drop table {t}")
    assert not os.path.exists(path)


def test_external_table_over_a_pylance_dataset_is_kept_on_drop(session, tmp_path):
    path = str(tmp_path / "ext")
    lance.write_dataset(pa.table({"id": pa.array([5, 6], pa.int64())}), path)
    t = name()
    session.sql(f"create table {t} using lance location '{path}'")
    assert [r[0] for r in session.sql(f"select id from {t} order by id").collect()] == [5, 6]
    kind = session.sql(f"describe table extended {t}").where("col_name = 'Type'").collect()[0][1]
    assert kind == "EXTERNAL"
    session.sql(f"insert into {t} values (7)")
    assert rows(path) == [(5,), (6,), (7,)]
    session.sql(f"drop table {t}")
    assert rows(path) == [(5,), (6,), (7,)]


def test_ctas_time_travel_and_path_identifiers(session, tmp_path):
    t = name()
    session.sql(f"create table {t} using lance as select id, id * 2 as d from range(4)")
    location = (
        session.sql(f"describe table extended {t}")
        .where("col_name = 'Location'")
        .collect()[0][1]
        .replace("file:", "")
    )
    ctas = lance.dataset(location).version
    session.sql(f"insert into {t} values (10, 20)")
    assert session.sql(f"select count(*) from {t} version as of {ctas}").collect()[0][0] == 4
    assert session.sql(f"select count(*) from lance.`{location}`").collect()[0][0] == 5
    session.sql(f"drop table {t}")


def test_other_providers_are_untouched(session):
    t = name()
    session.sql(f"create table {t} (id bigint) using parquet")
    session.sql(f"insert into {t} values (1)")
    assert session.sql(f"select * from {t}").collect()[0][0] == 1
    provider = (
        session.sql(f"describe table extended {t}").where("col_name = 'Provider'").collect()[0][1]
    )
    assert provider == "parquet"
    session.sql(f"drop table {t}")


def test_save_as_table_in_the_session_catalog(session):
    t = name()
    df = session.range(3).selectExpr("id", "cast(id as string) as s")
    df.write.format("lance").saveAsTable(t)
    location = (
        session.sql(f"describe table extended {t}").where("col_name = 'Location'").collect()[0][1]
    )
    path = location.replace("file:", "")
    assert rows(path) == [(i, str(i)) for i in range(3)]
    session.sql(f"insert into {t} select * from values (7, 'x')")
    assert rows(path) == sorted([(i, str(i)) for i in range(3)] + [(7, "x")])
    session.sql(f"drop table {t}")
    assert not os.path.exists(path)


@pytest.mark.xfail(
    int(__import__("pyspark").__version__.split(".")[0]) >= 4,
    strict=False,
    reason="Spark 4 keeps its built-in V2SessionCatalog as the session catalog "
    "of saveAsTable when spark_catalog is set at runtime (this fixture), so "
    "the append meets a V1Table; set at build time (configure("
    "session_catalog=True)) it appends, as Spark 3.5 does either way",
)
def test_save_as_table_appends_in_a_runtime_configured_session_catalog(session):
    t = name()
    df = session.range(3).selectExpr("id", "cast(id as string) as s")
    df.write.format("lance").saveAsTable(t)
    try:
        df.write.format("lance").mode("append").saveAsTable(t)
        assert session.table(t).count() == 6
    finally:
        session.sql(f"drop table {t}")


def test_save_as_table_appends_with_the_catalog_set_at_build_time(tmp_path):
    """configure(session_catalog=True) in a fresh driver: saveAsTable creates, appends to and
    overwrites a Lance table in Spark's own catalog."""
    import subprocess
    import sys
    import textwrap

    script = tmp_path / "driver.py"
    script.write_text(
        textwrap.dedent(f"""
        import spark_lance
        from pyspark.sql import SparkSession
        b = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
             .config("spark.sql.warehouse.dir", {str(tmp_path / "wh")!r}))
        spark = spark_lance.configure(b, session_catalog=True).getOrCreate()
        df = spark.range(3).selectExpr("id", "cast(id as string) as s")
        df.write.format("lance").saveAsTable("t")
        df.write.format("lance").mode("append").saveAsTable("t")
        print("ROWS", spark.table("t").count())
        df.write.format("lance").mode("overwrite").saveAsTable("t")
        print("ROWS", spark.table("t").count())
        import lance
        ds = lance.dataset(spark.sql("describe table extended t").where(
            "col_name = 'Location'").collect()[0][1].replace("file:", ""))
        print("OPS", [type(ds.read_transaction(v["version"]).operation).__name__
                      for v in ds.versions()])
        spark.stop()
    """)
    )
    r = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYSPARK_SUBMIT_ARGS": "pyspark-shell"},
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert [ln for ln in r.stdout.splitlines() if ln.startswith("ROWS")] == ["ROWS 6", "ROWS 3"]
    # The overwrite keeps the history, as pylance's write, append, overwrite does.
    twin = str(tmp_path / "twin")
    for mode in ("create", "append", "overwrite"):
        lance.write_dataset(pa.table({"id": [0, 1, 2]}), twin, mode=mode)
    ds = lance.dataset(twin)
    expected = [type(ds.read_transaction(v["version"]).operation).__name__ for v in ds.versions()]
    assert [ln for ln in r.stdout.splitlines() if ln.startswith("OPS")] == [f"OPS {expected}"]
    assert lance.dataset(str(tmp_path / "wh" / "t")).count_rows() == 3


def history(path):
    """What a dataset's versions are: (version, operation, rows, schema)."""
    ds = lance.dataset(str(path))
    out = []
    for v in ds.versions():
        d = lance.dataset(str(path), version=v["version"])
        out.append(
            (
                v["version"],
                type(d.read_transaction(v["version"]).operation).__name__,
                d.count_rows(),
                d.schema.to_string(),
            )
        )
    return out


def location_of(session, t):
    return (
        session.sql(f"describe table extended {t}")
        .where("col_name = 'Location'")
        .collect()[0][1]
        .replace("file:", "")
    )


def test_create_or_replace_keeps_the_history_as_pylance_overwrites(session, tmp_path):
    """CTAS, CREATE OR REPLACE ... AS SELECT, REPLACE TABLE (no AS SELECT) and
    writeTo(t).createOrReplace() each commit one version of the table's dataset, as pylance's
    write_dataset (create, overwrite) does on a twin; the catalog entry stays."""
    t = name()
    session.sql(f"create table {t} using lance as select id, cast(id as string) s from range(3)")
    path = location_of(session, t)
    session.sql(f"create or replace table {t} using lance as select id * 10 as id from range(2)")
    session.sql(f"replace table {t} (x bigint, y string) using lance")
    session.range(4).selectExpr("id as x", "'q' as y").writeTo(t).using("lance").createOrReplace()
    assert location_of(session, t) == path
    kind = session.sql(f"describe table extended {t}").where("col_name = 'Type'").collect()[0][1]
    assert kind == "MANAGED"
    twin = tmp_path / "twin"

    def schema(*fields):  # Spark's range and literals are non-null, declared columns nullable
        return pa.schema([pa.field(n, t, nullable=null) for n, t, null in fields])

    i64, st = pa.int64(), pa.string()
    lance.write_dataset(
        pa.table(
            {"id": [0, 1, 2], "s": ["0", "1", "2"]}, schema(("id", i64, False), ("s", st, False))
        ),
        twin,
    )
    lance.write_dataset(
        pa.table({"id": [0, 10]}, schema(("id", i64, False))), twin, mode="overwrite"
    )
    lance.write_dataset(
        pa.table({"x": [], "y": []}, schema(("x", i64, True), ("y", st, True))),
        twin,
        mode="overwrite",
    )
    lance.write_dataset(
        pa.table(
            {"x": list(range(4)), "y": ["q"] * 4}, schema(("x", i64, False), ("y", st, False))
        ),
        twin,
        mode="overwrite",
    )
    assert history(path) == history(twin)
    assert rows(path) == rows(twin)
    lance.dataset(path).validate()
    session.sql(f"drop table {t}")
    assert not os.path.exists(path)


def test_a_failed_ctas_leaves_no_table(session):
    t = name()
    with pytest.raises(Exception):
        session.sql(
            f"create table {t} using lance as select id, assert_true(id < 2) as ok from range(5)"
        )
    assert not session.catalog.tableExists(t)
    session.sql(f"create table {t} using lance as select 1L as id")
    assert session.table(t).count() == 1
    session.sql(f"drop table {t}")


def test_ctas_refuses_a_location_holding_a_dataset_and_create_or_replace_overwrites_it(
    session, tmp_path
):
    path, twin = str(tmp_path / "ext"), str(tmp_path / "twin")
    for p in (path, twin):
        lance.write_dataset(pa.table({"id": pa.array([5, 6], pa.int64())}), p)
    t = name()
    with pytest.raises(Exception, match="exists"):
        session.sql(f"create table {t} using lance location '{path}' as select 1L as id")
    assert not session.catalog.tableExists(t)
    assert history(path) == history(twin)
    session.sql(f"create or replace table {t} using lance location '{path}' as select 7L as id")
    lance.write_dataset(
        pa.table({"id": [7]}, pa.schema([pa.field("id", pa.int64(), False)])),
        twin,
        mode="overwrite",
    )
    assert history(path) == history(twin)
    session.sql(f"drop table {t}")
    assert history(path) == history(twin)


def test_a_parquet_table_replaced_by_a_lance_table(session):
    t = name()
    session.sql(f"create table {t} (id bigint) using parquet")
    session.sql(f"insert into {t} values (1)")
    session.sql(f"create or replace table {t} using lance as select 2L as id")
    provider = (
        session.sql(f"describe table extended {t}").where("col_name = 'Provider'").collect()[0][1]
    )
    assert provider == "lance"
    assert rows(location_of(session, t)) == [(2,)]
    session.sql(f"drop table {t}")
