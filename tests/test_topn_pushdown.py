"""ORDER BY ... LIMIT n pushed into the Lance scan (`TopN:` in its description): each task
returns its own first n rows, reading the other columns of those rows only, and Spark's sort
and limit on top give the rows pylance's own read, sorted as Spark sorts, gives."""

from __future__ import annotations

import datetime as dt
import math
import random
from decimal import Decimal

import lance
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from lance.dataset import ColumnOrdering

from support import first_difference, rows_from_arrow, rows_from_spark, scan_metrics

ROWS = 20_000
KEYS = ["i32", "f64", "s", "d", "dec", "b", "bin", "ts"]


def _data(n):
    rng = random.Random(7)

    def maybe(v, p=0.1):
        return None if rng.random() < p else v

    f64 = []
    for i in range(n):
        r = rng.random()
        f64.append(
            None
            if r < 0.08
            else math.nan
            if r < 0.12
            else -0.0
            if r < 0.14
            else round(rng.gauss(0, 100), 3)
        )
    return pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "i32": pa.array([maybe(rng.randrange(-50, 50)) for _ in range(n)], pa.int32()),
            "f64": pa.array(f64, pa.float64()),
            "s": pa.array(
                [
                    maybe(
                        rng.choice(["a", "ab", "b", "é", "zz", "", "Ab", "a\u00e9"])
                        + str(rng.randrange(5))
                    )
                    for _ in range(n)
                ],
                pa.string(),
            ),
            "d": pa.array(
                [
                    maybe(dt.date(2020, 1, 1) + dt.timedelta(days=rng.randrange(400)))
                    for _ in range(n)
                ],
                pa.date32(),
            ),
            "dec": pa.array(
                [maybe(Decimal(rng.randrange(-(10**6), 10**6)) / 100) for _ in range(n)],
                pa.decimal128(12, 2),
            ),
            "b": pa.array([maybe(rng.random() < 0.5) for _ in range(n)], pa.bool_()),
            "bin": pa.array(
                [
                    maybe(bytes(rng.randrange(256) for _ in range(rng.randrange(3))))
                    for _ in range(n)
                ],
                pa.binary(),
            ),
            "ts": pa.array(
                [
                    maybe(
                        dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
                        + dt.timedelta(seconds=rng.randrange(10**6))
                    )
                    for _ in range(n)
                ],
                pa.timestamp("us", tz="UTC"),
            ),
            "payload": pa.array([f"payload-{i}-" * 8 for i in range(n)], pa.string()),
            "vec": pa.FixedSizeListArray.from_arrays(
                pa.array([float(i % 97) for i in range(n * 8)], pa.float32()), 8
            ),
        }
    )


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("topn") / "t.lance")
    lance.write_dataset(_data(ROWS), path, max_rows_per_file=3_000)
    lance.dataset(path).delete("id % 11 = 4 or (id >= 6000 and id < 6500)")
    return path


def _spark_key(v, descending, nulls_first):
    """A sort key placing `v` where Spark's ordering does: NaN above every number, -0.0 equal to
    0.0, nulls first or last whatever the direction (the caller reverses for DESC)."""
    null = v is None
    if isinstance(v, float) and math.isnan(v):
        v = (1, 0.0)
    elif isinstance(v, float):
        v = (0, v + 0.0)
    # The null's rank: below the values when it comes first in the direction sorted.
    rank_null = 0 if nulls_first != descending else 1
    return (rank_null,) if null else (1 - rank_null, v)


def _pylance_topn(path, keys, n, where=None):
    """pylance's rows (after `where`), sorted as Spark sorts by `keys` then id, first n."""
    t = lance.dataset(path).to_table(filter=where)
    rows = t.to_pylist()
    rows.sort(key=lambda r: r["id"])
    for col, desc, nulls_first in reversed(keys):
        rows.sort(key=lambda r: _spark_key(r[col], desc, nulls_first), reverse=desc)
    ids = [r["id"] for r in rows[:n]]
    order = {i: k for k, i in enumerate(ids)}
    chosen = t.filter(pc.is_in(t["id"], pa.array(ids, pa.int64())))
    ids_chosen = chosen["id"].to_pylist()
    return chosen.take(sorted(range(chosen.num_rows), key=lambda k: order[ids_chosen[k]]))


