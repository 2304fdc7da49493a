"""Runtime filtering: Spark's dynamic pruning hands a Lance scan the join keys of a selective
small Lance table (KeepFiltersForPruning), and an aggregated Lance scan joined with such a
table, or a Lance table joined on a key equal to that table's, is semi-joined with it first
(SemiJoinReduction); an IN subquery keeping few groups of an aggregation prunes the Lance
scans it filters (InSubqueryPruning), and the keys of the selective outer rows of an EXISTS
subquery prune the Lance scan in it (ExistsPruning); a large Lance table joined with a small
one that a join above reduces is pruned by the reduced keys, and so are the EXISTS subqueries
on its rows and a large table joined with them (JoinedKeyPruning); a large Lance table joined
with a filtered one too large to broadcast is pruned by its keys (FilteredJoinPruning).
Answers are checked against Spark's own answer on Parquet copies of pylance's rows, with the
rules off, and in the plans. The datasets here are tiny, so the module offers every one of
them to Spark's own pruning (`runtime_filter_min_bytes` 0); the last test checks the
default."""

from __future__ import annotations

import pathlib
import random

import lance
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

DPP = "spark.sql.optimizer.dynamicPartitionPruning.enabled"
MIN_BYTES = "spark.datasource.lance.runtime_filter_min_bytes"


@pytest.fixture(autouse=True)
def every_dataset_prunable(spark):
    spark.conf.set(MIN_BYTES, "0")
    yield
    spark.conf.unset(MIN_BYTES)


def write(tmp_path, name, table, **kw):
    path = str(tmp_path / name)
    lance.write_dataset(table, path, **kw)
    return path


@pytest.fixture(scope="module")
def parts_and_items(tmp_path_factory):
    """`part` (200 rows), `item` (6000 rows in 6 fragments, some deleted, null keys),
    `supply` (3000 rows in 3 fragments, null keys) and `brand` (6 rows, groups of brands)."""
    tmp = tmp_path_factory.mktemp("rf")
    rng = random.Random(17)
    brands = [f"Brand#{i}" for i in range(1, 6)]
    boxes = ["SM BOX", "MED BOX", "LG BOX", "JUMBO PACK"]
    part = pa.table(
        {
            "p_key": pa.array(range(200), pa.int64()),
            "p_name": pa.array([f"part {i:03d}" for i in range(200)]),
            "p_brand": pa.array([rng.choice(brands) for _ in range(200)]),
            "p_box": pa.array([rng.choice(boxes) for _ in range(200)]),
            "p_size": pa.array([rng.randint(1, 50) for _ in range(200)], pa.int32()),
        }
    )
    n = 6000
    item = pa.table(
        {
            "i_key": pa.array(
                [None if i % 97 == 0 else rng.randrange(210) for i in range(n)], pa.int64()
            ),
            "i_name": pa.array([f"part {rng.randrange(210):03d}" for _ in range(n)]),
            "i_qty": pa.array([float(rng.randint(1, 50)) for _ in range(n)], pa.float64()),
            "i_price": pa.array([rng.randint(100, 10000) / 100 for _ in range(n)], pa.float64()),
        }
    )
    supply = pa.table(
        {
            "s_part": pa.array(
                [None if i % 89 == 0 else rng.randrange(210) for i in range(3000)], pa.int64()
            ),
            "s_cost": pa.array([rng.randint(100, 5000) / 100 for _ in range(3000)], pa.float64()),
        }
    )
    brand = pa.table(
        {  # Brand#9 has no parts
            "b_name": pa.array([f"Brand#{i}" for i in (1, 2, 3, 4, 5, 9)]),
            "b_group": pa.array(["east", "east", "west", "north", "north", "south"]),
        }
    )
    paths = {
        "part": write(tmp, "part", part),
        "brand": write(tmp, "brand", brand),
        "item": write(tmp, "item", item, max_rows_per_file=1000),
        "supply": write(tmp, "supply", supply, max_rows_per_file=1000),
    }
    ds = lance.dataset(paths["item"])
    ds.delete("i_qty > 45")
    for name, path in list(paths.items()):  # Parquet copies of what pylance reads
        pq.write_table(lance.dataset(path).to_table(), str(tmp / f"{name}.parquet"))
        paths[name + "_parquet"] = str(tmp / f"{name}.parquet")
    return paths


