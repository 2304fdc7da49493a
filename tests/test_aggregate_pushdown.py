"""Aggregate push-down: a Lance scan aggregates each task's rows (COUNT, SUM of exact integer
and decimal expressions, MIN/MAX, grouped by plain columns) and Spark adds the partials up.
Every answer is checked against Spark's own aggregation of a Parquet copy of pylance's rows;
the plans show which aggregations the scan took and which it left to Spark."""

from __future__ import annotations

import datetime as dt
import math
import random
from decimal import Decimal

import lance
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from support import values_equal


def rows(n: int, seed: int) -> pa.Table:
    rng = random.Random(seed)

    def maybe(v, p=0.05):
        return None if rng.random() < p else v

    groups = ["A", "N", "R", "", "a longer group name", "日本"]
    return pa.table(
        {
            "g": pa.array([maybe(rng.choice(groups)) for _ in range(n)]),
            "flag": pa.array([maybe(rng.random() < 0.5) for _ in range(n)]),
            "k": pa.array([maybe(rng.randrange(-50, 50)) for _ in range(n)], pa.int64()),
            "i": pa.array([maybe(rng.randrange(-(2**31), 2**31)) for _ in range(n)], pa.int32()),
            "day": pa.array(
                [
                    maybe(dt.date(1992, 1, 1) + dt.timedelta(days=rng.randrange(2500)))
                    for _ in range(n)
                ]
            ),
            "price": pa.array(
                [maybe(Decimal(rng.randrange(-(10**9), 10**9)) / 100) for _ in range(n)],
                pa.decimal128(15, 2),
            ),
            "disc": pa.array(
                [maybe(Decimal(rng.randrange(0, 11)) / 100) for _ in range(n)], pa.decimal128(15, 2)
            ),
            # Small precision: a task's partial sum does not fit the column's own type.
            "qty": pa.array(
                [maybe(Decimal(rng.randrange(0, 99999)) / 100) for _ in range(n)],
                pa.decimal128(5, 2),
            ),
            # Products of these leave a long.
            "huge": pa.array(
                [maybe(Decimal(rng.randrange(-(10**18) + 1, 10**18))) for _ in range(n)],
                pa.decimal128(18, 0),
            ),
            "x": pa.array([maybe(rng.random() * 100) for _ in range(n)], pa.float64()),
            # Mostly distinct strings of 1- to 4-byte characters; binary values.
            "s": pa.array(
                [
                    maybe("".join(rng.choice("aZ é€😀") for _ in range(rng.randrange(40))))
                    for _ in range(n)
                ]
            ),
            "bin": pa.array(
                [maybe(rng.randbytes(rng.randrange(20))) for _ in range(n)], pa.binary()
            ),
        }
    )


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """`t`: 6,000 rows in 6 fragments, some deleted; `empty`: no rows; Parquet copies."""
    tmp = tmp_path_factory.mktemp("agg")
    paths = {"t": str(tmp / "t"), "empty": str(tmp / "empty")}
    lance.write_dataset(rows(6000, 5), paths["t"], max_rows_per_file=1000)
    lance.dataset(paths["t"]).delete("k > 40")
    lance.write_dataset(rows(10, 1).slice(0, 0), paths["empty"])
    for name in ("t", "empty"):
        pq.write_table(lance.dataset(paths[name]).to_table(), str(tmp / f"{name}.parquet"))
        paths[name + "_parquet"] = str(tmp / f"{name}.parquet")
    return paths


def answer(spark, paths, sql, fmt="lance", **opts):
    for name in ("t", "empty"):
        df = (
            spark.read.format("lance").options(**opts).load(paths[name])
            if fmt == "lance"
            else spark.read.parquet(paths[name + "_parquet"])
        )
        df.createOrReplaceTempView(name)
    df = spark.sql(sql)
    got = df.collect()
    return got, df._jdf.queryExecution().executedPlan().toString()


