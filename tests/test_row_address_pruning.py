"""Predicates naming row addresses (`_rowaddr = a`, `_rowaddr IN (...)`, ANDs and ORs of
them): the scan reads only the fragments, splits and batches holding those rows, and returns
exactly pylance's rows at those addresses (deleted ones left out) — what fetching the rows a
search found needs."""

from __future__ import annotations

import lance
import pyarrow as pa
import pytest

from support import scan_metrics

ROWS = 200_000


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    """A fragment of 200,000 rows and two small ones, every 9th row deleted."""
    path = str(tmp_path_factory.mktemp("addr") / "t.lance")
    ids = pa.array(range(ROWS), pa.int64())
    lance.write_dataset(pa.table({"id": ids, "s": pa.array([f"s{i}" for i in range(ROWS)])}), path)
    for start in (ROWS, ROWS + 100):
        lance.write_dataset(
            pa.table(
                {
                    "id": pa.array(range(start, start + 100), pa.int64()),
                    "s": [f"s{i}" for i in range(start, start + 100)],
                }
            ),
            path,
            mode="append",
        )
    lance.dataset(path).delete("id % 9 = 4")
    return path


def _addr(frag, offset):
    return (frag << 32) | offset


# (predicate, offsets it names in the big fragment 0, fragments it names)
WHERES = [
    (f"_rowaddr = {_addr(0, 123456)}", {123456}, {0}),
    (f"_rowaddr IN ({_addr(0, 5)}, {_addr(0, 199999)}, {_addr(2, 7)})", {5, 199999}, {0, 2}),
    # Deleted (offset 4: id 4), past the fragment's end, of no fragment at all.
    (f"_rowaddr IN ({_addr(0, 4)}, {_addr(0, 250000)}, {_addr(9, 1)}, {_addr(1, 3)})", {4}, {0, 1}),
    (
        f"(_rowaddr = {_addr(0, 70000)} OR _rowaddr IN ({_addr(0, 70001)}, {_addr(1, 50)})) "
        "AND id > 70000",
        {70000, 70001},
        {0, 1},
    ),
    (
        f"_rowaddr IN ({_addr(0, 10)}, {_addr(0, 20)}) AND _rowaddr IN ({_addr(0, 20)}, "
        f"{_addr(0, 30)})",
        {20},
        {0},
    ),
    (f"_rowaddr = {_addr(0, 9)} AND s = 's9'", {9}, {0}),
]


@pytest.mark.parametrize("where,offsets,fragments", WHERES)
def test_rows_named_by_address_are_pylances_and_only_their_batches_are_read(
    spark, table, where, offsets, fragments
):
    df = spark.read.format("lance").load(table).where(where).select("id", "s", "_rowaddr")
    got = sorted(tuple(r) for r in df.collect())
    t = lance.dataset(table).to_table(columns=["id", "s"], with_row_address=True)
    every = spark.createDataFrame(
        list(zip(t["id"].to_pylist(), t["s"].to_pylist(), t["_rowaddr"].to_pylist())),
        "id long, s string, _rowaddr long",
    )
    want = sorted(tuple(r) for r in every.where(where).collect())
    assert got == want
    m = scan_metrics(spark, df)
    # Only the batches (of at most 8192 rows) holding a named row of the big fragment are
    # decoded (a split may start inside a batch: two more).
    assert m["rowsSkippedByIndex"] >= ROWS - 8192 * (len(offsets) + 2), (where, m)
    assert m["fragmentsRead"] <= len(fragments)
    # Without the addresses the whole table is read.
    whole = spark.read.format("lance").load(table).where("id >= 0").select("id")
    assert scan_metrics(spark, whole)["rowsSkippedByIndex"] == 0


def test_a_search_fetches_its_rows_by_address(spark, table):
    """What `LanceTable.nearest` does with the addresses an index search found."""
    from pyspark.sql import functions as F

    addrs = [_addr(0, 100), _addr(0, 150000), _addr(2, 99)]
    df = (
        spark.read.format("lance")
        .load(table)
        .select("id", "_rowaddr")
        .where(F.col("_rowaddr").isin(addrs))
    )
    assert sorted(r["id"] for r in df.collect()) == [100, 150000, ROWS + 199]
    assert scan_metrics(spark, df)["rowsSkippedByIndex"] >= ROWS - 8192 * 6
