"""Row data: a full scan through Spark (df.collect()) equals pylance's to_table(), value by value
and in order, for every fixture dataset and version, under the documented type mapping.

While the connector still raises its "not implemented yet" error for row data, these tests
xfail (detected from that message only); any other error or any difference fails. They start
passing on their own when scans land."""

from __future__ import annotations

import lance
import pytest

import support
from lance_types import unsupported_fields

FIXTURES = support.all_fixtures()
VERSION_CASES = [pytest.param(f, v, id=f"{f.name}@v{v}") for f in FIXTURES for v in f.versions]


def collect_or_xfail(df):
    try:
        return df.collect()
    except Exception as e:  # noqa: BLE001
        text = str(e)
        if support.NOT_IMPLEMENTED_MARKER in text:
            line = next(
                (ln for ln in text.splitlines() if support.NOT_IMPLEMENTED_MARKER in ln), text
            )
            pytest.xfail(f"row data scan not implemented yet: {line.strip()[:300]}")
        raise


def compare(df, table, what: str):
    rows = collect_or_xfail(df)
    expected = support.rows_from_arrow(table)
    actual = support.rows_from_spark(rows, df.schema)
    diff = support.first_difference(expected, actual, df.columns)
    if diff is not None:
        # Say whether only the order differs: that is a different bug from wrong values.
        same_multiset = sorted(map(repr, expected)) == sorted(map(repr, actual))
        pytest.fail(f"{what}: {diff}" + (" (same rows, different order)" if same_multiset else ""))


@pytest.mark.parametrize("fx,version", VERSION_CASES)
def test_full_scan_equals_pylance(spark, fx, version):
    ds = lance.dataset(str(fx.path), version=version)
    cols = [f.name for f in ds.schema if f.name not in unsupported_fields(ds.schema)]
    df = spark.read.format("lance").option("version", version).load(str(fx.path))
    if len(cols) != len(ds.schema):
        df = df.select(*cols)
    compare(df, ds.to_table(columns=cols), f"{fx.name} v{version}")


@pytest.mark.parametrize(
    "fx",
    [
        pytest.param(f, id=f.name)
        for f in FIXTURES
        if f.name.endswith("_2.2") or f.name.endswith("_legacy")
    ],
)
def test_projection_equals_pylance(spark, fx):
    """A projection of the last and first columns (in that order) at the latest version."""
    ds = lance.dataset(str(fx.path))
    names = [f.name for f in ds.schema if f.name not in unsupported_fields(ds.schema)]
    cols = [names[-1], names[0]] if len(names) > 1 else names
    df = spark.read.format("lance").load(str(fx.path)).select(*cols)
    compare(df, ds.to_table(columns=cols), f"{fx.name} columns {cols}")