def check(spark, paths, sql, pushed: bool, **opts):
    got, plan = answer(spark, paths, sql, **opts)
    want, _ = answer(spark, paths, sql, fmt="parquet")
    assert len(got) == len(want), sql
    key = lambda r: [(v is None, str(v)) for v in r]  # noqa: E731
    for a, b in zip(sorted(got, key=key), sorted(want, key=key)):
        for x, y in zip(a, b):
            assert type(x) is type(y), (sql, a, b)
            # Spark's own floating-point sums depend on how rows fall into tasks.
            same = (
                math.isclose(x, y, rel_tol=1e-12) if isinstance(x, float) else (values_equal(x, y))
            )
            assert same, (sql, a, b)
    assert ("PartialAggregate" in plan) == pushed, plan
    return got


def ansi(spark) -> bool:
    return spark.conf.get("spark.sql.ansi.enabled") == "true"


COLUMN_AGGREGATES = [
    "select g, count(*), count(price), sum(price), min(price), max(price), avg(qty) "
    "from t group by g",
    "select flag, day, sum(k), sum(i), min(i), max(day), sum(qty) from t group by flag, day",
    "select k, sum(huge), max(huge), min(disc) from t where day < date '1995-06-01' group by k",
    "select count(*), sum(qty), sum(price), min(day), max(k) from t where g = 'A'",
    "select sum(qty), count(*) from t where k = 1000",  # no row passes: one partial row
    "select g, sum(qty) from t where k = 1000 group by g",  # no row, no group
]


@pytest.mark.parametrize("sql", COLUMN_AGGREGATES)
def test_column_aggregates_are_computed_by_the_scan(spark, tables, sql):
    # Every grouping pushed, however few rows it folds (see test_groupings_... below).
    check(spark, tables, sql, pushed=True, aggregate_pushdown_group_share="1")


EXPRESSION_AGGREGATES = [
    # TPC-H q1's shape: products of decimals, literals cast by Spark's rules.
    "select g, flag, sum(price * (1 - disc)), sum(price * (1 - disc) * (1 + disc)), "
    "avg(disc), count(*) from t where day <= date '1998-09-02' group by g, flag",
    "select sum(price * disc) from t where day >= date '1994-01-01' and k < 24",
    "select g, sum(huge * k), sum(huge + huge), sum(k * 3 - i) from t group by g",
    "select k, sum(qty * 2), sum(qty + price), sum(i + 1) from t group by k",
]


@pytest.mark.parametrize("sql", EXPRESSION_AGGREGATES)
def test_exact_expressions_are_summed_by_the_scan(spark, tables, sql):
    # Spark hands sources arithmetic only in ANSI mode (Spark 4's default).
    check(spark, tables, sql, pushed=ansi(spark))


LENGTH_AGGREGATES = [
    # (query, whether it has arithmetic): `g` is low-cardinality (dictionary-encoded), `s`
    # mostly distinct.
    ("select sum(length(g)), sum(length(s)), count(length(s)) from t", False),
    ("select g, sum(bit_length(g)), sum(bit_length(s)), count(*) from t group by g", False),
    ("select flag, sum(length(g)), sum(char_length(s)) from t where i > 0 group by flag", False),
    ("select min(length(s)), max(length(s)), max(bit_length(g)), min(length(g)) from t", False),
    ("select g, max(length(s)), min(bit_length(s)) from t where k > 10 group by g", False),
    (
        "select k, sum(length(s) * 2 + length(g)), sum(length(s) - k) from t where k < 0 "
        "group by k",
        True,
    ),
]


@pytest.mark.parametrize("sql,arithmetic", LENGTH_AGGREGATES)
def test_lengths_of_strings_are_aggregated_by_the_scan(spark, tables, sql, arithmetic):
    # Arithmetic reaches sources only in ANSI mode, over lengths as over other values.
    check(spark, tables, sql, pushed=not arithmetic or ansi(spark))


