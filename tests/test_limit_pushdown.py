"""LIMIT pushed into the Lance scan: the rows pylance's `to_table(limit=…)` returns (fragment
order, deleted rows never), with only the fragments that hold them read."""

from __future__ import annotations

import lance
import pyarrow as pa
import pytest

from support import scan_metrics

ROWS, PER_FRAGMENT = 1000, 100


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("limit") / "t.lance")
    lance.write_dataset(pa.table({"id": pa.array(range(ROWS), pa.int64()),
                                  "s": [f"v{i}" for i in range(ROWS)]}),
                        path, max_rows_per_file=PER_FRAGMENT)
    lance.dataset(path).delete("id % 7 = 3 or (id >= 100 and id < 200)")
    return path


@pytest.mark.parametrize("n", [0, 1, 85, 86, 87, 250, 2000])
def test_limit_returns_pylances_rows_and_reads_only_what_it_needs(spark, table, n):
    want = lance.dataset(table).to_table(limit=n)["id"].to_pylist()
    df = spark.read.format("lance").load(table).limit(n)
    assert [r["id"] for r in df.collect()] == want
    if n > 0:
        live = [f.count_rows() for f in lance.dataset(table).get_fragments()]
        needed = next((k + 1 for k in range(len(live)) if sum(live[:k + 1]) >= n), len(live))
        metrics = scan_metrics(spark, df)
        assert metrics["fragmentsRead"] <= needed


def test_limit_over_a_pushed_filter(spark, table):
    want = lance.dataset(table).to_table(filter="id % 3 = 0", limit=7)["id"].to_pylist()
    df = spark.read.format("lance").load(table).where("id % 3 = 0").limit(7)
    assert [r["id"] for r in df.collect()] == want
    assert "Limit: 7" in df._jdf.queryExecution().executedPlan().toString()


def test_limit_is_part_of_the_scan_identity(spark, table):
    """Two scans differing only in their limit are not one exchange."""
    base = spark.read.format("lance").load(table)
    a, b = base.limit(5), base.limit(500)
    assert a.count() == 5 and b.count() == 500
    both = a.union(b)
    assert both.count() == 505
