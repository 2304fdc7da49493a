"""Dictionary-encoded string columns read as Spark dictionary vectors.

pylance dictionary-encodes low-cardinality string and binary pages; the connector keeps their
ids (a DictionaryArray) and hands Spark the ids plus the page's entries, as Spark's Parquet
reader does. These tests read such columns through Spark and compare with pylance's own reads:

* datasets of 2.0, 2.1 and 2.2 files, several fragments, tens of pages per column, each page
  with its own dictionary, some columns mixing dictionary and plain pages (the test first
  checks, with pylance's `LanceFileReader.metadata()`, that this really is so);
* batch sizes that cross page boundaries (ids remapped into a merged dictionary, or plain
  bytes when a dictionary page is followed by a plain one, or when the merged dictionary
  would outgrow the batch) and reuse of the same vectors by a later batch without one;
* Spark operations on the column (group by, order by, distinct, join, length, upper, like,
  cache), against the same operations on a DataFrame built from pylance's rows;
* pushed filters on the column against Spark's own evaluation and pylance's `to_table(filter=)`.
"""

from __future__ import annotations

import lance
import pyarrow as pa
import pytest
from pyspark.sql import functions as F

from support import page_kinds

VERSIONS = ["2.0", "2.1", "2.2"]
N = 24_000
FILE_ROWS = 10_000


def make_table() -> pa.Table:
    i = list(range(N))
    # 12 values per 3000 rows, a new set every 3000 rows: neighbouring pages have different dictionaries.
    s = [None if k % 13 == 0 else f"cat-{(k * 7919) % 12}-{k // 3000}" for k in i]
    # Low cardinality except rows 9000..12000 and 20000..21000 (unique values: plain pages between dictionary ones).
    m = [
        None
        if k % 17 == 0
        else (
            f"u{k:06d}-{'x' * (k % 7)}"
            if 9000 <= k < 12000 or 20000 <= k < 21000
            else ("é" if k % 5 == 0 else f"m{k % 6}")
        )
        for k in i
    ]
    b = [None if k % 19 == 0 else f"b{k % 4}".encode() for k in i]
    return pa.table(
        {
            "i": pa.array(i, pa.int64()),
            "s": pa.array(s),
            "m": pa.array(m),
            "b": pa.array(b, pa.binary()),
        }
    )


@pytest.fixture(scope="module")
def table() -> pa.Table:
    return make_table()


@pytest.fixture(scope="module", params=VERSIONS)
def dataset(request, table, tmp_path_factory):
    version = request.param
    path = str(tmp_path_factory.mktemp("dict") / f"d_{version}.lance")
    # Small write batches and a tiny page cache cut every column into many pages.
    reader = pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=250))
    lance.write_dataset(
        reader,
        path,
        data_storage_version=version,
        max_rows_per_file=FILE_ROWS,
        data_cache_bytes=16 * 1024,
        max_page_bytes=16 * 1024,
    )
    ds = lance.dataset(path)
    assert len(ds.get_fragments()) == 3
    kinds = page_kinds(path)
    # pylance's 2.0 writer dictionary-encodes strings only, not binary.
    for col in ("s", "m", "b") if version != "2.0" else ("s", "m"):
        dict_pages = sum(k.count("D") for k in kinds[col])
        # Several dictionary pages in one file (so batches cross from one dictionary to the next).
        assert max(k.count("D") for k in kinds[col]) >= 10, (version, col, kinds[col])
        assert dict_pages >= 10
    # Column m mixes dictionary and plain pages within one file (plain pages follow dictionary ones).
    assert any("D" in k and "P" in k for k in kinds["m"]), kinds["m"]
    return version, path, ds


def read(spark, path, batch_size=None, **options):
    r = spark.read.format("lance")
    if batch_size is not None:
        r = r.option("batch_size", str(batch_size))
    for k, v in options.items():
        r = r.option(k, v)
    return r.load(path)


def canon(rows) -> list:
    """Collected rows in a fixed order (repr orders None among strings and bytes)."""
    return sorted((tuple(r) for r in rows), key=repr)


def reference_df(spark, ds):
    """pylance's rows as a plain Spark DataFrame (no connector involved)."""
    rows = ds.to_table().to_pylist()
    schema = "i long, s string, m string, b binary"
    return spark.createDataFrame([(r["i"], r["s"], r["m"], r["b"]) for r in rows], schema)


@pytest.mark.parametrize("batch_size", [7, 100, 1000, 4096, 20_000])
def test_values_equal_pylance(spark, dataset, batch_size):
    version, path, ds = dataset
    want = {r["i"]: (r["s"], r["m"], r["b"]) for r in ds.to_table().to_pylist()}
    got_rows = read(spark, path, batch_size).select("i", "s", "m", "b").collect()
    got = {r.i: (r.s, r.m, None if r.b is None else bytes(r.b)) for r in got_rows}
    assert len(got_rows) == N
    assert got == want


def test_single_column_projection(spark, dataset):
    """The string column alone (no other column in the batch) and in another order."""
    version, path, ds = dataset
    want = sorted(ds.to_table(columns=["s"]).column("s").to_pylist(), key=lambda v: (v is None, v))
    got = sorted(
        (r.s for r in read(spark, path, 1000).select("s").collect()), key=lambda v: (v is None, v)
    )
    assert got == want


