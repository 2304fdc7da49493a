"""Plans: scans of the same table version, columns and filters are equal, so Spark reuses
exchanges; splits follow Spark's file-source rule so small datasets use every core."""

from __future__ import annotations

import lance
import pyarrow as pa
import pytest

import support


def table(start, n):
    ids = list(range(start, start + n))
    return pa.table(
        {"id": pa.array(ids, pa.int64()), "k": pa.array([i % 7 for i in ids], pa.int64())}
    )


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


def test_uneven_fragments_make_even_tasks_cut_mid_page_where_needed(spark, tmp_path):
    # Fragments of 550,000 and 350,000 rows (as Spark's Parquet writer leaves them: one file a
    # task), each over spark.sql.files.openCostInBytes, on two cores: two tasks of about
    # 450,000 rows each, the first fragment cut wherever its pages fall, not one task a
    # fragment (55% + 45%).
    import numpy as np
    from pyspark.sql import functions as F

    n = 900_000
    rng = np.random.default_rng(7)
    t = pa.table(
        {
            "id": pa.array(np.arange(n), pa.int64()),
            "x": pa.array(rng.integers(-(1 << 62), 1 << 62, n), pa.int64()),
            "y": pa.array(rng.integers(-(1 << 62), 1 << 62, n), pa.int64()),
        }
    )
    path = str(tmp_path / "ds")
    lance.write_dataset(t, path, max_rows_per_file=550_000)
    assert [f.count_rows() for f in lance.dataset(path).get_fragments()] == [550_000, 350_000]
    df = spark.read.format("lance").load(path)
    part = F.spark_partition_id()
    sizes = [r[1] for r in df.groupBy(part).count().orderBy(part).collect()]
    assert len(sizes) == 2 and max(sizes) <= n // 2 * 1.04, sizes
    got = support.to_arrow(df.orderBy("id"))
    assert got.equals(lance.dataset(path).to_table().cast(got.schema))


def test_a_pruned_scan_is_estimated_as_spark_estimates_a_parquet_table(spark, tmp_path):
    # Spark scales a Parquet table's bytes (its V1 source, the default) through the projection
    # above it by the read columns' share of a row's size: their default sizes (8 for a long,
    # 20 for a string, ...) plus 8 for the row, not their number. The Lance scan does the same,
    # so a join on the numeric keys of a table of long strings is broadcast, or not, as it
    # would be over Parquet.
    n = 2000
    t = pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "day": pa.array(range(n), pa.int32()).cast(pa.date32()),
            "s1": pa.array([f"a long comment on row {i}" * 3 for i in range(n)]),
            "s2": pa.array([f"note {i}" for i in range(n)]),
            "x": pa.array([i / 3 for i in range(n)], pa.float64()),
        }
    )
    lance_path, pq_path = str(tmp_path / "t.lance"), str(tmp_path / "t.parquet")
    lance.write_dataset(t, lance_path)
    import pyarrow.parquet as pq

    pq.write_table(t, pq_path)

    def size(df):
        return int(str(df._jdf.queryExecution().optimizedPlan().stats().sizeInBytes()))

    ours, theirs = spark.read.format("lance").load(lance_path), spark.read.parquet(pq_path)
    assert "FileScan parquet" in theirs._jdf.queryExecution().executedPlan().toString()
    for cols in (["id"], ["id", "day"], ["s1"], ["x", "s2"], t.column_names):
        want = size(theirs.select(*cols)) / size(theirs)
        got = size(ours.select(*cols)) / size(ours)
        assert got == pytest.approx(want, abs=1e-4), (cols, got, want)


def orders_and_items(tmp_path):
    """Two pylance tables: orders (key, status) and items (key, supplier, late, note, qty)."""
    orders = pa.table(
        {
            "o_key": pa.array(range(40), pa.int64()),
            "o_status": pa.array(["F" if i % 3 else "O" for i in range(40)]),
        }
    )
    keys = [i % 30 for i in range(120)]
    items = pa.table(
        {
            "i_key": pa.array(keys, pa.int64()),
            "i_supp": pa.array([(i * 7) % 5 for i in range(120)], pa.int64()),
            "i_late": pa.array([i % 4 == 0 for i in range(120)]),
            "i_note": pa.array([f"note {i}" for i in range(120)]),
            "i_qty": pa.array([float(i) for i in range(120)], pa.float64()),
        }
    )
    paths = {}
    for name, t in (("orders", orders), ("items", items)):
        paths[name] = str(tmp_path / name)
        lance.write_dataset(t, paths[name], max_rows_per_file=50)
    return paths


