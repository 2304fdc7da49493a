"""The four save modes behave like Parquet's; overwrite is a Lance Overwrite (new version, only new data)."""

import os

import lance
import pytest


def rows(spark, n, start=0):
    return spark.sql(f"select id + {start} as id, concat('v', id) as v from range({n})")


def test_default_mode_creates_then_refuses_existing(spark, tmp_path):
    path = str(tmp_path / "ds")
    rows(spark, 10).write.format("lance").save(path)
    assert lance.dataset(path).count_rows() == 10
    with pytest.raises(Exception, match="already exists"):
        rows(spark, 5).write.format("lance").save(path)
    with pytest.raises(Exception, match="already exists"):
        rows(spark, 5).write.format("lance").mode("errorifexists").save(path)
    assert lance.dataset(path).version == 1
    assert lance.dataset(path).count_rows() == 10


def test_ignore(spark, tmp_path):
    path = str(tmp_path / "ds")
    rows(spark, 10).write.format("lance").mode("ignore").save(path)
    assert lance.dataset(path).count_rows() == 10
    rows(spark, 5).write.format("lance").mode("ignore").save(path)
    ds = lance.dataset(path)
    assert ds.version == 1 and ds.count_rows() == 10


def test_append_creates_missing_dataset(spark, tmp_path):
    path = str(tmp_path / "ds")
    rows(spark, 10).write.format("lance").mode("append").save(path)
    rows(spark, 10, 10).write.format("lance").mode("append").save(path)
    ds = lance.dataset(path)
    assert ds.version == 2
    assert sorted(ds.to_table()["id"].to_pylist()) == list(range(20))


def test_overwrite_is_a_new_version_with_only_new_data(spark, tmp_path):
    path = str(tmp_path / "ds")
    rows(spark, 10).write.format("lance").mode("overwrite").save(path)  # creates
    rows(spark, 3, 100).write.format("lance").mode("overwrite").save(path)
    ds = lance.dataset(path)
    ds.validate()
    assert ds.version == 2
    assert sorted(ds.to_table()["id"].to_pylist()) == [100, 101, 102]
    assert lance.dataset(path, version=1).count_rows() == 10  # old version intact (time travel)
    # Overwrite with a different schema replaces the schema too.
    spark.sql("select 'a' as k, 1.5d as x").write.format("lance").mode("overwrite").save(path)
    ds = lance.dataset(path)
    assert ds.schema.names == ["k", "x"] and ds.version == 3
    # pylance appends to our overwritten dataset.
    import pyarrow as pa

    lance.write_dataset(pa.table({"k": ["b"], "x": [2.5]}), path, mode="append")
    assert lance.dataset(path).count_rows() == 2


def test_overwrite_keeps_version_unless_asked(spark, tmp_path):
    path = str(tmp_path / "ds")
    rows(spark, 5).write.format("lance").option("data_storage_version", "2.1").save(path)
    rows(spark, 5).write.format("lance").mode("overwrite").save(path)
    assert lance.dataset(path).data_storage_version == "2.1"
    rows(spark, 5).write.format("lance").mode("overwrite").option(
        "data_storage_version", "2.2"
    ).save(path)
    ds = lance.dataset(path)
    assert ds.data_storage_version == "2.2"
    ds.validate()


def test_options_are_checked(spark, tmp_path):
    path = str(tmp_path / "ds")
    with pytest.raises(Exception, match="data_storage_version"):
        rows(spark, 5).write.format("lance").option("data_storage_version", "9.9").save(path)
    with pytest.raises(Exception, match="max_rows_per_file"):
        rows(spark, 5).write.format("lance").option("max_rows_per_file", "0").save(path)
    with pytest.raises(Exception, match="enable_stable_row_ids"):
        rows(spark, 5).write.format("lance").option("enable_stable_row_ids", "maybe").save(path)
    assert not os.path.exists(os.path.join(path, "_versions"))
    rows(spark, 5).write.format("lance").save(path)
    with pytest.raises(Exception, match="appends keep"):
        rows(spark, 5).write.format("lance").mode("append").option(
            "data_storage_version", "2.0"
        ).save(path)


def test_stable_row_ids_on_create(spark, tmp_path):
    path = str(tmp_path / "ds")
    rows(spark, 50).write.format("lance").option("enable_stable_row_ids", "true").save(path)
    rows(spark, 50, 50).write.format("lance").mode("append").save(path)
    ds = lance.dataset(path)
    ds.validate()
    t = ds.to_table(columns=["id"], with_row_id=True)
    assert sorted(t["_rowid"].to_pylist()) == list(range(100))
    ds.delete("id < 10")
    ds = lance.dataset(path)
    ds.create_scalar_index("id", "BTREE")
    assert lance.dataset(path).to_table(filter="id = 60").num_rows == 1


def test_only_lance_files_are_written(spark, tmp_path):
    """No side files (Hadoop's .crc checksums, temporaries) next to what pylance writes."""
    path = str(tmp_path / "ds")
    rows(spark, 20).write.format("lance").save(path)
    rows(spark, 20, 20).write.format("lance").mode("append").save(path)
    rows(spark, 5).write.format("lance").mode("overwrite").save(path)
    names = [f for _, _, files in os.walk(path) for f in files]
    assert not [f for f in names if f.startswith(".") or f.endswith(".crc")], names
    assert lance.dataset(path).count_rows() == 5


@pytest.mark.parametrize("mode", ["errorifexists", "append", "overwrite"])
def test_commit_message_is_recorded_as_pylance_records_it(spark, tmp_path, mode):
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    if mode != "errorifexists":
        rows(spark, 3).write.format("lance").save(ours)
        lance.write_dataset(lance.dataset(ours).to_table(), theirs)
    message = f"nightly {mode} of the ids"
    rows(spark, 5, 3).write.format("lance").mode(mode).option("commit_message", message).save(ours)
    pylance_mode = "create" if mode == "errorifexists" else mode
    lance.write_dataset(
        lance.dataset(ours).to_table(), theirs, mode=pylance_mode, commit_message=message
    )
    mine, ref = lance.dataset(ours), lance.dataset(theirs)
    assert mine.version == ref.version
    assert (
        mine.read_transaction(mine.version).transaction_properties
        == ref.read_transaction(ref.version).transaction_properties
    )
    assert type(mine.read_transaction(mine.version).operation) is type(
        ref.read_transaction(ref.version).operation
    )
