"""Spark writes into datasets whose blobs are managed (schema metadata ``lance.blob.managed``)
as pylance 14.0.2 writes into them: values above the inline threshold become objects under the
dataset's ``_blobs/`` (Managed descriptors, kind 4, blob id 0, ``blob_uri`` the object's path),
packed into one object up to the dedicated threshold and one object each above it.

Every test writes the same rows through Spark into one twin and through pylance into the other,
then compares what pylance sees: the bytes ``take_blobs`` returns, and per row the descriptor's
kind, size and blob id (the object names are random UUIDs in both). Both twins validate, and
pylance keeps appending, deleting and cleaning up old versions without losing a blob.
"""

from __future__ import annotations

import datetime
import os
import shutil

import lance
import pyarrow as pa
import pytest
from lance.blob import blob_array, blob_field
from pyspark.sql import types as T
from test_write_blobs import V1, explode_at, mixed_values, payload, take_blobs

from support import SRC_TEST_DATA
from support import lance_catalog as catalog

MANAGED = {"lance.blob.managed": "true"}


def managed_table(ids, vals, **thresholds) -> pa.Table:
    return pa.Table.from_arrays(
        [pa.array(ids, pa.int64()), blob_array(vals)],
        schema=pa.schema(
            [pa.field("id", pa.int64()), blob_field("b", **thresholds)], metadata=MANAGED
        ),
    )


def spark_rows(spark, ids, vals):
    schema = T.StructType(
        [T.StructField("id", T.LongType()), T.StructField("b", T.BinaryType(), True, metadata=V1)]
    )
    return spark.createDataFrame(list(zip(ids, vals)), schema).coalesce(1)


def by_id(path) -> dict:
    """id -> (bytes take_blobs returns, (kind, size, blob_id), blob_uri's directory)."""
    ds = lance.dataset(str(path))
    ds.validate()
    t = ds.to_table()
    out = {}
    for i, d, v in zip(t.column("id").to_pylist(), t.column("b").to_pylist(), take_blobs(ds)):
        desc = None if d is None else (d["kind"], d["size"], d["blob_id"])
        where = None if d is None else os.path.dirname(d["blob_uri"])
        out[i] = (v, desc, where)
    return out


def blob_objects(path) -> set:
    d = os.path.join(str(path), "_blobs")
    return set(os.listdir(d)) if os.path.isdir(d) else set()


def referenced(path) -> set:
    t = lance.dataset(str(path)).to_table(columns=["b"]).column("b").to_pylist()
    return {os.path.basename(d["blob_uri"]) for d in t if d is not None and d["kind"] == 4}


@pytest.fixture
def twins(tmp_path):
    """pylance writes the same managed base twice: 12 rows of every size class."""
    ours, theirs = tmp_path / "ours.lance", tmp_path / "theirs.lance"
    vals = mixed_values(12)
    for p in (ours, theirs):
        lance.write_dataset(
            managed_table(list(range(12)), vals), str(p), data_storage_version="2.2"
        )
    return ours, theirs


def check_twins(ours, theirs):
    got, want = by_id(ours), by_id(theirs)
    assert got == want
    assert any(d[1] is not None and d[1][0] == 4 for d in got.values())  # managed values occur
    for p in (ours, theirs):  # pylance keeps writing both the same way
        lance.write_dataset(
            managed_table([500, 501], [payload(5, 90_000), b"s"]), str(p), mode="append"
        )
        lance.dataset(str(p)).delete("id = 1")
        lance.dataset(str(p)).cleanup_old_versions(
            older_than=datetime.timedelta(0), delete_unverified=True
        )
        assert referenced(p) <= blob_objects(p)
    assert by_id(ours) == by_id(theirs)


def test_append_writes_managed_objects_as_pylance_does(spark, twins):
    ours, theirs = twins
    ids, vals = list(range(100, 120)), mixed_values(20)
    spark_rows(spark, ids, vals).write.format("lance").mode("append").save(str(ours))
    lance.write_dataset(managed_table(ids, vals), str(theirs), mode="append")
    check_twins(ours, theirs)


def test_append_with_small_thresholds(spark, tmp_path):
    """The field's thresholds choose inline, packed and dedicated objects, as in pylance."""
    ours, theirs = tmp_path / "ours.lance", tmp_path / "theirs.lance"
    th = dict(inline_size_threshold=16, dedicated_size_threshold=1000)
    for p in (ours, theirs):
        lance.write_dataset(managed_table([0], [b"seed"], **th), str(p), data_storage_version="2.2")
    vals = [
        b"tiny",
        payload(1, 100),
        None,
        payload(2, 2_000),
        b"",
        payload(3, 999),
        payload(4, 1001),
    ]
    ids = list(range(1, 1 + len(vals)))
    # What Spark reads of the dataset carries the thresholds in its field metadata.
    schema = spark.read.format("lance").load(str(ours)).schema
    spark.createDataFrame(list(zip(ids, vals)), schema).coalesce(1).write.format("lance").mode(
        "append"
    ).save(str(ours))
    lance.write_dataset(managed_table(ids, vals, **th), str(theirs), mode="append")
    objects = blob_objects(ours)
    assert len(objects) == len(blob_objects(theirs)) == 3  # one pack, two dedicated
    check_twins(ours, theirs)


def test_append_of_rows_read_back(spark, tmp_path):
    """Spark appends pylance's managed fixture to itself: every blob twice, pylance reads all."""
    path = tmp_path / "copy.lance"
    shutil.copytree(SRC_TEST_DATA / "blobs" / "blob_managed_2.2.lance", path)
    before = take_blobs(lance.dataset(str(path)))
    spark.read.format("lance").load(str(path)).write.format("lance").mode("append").save(str(path))
    ds = lance.dataset(str(path))
    ds.validate()
    assert take_blobs(ds) == before + before
    assert referenced(path) <= blob_objects(path)


def test_update_and_merge_as_pylance(spark, twins):
    ours, theirs = twins
    spark.sql(f"update {catalog(spark)}.`{ours}` set id = id + 1000 where id % 3 = 0")
    lance.dataset(str(theirs)).update({"id": "id + 1000"}, where="id % 3 = 0")
    ids, vals = [1, 2, 40, 41], [payload(9, 80_000), b"m", payload(8, 5_000_000), None]
    spark_rows(spark, ids, vals).createOrReplaceTempView("src")
    spark.sql(f"""merge into {catalog(spark)}.`{ours}` t using src on t.id = src.id
                  when matched then update set * when not matched then insert *""")
    (
        lance.dataset(str(theirs))
        .merge_insert("id")
        .when_matched_update_all()
        .when_not_matched_insert_all()
        .execute(managed_table(ids, vals))
    )
    check_twins(ours, theirs)


def test_failed_write_leaves_no_managed_objects(spark, twins):
    from pyspark.sql import functions as F

    ours, _ = twins
    before = blob_objects(ours)
    df = (
        spark.range(300)
        .repartition(3)
        .select(
            explode_at(290)("id").alias("id"),
            F.expr("unhex(repeat(lpad(hex(id % 251), 2, '0'), 70000))").alias("b", metadata=V1),
        )
    )
    with pytest.raises(Exception, match="boom at 290"):
        df.write.format("lance").mode("append").option("max_rows_per_file", 20).save(str(ours))
    assert lance.dataset(str(ours)).version == 1
    assert blob_objects(ours) == before
