"""Overwriting the rows that match a condition: `df.write.mode("overwrite").option("replaceWhere",
cond)`, `writeTo(t).overwrite(cond)` and `INSERT INTO t REPLACE WHERE cond`. Each is one Update
commit (the matching rows deleted, the new rows in new fragments), checked against pylance's own
delete-then-append on a twin: same rows, same stable row ids; pylance validates the result and
keeps changing it. A condition the reader cannot evaluate exactly, or a row that does not match
it, is refused with nothing committed and no file left behind."""

from __future__ import annotations

import datetime as dt
import os

import lance
import pyarrow as pa
import pytest
from pyspark.sql import functions as F

from support import lance_catalog as catalog


def table(start, n, k=0):
    ids = list(range(start, start + n))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "n": pa.array([k + i for i in ids], pa.int64()),
            "s": [f"r{i}" for i in ids],
            "d": pa.array([dt.date(2024, 1, 1 + i % 28) for i in ids], pa.date32()),
        }
    )


@pytest.fixture(params=[False, True], ids=["addresses", "stable"])
def twins(tmp_path, request):
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    for p in (ours, theirs):
        lance.write_dataset(table(0, 20), p, enable_stable_row_ids=request.param)
        lance.write_dataset(table(20, 20), p, mode="append")
        lance.dataset(p).delete("id = 7")
    return ours, theirs


SCHEMA = "id long, n long, s string, d date"


def frame(spark, start, n, k=1000):
    return spark.createDataFrame(table(start, n, k).to_pylist(), SCHEMA)


def pylance_replace(path, cond, start, n, k=1000):
    """What the overwrite must give: pylance deletes the matching rows, then appends."""
    lance.dataset(path).delete(cond)
    lance.write_dataset(table(start, n, k), path, mode="append")


def rows(path, version=None):
    ds = lance.dataset(path, version=version)
    t = ds.to_table(columns=["id", "n", "s", "d"], with_row_id=ds.has_stable_row_ids)
    return t.sort_by("id").to_pylist()


def data_files(path):
    return sorted(os.listdir(os.path.join(path, "data")))


def check(ours, theirs, before):
    ds = lance.dataset(ours)
    ds.validate()
    assert ds.version == before + 1
    assert type(ds.read_transaction(ds.version).operation).__name__ == "Update"
    assert rows(ours) == rows(theirs)
    for p in (ours, theirs):  # pylance keeps changing both the same way
        d = lance.dataset(p)
        d.update({"n": "n + 1"}, where="id % 5 = 0")
        d.delete("id = 11")
        lance.write_dataset(table(500, 3), p, mode="append")
    assert rows(ours) == rows(theirs)


@pytest.mark.parametrize(
    "cond",
    [
        "id >= 30",
        "id < 10 OR s = 'r25'",
        "d = DATE'2024-01-05'",
        "s LIKE 'r1%' AND id <> 12",
        "id IN (3, 7, 39)",
    ],
)
def test_replace_where_option_equals_pylance_delete_then_append(spark, twins, cond):
    ours, theirs = twins
    before = lance.dataset(ours).version
    matching = spark.read.format("lance").load(ours).where(cond).select("id").collect()
    new_ids = sorted(r.id for r in matching)[:3]  # new values for some of the matching ids
    new = spark.createDataFrame(
        table(0, 40, 1000).filter(pa.array([i in new_ids for i in range(40)])).to_pylist(), SCHEMA
    )
    new.write.format("lance").mode("overwrite").option("replaceWhere", cond).save(ours)
    lance.dataset(theirs).delete(cond)
    lance.write_dataset(
        table(0, 40, 1000).filter(pa.array([i in new_ids for i in range(40)])),
        theirs,
        mode="append",
    )
    check(ours, theirs, before)