DECLINED = [
    "select g, sum(x) from t group by g",  # floating point: order of addition matters
    "select g, count(distinct k) from t group by g",
    "select sum(price / (disc + 1)) from t",
    "select upper(g), sum(k) from t group by upper(g)",
    "select g, max(g) from t group by g",
    "select max(length(s) + 1) from t",  # MIN/MAX of columns and lengths only
    "select sum(length(upper(s))) from t",
    "select sum(length(bin)) from t",  # Spark hands sources no length of binary values
]


@pytest.mark.parametrize("sql", DECLINED)
def test_other_aggregations_are_left_to_spark(spark, tables, sql):
    check(spark, tables, sql, pushed=False)


def test_an_empty_table_counts_zero(spark, tables):
    got = check(
        spark, tables, "select count(*), sum(k), max(day) from empty where k > 1", pushed=True
    )
    assert [tuple(r) for r in got] == [(0, None, None)]


def test_the_option_turns_it_off(spark, tables):
    sql = "select g, sum(k) from t group by g"
    check(spark, tables, sql, pushed=False, aggregate_pushdown="false")


GROUPINGS = [
    # (query, whether the scan groups it by default): a task of about 2,700 rows.
    ("select flag, day, sum(k), max(i) from t group by flag, day", False),  # ~1 row each
    ("select i, count(*), sum(qty) from t where k < 0 group by i", False),  # distinct
    ("select k, sum(qty), min(day) from t group by k", True),  # 91 keys
    ("select g, flag, count(*) from t where day > date '1995-01-01' group by g, flag", True),
]


@pytest.mark.parametrize("sql,folds", GROUPINGS)
def test_groupings_that_fold_few_rows_are_left_to_spark(spark, tables, sql, folds):
    # A sample of the first task's keys estimates how many groups a task makes; a grouping
    # of about one row per group is left to Spark, which aggregates the partials anyway.
    check(spark, tables, sql, pushed=folds)
    check(spark, tables, sql, pushed=True, aggregate_pushdown_group_share="1")
    # The fewest groups here, 21 in a task's 1,600 rows, are 0.013 groups per row.
    check(spark, tables, sql, pushed=False, aggregate_pushdown_group_share="0.001")


@pytest.mark.parametrize("value", ["0", "1.5", "half", "-0.2", "NaN"])
def test_a_group_share_outside_0_to_1_is_refused(spark, tables, value):
    with pytest.raises(Exception, match="aggregate_pushdown_group_share"):
        answer(
            spark,
            tables,
            "select g, sum(k) from t group by g",
            aggregate_pushdown_group_share=value,
        )


def test_a_sum_too_large_for_its_column_type_is_returned_in_parts(spark, tables):
    # 6,000 quantities of at most 999.99 sum far beyond decimal(5,2): each task's partial goes
    # back in several rows, each within decimal(5,2), so Spark's cast before adding succeeds.
    got = check(spark, tables, "select sum(qty) from t", pushed=True)
    assert got[0][0] > Decimal("99999.99")


def test_a_small_grouped_aggregate_is_planned_for_broadcast_as_over_parquet(spark, tables):
    # The scan reports the statistics Spark gives an aggregate (the input's bytes scaled by
    # the row widths), so a join with a large relation broadcasts the small aggregated side.
    spark.range(0, 5_000_000).createOrReplaceTempView("big")
    sql = (
        "select a.k, a.s, big.id from (select k, sum(i) s from t group by k) a "
        "join big on a.k = big.id"
    )
    plans = {}
    for fmt in ("lance", "parquet"):
        df = (
            spark.read.format("lance").load(tables["t"])
            if fmt == "lance"
            else spark.read.parquet(tables["t_parquet"])
        )
        df.createOrReplaceTempView("t")
        joined = spark.sql(sql)
        plans[fmt] = joined._jdf.queryExecution().executedPlan().toString()  # before running
    assert "BroadcastHashJoin" in plans["parquet"], plans["parquet"]
    assert "BroadcastHashJoin" in plans["lance"], plans["lance"]
    assert "PartialAggregate" in plans["lance"], plans["lance"]
    check(spark, tables, sql, pushed=True)


