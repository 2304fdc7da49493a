"""Spark scans of the forced-encoding 2.1/2.2 fixtures (src-test-data/structural/, written by
src-test-data/generate_structural.py): packed structs, fixed-size lists with all-null items,
fixed-size lists of structs, compression and layout choices. The Scala suites read these files
below the DataSource; this goes through Spark (fragment reader, column vectors) and compares
with what pylance reads LIVE from the same path, value by value:

- a full scan, in one batch and in batches of 29 rows (chunk and page boundaries mid-batch),
  and with split_size=1 (one split per row range the planner can cut);
- each column alone (projection);
- ``select("s.a")`` of every child of every top-level struct column, and of every top-level
  fixed-size list of structs (an array of the child: Spark prunes the list's struct).
"""

from __future__ import annotations

import json

import lance
import pyarrow as pa
import pytest
from property import check

import support
from lance_types import spark_schema_for_arrow, type_shape

DIR = support.SRC_TEST_DATA / "structural"
NAMES = [d["name"] for d in json.loads((DIR / "_index.json").read_text())["datasets"]]


def read(spark, path, **options):
    reader = spark.read.format("lance")
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load(str(path))


def scan_problems(df, expected: pa.Table) -> list[str]:
    return check.compare(expected, df.collect(), df.schema, list(df.columns))


@pytest.mark.parametrize("name", NAMES)
def test_structural_fixture_scans(spark, name):
    path = DIR / f"{name}.lance"
    ds = lance.dataset(str(path))
    expected = check.pylance_table(ds)
    assert type_shape(read(spark, path).schema) == type_shape(spark_schema_for_arrow(ds.schema))

    problems = []
    for opts in ({}, {"batch_size": 29}, {"split_size": 1}):
        problems += [
            f"scan {opts}: {p}" for p in scan_problems(read(spark, path, **opts), expected)
        ]
    for col in ds.schema.names:
        problems += [
            f"column {col}: {p}"
            for p in scan_problems(read(spark, path).select(col), expected.select([col]))
        ]
    for f in ds.schema:
        if pa.types.is_fixed_size_list(f.type) and pa.types.is_struct(f.type.value_type):
            st = f.type.value_type
            for i in range(st.num_fields):
                p = f"{f.name}.{st.field(i).name}"
                rows = expected.column(f.name).to_pylist()
                vals = [
                    None if r is None else [None if x is None else x[st.field(i).name] for x in r]
                    for r in rows
                ]
                want = pa.table({p: pa.array(vals, pa.list_(st.field(i)))})
                problems += [
                    f"select({p!r}): {x}" for x in scan_problems(read(spark, path).select(p), want)
                ]
        if pa.types.is_struct(f.type):
            for i in range(f.type.num_fields):
                p = f"{f.name}.{f.type.field(i).name}"
                want = pa.table({p: check.nested_child(expected, p)})
                problems += [
                    f"select({p!r}): {x}" for x in scan_problems(read(spark, path).select(p), want)
                ]
    assert not problems, f"{name}: Spark differs from pylance\n" + "\n".join(
        "  - " + p for p in problems
    )
