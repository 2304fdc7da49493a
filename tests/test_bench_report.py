"""The benchmark's own logic that decides what its report says: which answers count as the
same, how many threads pylance gets per Spark master, which tables are shown."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from benchlib import report  # noqa: E402
from benchlib.pylance_ref import task_slots  # noqa: E402
from benchlib.queries import queries  # noqa: E402

# Checks the benchmark report writer, which runs on the default line.
pytestmark = pytest.mark.default_line_only


@pytest.mark.parametrize(
    "master,slots",
    [
        ("local", 1),
        ("local[1]", 1),
        ("local[3]", 3),
        ("local[2, 4]", 2),
        ("local[2,4]", 2),
        ("local[*]", os.cpu_count()),
        ("spark://host:7077", os.cpu_count()),
        ("local-cluster[2,1,1024]", os.cpu_count()),
    ],
)
def test_pylance_gets_as_many_threads_as_the_master_has_task_slots(master, slots):
    assert task_slots(master) == slots


@pytest.mark.parametrize(
    "a,b,same",
    [
        ("9999999", "9999999", True),
        ("9437193", "9999999", False),  # lance-spark's TopN answer at 0.0.14
        ("110000000", "110000001", False),
        ("-1234.5678901234", "-1234.5678901235", True),  # floating sums: the order of addition
        ("1.0", "1.001", False),
        ("2024-04-26 17:46:39.999999+00:00", "2024-04-26 17:46:39.999999", True),
        ("2024-04-26 17:46:39+00:00", "2024-04-26 17:46:38", False),
        (None, "5", True),
        ("None", "5", True),  # a `noop` write returns nothing
        ("abc", "abd", False),
    ],
)
def test_answers_agree_only_when_they_are_the_same_value(a, b, same):
    assert report.same_answer(a, b) is same
    assert report.same_answer(b, a) is same


def scan(fmt, name, master, rate):
    return dict(engine="ours", format=fmt, query=name, master=master, rows_per_s=rate)


def test_other_masters_get_a_table_only_when_they_ran_scans():
    qs = queries(1000)
    name = qs[0]["name"]
    res = [
        scan("parquet", name, "local[1]", 1e6),
        scan("lance2.2", name, "local[1]", 2e6),
        # TPC-H records its own master; it ran no scan query there
        dict(
            section="tpch",
            engine="ours",
            format="lance",
            table="orders",
            master="local[2]",
            write_s=1.0,
        ),
    ]
    assert report.other_master_tables(res, qs, "local[1]") == []
    res += [scan("parquet", name, "local[2]", 2e6), scan("lance2.2", name, "local[2]", 5e6)]
    lines = report.other_master_tables(res, qs, "local[1]")
    assert "### Spark master `local[2]`" in lines
    assert [ln for ln in lines if ln.startswith(f"| {name} ")] == [
        f"| {name} | 2.0 | 5.0 | — | 2.50 | — |"
    ]


def test_a_run_without_writes_gets_no_write_table():
    sizes = [
        dict(
            section="prep",
            engine="pylance",
            format="lance2.2",
            query="size_mixed",
            bytes_on_disk=5.59e9,
        )
    ]
    assert report.write_table([], 500_000) == []
    assert report.write_table(sizes, 500_000) == [
        "",
        "Scan data sets (made once, reused): mixed lance2.2 5,590 MB.",
    ]
    writes = sizes + [
        dict(
            section="write",
            engine="spark",
            format="parquet",
            rows_per_s=1e5,
            median_s=5.0,
            min_s=4.9,
            max_s=5.1,
            bytes_on_disk=2.8e8,
        )
    ]
    lines = report.write_table(writes, 500_000)
    assert lines[1] == "## Writes (500,000 rows of the mixed table)"
    assert any(ln.startswith("| spark | parquet | 0.100 | 5.00 (4.90–5.10) ") for ln in lines)
    assert lines[-1] == "Scan data sets (made once, reused): mixed lance2.2 5,590 MB."


def test_the_tpch_table_says_how_many_runs_its_medians_are_of():
    from benchlib import tpch

    def q1(copy, median, runs):
        return dict(
            section="tpch",
            engine="ours",
            format=copy,
            query="q1",
            master="local[2]",
            median_s=median,
            min_s=median,
            runs=runs,
            rows=4,
            same_answer=True,
        )

    res = [q1("parquet", 2.0, 5), q1("lance-pylance", 0.5, 5), q1("lance-spark", 1.0, 5)]
    lines = tpch.table(res, 1.0, None)
    assert "median of 5 runs after a warm-up" in lines[1]
    assert "| q1 | 2.00 | 0.50 | 1.00 | 4.00 | 2.00 | equal |" in lines
    older = [{k: v for k, v in r.items() if k != "runs"} for r in res]
    assert "median of runs after a warm-up" in tpch.table(older, 1.0, None)[1]


def test_the_tpch_table_lists_each_tables_write_and_their_total():
    from benchlib import tpch

    def w(fmt, table, median, fastest=None, cpu=None):
        x = dict(
            section="tpch",
            engine="ours",
            format=fmt,
            table=table,
            master="local[2]",
            write_s=median,
        )
        if cpu is not None:
            x["cpu_s"] = cpu
        return x if fastest is None else dict(x, min_write_s=fastest)

    q1 = dict(
        section="tpch",
        engine="ours",
        format="parquet",
        query="q1",
        master="local[2]",
        median_s=1.0,
        min_s=1.0,
        runs=5,
        rows=4,
        same_answer=True,
    )
    # pylance's own writes (engine pylance) are not Spark's and stay out of the totals
    res = [
        q1,
        w("parquet", "orders", 3.0, 2.0),
        w("lance", "orders", 1.5, 1.0),
        w("parquet", "nation", 0.1),
        w("lance", "nation", 0.08),
        dict(section="tpch", engine="pylance", format="lance", table="orders", write_s=9.0),
    ]
    lines = tpch.table(res, 1.0, None)
    total = next(ln for ln in lines if ln.startswith("Spark's writes of the 2 tables"))
    assert "Parquet 3.1s, Lance 1.6s (Lance ÷ Parquet throughput 1.96)" in total
    assert "| orders | 3.000 | 1.500 | 2.00 | 2.00 | — | — | — |" in lines
    assert "| nation | 0.100 | 0.080 | 1.25 | — | — | — | — |" in lines
    assert lines.index("| orders | 3.000 | 1.500 | 2.00 | 2.00 | — | — | — |") < lines.index(
        "| nation | 0.100 | 0.080 | 1.25 | — | — | — | — |"
    )  # in TPC-H's order of tables
    assert not any(ln.startswith("Executor CPU time") for ln in lines)
    # With the executor CPU time of each write: its own ratio per table, and a total.
    res = [
        w("parquet", "orders", 3.0, cpu=4.0),
        w("lance", "orders", 1.5, cpu=2.5),
        w("parquet", "nation", 0.1, cpu=0.02),
        w("lance", "nation", 0.08, cpu=0.01),
    ]
    lines = tpch.write_lines(res)
    assert "| orders | 3.000 | 1.500 | 2.00 | — | 4.000 | 2.500 | 1.60 |" in lines
    assert "| nation | 0.100 | 0.080 | 1.25 | — | 0.020 | 0.010 | 2.00 |" in lines
    cpu = next(ln for ln in lines if ln.startswith("Executor CPU time"))
    assert "Parquet 4.0s, Lance 2.5s (Parquet ÷ Lance 1.60)" in cpu
    assert tpch.write_lines([q1]) == []