def scan_columns(df, path):
    """The columns each scan of the Lance table at `path` returns in the executed plan."""
    # AQE's plan prints its final plan, then the initial one: read the final one.
    plan = df._jdf.queryExecution().executedPlan().toString().split("== Initial Plan ==")[0]
    found = []
    for line in plan.splitlines():
        marker = f"LanceScan lance.`{path}` ["
        if marker in line:
            found.append(line.split(marker, 1)[1].split("]", 1)[0].split(", "))
    return found


EXISTS_QUERIES = {
    # q4's shape: EXISTS with a correlated key and a filter of the subquery's own.
    "exists": (
        "SELECT o_key, o_status FROM orders WHERE EXISTS (SELECT * FROM items "
        "WHERE i_key = o_key AND i_late)",
        [["i_key"]],
    ),
    # q22's shape: NOT EXISTS on the key alone.
    "not_exists": (
        "SELECT o_key FROM orders WHERE NOT EXISTS (SELECT * FROM items WHERE i_key = o_key)",
        [["i_key"]],
    ),
    # q21's shape: a second correlated column compared by inequality, both subqueries on one
    # table, the outer query reading it too.
    "two_subqueries": (
        "SELECT a.i_key, a.i_supp FROM items a WHERE a.i_qty > 10 AND EXISTS "
        "(SELECT * FROM items b WHERE b.i_key = a.i_key AND b.i_supp <> a.i_supp) "
        "AND NOT EXISTS (SELECT * FROM items c WHERE c.i_key = a.i_key AND "
        "c.i_supp <> a.i_supp AND c.i_late)",
        [["i_key", "i_supp"]] * 3,
    ),
    # A projection inside the subquery keeps what the join needs.
    "projected": (
        "SELECT o_key FROM orders WHERE EXISTS (SELECT i_key, i_note FROM items "
        "WHERE i_key = o_key AND i_qty < 50)",
        [["i_key"]],
    ),
}


def pylance_answer(paths, name):
    """The query's answer computed from pylance's own reads, in plain Python."""
    orders = lance.dataset(paths["orders"]).to_table().to_pylist()
    items = lance.dataset(paths["items"]).to_table().to_pylist()
    if name == "exists":
        late = {r["i_key"] for r in items if r["i_late"]}
        return sorted((r["o_key"], r["o_status"]) for r in orders if r["o_key"] in late)
    if name == "not_exists":
        keys = {r["i_key"] for r in items}
        return sorted((r["o_key"],) for r in orders if r["o_key"] not in keys)
    if name == "two_subqueries":

        def other(a, late_only):
            return any(
                b["i_key"] == a["i_key"]
                and b["i_supp"] != a["i_supp"]
                and (b["i_late"] or not late_only)
                for b in items
            )

        return sorted(
            (a["i_key"], a["i_supp"])
            for a in items
            if a["i_qty"] > 10 and other(a, False) and not other(a, True)
        )
    cheap = {r["i_key"] for r in items if r["i_qty"] < 50}
    return sorted((r["o_key"],) for r in orders if r["o_key"] in cheap)


@pytest.mark.parametrize("name", sorted(EXISTS_QUERIES))
def test_exists_subqueries_read_only_the_columns_their_join_uses(spark, tmp_path, name):
    """EXISTS / NOT EXISTS over `SELECT *` read only the join's columns (SPARK-51831 on Spark
    lines without the fix: PruneExistsColumns), with the same answer as pylance's rows."""
    paths = orders_and_items(tmp_path)
    for view, path in paths.items():
        spark.read.format("lance").load(path).createOrReplaceTempView(view)
    sql, columns = EXISTS_QUERIES[name]
    assert sorted(tuple(r) for r in spark.sql(sql).collect()) == pylance_answer(paths, name)
    # Without dynamic pruning, whose subquery plans would print the scans a second time.
    spark.conf.set("spark.sql.optimizer.dynamicPartitionPruning.enabled", "false")
    try:
        df = spark.sql(sql)
        assert sorted(tuple(r) for r in df.collect()) == pylance_answer(paths, name)
    finally:
        spark.conf.unset("spark.sql.optimizer.dynamicPartitionPruning.enabled")
    scans = scan_columns(df, paths["items"])
    assert sorted(sorted(c) for c in scans) == sorted(sorted(c) for c in columns), scans