def test_replace_where_with_writeto_and_sql(spark, twins):
    ours, theirs = twins
    c = catalog(spark)
    before = lance.dataset(ours).version
    frame(spark, 30, 5).writeTo(f"{c}.`{ours}`").overwrite(F.col("id") >= 30)
    pylance_replace(theirs, "id >= 30", 30, 5)
    check(ours, theirs, before)

    before = lance.dataset(ours).version
    frame(spark, 0, 2, k=7).createOrReplaceTempView("rw_new")
    spark.sql(f"INSERT INTO {c}.`{ours}` REPLACE WHERE id < 2 SELECT * FROM rw_new")
    pylance_replace(theirs, "id < 2", 0, 2, k=7)
    check(ours, theirs, before)


def test_condition_nothing_matches_and_always_true(spark, twins):
    ours, theirs = twins
    before = lance.dataset(ours).version
    frame(spark, 90, 2).write.format("lance").mode("overwrite").option(
        "replaceWhere", "id > 80"
    ).save(ours)
    pylance_replace(theirs, "id > 80", 90, 2)
    check(ours, theirs, before)
    # A condition Spark proves true replaces every row, still as one Update.
    before = lance.dataset(ours).version
    frame(spark, 5, 3).write.format("lance").mode("overwrite").option("replaceWhere", "1 = 1").save(
        ours
    )
    pylance_replace(theirs, "true", 5, 3)
    check(ours, theirs, before)


def refused(spark, ours, df, cond, match):
    before = lance.dataset(ours).version, data_files(ours)
    with pytest.raises(Exception, match=match):
        df.write.format("lance").mode("overwrite").option("replaceWhere", cond).save(ours)
    assert (lance.dataset(ours).version, data_files(ours)) == before


def test_rows_outside_the_condition_are_refused(spark, twins):
    ours, _ = twins
    # Null in the tested column: the condition is not TRUE there either.
    df = frame(spark, 30, 3).withColumn("n", F.when(F.col("id") == 31, None).otherwise(F.col("n")))
    refused(spark, ours, frame(spark, 10, 30), "id >= 30", "does not satisfy")
    refused(spark, ours, df, "n > 0", "does not satisfy")


def test_conditions_the_reader_cannot_evaluate_are_refused(spark, twins):
    ours, _ = twins
    refused(spark, ours, frame(spark, 30, 3), "upper(s) = 'R31'", "replaceWhere")
    refused(spark, ours, frame(spark, 30, 3), "id >= 30 AND length(s) > 2", "replaceWhere")
    with pytest.raises(Exception, match="nope"):
        frame(spark, 30, 3).write.format("lance").mode("overwrite").option(
            "replaceWhere", "nope > 1"
        ).save(ours)


def test_replace_where_outside_overwrite_is_refused(spark, twins):
    ours, _ = twins
    before = lance.dataset(ours).version
    with pytest.raises(Exception, match="replaceWhere"):
        frame(spark, 30, 3).write.format("lance").mode("append").option(
            "replaceWhere", "id >= 30"
        ).save(ours)
    c = catalog(spark)
    with pytest.raises(Exception, match="replaceWhere"):
        frame(spark, 30, 3).writeTo(f"{c}.`{ours}`").option("replaceWhere", "id >= 30").append()
    assert lance.dataset(ours).version == before


def test_replace_where_creates_a_missing_dataset(spark, tmp_path):
    path = str(tmp_path / "new")
    frame(spark, 0, 4).write.format("lance").mode("overwrite").option(
        "replaceWhere", "id < 10"
    ).save(path)
    assert lance.dataset(path).to_table().sort_by("id") == table(0, 4, 1000)


def test_racing_pylance_append_survives(spark, twins):
    """An append pylance commits before or during the overwrite is kept (Update rebases over
    Append, as pylance's own update does); the condition does not match its rows."""
    ours, _ = twins
    from threading import Thread

    df = frame(spark, 30, 5).repartition(1)
    t = Thread(target=lambda: lance.write_dataset(table(200, 2), ours, mode="append"))
    t.start()
    df.write.format("lance").mode("overwrite").option("replaceWhere", "id >= 30 AND id < 100").save(
        ours
    )
    t.join()
    got = sorted(r["id"] for r in lance.dataset(ours).to_table(columns=["id"]).to_pylist())
    assert [i for i in got if i >= 200] == [200, 201]
    lance.dataset(ours).validate()
