"""spark_lance.LanceTable: pylance's LanceDataset method names on a dataset path, each call
the same Lance transaction pylance's method commits; checked against pylance's own method on
a twin dataset."""

from __future__ import annotations

import lance
import pyarrow as pa
import pytest

import spark_lance


def data(start, n):
    ids = list(range(start, start + n))
    return pa.table({"id": pa.array(ids, pa.int64()), "n": pa.array(ids, pa.int64()),
                     "v": [f"r{i}" for i in ids]})


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
    return {"version": ds.version, "schema": str(ds.schema),
            "rows": ds.to_table().sort_by("id").to_pylist(),
            "config": dict(ds.config()),
            "operation": type(ds.read_transaction(ds.version).operation).__name__,
            "tags": {k: v["version"] for k, v in ds.tags.list().items()}}


def test_changes_as_pylance_methods(spark, twins):
    ours, theirs = twins
    t = spark_lance.LanceTable(spark, ours)
    p = lance.dataset(theirs)
    steps = [
        (lambda: t.delete("id % 3 = 0"), lambda: p.delete("id % 3 = 0")),
        (lambda: t.update({"n": "n + 100"}, where="id < 5"),
         lambda: p.update({"n": "n + 100"}, where="id < 5")),
        (lambda: t.update_config({"a": "1"}), lambda: p.update_config({"a": "1"})),
        (lambda: t.delete_config_keys(["a"]), lambda: p.delete_config_keys(["a"])),
        (lambda: t.add_columns({"z": "int"}), lambda: p.add_columns(pa.field("z", pa.int32()))),
        (lambda: t.alter_columns({"path": "v", "name": "w"}),
         lambda: p.alter_columns({"path": "v", "name": "w"})),
        (lambda: t.drop_columns(["z"]), lambda: p.drop_columns(["z"])),
        (lambda: t.tags.create("two", 2), lambda: p.tags.create("two", 2)),
        (lambda: t.restore(2), lambda: lance.dataset(theirs, version=2).restore()),
    ]
    for ours_step, theirs_step in steps:
        ours_step()
        theirs_step()
        p = lance.dataset(theirs)
        assert view(ours) == view(theirs)
    assert t.version == p.version
    assert t.count_rows() == p.count_rows() and t.count_rows("id < 5") == p.count_rows("id < 5")
    assert t.tags.list() == {"two": 2}


def test_merge_insert_as_pylance(spark, twins):
    ours, theirs = twins
    src = data(15, 10)
    spark_lance.LanceTable(spark, ours).merge_insert("id").when_matched_update_all() \
        .when_not_matched_insert_all().execute(
            spark.createDataFrame([tuple(r.values()) for r in src.to_pylist()],
                                  "id long, n long, v string"))
    lance.dataset(theirs).merge_insert("id").when_matched_update_all() \
        .when_not_matched_insert_all().execute(src)
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