def _order_sql(keys):
    return ", ".join(
        f"{c} {'DESC' if d else 'ASC'} NULLS {'FIRST' if nf else 'LAST'}"
        for c, d, nf in keys + [("id", False, True)]
    )


def _cases():
    rng = random.Random(11)
    cases = []
    for _ in range(14):
        keys = [
            (c, rng.random() < 0.5, rng.random() < 0.5) for c in rng.sample(KEYS, rng.randint(1, 3))
        ]
        n = rng.choice([1, 3, 17, 250, 4000])
        where = rng.choice([None, None, "i32 > 0", "s >= 'b'", "d < date '2020-06-01'"])
        cases.append((keys, n, where))
    return cases


@pytest.mark.parametrize("keys,n,where", _cases(), ids=lambda v: str(v))
def test_topn_returns_the_rows_of_pylances_read_sorted_as_spark_sorts(spark, table, keys, n, where):
    want = _pylance_topn(table, keys, n, where)
    spark.read.format("lance").load(table).createOrReplaceTempView("topn_t")
    sql = (
        f"SELECT * FROM topn_t {'WHERE ' + where if where else ''} "
        f"ORDER BY {_order_sql(keys)} LIMIT {n}"
    )
    df = spark.sql(sql)
    got = df.collect()
    plan = df._jdf.queryExecution().executedPlan().toString()
    assert "TopN: [" in plan, plan
    names = df.schema.names
    diff = first_difference(
        rows_from_arrow(want.select(names)), rows_from_spark(got, df.schema), names
    )
    assert diff is None, f"{sql}: {diff}"


def test_topn_reads_the_other_columns_of_the_chosen_rows_only(spark, table):
    """The wide columns are decoded for the batches holding the best rows, not all: fewer bytes
    read than the same query with `topn_pushdown=false`, the same rows."""

    def run(option):
        df = (
            spark.read.format("lance")
            .option("topn_pushdown", option)
            .load(table)
            .orderBy("dec", "id")
            .limit(5)
        )
        return rows_from_spark(df.collect(), df.schema), scan_metrics(spark, df)

    (on, m_on), (off, m_off) = run("true"), run("false")
    assert first_difference(off, on, ["id"] * 20) is None
    assert m_on["storageBytesRead"] < m_off["storageBytesRead"] / 2, (m_on, m_off)
    assert m_on["rowsSkipped"] == m_off["rowsSkipped"]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM topn_t ORDER BY id + 1 LIMIT 5",  # an expression, not a column
        "SELECT * FROM topn_t ORDER BY vec[0], id LIMIT 5",  # not a column
        "SELECT * FROM topn_t ORDER BY i32, id LIMIT 10001",  # more than a task keeps
        "SELECT * FROM topn_t WHERE abs(i32) = 3 ORDER BY id LIMIT 5",  # a filter left to Spark
    ],
)
def test_topn_not_pushed_leaves_the_sort_to_spark(spark, table, sql):
    spark.read.format("lance").load(table).createOrReplaceTempView("topn_t")
    df = spark.sql(sql)
    got = rows_from_spark(df.collect(), df.schema)
    assert "TopN: [" not in df._jdf.queryExecution().executedPlan().toString()
    spark.read.format("lance").option("topn_pushdown", "false").load(table).createOrReplaceTempView(
        "topn_t"
    )
    assert (
        first_difference(rows_from_spark(spark.sql(sql).collect(), df.schema), got, df.schema.names)
        is None
    )


