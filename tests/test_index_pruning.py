"""Scalar indices prune the Lance scan: with pylance's BTREE indices a pushed filter reads only
the fragments an index shows can match (plus those it does not cover), and the rows are
always pylance's own filtered rows, with the index used or not."""

from __future__ import annotations

import datetime
import random

import lance
import pyarrow as pa
import pytest

from support import scan_metrics

FRAGMENTS, PER_FRAGMENT = 20, 1000


def _rows(start, count):
    ids = list(range(start, start + count))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "k": pa.array(
                [None if i % 97 == 0 and i < 5000 else (i // 20) % 1000 for i in ids], pa.int32()
            ),
            "s": pa.array([f"s{(i // 37) % 200:04d}" for i in ids]),
            "d": pa.array(
                [datetime.date(2020, 1, 1) + datetime.timedelta(days=i // 50) for i in ids],
                pa.date32(),
            ),
            "x": pa.array([i % 13 for i in ids], pa.int64()),
            "c": pa.array([f"c{i // 1500:02d}" for i in ids]),
            "z": pa.array([3 * i for i in ids], pa.int64()),
        }
    )


@pytest.fixture(scope="module", params=[False, True], ids=["addresses", "stable-row-ids"])
def table(request, tmp_path_factory):
    """20 indexed fragments (BTREE on id, k, s, d; BITMAP on c; ZONEMAP on z), some rows
    deleted, then two appended fragments no index covers. Returns the path, the version the
    indices were built at and whether the table has stable row ids."""
    path = str(tmp_path_factory.mktemp("ixprune") / "t.lance")
    lance.write_dataset(
        _rows(0, FRAGMENTS * PER_FRAGMENT),
        path,
        max_rows_per_file=PER_FRAGMENT,
        enable_stable_row_ids=request.param,
    )
    ds = lance.dataset(path)
    for c in ["id", "k", "s", "d"]:
        ds.create_scalar_index(c, "BTREE")
    ds.create_scalar_index("c", "BITMAP")
    ds.create_scalar_index("z", "ZONEMAP")
    indexed = lance.dataset(path).version
    lance.dataset(path).delete("id % 10 = 3 or (id >= 2000 and id < 3000)")
    for n in range(2):
        lance.write_dataset(_rows(30000 + 500 * n, 500), path, mode="append")
    return path, indexed, request.param


def _fragments_of(path, pred, version=None):
    t = lance.dataset(path, version=version).to_table(
        columns=["id"], filter=pred, with_row_address=True
    )
    return {a >> 32 for a in t["_rowaddr"].to_pylist()}


def _ours(spark, path, pred, **options):
    df = spark.read.format("lance").options(**options).load(path).where(pred).select("id")
    return sorted(r["id"] for r in df.collect()), df


def _unindexed(path):
    ds = lance.dataset(path)
    covered = set()
    for ix in ds.list_indices():
        covered |= set(ix["fragment_ids"])
    return {f.fragment_id for f in ds.get_fragments()} - covered


@pytest.mark.parametrize(
    "pred",
    [
        "id = 1234",
        "id = 2500",
        "id < 700",
        "id >= 19500",
        "k = 5",
        "k IS NULL",
        "k IN (1, 2, 999)",
        "s = 's0007'",
        "s >= 's0195'",
        "d = DATE '2020-02-01'",
        "d < DATE '2020-01-10'",
        "id = 31234",
        "c = 'c03'",
        "c IN ('c00', 'c13')",
        "c < 'c02'",
        "z = 3000",
        "z < 100",
        "z >= 59000 AND z <= 59100",
        "z IN (3, 30003)",
    ],
)
def test_one_indexed_column_reads_only_the_fragments_holding_it(spark, table, pred):
    path, indexed, stable = table
    want = sorted(lance.dataset(path).to_table(columns=["id"], filter=pred)["id"].to_pylist())
    got, df = _ours(spark, path, pred)
    assert got == want
    # The index was built before the deletions: it still names fragments whose matching rows
    # were deleted since (pylance reads those too), and never covers the appended ones.
    live = {f.fragment_id for f in lance.dataset(path).get_fragments()}
    expected = (_fragments_of(path, pred, indexed) & live) | _unindexed(path)
    if stable and pred.startswith("c "):
        # A BITMAP index of a table with stable row ids holds row ids: not used here.
        expected = live
    else:
        assert len(expected) < len(live)
    assert scan_metrics(spark, df)["fragmentsRead"] == len(expected)


def test_without_the_index_every_fragment_is_read(spark, table):
    path, _, _ = table
    pred = "id = 1234"
    want = (
        lance.dataset(path)
        .to_table(columns=["id"], filter=pred, use_scalar_index=False)["id"]
        .to_pylist()
    )
    got, df = _ours(spark, path, pred, use_scalar_index="false")
    assert got == sorted(want)
    assert scan_metrics(spark, df)["fragmentsRead"] == len(lance.dataset(path).get_fragments())


def _random_predicate(rng):
    def leaf():
        c = rng.choice(["id", "k", "s", "d", "x", "c", "z"])
        op = rng.choice(["=", "<", "<=", ">", ">=", "!=", "IN", "IS NULL", "IS NOT NULL"])
        if c == "id":
            v = lambda: str(rng.randrange(-10, 33000))  # noqa: E731
        elif c == "z":
            v = lambda: str(rng.randrange(-10, 99000))  # noqa: E731
        elif c in ("k", "x"):
            v = lambda: str(rng.randrange(-2, 1002))  # noqa: E731
        elif c == "s":
            v = lambda: f"'s{rng.randrange(0, 205):04d}'"  # noqa: E731
        elif c == "c":
            v = lambda: f"'c{rng.randrange(0, 16):02d}'"  # noqa: E731
        else:

            def v():
                day = datetime.date(2020, 1, 1) + datetime.timedelta(days=rng.randrange(-5, 700))
                return f"DATE '{day}'"

        if op == "IN":
            return f"{c} IN ({', '.join(v() for _ in range(rng.randrange(1, 4)))})"
        if op.startswith("IS"):
            return f"{c} {op}"
        return f"{c} {op} {v()}"

    def tree(depth):
        if depth == 0 or rng.random() < 0.4:
            return leaf()
        return f"({tree(depth - 1)} {rng.choice(['AND', 'OR'])} {tree(depth - 1)})"

    return tree(2)


def test_random_predicates_return_pylances_rows(spark, table):
    path, _, _ = table
    rng = random.Random(20261126)
    ds = lance.dataset(path)
    live = {f.fragment_id for f in ds.get_fragments()}
    pruned = 0
    for _ in range(25):
        pred = _random_predicate(rng)
        want = sorted(ds.to_table(columns=["id"], filter=pred)["id"].to_pylist())
        got, df = _ours(spark, path, pred)
        assert got == want, pred
        if "LocalTableScan" in df._jdf.queryExecution().executedPlan().toString():
            continue  # Spark proved it empty itself (say `c IS NULL` of a non-null column)
        read = scan_metrics(spark, df)["fragmentsRead"]
        assert len(_fragments_of(path, pred)) <= read <= len(live), pred
        pruned += read < len(live)
        flat, _ = _ours(spark, path, pred, use_scalar_index="false")
        assert flat == want, pred
    assert pruned > 0


@pytest.fixture(scope="module")
def big_fragment(tmp_path_factory):
    """One fragment of 200,000 rows (49 index pages), BTREE on id, then every 7th row deleted.
    Returns the path and the version the index was built at."""
    path = str(tmp_path_factory.mktemp("ixbig") / "t.lance")
    lance.write_dataset(_rows(0, 200_000), path)
    lance.dataset(path).create_scalar_index("id", "BTREE")
    indexed = lance.dataset(path).version
    lance.dataset(path).delete("id % 7 = 0")
    return path, indexed


@pytest.mark.parametrize(
    "pred",
    ["id = 123456", "id IN (5, 199999)", "id >= 150000 AND id < 150100", "id = 14", "id < 0"],
)
def test_within_a_fragment_only_batches_holding_matches_are_decoded(spark, big_fragment, pred):
    path, indexed = big_fragment
    want = sorted(lance.dataset(path).to_table(columns=["id"], filter=pred)["id"].to_pylist())
    got, df = _ours(spark, path, pred)
    assert got == want
    m = scan_metrics(spark, df)
    # The rows the index holds a match for (deleted since or not).
    hits = lance.dataset(path, version=indexed).to_table(columns=["id"], filter=pred)["id"]
    if len(hits) == 0:
        assert m["fragmentsRead"] == 0
    else:
        # At most the batches (4096 rows) holding a hit are decoded (a split may start inside
        # a batch: two more).
        batches = {i // 4096 for i in hits.to_pylist()}
        assert m["rowsSkippedByIndex"] >= 200_000 - 4096 * (len(batches) + 2)
    _, flat = _ours(spark, path, pred, use_scalar_index="false")
    assert scan_metrics(spark, flat)["rowsSkippedByIndex"] == 0


@pytest.mark.parametrize(
    "pred", ["id = 1234", "z = 3000", "c = 'c03'", "k IN (1, 2, 999)", "z < 100 OR id >= 30100"]
)
def test_after_pylances_compaction_rows_stay_pylances(spark, table, tmp_path, pred):
    """pylance's compaction remaps BTREE and BITMAP indices and leaves ZONEMAP ones naming
    fragments that are gone: the new fragments are read whole."""
    import shutil

    path = str(tmp_path / "c.lance")
    shutil.copytree(table[0], path)
    lance.dataset(path).optimize.compact_files(target_rows_per_fragment=3000)
    want = sorted(lance.dataset(path).to_table(columns=["id"], filter=pred)["id"].to_pylist())
    got, df = _ours(spark, path, pred)
    assert got == want
    flat, _ = _ours(spark, path, pred, use_scalar_index="false")
    assert flat == want