@pytest.mark.parametrize(
    "sql",
    [
        "select sum(qty), count(*) from t where k > 3",  # the scan aggregates
        "select g, qty from t where k > 3",  # the scan returns columnar batches
        "select g, sum(qty) from t where k > 3 group by g",  # a sample of the keys is read
    ],
)
def test_planning_a_scan_broadcasts_nothing(spark, tables, sql):
    # The reader factory (and its broadcast of the storage settings) is made when the query
    # runs, not each time Spark asks at planning whether the scan is columnar: ids of
    # broadcasts made just before and just after planning are consecutive.
    spark.read.format("lance").load(tables["t"]).createOrReplaceTempView("t")
    df = spark.sql(sql)
    before = spark.sparkContext.broadcast(0)
    df._jdf.queryExecution().executedPlan()
    after = spark.sparkContext.broadcast(0)
    assert after._jbroadcast.id() == before._jbroadcast.id() + 1
    for b in (before, after):
        b.destroy()


def scan_partitions(spark, df):
    """The partitions of each Lance scan in the plan Spark makes with AQE off."""
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    try:
        leaves = df._jdf.queryExecution().executedPlan().collectLeaves()
        scans = [leaves.apply(i) for i in range(leaves.size())]
        return [s.inputPartitions().size() for s in scans if s.nodeName().startswith("BatchScan")]
    finally:
        spark.conf.unset("spark.sql.adaptive.enabled")


def test_rows_of_nearly_distinct_groups_go_to_spark_in_one_split_per_core(spark, tmp_path):
    # A task's partial aggregation of such keys leaves about as many rows as it read: the fewer
    # the tasks, the fewer rows Spark exchanges and merges. So under a grouping the sample left
    # to Spark, the scan plans one split per core (two here) where the file rule gives more
    # (splits of at most spark.sql.files.maxPartitionBytes of whole rows), as long as a split
    # decodes no more than that of the columns it reads.
    import numpy as np

    n = 300_000
    rng = np.random.default_rng(3)
    t = pa.table(
        {
            "id": pa.array(np.arange(n), pa.int64()),
            "k": pa.array(rng.integers(0, 10, n), pa.int64()),
            "pad": pa.array([f"{x:032x}" for x in rng.integers(0, 2**62, n)]),
        }
    )
    path = str(tmp_path / "ds")
    lance.write_dataset(t, path)
    data = tmp_path / "ds" / "data"
    total = sum(f.stat().st_size for f in data.iterdir())
    sql = "select id, sum(k) from t group by id"
    confs = {
        "spark.sql.files.maxPartitionBytes": str(total // 3),
        "spark.sql.files.openCostInBytes": "1024",
    }
    try:
        for k, v in confs.items():
            spark.conf.set(k, v)
        plain = spark.read.format("lance").load(path)
        plain.createOrReplaceTempView("t")
        by_rule = plain.select("id", "k").rdd.getNumPartitions()
        assert by_rule > 2
        declined = spark.sql(sql)
        assert scan_partitions(spark, declined) == [2]
        got = sorted(tuple(r) for r in declined.collect())
        # Pushed (every grouping, whatever it folds), the scan keeps the file rule's splits.
        spark.read.format("lance").option("aggregate_pushdown_group_share", "1").load(
            path
        ).createOrReplaceTempView("t")
        pushed = spark.sql(sql)
        assert scan_partitions(spark, pushed) == [by_rule]
        assert "PartialAggregate" in pushed._jdf.queryExecution().executedPlan().toString()
        assert sorted(tuple(r) for r in pushed.collect()) == got
    finally:
        for k in confs:
            spark.conf.unset(k)
    want = lance.dataset(path).to_table().group_by("id").aggregate([("k", "sum")])
    assert got == sorted(zip(want["id"].to_pylist(), want["k_sum"].to_pylist()))