def views(spark, paths, fmt):
    for name in ("part", "item", "supply", "brand"):
        if name not in paths:
            continue
        df = (
            spark.read.format("lance").load(paths[name])
            if fmt == "lance"
            else spark.read.parquet(paths[name + "_parquet"])
        )
        df.createOrReplaceTempView(name)


def answer(spark, paths, sql, fmt="lance", dpp=True):
    spark.conf.set(DPP, str(dpp).lower())
    try:
        views(spark, paths, fmt)
        df = spark.sql(sql)
        rows = sorted(tuple(r) for r in df.collect())
        plan = df._jdf.queryExecution().executedPlan().toString()
        return rows, plan
    finally:
        spark.conf.unset(DPP)


def same(got, want):
    """Rows equal, doubles up to summation order."""
    return len(got) == len(want) and all(
        len(g) == len(w)
        and all(
            a == pytest.approx(b) if isinstance(b, float) and a is not None else a == b
            for a, b in zip(g, w)
        )
        for g, w in zip(got, want)
    )


def item_scans(plan, path):
    """The lines of the plan (AQE's final and initial) that scan the table at `path` (`item`),
    with their runtime filters."""
    return [ln for ln in plan.splitlines() if f"LanceScan lance.`{path}`" in ln]


def final_plan(plan):
    """AQE's final plan, without its initial one (the subqueries' plans print both too)."""
    return plan.split("\n+- == Initial Plan ==")[0]


def pruned_at_run_time(plan, path, column):
    """Whether a scan of the table at `path` in AQE's final plan has a runtime filter on
    `column` (Spark's pruning bound to a broadcast it cannot reuse shows as
    `dynamicpruningexpression(true)` there)."""
    return any(
        f"RuntimeFilters: [dynamicpruningexpression({column}" in s
        for s in item_scans(final_plan(plan), path)
    )


# q17's shape: the items of selective parts whose quantity is under a fifth of the part's
# average quantity (a correlated aggregate over all items).
Q17 = """SELECT sum(i_price) / 7.0, count(*) FROM item, part
WHERE p_key = i_key AND p_brand = '{brand}' AND p_box = '{box}'
AND i_qty < (SELECT 0.2 * avg(i_qty) FROM item WHERE i_key = p_key)"""

# A plain join of a selective small side with the large one.
JOIN = """SELECT i_key, i_qty, p_brand FROM item JOIN part ON i_key = p_key
WHERE p_brand = '{brand}' AND p_size < {size}"""

# Join on a string key.
BY_NAME = """SELECT i_name, i_price FROM item JOIN part ON i_name = p_name
WHERE p_box = '{box}' AND p_size > {size}"""


@pytest.mark.parametrize(
    "brand,box", [("Brand#1", "MED BOX"), ("Brand#3", "SM BOX"), ("Brand#9", "LG BOX")]
)
def test_a_correlated_aggregate_is_reduced_to_the_selective_keys(
    spark, parts_and_items, brand, box
):
    sql = Q17.format(brand=brand, box=box)
    want, _ = answer(spark, parts_and_items, sql, fmt="parquet")
    got, plan = answer(spark, parts_and_items, sql)
    assert same(got, want), (got, want)
    off, off_plan = answer(spark, parts_and_items, sql, dpp=False)
    assert same(off, want)
    assert "LeftSemi" in plan and "LeftSemi" not in off_plan
    scans = item_scans(plan, parts_and_items["item"])
    assert len(scans) >= 2, plan
    # The aggregated scan of item (the one without i_price) is pruned by part's keys, through
    # the broadcast of the semi join.
    aggregated = [s for s in scans if "i_price" not in s.split("LanceScan", 1)[1]]
    assert aggregated, plan
    assert all("RuntimeFilters: [dynamicpruningexpression(i_key" in s for s in aggregated), plan


@pytest.mark.parametrize("brand,size", [("Brand#2", 10), ("Brand#4", 40), ("Brand#5", 0)])
def test_join_keys_prune_the_scan_with_the_same_rows(spark, parts_and_items, brand, size):
    sql = JOIN.format(brand=brand, size=size)
    want, _ = answer(spark, parts_and_items, sql, fmt="parquet")
    got, plan = answer(spark, parts_and_items, sql)
    assert got == want
    assert answer(spark, parts_and_items, sql, dpp=False)[0] == want
    scans = item_scans(plan, parts_and_items["item"])
    assert scans and "dynamicpruningexpression(i_key" in scans[0], plan
    # The part side keeps its pushed filter for Spark to see (and still pushes it).
    lines = plan.splitlines()
    assert any("Filter" in ln and f"= {brand})" in ln for ln in lines), plan
    assert any("PushedFilters: [" in ln and f"p_brand = '{brand}'" in ln for ln in lines), plan


