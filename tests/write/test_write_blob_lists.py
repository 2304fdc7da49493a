"""Blobs inside lists (Lance 2.2), read and written as pylance 14.0.2 reads and writes them.

A list whose items are blob v2 columns reads in Spark as ``array<binary>``, the items' bytes,
with ``lance-encoding:blob`` on the array field; an ``array<binary>`` field with that metadata
(and the blob thresholds) is written as a list of blob v2 items. Each test compares with
pylance's own output: its bytes (``to_table(blob_handling="all_binary")``) and, for what Spark
writes, the descriptor pylance's own write of the same values gives per item (kind, size, blob
id), the Lance schema, ``validate()``, and appends by pylance afterwards. Lists of blobs in 2.0
and 2.1 files are refused: pylance writes them but cannot read them back.
"""

from __future__ import annotations

import lance
import pyarrow as pa
import pytest
from lance.blob import BlobType, blob_array
from pyspark.sql import types as T
from test_write_blobs import payload

from support import short_error

BLOB = {"lance-encoding:blob": "true"}
SMALL = {
    "lance-encoding:blob-inline-size-threshold": "16",
    "lance-encoding:blob-dedicated-size-threshold": "1000",
}


def lists(start: int, n: int) -> list:
    """Rows of lists: null, empty, null and empty items, inline, packed (> 16 B) and dedicated
    (> 1000 B) items, varying per row."""
    shapes = [
        None,
        [],
        [None],
        [b""],
        [b"ab", None, b"cde"],
        [payload(1, 300)],
        [b"x", payload(2, 2_000), b""],
        [payload(3, 900), payload(4, 50)],
    ]
    return [shapes[(start + i) % len(shapes)] for i in range(n)]


def pylance_table(ids, rows, meta=SMALL, route="extension") -> pa.Table:
    """The rows as pylance's users write them: BlobType items (extension) or large_binary items
    with lance-encoding:blob (metadata)."""
    flat = [v for r in rows if r is not None for v in r]
    offsets = [0]
    for r in rows:
        offsets.append(offsets[-1] + (0 if r is None else len(r)))
    mask = pa.array([r is None for r in rows])
    if route == "extension":
        item = pa.field("item", BlobType(), metadata=meta)
        values = blob_array(flat)
    else:
        item = pa.field("item", pa.large_binary(), metadata=dict(BLOB, **meta))
        values = pa.array(flat, pa.large_binary())
    arr = pa.ListArray.from_arrays(
        pa.array(offsets, pa.int32()), values, type=pa.list_(item), mask=mask
    )
    return pa.table({"id": pa.array(ids, pa.int64()), "l": arr})


def spark_frame(spark, ids, rows, meta=SMALL):
    schema = T.StructType(
        [
            T.StructField("id", T.LongType()),
            T.StructField("l", T.ArrayType(T.BinaryType()), True, metadata=dict(BLOB, **meta)),
        ]
    )
    return spark.createDataFrame(list(zip(ids, rows)), schema).coalesce(1)


def pylance_bytes(path) -> dict:
    ds = lance.dataset(str(path))
    ds.validate()
    t = ds.to_table(blob_handling="all_binary")
    return dict(zip(t.column("id").to_pylist(), t.column("l").to_pylist()))


def spark_bytes(spark, path) -> dict:
    rows = spark.read.format("lance").load(str(path)).collect()
    return {
        r["id"]: None if r["l"] is None else [None if v is None else bytes(v) for v in r["l"]]
        for r in rows
    }


def descriptors(path) -> dict:
    t = lance.dataset(str(path)).to_table()
    return {
        i: None
        if items is None
        else [None if d is None else (d["kind"], d["size"], d["blob_id"]) for d in items]
        for i, items in zip(t.column("id").to_pylist(), t.column("l").to_pylist())
    }


@pytest.mark.parametrize("route", ["extension", "metadata"])
def test_read_matches_pylance(spark, tmp_path, route):
    path = tmp_path / "l.lance"
    lance.write_dataset(
        pylance_table(range(16), lists(0, 16), route=route),
        str(path),
        data_storage_version="2.2",
        max_rows_per_file=6,
    )
    lance.dataset(str(path)).delete("id % 5 = 2")
    kinds = {d[0] for items in descriptors(path).values() if items for d in items if d}
    assert kinds == {0, 1, 2}  # inline, packed and dedicated items occur
    assert spark_bytes(spark, path) == pylance_bytes(path)
    field = spark.read.format("lance").load(str(path)).schema["l"]
    assert field.metadata.get("lance-encoding:blob") == "true"


