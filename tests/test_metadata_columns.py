"""The metadata columns _rowid, _rowaddr, _fragid, _row_created_at_version and
_row_last_updated_at_version, against pylance's own values for the same rows
(to_table(with_row_id=True, with_row_address=True) and its version columns): on every
fixture, and on datasets with stable row ids after updates, deletions and compaction."""

from __future__ import annotations

import lance
import pyarrow as pa
import pytest

import support

META = ["_rowid", "_rowaddr", "_row_created_at_version", "_row_last_updated_at_version"]
FIXTURES = [f for f in support.all_fixtures() if not f.name.startswith("external/")]


def pylance_rows(path, version=None):
    """(_rowaddr, _rowid, _fragid, created, updated) of every row, as pylance reads them."""
    ds = lance.dataset(str(path), version=version)
    t = ds.to_table(columns=META[2:], with_row_id=True, with_row_address=True)
    return sorted(
        (a, r, a >> 32, c, u)
        for a, r, c, u in zip(*(t.column(n).to_pylist() for n in ["_rowaddr", "_rowid"] + META[2:]))
    )


def spark_rows(spark, path, version=None):
    reader = spark.read.format("lance")
    if version is not None:
        reader = reader.option("version", version)
    df = reader.load(str(path)).select("_rowaddr", "_rowid", "_fragid", *META[2:])
    return sorted(tuple(r) for r in df.collect())


@pytest.mark.parametrize("fixture", [pytest.param(f, id=f.name) for f in FIXTURES])
def test_metadata_columns_equal_pylance_on_every_fixture(spark, fixture):
    assert spark_rows(spark, fixture.path) == pylance_rows(fixture.path)


def table(start, n):
    ids = list(range(start, start + n))
    return pa.table({"id": pa.array(ids, pa.int64()), "v": [f"r{i}" for i in ids]})


@pytest.fixture(params=[False, True], ids=["addresses", "stable"])
def evolved(tmp_path, request):
    """A dataset that went through appends, deletes, updates and a compaction."""
    path = str(tmp_path / "ds")
    lance.write_dataset(
        table(0, 30), path, enable_stable_row_ids=request.param, max_rows_per_file=10
    )
    lance.write_dataset(table(30, 30), path, mode="append")
    ds = lance.dataset(path)
    ds.delete("id % 7 = 3")
    ds.update({"v": "'changed'"}, where="id >= 12 and id < 16")
    lance.write_dataset(table(60, 5), path, mode="append")
    return path


def test_metadata_columns_after_changes_and_compaction(spark, evolved):
    before = lance.dataset(evolved).version
    assert spark_rows(spark, evolved) == pylance_rows(evolved)
    lance.dataset(evolved).optimize.compact_files()
    assert spark_rows(spark, evolved) == pylance_rows(evolved)
    # Time travel reads the metadata of that version.
    assert spark_rows(spark, evolved, before) == pylance_rows(evolved, before)


def test_metadata_columns_with_filters_and_sql(spark, evolved):
    df = spark.read.format("lance").load(evolved)
    got = sorted(
        tuple(r)
        for r in df.where("id > 40 and v <> 'r44'").select("id", "_rowid", "_rowaddr").collect()
    )
    t = lance.dataset(evolved).to_table(
        columns=["id"], filter="id > 40 and v <> 'r44'", with_row_id=True, with_row_address=True
    )
    want = sorted(zip(*(t.column(c).to_pylist() for c in ["id", "_rowid", "_rowaddr"])))
    assert got == want
    n = df.selectExpr("count(distinct _rowid)").collect()[0][0]
    assert n == lance.dataset(evolved).count_rows()
    # A plain select * does not return metadata columns.
    assert "_rowid" not in df.columns


@pytest.mark.parametrize(
    "where",
    [
        "_fragid = 1",
        "_fragid in (0, 2)",
        "_fragid >= 2",
        "_fragid < 1 or _fragid > 3",
        "_rowaddr >= 8589934592 and _rowaddr < 12884901888",
        "_rowaddr = 4294967298",
        "_rowaddr > -1 and id < 25",
        "_fragid <> 1",
    ],
)
def test_predicates_on_fragment_and_address_prune_fragments_exactly(spark, evolved, where):
    df = spark.read.format("lance").load(evolved).where(where)
    got = sorted(tuple(r) for r in df.select("id", "_rowaddr", "_fragid").collect())
    t = lance.dataset(evolved).to_table(columns=["id"], with_row_address=True)
    rows = [
        (i, a, a >> 32)
        for i, a in zip(t.column("id").to_pylist(), t.column("_rowaddr").to_pylist())
    ]
    keep = spark.createDataFrame(rows, "id long, _rowaddr long, _fragid int").where(where)
    assert got == sorted(tuple(r) for r in keep.collect())
    plan = df._jdf.queryExecution().executedPlan().toString()
    total = len(lance.dataset(evolved).get_fragments())
    if where in ("_fragid = 1", "_rowaddr = 4294967298"):
        assert f"Fragments: 1 of {total}" in plan, plan