@pytest.mark.parametrize("box,size", [("JUMBO PACK", 25), ("SM BOX", 45)])
def test_string_join_keys_prune_the_scan_with_the_same_rows(spark, parts_and_items, box, size):
    sql = BY_NAME.format(box=box, size=size)
    want, _ = answer(spark, parts_and_items, sql, fmt="parquet")
    got, plan = answer(spark, parts_and_items, sql)
    assert got == want
    scans = item_scans(plan, parts_and_items["item"])
    assert scans and "dynamicpruningexpression(i_name" in scans[0], plan


def test_a_side_filtered_by_a_like_alone_still_prunes_the_scan_joined_with_it(
    spark, parts_and_items
):
    """The part scan evaluates the LIKE (LikePushDown) and, the side being marked for Spark's
    pruning, Spark's filter keeps it too: the item scan is pruned by the keys of the parts
    kept."""
    sql = "SELECT i_key, i_qty FROM item JOIN part ON i_key = p_key WHERE p_box LIKE 'S%B%X'"
    want, _ = answer(spark, parts_and_items, sql, fmt="parquet")
    got, plan = answer(spark, parts_and_items, sql)
    assert got == want and want
    scans = item_scans(plan, parts_and_items["item"])
    assert scans and "dynamicpruningexpression(i_key" in scans[0], plan
    lines = plan.splitlines()
    assert any("Filter" in ln and "S%B%X" in ln and "LanceScan" not in ln for ln in lines), plan
    assert any("LanceScan" in ln and "LIKE 'S%B%X'" in ln for ln in lines), plan


# q18's shape: the keys whose items add up to a large quantity, and their items.
Q18 = """SELECT i_key, sum(i_qty), count(*) FROM item
WHERE i_key IN (SELECT i_key FROM item GROUP BY i_key HAVING sum(i_qty) > {least})
GROUP BY i_key"""


@pytest.mark.parametrize("least", [650, 800, 100000])
def test_an_in_subquery_of_few_groups_prunes_the_scan_it_filters(spark, parts_and_items, least):
    """Without broadcasts (as when the aggregation is too large for one), only this rule can
    hand the subquery's keys to the scan."""
    want, plan = answers_at_threshold(spark, parts_and_items, Q18.format(least=least), -1)
    if least > 1000:  # no group qualifies: Spark's adaptive plan drops the join and its scans
        assert not want
        return
    # Spark's own pruning, bound to a broadcast, is planned too but does not apply.
    assert want and pruned_at_run_time(plan, parts_and_items["item"], "i_key"), plan


# q9's shape: the supplies of the items of parts picked by name, joined by the item's key. Spark
# prunes `item` by the parts' keys; `supply` only meets them through `item`.
Q9 = """SELECT p_box, sum(i_price - s_cost * i_qty), count(*) FROM part, item, supply
WHERE p_key = i_key AND s_part = i_key AND p_name LIKE '%{name}%' GROUP BY p_box"""

# The same keys through an outer join, which keeps the items of other parts too.
Q9_OUTER = """SELECT count(*), sum(s_cost) FROM item
LEFT JOIN (SELECT p_key FROM part WHERE p_name LIKE '%{name}%') p ON p_key = i_key
JOIN supply ON s_part = i_key"""


@pytest.mark.parametrize("name", ["7", "00", "zz"])
def test_keys_equal_to_a_selective_tables_prune_the_scan_joined_with_them(
    spark, parts_and_items, name
):
    sql = Q9.format(name=name)
    want, _ = answer(spark, parts_and_items, sql, fmt="parquet")
    got, plan = answer(spark, parts_and_items, sql)
    off, off_plan = answer(spark, parts_and_items, sql, dpp=False)
    assert same(got, want) and same(off, want), (got, off, want)
    assert "LeftSemi" not in off_plan, off_plan
    if not want:  # no part qualifies: Spark's adaptive plan drops the joins and their scans
        return
    # Spark's own pruning of `supply`, bound to a broadcast of the other side, is planned too
    # but does not apply.
    assert pruned_at_run_time(plan, parts_and_items["supply"], "s_part"), plan


