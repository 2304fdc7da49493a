"""spark_lance.LanceTable: pylance's LanceDataset method names on a dataset path, each call
the same Lance transaction pylance's method commits; checked against pylance's own method on
a twin dataset."""

from __future__ import annotations

import itertools
import uuid

import lance
import pyarrow as pa
import pytest
from pyspark.errors import AnalysisException

import spark_lance
import support

_names = itertools.count()
_run = uuid.uuid4().hex[:8]


def data(start, n):
    ids = list(range(start, start + n))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "n": pa.array(ids, pa.int64()),
            "v": [f"r{i}" for i in ids],
        }
    )


@pytest.fixture
def twins(tmp_path):
    paths = str(tmp_path / "ours"), str(tmp_path / "theirs")
    for p in paths:
        lance.write_dataset(data(0, 10), p)
        lance.write_dataset(data(10, 10), p, mode="append")
    return paths


def view(path):
    ds = lance.dataset(path)
    ds.validate()
    return {
        "version": ds.version,
        "schema": str(ds.schema),
        "rows": ds.to_table().sort_by("id").to_pylist(),
        "config": dict(ds.config()),
        "operation": type(ds.read_transaction(ds.version).operation).__name__,
        "tags": {k: v["version"] for k, v in ds.tags.list().items()},
    }


def test_changes_as_pylance_methods(spark, twins):
    ours, theirs = twins
    t = spark_lance.LanceTable(spark, ours)
    p = lance.dataset(theirs)
    steps = [
        (lambda: t.delete("id % 3 = 0"), lambda: p.delete("id % 3 = 0")),
        # pylance's update moves the rows; mode="auto" may write the column instead, as
        # pylance's update_columns does (test_column_update.py).
        (
            lambda: t.update({"n": "n + 100"}, where="id < 5", mode="rows"),
            lambda: p.update({"n": "n + 100"}, where="id < 5"),
        ),
        (lambda: t.update_config({"a": "1"}), lambda: p.update_config({"a": "1"})),
        (lambda: t.delete_config_keys(["a"]), lambda: p.delete_config_keys(["a"])),
        (lambda: t.add_columns({"z": "int"}), lambda: p.add_columns(pa.field("z", pa.int32()))),
        (
            lambda: t.alter_columns({"path": "v", "name": "w"}),
            lambda: p.alter_columns({"path": "v", "name": "w"}),
        ),
        (lambda: t.drop_columns(["z"]), lambda: p.drop_columns(["z"])),
        (
            lambda: t.alter_columns(
                {"path": "n", "data_type": pa.int64()}, {"path": "z2", "data_type": "bigint"}
            ),
            lambda: None,
        ),  # both refused below
        (lambda: t.add_columns({"i": "int"}), lambda: p.add_columns(pa.field("i", pa.int32()))),
        (
            lambda: t.alter_columns({"path": "i", "data_type": pa.int64()}),
            lambda: p.alter_columns({"path": "i", "data_type": pa.int64()}),
        ),
        (lambda: t.tags.create("two", 2), lambda: p.tags.create("two", 2)),
        (lambda: t.restore(2), lambda: lance.dataset(theirs, version=2).restore()),
    ]
    for ours_step, theirs_step in steps:
        try:
            ours_step()
        except Exception as e:  # an int64 column is int64 already; z2 does not exist
            assert theirs_step() is None and ("n" in str(e) or "z2" in str(e)), e
            continue
        theirs_step()
        p = lance.dataset(theirs)
        assert view(ours) == view(theirs)
    assert t.version == p.version
    assert t.count_rows() == p.count_rows() and t.count_rows("id < 5") == p.count_rows("id < 5")
    assert t.tags.list() == {"two": 2}
    assert t.versions() == lance.dataset(ours).versions()
    assert [v["metadata"] for v in t.versions()] == [v["metadata"] for v in p.versions()]
    assert [f.name for f in t.schema.fields] == p.schema.names


def test_merge_insert_as_pylance(spark, twins):
    ours, theirs = twins
    src = data(15, 10)
    spark_lance.LanceTable(spark, ours).merge_insert(
        "id"
    ).when_matched_update_all().when_not_matched_insert_all().execute(
        spark.createDataFrame(
            [tuple(r.values()) for r in src.to_pylist()], "id long, n long, v string"
        )
    )
    lance.dataset(theirs).merge_insert(
        "id"
    ).when_matched_update_all().when_not_matched_insert_all().execute(src)
    assert view(ours)["rows"] == view(theirs)["rows"]
    assert view(ours)["operation"] == view(theirs)["operation"] == "Update"


