"""Blob values given as URIs (external blobs), written as pylance 14.0.2 writes them (Lance 2.2).

A blob column may be given as ``struct<data: binary, uri: string[, position: bigint, size:
bigint]>`` with ``lance-encoding:blob`` = "true", the shape of pylance's ``BlobType``: each value
sets ``data`` (its bytes) or ``uri`` (an object elsewhere, a range of it with position and
size). As in pylance, a URI under one of the dataset's external base paths is stored relative
to it; any other needs ``allow_external_blob_outside_bases=true``; ``external_blob_mode=ingest``
stores the bytes instead. Every test writes the same values through Spark and through pylance
and compares the descriptors pylance shows and the bytes it reads
(``to_table(blob_handling="all_binary")``).
"""

from __future__ import annotations

import lance
import pyarrow as pa
import pytest
from lance.blob import Blob, blob_array, blob_field
from pyspark.sql import types as T

from support import short_error

BLOB = {"lance-encoding:blob": "true"}
FOUR = T.StructType(
    [
        T.StructField("data", T.BinaryType()),
        T.StructField("uri", T.StringType()),
        T.StructField("position", T.LongType()),
        T.StructField("size", T.LongType()),
    ]
)
TWO = T.StructType(FOUR.fields[:2])


@pytest.fixture
def ext(tmp_path):
    d = tmp_path / "ext"
    d.mkdir()
    (d / "a.bin").write_bytes(bytes(range(256)) * 40)
    (d / "c.bin").write_bytes(b"C" * 77 + b"D" * 23)
    return d


def values(ext):
    """(Spark struct value, pylance value) pairs: bytes, whole objects, ranges, nulls, empty."""
    a, c = (ext / "a.bin").as_uri(), (ext / "c.bin").as_uri()
    return [
        ((b"inline", None, None, None), b"inline"),
        ((None, a, None, None), a),
        ((None, a, 10, 20), Blob.from_uri(a, 10, 20)),
        (None, None),
        ((b"", None, None, None), Blob.empty()),
        ((None, c, 70, 30), Blob.from_uri(c, 70, 30)),
        ((b"x" * 3000, None, None, None), b"x" * 3000),
    ]


def spark_write(spark, path, pairs, start=0, mode="errorifexists", schema=FOUR, **opts):
    rows = [(start + i, v) for i, (v, _) in enumerate(pairs)]
    st = T.StructType(
        [T.StructField("id", T.LongType()), T.StructField("b", schema, True, metadata=BLOB)]
    )
    w = spark.createDataFrame(rows, st).coalesce(1).write.format("lance").mode(mode)
    for k, v in opts.items():
        w = w.option(k, v)
    w.save(str(path))


def pylance_table(pairs, start=0):
    vals = [p for _, p in pairs]
    return pa.table(
        {"id": pa.array(range(start, start + len(vals)), pa.int64()), "b": blob_array(vals)},
        schema=pa.schema([pa.field("id", pa.int64()), blob_field("b")]),
    )


def state(path):
    ds = lance.dataset(str(path))
    ds.validate()
    desc = ds.to_table().to_pylist()
    data = ds.to_table(blob_handling="all_binary").to_pylist()
    return sorted((r["id"], r["b"]) for r in desc), sorted((r["id"], r["b"]) for r in data)


def test_absolute_uris_outside_bases(spark, tmp_path, ext):
    ours, theirs = tmp_path / "ours.lance", tmp_path / "theirs.lance"
    spark_write(spark, ours, values(ext), allow_external_blob_outside_bases="true")
    lance.write_dataset(
        pylance_table(values(ext)),
        str(theirs),
        data_storage_version="2.2",
        allow_external_blob_outside_bases=True,
    )
    assert state(ours) == state(theirs)
    kinds = [d["kind"] for _, d in state(ours)[0] if d]
    assert kinds.count(3) == 3  # three external references
    got = {
        r["id"]: None if r["b"] is None else bytes(r["b"])
        for r in spark.read.format("lance").load(str(ours)).collect()
    }
    assert got == dict(state(theirs)[1])


def test_uris_relative_to_an_external_base(spark, tmp_path, ext):
    ours, theirs = tmp_path / "ours.lance", tmp_path / "theirs.lance"
    base = [lance.DatasetBasePath(ext.as_uri(), name="ext", is_dataset_root=False)]
    for p in (ours, theirs):
        lance.write_dataset(
            pylance_table(values(ext)[:1]), str(p), data_storage_version="2.2", initial_bases=base
        )
    spark_write(spark, ours, values(ext), start=1, mode="append")
    lance.write_dataset(pylance_table(values(ext), start=1), str(theirs), mode="append")
    assert state(ours) == state(theirs)
    refs = [d for _, d in state(ours)[0] if d and d["kind"] == 3]
    assert refs and all(d["blob_id"] > 0 and "/" not in d["blob_uri"] for d in refs)


def test_ingest_stores_the_bytes(spark, tmp_path, ext):
    ours, theirs = tmp_path / "ours.lance", tmp_path / "theirs.lance"
    spark_write(spark, ours, values(ext), external_blob_mode="ingest")
    lance.write_dataset(
        pylance_table(values(ext)),
        str(theirs),
        data_storage_version="2.2",
        external_blob_mode="ingest",
    )
    assert state(ours)[1] == state(theirs)[1]
    assert [(i, d and (d["kind"], d["size"])) for i, d in state(ours)[0]] == [
        (i, d and (d["kind"], d["size"])) for i, d in state(theirs)[0]
    ]


def test_two_field_struct(spark, tmp_path, ext):
    ours = tmp_path / "ours.lance"
    pairs = [
        (None if v is None else (v[0], v[1]), p)
        for v, p in values(ext)
        if v is None or v[2] is None
    ]
    spark_write(spark, ours, pairs, schema=TWO, allow_external_blob_outside_bases="true")
    theirs = tmp_path / "theirs.lance"
    lance.write_dataset(
        pylance_table(pairs),
        str(theirs),
        data_storage_version="2.2",
        allow_external_blob_outside_bases=True,
    )
    assert state(ours)[1] == state(theirs)[1]


@pytest.mark.parametrize(
    "value, opts, says",
    [
        ((None, "URI", None, None), {}, "allow_external_blob_outside_bases"),
        (
            (None, "/no/scheme.bin", None, None),
            {"allow_external_blob_outside_bases": "true"},
            "not an absolute URI",
        ),
        ((b"x", "URI", None, None), {}, "both data and uri"),
        ((None, None, None, None), {}, "must set data or uri"),
        ((None, "URI", 5, None), {}, "both position and size"),
        ((None, "URI", 0, 0), {}, "must be positive"),
        ((b"x", None, None, None), {"external_blob_mode": "copy"}, "external_blob_mode"),
    ],
)
def test_bad_values_are_refused(spark, tmp_path, ext, value, opts, says):
    path = tmp_path / "bad.lance"
    uri = (ext / "a.bin").as_uri()
    v = tuple(uri if x == "URI" else x for x in value)
    with pytest.raises(Exception) as e:
        spark_write(spark, path, [(v, None)], **opts)
    msg = short_error(e.value, 3000)
    assert says in msg, msg
    assert not path.exists() or not list(path.rglob("*.manifest"))


def test_struct_blobs_need_2_2(spark, tmp_path, ext):
    with pytest.raises(Exception) as e:
        spark_write(spark, tmp_path / "v.lance", values(ext)[:1], data_storage_version="2.1")
    assert "needs data_storage_version 2.2" in short_error(e.value, 3000)