@pytest.mark.parametrize("name", ["7", "zz"])
def test_keys_an_outer_join_keeps_are_not_taken_for_its_other_sides(spark, parts_and_items, name):
    sql = Q9_OUTER.format(name=name)
    want, _ = answer(spark, parts_and_items, sql, fmt="parquet")
    got, plan = answer(spark, parts_and_items, sql)
    assert same(got, want) and want[0][0] > 0, (got, want)
    assert "LeftSemi" not in plan, plan


# q4's shape (and q21's condition on another column): the parts of a few sizes that have, or
# lack, items of a large quantity under another name.
Q4 = """SELECT p_box, count(*) FROM part WHERE p_size BETWEEN {low} AND {high} AND {exists} (
SELECT * FROM item WHERE i_key = p_key AND i_qty > 43 AND i_name <> p_name) GROUP BY p_box"""


@pytest.mark.parametrize("exists", ["EXISTS", "NOT EXISTS"])
@pytest.mark.parametrize("low,high", [(1, 5), (20, 22), (60, 70)])
def test_an_exists_subquery_scans_only_the_keys_of_its_selective_outer_rows(
    spark, parts_and_items, exists, low, high
):
    sql = Q4.format(exists=exists, low=low, high=high)
    want, _ = answer(spark, parts_and_items, sql, fmt="parquet")
    got, plan = answer(spark, parts_and_items, sql)
    off, off_plan = answer(spark, parts_and_items, sql, dpp=False)
    assert got == want and off == want, (got, off, want)
    assert "dynamicpruningexpression" not in off_plan, off_plan
    if high > 50:  # no part qualifies: Spark's adaptive plan drops the join and its scans
        assert not want
        return
    assert want and pruned_at_run_time(plan, parts_and_items["item"], "i_key"), plan


# q7's shape: the items of the parts of a group of brands, `brand` joined last. `item` meets the
# group only through `part`, which has no filter of its own.
Q7 = """SELECT b_group, count(*), sum(i_price) FROM item, part, brand
WHERE i_key = p_key AND p_brand = b_name AND b_group = '{group}' GROUP BY b_group"""

# q21's shape: of those items, the ones with (or without) a larger item of the same name under
# another key.
Q21 = """SELECT b_group, count(*) FROM item i1, part, brand
WHERE i1.i_key = p_key AND p_brand = b_name AND b_group = '{group}' AND {exists} (
SELECT * FROM item i2 WHERE i2.i_name = i1.i_name AND i2.i_key <> i1.i_key
AND i2.i_qty > i1.i_qty) GROUP BY b_group"""


def data_bytes(path):
    return sum(f.stat().st_size for f in pathlib.Path(path, "data").iterdir())


def answers_with_part_broadcast_sized(spark, paths, sql):
    """Spark's broadcast threshold at `part`'s size: `part` is then a small table for the rules
    and `item` a large one, as `supplier` and `lineitem` are in TPC-H at the default."""
    assert data_bytes(paths["item"]) > 4 * data_bytes(paths["part"])
    return answers_at_threshold(spark, paths, sql, data_bytes(paths["part"]))


def answers_at_threshold(spark, paths, sql, threshold):
    """Parquet's answer, and Lance's plan, checking that Lance's answer with and without
    dynamic pruning equals it, with Spark's broadcast threshold at `threshold` bytes."""
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", str(threshold))
    try:
        want, _ = answer(spark, paths, sql, fmt="parquet")
        got, plan = answer(spark, paths, sql)
        off, off_plan = answer(spark, paths, sql, dpp=False)
    finally:
        spark.conf.unset("spark.sql.autoBroadcastJoinThreshold")
    assert same(got, want) and same(off, want), (got, off, want)
    assert "dynamicpruningexpression" not in off_plan, off_plan
    return want, plan


@pytest.mark.parametrize("group", ["east", "west", "south", "none"])
def test_keys_of_a_table_reduced_by_a_join_above_prune_the_scan_joined_with_it(
    spark, parts_and_items, group
):
    want, plan = answers_with_part_broadcast_sized(spark, parts_and_items, Q7.format(group=group))
    if not want:  # no brand or no part qualifies: Spark's adaptive plan drops the scans
        return
    assert pruned_at_run_time(plan, parts_and_items["item"], "i_key"), plan


