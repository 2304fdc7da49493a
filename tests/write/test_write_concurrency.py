"""Several Spark writers and a pylance writer append at once: every row lands once, history is linear."""

import threading

import lance
import pyarrow as pa

from helpers import versions


def test_concurrent_spark_and_pylance_appends(spark, tmp_path):
    path = str(tmp_path / "ds")
    spark.sql("select id, 'seed' as src from range(10)").write.format("lance").save(path)

    errors = []
    n_spark, per_spark, n_py = 4, 3, 6

    def spark_writer(w):
        try:
            for k in range(per_spark):
                start = 1000 * (w + 1) + 100 * k
                spark.sql(
                    f"select id + {start} as id, 'spark{w}' as src from range(50)"
                ).repartition(2).write.format("lance").mode("append").save(path)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    def pylance_writer():
        try:
            for k in range(n_py):
                start = 100000 + 100 * k
                lance.write_dataset(
                    pa.table(
                        {"id": pa.array(range(start, start + 20), pa.int64()), "src": ["py"] * 20}
                    ),
                    path,
                    mode="append",
                )
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=spark_writer, args=(w,)) for w in range(n_spark)]
    threads.append(threading.Thread(target=pylance_writer))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors

    ds = lance.dataset(path)
    ds.validate()
    expected = list(range(10))
    for w in range(n_spark):
        for k in range(per_spark):
            start = 1000 * (w + 1) + 100 * k
            expected += list(range(start, start + 50))
    for k in range(n_py):
        start = 100000 + 100 * k
        expected += list(range(start, start + 20))
    ids = sorted(ds.to_table(columns=["id"])["id"].to_pylist())
    assert ids == sorted(expected)  # every row exactly once
    # Linear history: one version per commit, no gaps.
    vs = versions(path)
    assert vs == list(range(1, 2 + n_spark * per_spark + n_py))
    assert spark.read.format("lance").load(path).count() == len(expected)


def test_overwrite_racing_an_append_fails_the_append_cleanly(spark, tmp_path):
    """An append that loses to a concurrent overwrite must not resurrect the old data."""

    path = str(tmp_path / "ds")
    spark.range(10).write.format("lance").save(path)
    # Simulate the race deterministically: commit an overwrite with pylance between our read and commit
    # by making the Spark job slow and overwriting meanwhile.
    from pyspark.sql.functions import udf

    barrier = threading.Event()

    @udf("long")
    def slow(x):
        import time

        time.sleep(0.002)
        return x

    err = []

    def append():
        try:
            spark.range(2000).repartition(2).select(slow("id").alias("id")).write.format(
                "lance"
            ).mode("append").save(path)
        except Exception as e:  # noqa: BLE001
            err.append(e)
        finally:
            barrier.set()

    t = threading.Thread(target=append)
    t.start()
    import time

    time.sleep(2)
    lance.write_dataset(pa.table({"id": pa.array([7], pa.int64())}), path, mode="overwrite")
    t.join()
    ds = lance.dataset(path)
    if err:
        assert "Concurrent modification" in str(err[0])
        assert ds.to_table()["id"].to_pylist() == [7]
    else:  # the append committed before the overwrite started
        assert ds.to_table()["id"].to_pylist() == [7]
    ds.validate()
