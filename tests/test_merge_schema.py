"""Appends that carry new columns with `mergeSchema=true`: the columns are added first (all
null in the existing rows, a Merge as pylance's `add_columns` commits it), then the rows are
appended. Checked against pylance's own add_columns-then-append on a twin: same schema (field
ids too), same rows; pylance validates the result and keeps appending, deleting and adding
columns to it. Without the option, or with a column the DataFrame lacks, the append is refused
with nothing committed."""

from __future__ import annotations

import lance
import pyarrow as pa
import pytest
from pyspark.sql import functions as F


def table(start, n):
    ids = list(range(start, start + n))
    return pa.table({"id": pa.array(ids, pa.int64()), "s": [f"r{i}" for i in ids]})


@pytest.fixture(params=[False, True], ids=["addresses", "stable"])
def twins(tmp_path, request):
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    for p in (ours, theirs):
        lance.write_dataset(table(0, 10), p, enable_stable_row_ids=request.param)
        lance.write_dataset(table(10, 5), p, mode="append")
        lance.dataset(p).delete("id = 3")
    return ours, theirs


NEW = pa.schema(
    [
        pa.field("score", pa.float64()),
        pa.field("tags", pa.list_(pa.string())),
        pa.field("pt", pa.struct([pa.field("x", pa.int32()), pa.field("y", pa.int32())])),
    ]
)


def new_rows(start, n):
    ids = list(range(start, start + n))
    base = pa.schema([pa.field("id", pa.int64()), pa.field("s", pa.string())])
    return pa.table(
        {
            "id": ids,
            "s": [f"n{i}" for i in ids],
            "score": [i / 4 for i in ids],
            "tags": [[f"t{i}"] * (i % 3) for i in ids],
            "pt": [{"x": i, "y": -i} for i in ids],
        },
        schema=pa.schema(list(base) + list(NEW)),
    )


def frame(spark, start, n):
    return spark.createDataFrame(
        new_rows(start, n).to_pylist(),
        "id long, s string, score double, tags array<string>, pt struct<x:int,y:int>",
    )


def fields(path):
    """The schema as pylance keeps it: names, types, field ids, nullability."""
    ds = lance.dataset(path)
    return str(ds.lance_schema), ds.schema


def rows(path):
    ds = lance.dataset(path)
    return ds.to_table(with_row_id=ds.has_stable_row_ids).sort_by("id").to_pylist()


def test_merge_schema_equals_pylance_add_columns_then_append(spark, twins):
    ours, theirs = twins
    before = lance.dataset(ours).version
    frame(spark, 100, 4).write.format("lance").mode("append").option("mergeSchema", "true").save(
        ours
    )
    d = lance.dataset(theirs)
    d.add_columns(NEW)
    lance.write_dataset(new_rows(100, 4), theirs, mode="append")

    ds = lance.dataset(ours)
    ds.validate()
    assert ds.version == before + 2
    assert [type(ds.read_transaction(v).operation).__name__ for v in (before + 1, before + 2)] == [
        "Merge",
        "Append",
    ]
    assert fields(ours) == fields(theirs)
    assert rows(ours) == rows(theirs)
    # Spark reads what pylance reads, the old rows' new columns null.
    got = sorted(spark.read.format("lance").load(ours).collect(), key=lambda r: r.id)
    want = lance.dataset(ours).to_table().sort_by("id").to_pylist()
    assert [r.asDict(recursive=True) for r in got] == want

    for p in (ours, theirs):  # pylance keeps changing both the same way
        lance.write_dataset(new_rows(200, 2), p, mode="append")
        lance.dataset(p).delete("id = 101")
        lance.dataset(p).add_columns({"twice": "id * 2"})
    assert fields(ours) == fields(theirs)
    assert rows(ours) == rows(theirs)


def test_merge_schema_without_new_columns_is_a_plain_append(spark, twins):
    ours, theirs = twins
    before = lance.dataset(ours).version
    df = spark.createDataFrame(table(50, 3).to_pylist(), "id long, s string")
    df.select(F.col("s"), F.col("id").alias("ID")).write.format("lance").mode("append").option(
        "mergeSchema", "true"
    ).save(ours)
    lance.write_dataset(table(50, 3), theirs, mode="append")
    ds = lance.dataset(ours)
    assert ds.version == before + 1
    assert fields(ours) == fields(theirs) and rows(ours) == rows(theirs)


def test_new_columns_without_merge_schema_are_refused(spark, twins):
    ours, _ = twins
    before = lance.dataset(ours).version
    for opts in ({}, {"mergeSchema": "false"}):
        with pytest.raises(Exception, match="score"):
            frame(spark, 100, 2).write.format("lance").mode("append").options(**opts).save(ours)
    # A dataset column missing from the DataFrame is refused even with mergeSchema.
    with pytest.raises(Exception, match="'s'"):
        frame(spark, 100, 2).drop("s").write.format("lance").mode("append").option(
            "mergeSchema", "true"
        ).save(ours)
    assert lance.dataset(ours).version == before