def test_config_and_errors(spark, twins):
    ours, _ = twins
    t = spark_lance.LanceTable(spark, ours)
    t.update_config({"k": "it's"})
    assert t.config() == dict(lance.dataset(ours).config()) == {"k": "it's"}
    with pytest.raises(ValueError):
        t.alter_columns({"path": "n", "nullable": False})
    with pytest.raises(ValueError):
        t.update({})
    with pytest.raises(ValueError):
        spark_lance.LanceTable(spark, "")


# ---- LanceTable.for_name: a catalog's table by name, as the LanceTable of its location -------


def local(location):
    """pylance's path of a location Spark shows (the session catalog's are file: URIs)."""
    return location[len("file:") :] if location.startswith("file:") else location


def rows(df_or_table):
    if isinstance(df_or_table, pa.Table):
        return sorted(support.rows_from_arrow(df_or_table), key=repr)
    return sorted(support.rows_from_spark(df_or_table.collect(), df_or_table.schema), key=repr)


def same_as_pylance(spark, t):
    """What the table shows equals what pylance shows of the dataset at its location."""
    ds = lance.dataset(local(t.path))
    assert t.version == ds.version
    history = spark.read.format("lance").option("metadata_table", "versions").load(t.path)
    assert sorted(r.version for r in history.collect()) == [v["version"] for v in ds.versions()]
    assert [(f.name, f.nullable) for f in t.to_df().schema.fields] == [
        (f.name, f.nullable) for f in ds.schema
    ]
    assert rows(t.to_df()) == rows(ds.to_table())
    for v in ds.versions():
        old = lance.dataset(local(t.path), version=v["version"]).to_table()
        assert rows(t.to_df(version=v["version"])) == rows(old)
    assert t.tags.list() == {k: v["version"] for k, v in ds.tags.list().items()}


def changed_through(spark, t):
    """A change through the table is the dataset's, and the catalog sees it."""
    t.add_columns({"z": "int"})
    t.tags.create("first", 1)
    assert lance.dataset(local(t.path)).schema.names[-1] == "z"
    assert spark.table(t.name).columns[-1] == "z"
    same_as_pylance(spark, t)


def test_for_name_of_a_lance_catalog_table(spark, tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    c = f"tblapi{next(_names)}"
    spark_lance.register_catalog(spark, c, root=str(root), **{"fs.sparklance.test": "1"})
    spark.sql(f"create namespace {c}.db")
    spark.sql(f"create table {c}.db.t (id bigint, n bigint, v string)")
    spark.sql(f"insert into {c}.db.t values (1, 1, 'a'), (2, 2, 'b')")
    spark.sql(f"insert into {c}.db.t values (3, 3, 'c')")
    t = spark_lance.LanceTable.for_name(spark, f"{c}.db.t")
    assert t.name == f"{c}.db.t" and f"{c}.db.t" in repr(t)
    assert t._options == {"fs.sparklance.test": "1"}  # the catalog's, but root
    assert lance.dataset(local(t.path)).version == 3
    same_as_pylance(spark, t)
    changed_through(spark, t)
    with pytest.raises(AnalysisException, match="TABLE_OR_VIEW_NOT_FOUND"):
        spark_lance.LanceTable.for_name(spark, f"{c}.db.nope")


def test_for_name_of_a_session_catalog_table(spark, tmp_path):
    s = spark.newSession()
    s.conf.set("spark.sql.catalog.spark_catalog", "io.sparklance.spark.LanceSessionCatalog")
    t_name, p_name = f"tblapi_{_run}_{next(_names)}", f"tblapi_{_run}_{next(_names)}"
    s.sql(
        f"create table {t_name} (id bigint, v string) using lance location '{tmp_path / 'lance'}'"
    )
    s.sql(f"create table {p_name} (id bigint) using parquet location '{tmp_path / 'pq'}'")
    try:
        s.sql(f"insert into {t_name} values (1, 'a'), (2, 'b')")
        s.sql(f"insert into {t_name} values (3, 'c')")
        t = spark_lance.LanceTable.for_name(s, t_name)
        assert t.name == t_name and t._options == {}
        assert local(t.path) == str(tmp_path / "lance")
        same_as_pylance(s, t)
        changed_through(s, t)
        assert spark_lance.LanceTable.for_name(s, f"default.{t_name}").path == t.path
        with pytest.raises(ValueError, match=f"{p_name} is not a Lance table.*parquet"):
            spark_lance.LanceTable.for_name(s, p_name)
        with pytest.raises(AnalysisException, match="TABLE_OR_VIEW_NOT_FOUND"):
            spark_lance.LanceTable.for_name(s, f"tblapi_{_run}_missing")
    finally:
        s.sql(f"drop table if exists {t_name}")
        s.sql(f"drop table if exists {p_name}")


def test_for_path_is_the_constructor(spark, twins):
    ours, _ = twins
    t = spark_lance.LanceTable.for_path(spark, ours)
    assert t.path == ours and t.name is None and repr(t) == f"LanceTable({ours!r})"
    same_as_pylance(spark, t)
