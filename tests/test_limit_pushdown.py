"""LIMIT pushed into the Lance scan: the rows pylance's `to_table(limit=…)` returns (fragment
order, deleted rows never), with only the fragments that hold them read."""

from __future__ import annotations

import lance
import pyarrow as pa
import pytest

from support import remainder_reaches_sources, scan_metrics

ROWS, PER_FRAGMENT = 1000, 100


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("limit") / "t.lance")
    lance.write_dataset(
        pa.table({"id": pa.array(range(ROWS), pa.int64()), "s": [f"v{i}" for i in range(ROWS)]}),
        path,
        max_rows_per_file=PER_FRAGMENT,
    )
    lance.dataset(path).delete("id % 7 = 3 or (id >= 100 and id < 200)")
    return path


@pytest.mark.parametrize("n", [0, 1, 85, 86, 87, 250, 2000])
def test_limit_returns_pylances_rows_and_reads_only_what_it_needs(spark, table, n):
    want = lance.dataset(table).to_table(limit=n)["id"].to_pylist()
    df = spark.read.format("lance").load(table).limit(n)
    assert [r["id"] for r in df.collect()] == want
    if n > 0:
        live = [f.count_rows() for f in lance.dataset(table).get_fragments()]
        needed = next((k + 1 for k in range(len(live)) if sum(live[: k + 1]) >= n), len(live))
        metrics = scan_metrics(spark, df)
        assert metrics["fragmentsRead"] <= needed


@pytest.mark.line_smoke
def test_limit_over_a_pushed_filter(spark, table):
    want = lance.dataset(table).to_table(filter="id % 3 = 0", limit=7)["id"].to_pylist()
    df = spark.read.format("lance").load(table).where("id % 3 = 0").limit(7)
    assert [r["id"] for r in df.collect()] == want
    plan = df._jdf.queryExecution().executedPlan().toString()
    if remainder_reaches_sources(spark):
        assert "Limit: 7" in plan
    else:  # Spark 3.5 (not ANSI) keeps `id % 3` above the scan: no limit may pass under it
        assert "Limit: 7" not in plan, plan


def test_limit_is_part_of_the_scan_identity(spark, table):
    """Two scans differing only in their limit are not one exchange."""
    base = spark.read.format("lance").load(table)
    a, b = base.limit(5), base.limit(500)
    assert a.count() == 5 and b.count() == 500
    both = a.union(b)
    assert both.count() == 505


WINDOWS = [
    (0, 5),
    (1, 10),
    (84, 3),
    (85, 2),
    (86, 1),
    (95, 20),
    (150, 100),
    (850, 10),
    (857, 50),
    (2000, 5),
    (40, None),
    (857, None),
    (5000, None),
    (0, 0),
]


@pytest.mark.parametrize("offset,n", WINDOWS)
def test_offset_and_limit_return_pylances_rows(spark, table, offset, n):
    """`offset(m).limit(n)` and `LIMIT n OFFSET m` give pylance's `to_table(offset=, limit=)`:
    rows skipped and counted in table order, deleted rows never, across fragment ends."""
    want = lance.dataset(table).to_table(offset=offset, limit=n)["id"].to_pylist()
    df = spark.read.format("lance").load(table).offset(offset)
    if n is not None:
        df = df.limit(n)
    assert [r["id"] for r in df.collect()] == want
    if n is not None:
        spark.read.format("lance").load(table).createOrReplaceTempView("windowed")
        sql = spark.sql(f"SELECT id FROM windowed LIMIT {n} OFFSET {offset}")
        assert [r["id"] for r in sql.collect()] == want
        # Both are answered by the scan: Spark keeps neither its limit nor its offset.
        plan = sql._jdf.queryExecution().executedPlan().toString()
        assert f"Offset: {offset}" in plan or offset == 0, plan
        assert "GlobalLimit" not in plan and "CollectLimit" not in plan, plan
        assert "OffsetExec" not in plan and "GlobalLimitAndOffset" not in plan, plan


def test_offset_reads_only_the_fragments_of_its_window(spark, table):
    live = [f.count_rows() for f in lance.dataset(table).get_fragments()]
    offset, n = sum(live[:4]) + 3, 5  # inside the fifth fragment
    df = spark.read.format("lance").load(table).offset(offset).limit(n)
    want = lance.dataset(table).to_table(offset=offset, limit=n)["id"].to_pylist()
    assert [r["id"] for r in df.collect()] == want
    assert scan_metrics(spark, df)["fragmentsRead"] == 1


def test_offset_over_a_pushed_filter_is_left_to_spark(spark, table):
    """With a filter, the rows to skip are only known by reading: Spark applies the offset."""
    want = lance.dataset(table).to_table(filter="id % 3 = 0", offset=4, limit=6)["id"]
    df = spark.read.format("lance").load(table).where("id % 3 = 0").offset(4).limit(6)
    assert [r["id"] for r in df.collect()] == want.to_pylist()
    assert "Offset:" not in df._jdf.queryExecution().executedPlan().toString()


def test_offset_is_part_of_the_scan_identity(spark, table):
    """Scans differing only in their offset are not one exchange."""
    base = spark.read.format("lance").load(table)
    a, b = base.offset(10).limit(5), base.offset(20).limit(5)
    got = sorted(r["id"] for r in a.union(b).collect())
    ds = lance.dataset(table)
    want = sorted(
        ds.to_table(offset=10, limit=5)["id"].to_pylist()
        + ds.to_table(offset=20, limit=5)["id"].to_pylist()
    )
    assert got == want
