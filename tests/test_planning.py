"""Plans: scans of the same table version, columns and filters are equal, so Spark reuses
exchanges; splits follow Spark's file-source rule so small datasets use every core."""

from __future__ import annotations

import lance
import pyarrow as pa


def table(start, n):
    ids = list(range(start, start + n))
    return pa.table({"id": pa.array(ids, pa.int64()), "k": pa.array([i % 7 for i in ids], pa.int64())})


def test_self_join_of_two_aggregations_reuses_the_exchange(spark, tmp_path):
    path = str(tmp_path / "ds")
    lance.write_dataset(table(0, 1000), path, max_rows_per_file=250)
    df = spark.read.format("lance").load(path)
    a = df.groupBy("k").count().withColumnRenamed("count", "a")
    b = df.groupBy("k").count().withColumnRenamed("count", "b")
    joined = a.join(b, "k")
    got = sorted(tuple(r) for r in joined.collect())
    plan = joined._jdf.queryExecution().executedPlan().toString()  # AQE's final plan
    assert "ReusedExchange" in plan, plan
    t = lance.dataset(path).to_table()
    counts = {}
    for k in t["k"].to_pylist():
        counts[k] = counts.get(k, 0) + 1
    assert got == sorted((k, c, c) for k, c in counts.items())


def test_small_datasets_are_split_across_the_cores_as_file_sources_are(spark, tmp_path):
    path = str(tmp_path / "ds")
    lance.write_dataset(table(0, 4000), path, max_rows_per_file=1000)
    df = spark.read.format("lance").load(path)
    # Four equal fragments on two cores: two tasks of two fragments, as Spark's file rule gives
    # (not one task holding everything under spark.sql.files.maxPartitionBytes).
    assert spark.sparkContext.defaultParallelism == 2
    assert df.rdd.getNumPartitions() == 2
    assert sorted(r[0] for r in df.select("id").collect()) == list(range(4000))
    # An explicit split_size is honoured as given.
    one = spark.read.format("lance").option("split_size", str(1 << 30)).load(path)
    assert one.rdd.getNumPartitions() == 1