def nullable_rows(n, with_nulls):
    ks = [None if with_nulls and i % 5 == 0 else i % 11 for i in range(n)]
    return pa.table({"k": pa.array(ks, pa.int64()), "v": pa.array(range(n), pa.int64())})


def write_copy(spark, rows, path, writer):
    if writer == "pylance":
        lance.write_dataset(rows, path, max_rows_per_file=300)
    else:
        spark.createDataFrame(
            [tuple(r.values()) for r in rows.to_pylist()], "k bigint, v bigint"
        ).write.format("lance").save(path)


# TPC-H q15's shape: the same grouped sum twice, once under a join, which makes Spark infer
# `k IS NOT NULL` for that scan only, and once under the subquery taking its maximum.
REUSE_SQL = """
with rev as (select k, sum(v) total from t group by k)
select r.k, r.total from rev r join keys o on r.k = o.k
where r.total = (select max(total) from rev)
"""


@pytest.mark.parametrize("writer", ["pylance", "spark"])
def test_is_not_null_on_a_column_without_nulls_keeps_the_scans_equal(spark, tmp_path, writer):
    # `k` is nullable but holds no null, which every page's layers prove: the inferred
    # `k IS NOT NULL` is taken and not kept, so both scans are equal and the exchange is reused.
    path = str(tmp_path / "t")
    write_copy(spark, nullable_rows(1200, with_nulls=False), path, writer)
    assert lance.dataset(path).schema.field("k").nullable
    spark.read.format("lance").load(path).createOrReplaceTempView("t")
    spark.range(0, 11).withColumnRenamed("id", "k").createOrReplaceTempView("keys")
    df = spark.sql(REUSE_SQL)
    got = [tuple(r) for r in df.collect()]
    plan = df._jdf.queryExecution().executedPlan().toString()
    assert "ReusedExchange" in plan, plan
    assert "k IS NOT NULL" not in plan, plan
    rows = lance.dataset(path).to_table().to_pylist()
    totals = {}
    for r in rows:
        totals[r["k"]] = totals.get(r["k"], 0) + r["v"]
    best = max(totals.values())
    assert sorted(got) == sorted((k, t) for k, t in totals.items() if t == best)
    nonnull = spark.sql("select count(*) from t where k is not null").collect()[0][0]
    assert nonnull == sum(1 for r in rows if r["k"] is not None)


@pytest.mark.parametrize("writer", ["pylance", "spark"])
def test_is_not_null_on_a_column_with_nulls_still_filters(spark, tmp_path, writer):
    path = str(tmp_path / "t")
    write_copy(spark, nullable_rows(1200, with_nulls=True), path, writer)
    spark.read.format("lance").load(path).createOrReplaceTempView("t")
    spark.range(0, 11).withColumnRenamed("id", "k").createOrReplaceTempView("keys")
    df = spark.sql(REUSE_SQL)
    got = [tuple(r) for r in df.collect()]
    assert "k IS NOT NULL" in df._jdf.queryExecution().executedPlan().toString()
    rows = lance.dataset(path).to_table().to_pylist()
    totals = {}
    for r in rows:
        totals[r["k"]] = totals.get(r["k"], 0) + r["v"]
    best = max(totals.values())  # the NULL group's total counts for the maximum too
    assert sorted(got) == sorted((k, t) for k, t in totals.items() if t == best and k is not None)
    nonnull = spark.sql("select count(*) from t where k is not null").collect()[0][0]
    assert nonnull == sum(1 for r in rows if r["k"] is not None)


def test_is_not_null_on_a_column_some_fragments_lack_still_filters(spark, tmp_path):
    # A column added without data is NULL in every fragment written before it: no file proves
    # it null-free, so the filter stays.
    path = str(tmp_path / "t")
    lance.write_dataset(nullable_rows(600, with_nulls=False), path, max_rows_per_file=300)
    lance.dataset(path).add_columns([pa.field("z", pa.int64())])
    extra = pa.table(
        {
            "k": pa.array([1, 2], pa.int64()),
            "v": pa.array([3, 4], pa.int64()),
            "z": pa.array([5, 6], pa.int64()),
        }
    )
    lance.write_dataset(extra, path, mode="append")
    df = spark.read.format("lance").load(path).where("z is not null")
    assert "z IS NOT NULL" in df._jdf.queryExecution().executedPlan().toString()
    want = lance.dataset(path).to_table(filter="z is not null").num_rows
    assert df.count() == want == 2
