"""The data of the package tests: rows the clean venvs write and the dataset pylance writes
for them (they hold no pylance), and a filter the connector pushes down."""

from __future__ import annotations

import pyarrow as pa

#: A filter both Spark and pylance evaluate, made only of predicates the connector pushes down.
PUSHED_FILTER = "id >= 40 AND (s LIKE 'k1%' OR s IS NULL)"

COLUMNS = ("id", "s", "x", "flag")
SCHEMA = pa.schema(
    [("id", pa.int64()), ("s", pa.string()), ("x", pa.float64()), ("flag", pa.bool_())]
)
#: The same schema as a Spark DDL string (for createDataFrame in the venvs).
SPARK_SCHEMA = "id long, s string, x double, flag boolean"


def sample_rows(n: int, seed: int) -> list:
    """Deterministic rows (id, s, x, flag) with nulls in s and x."""
    rows = []
    for i in range(n):
        k = (i * 7919 + seed) % 101
        rows.append(
            {
                "id": i,
                "s": None if k % 9 == 0 else f"k{k}",
                "x": None if k % 11 == 0 else k / 8 - 3.0,
                "flag": k % 2 == 0,
            }
        )
    return rows


def as_lists(rows: list) -> list:
    """Rows as lists in COLUMNS order (what createDataFrame takes with SPARK_SCHEMA)."""
    return [[r[c] for c in COLUMNS] for r in rows]
