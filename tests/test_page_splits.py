"""Page-aligned splits through Spark, on the multi-page datasets of src-test-data/pages/ (written
by src-test-data/generate_pages.py with a tiny page cache, so each column is cut at its own rows).

- With a tiny ``split_size`` every partition is one page of the projected column whose pages are
  largest in bytes: the first ``id`` of each partition must be exactly that column's page starts,
  as the file's own metadata records them (``paged_<fmt>.pages.json``; legacy: batch offsets).
- Whatever the split size and batch size, the rows equal what pylance reads LIVE, in order.
"""

from __future__ import annotations

import json

import lance
import pytest
from property import check
from pyspark.sql import functions as F

import support

DIR = support.SRC_TEST_DATA / "pages"
FORMATS = ["legacy", "2.0", "2.1", "2.2"]


def path(fmt: str):
    return DIR / f"paged_{fmt}.lance"


def read(spark, fmt: str, **options):
    reader = spark.read.format("lance")
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load(str(path(fmt)))


def first_file(fmt: str) -> dict:
    files = json.loads((DIR / f"paged_{fmt}.pages.json").read_text())["files"]
    return next(f for f in files.values() if f["fragment"] == 0)


def expected_starts(fmt: str, names: list[str]) -> list[int]:
    """Page starts of the column, among the projected single-column fields `names`, with the
    largest mean page bytes (lowest column on ties); legacy files cut every column at their
    batch offsets."""
    rec = first_file(fmt)
    if fmt == "legacy":
        return rec["batch_offsets"][:-1]
    ids = {f.name(): f.id() for f in lance.dataset(str(path(fmt))).lance_schema.fields()}
    cols = rec["column_indices"] or list(range(len(rec["fields"])))
    col_of = dict(zip(rec["fields"], cols))
    chosen = [col_of[ids[n]] for n in names]

    def mean(c):
        b = rec["columns"][c]["page_bytes"]
        return sum(b) / len(b)

    best = min(chosen, key=lambda c: (-mean(c), c))
    starts, row = [], 0
    for n in rec["columns"][best]["page_rows"]:
        if not starts or starts[-1] != row:
            starts.append(row)
        row += n
    return starts


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("names", [["id"], ["id", "x"], ["id", "s"], ["id", "vec"]], ids="+".join)
def test_partitions_start_on_page_boundaries(spark, fmt, names):
    df = read(spark, fmt, split_size=1).select(*names).withColumn("p", F.spark_partition_id())
    # count(name) for every projected column, or Spark prunes the unused ones from the scan.
    counts = [F.count(n).alias(f"n_{n}") for n in names]
    first = (
        df.where(F.col("id") < 4000).groupBy("p").agg(F.min("id").alias("start"), *counts).collect()
    )
    got = sorted(r["start"] for r in first)
    want = expected_starts(fmt, names)
    assert got == want, (
        f"{fmt} {names}: partitions start at {got}, the chosen column's pages at {want}"
    )
    # Not the old 1024-row alignment by accident.
    assert got != list(range(0, 4000, 1024))


@pytest.mark.parametrize("fmt", FORMATS)
def test_split_scans_equal_pylance(spark, fmt):
    ds = lance.dataset(str(path(fmt)))
    expected = check.pylance_table(ds)
    problems = []
    for opts in ({"split_size": 1}, {"split_size": 1, "batch_size": 37}, {"split_size": 5000}, {}):
        df = read(spark, fmt, **opts)
        problems += [
            f"{opts}: {p}"
            for p in check.compare(expected, df.collect(), df.schema, list(df.columns))
        ]
        for col in ("vec", "li", "st"):
            one = read(spark, fmt, **opts).select(col)
            problems += [
                f"{opts} {col}: {p}"
                for p in check.compare(expected.select([col]), one.collect(), one.schema, [col])
            ]
    assert not problems, f"paged_{fmt}: Spark differs from pylance\n" + "\n".join(
        "  - " + p for p in problems
    )