def test_aggregates_and_string_functions(spark, dataset):
    version, path, ds = dataset
    df = read(spark, path, 1000)
    ref = reference_df(spark, ds)

    def same(f):
        assert canon(f(df).collect()) == canon(f(ref).collect())

    same(lambda d: d.groupBy("s").count())
    same(
        lambda d: d.groupBy("m").agg(
            F.count("*").alias("n"), F.min("i").alias("lo"), F.max("i").alias("hi")
        )
    )
    same(lambda d: d.groupBy("b").count())
    same(lambda d: d.select("s").distinct())
    same(
        lambda d: d.select(
            F.sum(F.length("s")).alias("a"),
            F.sum(F.length("m")).alias("b"),
            F.count("s").alias("c"),
        )
    )
    same(
        lambda d: d.select(
            "i", F.upper("s").alias("u"), F.length("m").alias("l"), F.hex("b").alias("h")
        )
    )
    same(lambda d: d.where(F.col("s").like("cat-1%") | F.col("m").like("%x")).select("i"))
    same(lambda d: d.where(F.col("s").isNull()).select("i"))
    same(lambda d: d.select(F.concat_ws("|", "s", "m").alias("c")).groupBy("c").count())

    # Order by the string column (ties broken by i) must give the same sequence.
    def order(d):
        rows = d.orderBy(F.col("s").asc_nulls_first(), "i").select("s", "i").collect()
        return [(r.s, r.i) for r in rows]

    assert order(df) == order(ref)


def test_join_on_dictionary_column(spark, dataset):
    version, path, ds = dataset
    df = read(spark, path, 512)
    ref = reference_df(spark, ds)
    keys = spark.createDataFrame(
        [("cat-3-0",), ("cat-7-2",), ("m4",), ("é",), ("nope",)], "k string"
    )

    def q(d):
        a = d.join(keys, d.s == keys.k).select("i", "k")
        b = d.join(keys, d.m == keys.k).select("i", "k")
        return canon(a.union(b).collect())

    assert q(df) == q(ref)
    # A self-join on the string column: group sizes squared.
    counts = {r.s: r["count"] for r in ref.groupBy("s").count().collect() if r.s is not None}
    got = (
        read(spark, path, 333)
        .alias("x")
        .join(read(spark, path, 777).alias("y"), F.col("x.s") == F.col("y.s"))
        .count()
    )
    assert got == sum(c * c for c in counts.values())


def test_cache_then_reread(spark, dataset):
    version, path, ds = dataset
    want = sorted(
        (r["i"], r["s"], r["m"]) for r in ds.to_table(columns=["i", "s", "m"]).to_pylist()
    )  # i is unique
    df = read(spark, path, 1000).select("i", "s", "m").cache()
    try:
        assert df.count() == N
        assert sorted((r.i, r.s, r.m) for r in df.collect()) == want
        assert canon(df.groupBy("s").count().collect()) == canon(
            reference_df(spark, ds).groupBy("s").count().collect()
        )
    finally:
        df.unpersist()
    assert (
        sorted((r.i, r.s, r.m) for r in read(spark, path, 300).select("i", "s", "m").collect())
        == want
    )


PREDICATES = [
    "s = 'cat-3-1'",
    "s <> 'cat-3-1'",
    "s IN ('cat-1-0', 'cat-11-7', 'cat-5-4', 'absent')",
    "s NOT IN ('cat-1-0', 'cat-2-0')",
    "s LIKE 'cat-1%'",
    "s LIKE '%-7'",
    "s LIKE '%t-1%'",
    "s > 'cat-5'",
    "s <= 'cat-10-3'",
    "s IS NULL",
    "s IS NOT NULL",
    "m = 'é'",
    "m LIKE 'u0099%'",
    "m IN ('m1', 'u010000-xxxxx', 'u020001-')",
    "m IS NULL OR s = 'cat-0-0'",
    "s = 'cat-2-2' AND m <> 'm0'",
]

#: Predicates pylance's SQL reads the same way as Spark's (the others are checked against Spark only).
PYLANCE_SAME = {p for p in PREDICATES if "NOT IN" not in p and "<>" not in p}


@pytest.mark.parametrize("where", PREDICATES)
def test_pushed_filters(spark, dataset, where):
    version, path, ds = dataset

    def ids(pushdown):
        d = read(spark, path, 700, filter_pushdown=str(pushdown).lower())
        q = d.where(where).select("i")
        return sorted(r.i for r in q.collect()), q._jdf.queryExecution().executedPlan().toString()

    got, plan = ids(True)
    spark_says, _ = ids(False)
    assert "PushedFilters" in plan and "Filter " not in plan, plan
    assert got == spark_says
    if where in PYLANCE_SAME:
        assert got == sorted(ds.to_table(columns=["i"], filter=where).column("i").to_pylist())


def test_null_safe_equality(spark, dataset):
    version, path, ds = dataset
    for lit in ("'cat-4-5'", "NULL"):
        got = sorted(
            r.i for r in read(spark, path, 700).where(f"s <=> {lit}").select("i").collect()
        )
        want = sorted(
            r.i
            for r in read(spark, path, 700, filter_pushdown="false")
            .where(f"s <=> {lit}")
            .select("i")
            .collect()
        )
        assert got == want and got, lit


def test_count_with_pushed_filter(spark, dataset):
    version, path, ds = dataset
    read(spark, path, 900).createOrReplaceTempView("t_dict_count")
    for where in ("s LIKE 'cat-1%'", "m IN ('m2', 'é') AND s IS NOT NULL"):
        n = spark.sql(f"SELECT count(*) AS n FROM t_dict_count WHERE {where}").collect()[0].n
        assert n == ds.count_rows(filter=where)