def test_list_of_structs_with_a_blob(spark, tmp_path):
    path = tmp_path / "s.lance"
    rows = lists(0, 8)
    item = pa.struct([pa.field("name", pa.string()), pa.field("b", BlobType())])
    flat = [v for r in rows if r is not None for v in r]
    offsets = [0]
    for r in rows:
        offsets.append(offsets[-1] + (0 if r is None else len(r)))
    structs = pa.StructArray.from_arrays(
        [pa.array([f"n{i}" for i in range(len(flat))]), blob_array(flat)], fields=list(item)
    )
    arr = pa.ListArray.from_arrays(
        pa.array(offsets, pa.int32()), structs, mask=pa.array([r is None for r in rows])
    )
    lance.write_dataset(
        pa.table({"id": pa.array(range(8), pa.int64()), "l": arr}),
        str(path),
        data_storage_version="2.2",
    )
    want = pylance_bytes(path)
    got = {
        r["id"]: None
        if r["l"] is None
        else [(s["name"], None if s["b"] is None else bytes(s["b"])) for s in r["l"]]
        for r in spark.read.format("lance").load(str(path)).collect()
    }
    assert got == {
        i: None if items is None else [(s["name"], s["b"]) for s in items]
        for i, items in want.items()
    }


def test_spark_writes_as_pylance(spark, tmp_path):
    ours, theirs = tmp_path / "ours.lance", tmp_path / "theirs.lance"
    ids, rows = list(range(16)), lists(3, 16)
    spark_frame(spark, ids, rows).write.format("lance").save(str(ours))
    lance.write_dataset(
        pylance_table(ids, rows, route="metadata"), str(theirs), data_storage_version="2.2"
    )
    assert lance.dataset(str(ours)).schema == lance.dataset(str(theirs)).schema
    assert descriptors(ours) == descriptors(theirs)
    assert pylance_bytes(ours) == pylance_bytes(theirs) == dict(zip(ids, rows))
    for p in (ours, theirs):  # pylance keeps appending and deleting
        lance.write_dataset(
            pylance_table([100, 101], lists(5, 2), route="metadata"), str(p), mode="append"
        )
        lance.dataset(str(p)).delete("id = 4")
    assert pylance_bytes(ours) == pylance_bytes(theirs)
    assert spark_bytes(spark, ours) == pylance_bytes(ours)


def test_append_to_pylance_dataset(spark, tmp_path):
    """Spark appends what it read of pylance's list-of-blobs dataset, and new rows."""
    path = tmp_path / "a.lance"
    lance.write_dataset(pylance_table(range(8), lists(0, 8)), str(path), data_storage_version="2.2")
    before = pylance_bytes(path)
    spark.read.format("lance").load(str(path)).write.format("lance").mode("append").save(str(path))
    spark_frame(spark, [50, 51, 52], lists(4, 3)).write.format("lance").mode("append").save(
        str(path)
    )
    ds = lance.dataset(str(path))
    assert ds.count_rows() == 19
    t = ds.to_table(blob_handling="all_binary").to_pylist()
    assert [(r["id"], r["l"]) for r in t] == list(before.items()) * 2 + list(
        zip([50, 51, 52], lists(4, 3))
    )
    assert spark_bytes(spark, path) == pylance_bytes(path)


def test_managed_blobs_in_lists(spark, tmp_path):
    """In a managed-blob dataset, list items above the inline threshold are _blobs/ objects."""
    ours, theirs = tmp_path / "ours.lance", tmp_path / "theirs.lance"
    for p in (ours, theirs):
        t = pylance_table([0], [[b"seed"]])
        lance.write_dataset(
            t.replace_schema_metadata({"lance.blob.managed": "true"}),
            str(p),
            data_storage_version="2.2",
        )
    ids, rows = list(range(1, 9)), lists(1, 8)
    spark_frame(spark, ids, rows).write.format("lance").mode("append").save(str(ours))
    lance.write_dataset(
        pylance_table(ids, rows).replace_schema_metadata({"lance.blob.managed": "true"}),
        str(theirs),
        mode="append",
    )
    assert descriptors(ours) == descriptors(theirs)
    assert 4 in {d[0] for items in descriptors(ours).values() if items for d in items if d}
    assert pylance_bytes(ours) == pylance_bytes(theirs)


@pytest.mark.parametrize("fmt", ["2.0", "2.1"])
def test_lists_of_blobs_before_2_2_are_refused(spark, tmp_path, fmt):
    path = tmp_path / "r.lance"
    with pytest.raises(Exception) as e:
        spark_frame(spark, [0], [[b"x"]]).write.format("lance").option(
            "data_storage_version", fmt
        ).save(str(path))
    msg = short_error(e.value, 3000)
    assert "inside lists need data_storage_version 2.2" in msg, msg