def test_topn_pushdown_false_and_offset(spark, table):
    """`topn_pushdown=false` pushes nothing; with an OFFSET, the rows after it (Spark 4.0 keeps
    a TopN with an offset to itself)."""
    base = spark.read.format("lance")
    off = base.option("topn_pushdown", "false").load(table).orderBy("i32", "id").limit(9)
    assert "TopN: [" not in off._jdf.queryExecution().executedPlan().toString()
    base.load(table).createOrReplaceTempView("topn_t")
    df = spark.sql("SELECT id FROM topn_t ORDER BY ts DESC NULLS LAST, id LIMIT 6 OFFSET 4")
    want = _pylance_topn(table, [("ts", True, False)], 10)["id"].to_pylist()[4:]
    assert [r["id"] for r in df.collect()] == want


def test_topn_is_part_of_the_scan_identity(spark, table):
    """Scans differing only in their TopN are not one exchange."""
    t = spark.read.format("lance").load(table)
    a = t.orderBy("i32", "id").limit(3).select("id")
    b = t.orderBy(t.i32.desc(), "id").limit(3).select("id")
    got = sorted(r["id"] for r in a.union(b).collect())
    want = sorted(
        _pylance_topn(table, [("i32", False, True)], 3)["id"].to_pylist()
        + _pylance_topn(table, [("i32", True, False)], 3)["id"].to_pylist()
    )
    assert got == want


def test_topn_with_metadata_columns(spark, table):
    """`_rowaddr` of the rows a pushed TopN returns: pylance's addresses of those rows."""
    t = spark.read.format("lance").load(table)
    df = (
        t.select("_rowaddr", "id", "payload", "dec").orderBy(t.dec.desc_nulls_last(), "id").limit(6)
    )
    got = [(r["_rowaddr"], r["id"], r["payload"]) for r in df.collect()]
    assert "TopN: [" in df._jdf.queryExecution().executedPlan().toString()
    want = _pylance_topn(table, [("dec", True, False)], 6)
    addr = lance.dataset(table).to_table(columns=["id"], with_row_address=True).to_pydict()
    by_id = dict(zip(addr["id"], addr["_rowaddr"]))
    assert got == [
        (by_id[i], i, p) for i, p in zip(want["id"].to_pylist(), want["payload"].to_pylist())
    ]


@pytest.mark.parametrize("key", ["id", "i32", "d", "ts"])
@pytest.mark.parametrize(
    "desc,nulls_first,n,where",
    [
        (True, False, 1, None),
        (False, True, 17, None),
        (True, True, 4000, "s >= 'b'"),
        (False, False, 250, "i32 > 0"),
    ],
)
def test_topn_by_one_integral_key(spark, table, key, desc, nulls_first, n, where):
    """One integer, date or timestamp key (kept in primitive arrays): the key values in order
    are pylance's, and every row returned is pylance's row of that id. Which of the rows tied
    at the last place come back is unspecified, so only their keys are compared."""
    order = f"{key} {'DESC' if desc else 'ASC'} NULLS {'FIRST' if nulls_first else 'LAST'}"
    spark.read.format("lance").load(table).createOrReplaceTempView("topn_t")
    df = spark.sql(
        f"SELECT * FROM topn_t {'WHERE ' + where if where else ''} ORDER BY {order} LIMIT {n}"
    )
    got = rows_from_spark(df.collect(), df.schema)
    assert "TopN: [" in df._jdf.queryExecution().executedPlan().toString()
    names = df.schema.names
    k, i = names.index(key), names.index("id")
    want = _pylance_topn(table, [(key, desc, nulls_first)], n, where)
    assert [r[k] for r in got] == [r[k] for r in rows_from_arrow(want.select(names))]
    # pylance's own TopN gives the same keys.
    own = lance.dataset(table).to_table(
        columns=[key],
        filter=where,
        limit=n,
        order_by=[ColumnOrdering(key, ascending=not desc, nulls_first=nulls_first)],
    )
    assert [r[k] for r in got] == [r[0] for r in rows_from_arrow(own)]
    ids = [r[i] for r in got]
    assert len(set(ids)) == len(ids)
    pylance_rows = lance.dataset(table).to_table(filter=f"id IN ({', '.join(map(str, ids))})")
    by_id = {r[i]: r for r in rows_from_arrow(pylance_rows.select(names))}
    assert first_difference([by_id[x] for x in ids], got, names) is None