@pytest.mark.parametrize("exists", ["EXISTS", "NOT EXISTS"])
@pytest.mark.parametrize("group", ["east", "north", "south"])
def test_an_exists_subquery_on_rows_so_pruned_scans_only_their_keys(
    spark, parts_and_items, exists, group
):
    want, plan = answers_with_part_broadcast_sized(
        spark, parts_and_items, Q21.format(group=group, exists=exists)
    )
    if group == "south":  # Brand#9 has no parts
        assert not want
        return
    assert want and pruned_at_run_time(plan, parts_and_items["item"], "i_key"), plan
    assert pruned_at_run_time(plan, parts_and_items["item"], "i_name"), plan


# And with `supply` joined on the item's key before `brand` (q21's `orders`): it meets the
# group only through the pruned `item`.
Q7_SUPPLY = """SELECT b_group, count(*), sum(s_cost) FROM item, part, supply, brand
WHERE i_key = p_key AND s_part = i_key AND p_brand = b_name AND b_group = '{group}'
GROUP BY b_group"""


@pytest.mark.parametrize("group", ["west", "north", "south"])
def test_a_table_joined_with_the_pruned_rows_is_pruned_by_their_keys(spark, parts_and_items, group):
    want, plan = answers_with_part_broadcast_sized(
        spark, parts_and_items, Q7_SUPPLY.format(group=group)
    )
    if not want:  # Brand#9 has no parts: Spark's adaptive plan drops the scans
        return
    assert pruned_at_run_time(plan, parts_and_items["item"], "i_key"), plan
    assert pruned_at_run_time(plan, parts_and_items["supply"], "s_part"), plan


# q11's shape: the parts of a group whose items add up to more than a share of the group's.
Q11 = """SELECT p_key, sum(i_price) FROM item, part, brand
WHERE i_key = p_key AND p_brand = b_name AND b_group = 'east' GROUP BY p_key
HAVING sum(i_price) > (SELECT sum(i_price) * 0.01 FROM item, part, brand
WHERE i_key = p_key AND p_brand = b_name AND b_group = 'east')"""


def test_a_plan_with_a_scalar_subquery_is_left_unpruned(spark, parts_and_items):
    """Spark 4.0 can deadlock running a pruning subquery where a scalar subquery reuses the
    plan's exchanges (TPC-H q11 hung): the rule leaves such plans alone."""
    want, plan = answers_with_part_broadcast_sized(spark, parts_and_items, Q11)
    assert want
    assert not pruned_at_run_time(plan, parts_and_items["item"], "i_key"), plan


def test_a_count_with_a_filter_on_a_small_table_is_still_pushed(spark, parts_and_items):
    """Outside a join, the pushed filter is not kept for Spark: COUNT(*) is still pushed."""
    views(spark, parts_and_items, "lance")
    df = spark.sql("SELECT count(*) FROM part WHERE p_brand = 'Brand#1'")
    want = sum(
        1
        for b in lance.dataset(parts_and_items["part"]).to_table()["p_brand"].to_pylist()
        if b == "Brand#1"
    )
    assert df.collect()[0][0] == want
    plan = df._jdf.queryExecution().executedPlan().toString()
    assert "count(*)" in plan.split("LanceScan", 1)[1], plan


def test_thousands_of_join_keys_reach_the_tasks_once(spark, tmp_path):
    """A runtime filter of more than a thousand keys travels to the executors as a broadcast,
    not inside every task: the same rows as Spark's own join on Parquet."""
    rng = random.Random(29)
    keys = pa.table(
        {
            "k": pa.array(range(20000), pa.int64()),
            "flag": pa.array([rng.randrange(3) for _ in range(20000)], pa.int32()),
        }
    )
    facts = pa.table(
        {
            "f_key": pa.array([rng.randrange(25000) for _ in range(40000)], pa.int64()),
            "f_val": pa.array(range(40000), pa.int64()),
        }
    )
    paths = {
        "part": write(tmp_path, "keys", keys),
        "item": write(tmp_path, "facts", facts, max_rows_per_file=5000),
    }
    for name in ("part", "item"):
        pq.write_table(lance.dataset(paths[name]).to_table(), str(tmp_path / f"{name}.pq"))
        paths[name + "_parquet"] = str(tmp_path / f"{name}.pq")
    sql = "SELECT f_key, f_val FROM item JOIN part ON f_key = k WHERE flag = 1"
    want, _ = answer(spark, paths, sql, fmt="parquet")
    got, plan = answer(spark, paths, sql)
    assert got == want and len(want) > 10000
    assert "dynamicpruningexpression(f_key" in plan, plan


