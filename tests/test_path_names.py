"""Path names (``lance.`/path` ``) in a session with the connector's extension but no catalog
named `lance`: Spark alone would try them as a query on files and refuse (`lance` is not a
file format); the extension resolves them as a session with the `lance` catalog does. Every
value is compared with pylance's reading of the same dataset."""

from __future__ import annotations

import lance
import pyarrow as pa
import pytest

import support


@pytest.fixture()
def bare(spark):
    """A session of the test JVM (extension on) without the `lance` catalog."""
    s = spark.newSession()
    s.conf.unset("spark.sql.catalog.lance")
    assert s.conf.get("spark.sql.catalog.lance", None) is None
    return s


def rows(df):
    return sorted(support.rows_from_spark(df.collect(), df.schema))


def pylance_rows(path, **kw):
    return sorted(support.rows_from_arrow(lance.dataset(path, **kw).to_table()))


@pytest.fixture()
def dataset(tmp_path):
    p = str(tmp_path / "t.lance")
    lance.write_dataset(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "s": ["a", "b", None]}), p)
    return p


def test_select_reads_what_pylance_reads(bare, dataset):
    assert rows(bare.sql(f"select * from lance.`{dataset}`")) == pylance_rows(dataset)
    assert rows(bare.table(f"lance.`{dataset}`")) == pylance_rows(dataset)


def test_insert_then_pylance_reads_it_and_time_travel(bare, dataset):
    bare.sql(f"insert into lance.`{dataset}` values (4, 'd')")
    bare.range(5, 7).selectExpr("id", "'w' as s").writeTo(f"lance.`{dataset}`").append()
    assert lance.dataset(dataset).version == 3
    assert rows(bare.sql(f"select * from lance.`{dataset}`")) == pylance_rows(dataset)
    old = bare.sql(f"select * from lance.`{dataset}` version as of 1")
    assert rows(old) == pylance_rows(dataset, version=1)


def test_describe_and_metadata_tables(bare, dataset):
    described = {r.col_name: r.data_type for r in bare.sql(f"describe lance.`{dataset}`").collect()}
    assert described == {"id": "bigint", "s": "string"}
    versions = bare.sql(f"select version from lance.`{dataset}`.versions").collect()
    expected = [v["version"] for v in lance.dataset(dataset).versions()]
    assert [r.version for r in versions] == expected


def test_missing_path_and_not_a_dataset_name_the_path(bare, spark, tmp_path):
    from pyspark.errors import AnalysisException

    missing = str(tmp_path / "nope.lance")
    plain = tmp_path / "plain"
    (plain / "data").mkdir(parents=True)
    for session in (bare, spark):
        with pytest.raises(AnalysisException) as e:
            session.sql(f"select * from lance.`{missing}`").collect()
        assert e.value.getSqlState() == "42K03"
        first = str(e.value).splitlines()[0]
        assert first.startswith("Lance dataset path does not exist") and missing in first, first
        with pytest.raises(AnalysisException) as e:
            session.sql(f"select * from lance.`{plain}`").collect()
        assert str(plain) in str(e.value).splitlines()[0]


def test_a_database_named_lance_keeps_its_tables(bare, tmp_path):
    bare.sql("create database if not exists lance")
    try:
        bare.sql("create table lance.plain_t (id int) using parquet")
        bare.sql("insert into lance.plain_t values (7)")
        assert [r.id for r in bare.sql("select id from lance.plain_t").collect()] == [7]
    finally:
        bare.sql("drop database lance cascade")
