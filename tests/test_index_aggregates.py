"""MIN/MAX (and COUNT(*)) of a whole table answered from pylance's BTREE indices, with no data
file read, equal to the values of pylance's own rows — and answered by a scan whenever an
index does not cover every fragment."""

from __future__ import annotations

import datetime

import lance
import pyarrow as pa
import pyarrow.compute as pc
import pytest

QUERY = (
    "SELECT min(id), max(id), min(k), max(k), min(s), max(s), min(d), max(d), "
    "min(n), count(*) FROM t"
)


def _rows(start, count):
    ids = list(range(start, start + count))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "k": pa.array([None if i % 5 == 0 else (i * 37) % 1001 - 500 for i in ids], pa.int32()),
            "s": pa.array([f"v{(i * 7919) % 10007:05d}" for i in ids]),
            "d": pa.array(
                [datetime.date(2021, 3, 1) + datetime.timedelta(days=i % 400) for i in ids],
                pa.date32(),
            ),
            "n": pa.array([None] * count, pa.int64()),
        }
    )


@pytest.fixture(params=[False, True], ids=["addresses", "stable-row-ids"])
def indexed(request, tmp_path):
    """Every fragment covered by BTREE indices; the rows holding the extremes deleted."""
    path = str(tmp_path / "t.lance")
    lance.write_dataset(
        _rows(0, 6000), path, max_rows_per_file=1000, enable_stable_row_ids=request.param
    )
    ds = lance.dataset(path)
    for c in ["id", "k", "s", "d", "n"]:
        ds.create_scalar_index(c, "BTREE")
    lance.dataset(path).delete("id < 3 or id > 5990 or k = -500 or k = 500 or id % 7 = 1")
    return path


def _expected(path):
    t = lance.dataset(path).to_table()
    out = []
    for c in ["id", "k", "s", "d"]:
        mm = pc.min_max(t[c])
        out += [mm["min"].as_py(), mm["max"].as_py()]
    return tuple(out + [None, t.num_rows])


def _ours(spark, path):
    spark.read.format("lance").load(path).createOrReplaceTempView("t")
    df = spark.sql(QUERY)
    return tuple(df.collect()[0]), df._jdf.queryExecution().executedPlan().toString()


def test_extremes_from_indices_equal_pylances_rows(spark, indexed):
    got, plan = _ours(spark, indexed)
    assert got == _expected(indexed)
    # Answered on the driver (a LocalScan: no BatchScan of the table).
    assert "LocalTableScan" in plan and "BatchScan" not in plan, plan


def test_an_uncovered_fragment_is_scanned(spark, indexed):
    lance.write_dataset(_rows(-50, 20), indexed, mode="append")
    got, plan = _ours(spark, indexed)
    assert got == _expected(indexed)
    assert "BatchScan" in plan


def test_without_indices_or_with_a_filter_the_scan_answers(spark, indexed):
    spark.read.format("lance").option("use_scalar_index", "false").load(
        indexed
    ).createOrReplaceTempView("t")
    df = spark.sql(QUERY)
    assert tuple(df.collect()[0]) == _expected(indexed)
    assert "BatchScan" in df._jdf.queryExecution().executedPlan().toString()
    df = spark.read.format("lance").load(indexed).where("id > 100").selectExpr("min(k)")
    want = pc.min_max(lance.dataset(indexed).to_table(filter="id > 100")["k"])["min"].as_py()
    assert df.collect()[0][0] == want