# q5's shape: `item` (the large table) joined with `supply` filtered, too large to broadcast.
FILTERED = """SELECT i_key, i_price, s_cost FROM item JOIN supply ON i_key = s_part
WHERE {where}"""


@pytest.mark.parametrize(
    "where,prunes",
    [
        ("s_cost < 5", True),
        ("s_cost BETWEEN 10 AND 11", True),
        ("s_cost > 100", True),
        ("s_part IS NOT NULL", False),
    ],
)
def test_a_large_table_is_pruned_by_the_keys_of_a_filtered_table_too_large_to_broadcast(
    spark, parts_and_items, where, prunes
):
    """With the broadcast threshold under both tables' sizes, `item` (more than twice
    `supply`'s bytes) is read with the keys of the `supply` rows that pass a selective filter
    (none pass `s_cost > 100`); a filter only of nulls is not selective, and leaves it."""
    paths = parts_and_items
    assert data_bytes(paths["item"]) > 2 * data_bytes(paths["supply"])
    want, plan = answers_at_threshold(spark, paths, FILTERED.format(where=where), 100)
    if not want:
        return
    assert pruned_at_run_time(plan, paths["item"], "i_key") == prunes, plan


def test_a_large_table_pruned_by_a_small_selective_table_is_not_pruned_again(
    spark, parts_and_items
):
    """`item` joined with selective `part` (which Spark prunes it by, through part's
    broadcast) is not also pruned by `supply`'s keys: `supply` is read once."""
    sql = (
        "SELECT i_key, s_cost FROM item JOIN part ON i_key = p_key JOIN supply "
        "ON i_key = s_part WHERE p_brand = 'Brand#2' AND s_cost < 20"
    )
    want, plan = answers_with_part_broadcast_sized(spark, parts_and_items, sql)
    assert want
    assert pruned_at_run_time(plan, parts_and_items["item"], "i_key"), plan
    assert len(item_scans(final_plan(plan), parts_and_items["supply"])) == 1, plan


def test_a_dataset_under_the_minimum_size_is_not_offered_to_sparks_pruning(spark, parts_and_items):
    """At the default `runtime_filter_min_bytes` (1 MiB), `item` (a few kilobytes) names no
    column for Spark's dynamic pruning: the join of the test above keeps the same rows, with
    no runtime filter on `item`; set to 0 (here as a session conf), the option offers it again."""
    sql = JOIN.format(brand="Brand#2", size=10)
    want, _ = answer(spark, parts_and_items, sql, fmt="parquet")
    spark.conf.unset(MIN_BYTES)
    got, plan = answer(spark, parts_and_items, sql)
    assert got == want
    assert not any(
        "dynamicpruningexpression(i_key" in s for s in item_scans(plan, parts_and_items["item"])
    ), plan
    spark.conf.set(MIN_BYTES, "0")
    got, plan = answer(spark, parts_and_items, sql)
    assert got == want
    assert "dynamicpruningexpression(i_key" in item_scans(plan, parts_and_items["item"])[0]


def pruning_subqueries(spark, df):
    """(marked as subqueries, not marked) adaptive plans of the pruning subqueries in `df`'s
    executed plan (see PruningSubqueriesAsSubqueries)."""
    t = spark._jvm.io.sparklance.spark.PruningSubqueriesAsSubqueries.count(
        df._jdf.queryExecution().executedPlan()
    )
    return t._1(), t._2()


def test_pruning_subqueries_run_as_subqueries(spark, parts_and_items):
    """The connector's pruning subqueries bound to no broadcast run as subqueries: planned as a
    whole query's plan instead (Spark's PlanAdaptiveDynamicPruningFilters), one posts updates of
    the whole plan from its own thread, which could deadlock with a shuffle exchange waiting
    for it (TPC-H q7 hung once in three runs). AQE on, as by default."""
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", str(data_bytes(parts_and_items["part"])))
    try:
        views(spark, parts_and_items, "lance")
        df = spark.sql(Q7.format(group="east"))
        df.collect()
        marked, unmarked = pruning_subqueries(spark, df)
    finally:
        spark.conf.unset("spark.sql.autoBroadcastJoinThreshold")
    assert unmarked == 0 and marked > 0, (marked, unmarked)
