"""UPDATE, MERGE INTO and compaction rewrite rows of columns Spark has no exact type for
(dictionary, null, unsigned, nanosecond timestamps) in the dataset's own types: the result
equals pylance's own update, merge_insert and compact_files on a twin, value by value and type
by type, validates, and pylance keeps appending to and deleting from it."""

from __future__ import annotations

import datetime as dt

import lance
import pyarrow as pa
import pytest

import spark_lance
from support import lance_catalog as catalog

VERSIONS = ["2.0", "2.1", "2.2"]
DICT = pa.dictionary(pa.int8(), pa.string())


def table(start, n, k=0):
    ids = list(range(start, start + n))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "n": pa.array([k + i for i in ids], pa.int64()),
            "d": pa.array([None if i % 7 == 3 else f"c{i % 4}" for i in ids])
            .dictionary_encode()
            .cast(DICT),
            "z": pa.nulls(n),
            "u": pa.array([i % 250 for i in ids], pa.uint8()),
            "t": pa.array(
                [dt.datetime(2024, 1, 1) + dt.timedelta(microseconds=i) for i in ids],
                pa.timestamp("ns"),
            ),
        }
    )


@pytest.fixture(params=VERSIONS)
def twins(tmp_path, request):
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    for p in (ours, theirs):
        lance.write_dataset(table(0, 30), p, data_storage_version=request.param)
        lance.write_dataset(table(30, 20), p, mode="append")
        lance.write_dataset(table(50, 5), p, mode="append")
        lance.dataset(p).delete("id = 7")
    return ours, theirs


def state(path):
    ds = lance.dataset(path)
    ds.validate()
    # pyarrow cannot sort a 2.0 dictionary column (its dictionaries hold a null entry).
    rows = sorted(ds.to_table().to_pylist(), key=lambda r: r["id"])
    return {"schema": ds.schema, "rows": rows}


def check(ours, theirs):
    assert state(ours) == state(theirs)
    for p in (ours, theirs):  # pylance keeps changing both the same way
        lance.write_dataset(table(500, 3), p, mode="append")
        lance.dataset(p).delete("id = 11")
    assert state(ours) == state(theirs)


def test_update_rewrites_rows_in_their_own_types(spark, twins):
    ours, theirs = twins
    spark.sql(f"update {catalog(spark)}.`{ours}` set n = n + 100 where id % 3 = 1")
    lance.dataset(theirs).update({"n": "n + 100"}, where="id % 3 = 1")
    check(ours, theirs)


def test_merge_rewrites_rows_in_their_own_types(spark, twins):
    ours, theirs = twins
    src = table(40, 20, 900)  # 40..54 exist, 55..59 are new
    schema = spark.read.format("lance").load(theirs).schema
    nanos = src.column("t").cast(pa.int64()).to_pylist()  # Spark reads ns timestamps as longs
    rows = [(r["id"], r["n"], r["d"], None, r["u"], t) for r, t in zip(src.to_pylist(), nanos)]
    spark.createDataFrame(rows, schema).createOrReplaceTempView("src")
    spark.sql(f"""merge into {catalog(spark)}.`{ours}` t using src on t.id = src.id
                  when matched then update set *
                  when not matched then insert *""")
    (
        lance.dataset(theirs)
        .merge_insert("id")
        .when_matched_update_all()
        .when_not_matched_insert_all()
        .execute(src)
    )
    check(ours, theirs)


def test_compaction_rewrites_rows_in_their_own_types(spark, twins):
    ours, theirs = twins
    got = spark_lance.compact_files(spark, ours)
    want = lance.dataset(theirs).optimize.compact_files()
    assert got["fragments_removed"] == want.fragments_removed
    assert got["fragments_added"] == want.fragments_added
    check(ours, theirs)
