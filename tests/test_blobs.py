"""Blob columns (``lance-encoding:blob`` / ``lance.blob.v2``) read through Spark as BinaryType
holding the blobs' bytes, compared row by row with what pylance's ``take_blobs`` returns.

The fixtures of src-test-data/blobs (generate_blobs.py) cover blob v1 in 2.0 and 2.1 and blob v2
in 2.2 with inline, packed, dedicated and managed values, several fragments, an append and
deletions. External blobs and base paths need absolute URIs, so those datasets are written here,
in a temporary directory.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import lance
import pyarrow as pa
import pytest
from lance.blob import Blob, blob_array, blob_field
from pyspark.sql import functions as F
from pyspark.sql import types as T

from support import SRC_TEST_DATA, short_error

BLOBS = SRC_TEST_DATA / "blobs"
FIXTURES = ["blob_v1_2.0", "blob_v1_2.1", "blob_v2_2.2", "blob_managed_2.2"]


def blob_paths(schema: pa.Schema, prefix: str = "") -> list[str]:
    out = []
    for f in schema:
        v2 = isinstance(f.type, pa.BaseExtensionType) and f.type.extension_name == "lance.blob.v2"
        if v2 or b"lance-encoding:blob" in (f.metadata or {}):
            out.append(prefix + f.name)
        elif pa.types.is_struct(f.type):
            out += blob_paths(pa.schema(list(f.type)), prefix + f.name + ".")
    return out


def take_blobs(ds, path: str) -> list:
    n = ds.count_rows()
    return (
        [None if f is None else f.read() for f in ds.take_blobs(path, indices=list(range(n)))]
        if n
        else []
    )


def spark_column(rows, path: str) -> list:
    out = []
    for r in rows:
        v = r
        for part in path.split("."):
            v = None if v is None else v[part]
        out.append(None if v is None else bytes(v))
    return out


def assert_blobs_equal(path: str, want: list, got: list):
    assert len(want) == len(got), f"{path}: Spark {len(got)} rows, pylance {len(want)}"
    for i, (w, g) in enumerate(zip(want, got)):
        assert w == g, (
            f"{path} row {i}: Spark {None if g is None else f'{len(g)} bytes'}, "
            f"take_blobs {None if w is None else f'{len(w)} bytes'}"
        )


def check_dataset(spark, path: str, **options):
    """Every blob column of the dataset at `path`, full scan: Spark == take_blobs, row by row."""
    ds = lance.dataset(path)
    reader = spark.read.format("lance")
    for k, v in options.items():
        reader = reader.option(k, v)
    df = reader.load(path)
    rows = df.collect()
    paths = blob_paths(ds.schema)
    assert paths
    for p in paths:
        assert_blobs_equal(p, take_blobs(ds, p), spark_column(rows, p))
    return df, rows


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_blobs_equal_take_blobs(spark, name):
    path = str(BLOBS / f"{name}.lance")
    df, rows = check_dataset(spark, path)
    # ... and what the generator recorded from take_blobs (so a pylance change would show).
    expected = json.loads((BLOBS / f"{name}.json").read_text())
    assert [r["id"] for r in rows] == [e["id"] for e in expected["rows"]]
    for p in expected["kinds"]:
        got = spark_column(rows, p)
        for e, g in zip(expected["rows"], got):
            want = e[p]
            assert (want is None) == (g is None), (p, e["id"])
            if g is not None:
                assert (len(g), hashlib.sha256(g).hexdigest()) == (want["size"], want["sha256"]), (
                    p,
                    e["id"],
                )


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_schema_maps_blobs_to_binary(spark, name):
    df = spark.read.format("lance").load(str(BLOBS / f"{name}.lance"))
    ds = lance.dataset(str(BLOBS / f"{name}.lance"))
    for p in blob_paths(ds.schema):
        dt = df.schema
        for part in p.split("."):
            dt = dt[part].dataType
        assert dt == T.BinaryType(), (p, dt)


@pytest.mark.parametrize("name", ["blob_v1_2.1", "blob_v2_2.2"])
def test_small_batches_splits_and_projections(spark, name):
    path = str(BLOBS / f"{name}.lance")
    check_dataset(spark, path, batch_size=3, split_size=1)
    ds = lance.dataset(path)
    want = take_blobs(ds, "s.b")
    got = spark_column(spark.read.format("lance").load(path).select("s.b").collect(), "b")
    assert_blobs_equal("s.b", want, got)
    # A Spark-side filter keeps the right bytes with the right ids.
    ids = ds.to_table(columns=["id"]).column("id").to_pylist()
    b = take_blobs(ds, "b")
    rows = (
        spark.read.format("lance")
        .load(path)
        .where(F.col("id") % 3 == 0)
        .select("b", "id")
        .collect()
    )
    assert [(r["id"], None if r["b"] is None else bytes(r["b"])) for r in rows] == [
        (i, v) for i, v in zip(ids, b) if i % 3 == 0
    ]


def test_unprojected_blobs_are_never_read(spark, tmp_path):
    """Without their sidecar files, a scan not asking for those columns still works; one that
    does fails naming the missing file."""
    path = tmp_path / "copy.lance"
    shutil.copytree(BLOBS / "blob_v2_2.2.lance", path)
    for f in path.rglob("*.blob"):
        f.unlink()
    df = spark.read.format("lance").load(str(path))
    assert df.select("id", "s").count() == lance.dataset(str(path)).count_rows()
    assert len(df.select("id").collect()) == lance.dataset(str(path)).count_rows()
    with pytest.raises(Exception) as e:
        df.select("c").collect()
    msg = short_error(e.value, 3000)
    assert ".blob" in msg and "'c'" in msg, msg


def _external_dataset(tmp_path: Path) -> tuple[str, Path]:
    ext = tmp_path / "ext"
    ext.mkdir()
    (ext / "a.bin").write_bytes(bytes(range(256)) * 40)
    (ext / "c.bin").write_bytes(b"C" * 77 + b"D" * 23)
    return str(tmp_path / "ext.lance"), ext


def test_external_absolute_uris(spark, tmp_path):
    path, ext = _external_dataset(tmp_path)
    a = (ext / "a.bin").as_uri()
    vals = [b"inline", None, a, Blob.from_uri(a, 10, 20), Blob.empty(), b"x" * 5000]
    t = pa.table(
        {"id": pa.array(range(len(vals)), pa.int64()), "b": blob_array(vals)},
        schema=pa.schema([pa.field("id", pa.int64()), blob_field("b", inline_size_threshold=100)]),
    )
    lance.write_dataset(t, path, allow_external_blob_outside_bases=True)
    kinds = lance.dataset(path).to_table().column("b").combine_chunks().field("kind").to_pylist()
    assert 3 in kinds  # external
    check_dataset(spark, path)


def test_external_relative_to_base_path(spark, tmp_path):
    path, ext = _external_dataset(tmp_path)
    c = (ext / "c.bin").as_uri()
    vals = [b"tiny", c, Blob.from_uri(c, 70, 20), None]
    t = pa.table(
        {"id": pa.array(range(len(vals)), pa.int64()), "b": blob_array(vals)},
        schema=pa.schema([pa.field("id", pa.int64()), blob_field("b")]),
    )
    lance.write_dataset(
        t,
        path,
        initial_bases=[lance.DatasetBasePath(ext.as_uri(), name="ext", is_dataset_root=False)],
    )
    desc = lance.dataset(path).to_table().column("b").combine_chunks()
    assert (
        desc.field("kind").to_pylist()[1] == 3 and desc.field("blob_id").to_pylist()[1] > 0
    )  # relative to a base
    check_dataset(spark, path)


def test_external_ingested(spark, tmp_path):
    path, ext = _external_dataset(tmp_path)
    a = (ext / "a.bin").as_uri()
    vals = [a, Blob.from_uri(a, 100, 50), b"q" * 3000]
    t = pa.table(
        {"id": pa.array(range(len(vals)), pa.int64()), "b": blob_array(vals)},
        schema=pa.schema(
            [
                pa.field("id", pa.int64()),
                blob_field("b", inline_size_threshold=16, dedicated_size_threshold=1000),
            ]
        ),
    )
    lance.write_dataset(t, path, external_blob_mode="ingest")
    check_dataset(spark, path)


def test_managed_blobs_under_a_target_base(spark, tmp_path):
    """Managed blobs of data files written to a registered base: ManagedWithBase (kind 5)."""
    base = tmp_path / "base"
    path = str(tmp_path / "managed.lance")
    vals = [b"tiny", b"p" * 100, None, b"d" * 2000]
    t = pa.table(
        {"id": pa.array(range(len(vals)), pa.int64()), "b": blob_array(vals)},
        schema=pa.schema(
            [
                pa.field("id", pa.int64()),
                blob_field("b", inline_size_threshold=16, dedicated_size_threshold=1000),
            ],
            metadata={"lance.blob.managed": "true"},
        ),
    )
    lance.write_dataset(
        t,
        path,
        initial_bases=[lance.DatasetBasePath(base.as_uri(), name="mb", is_dataset_root=True)],
        target_bases=["mb"],
    )
    assert (
        5 in lance.dataset(path).to_table().column("b").combine_chunks().field("kind").to_pylist()
    )
    check_dataset(spark, path)


def test_unreadable_external_uri_is_unsupported_naming_the_column(spark, tmp_path):
    path = str(tmp_path / "gs.lance")
    t = pa.table(
        {"id": pa.array([0, 1], pa.int64()), "b": blob_array([b"x", "gs://no-such-bucket/x.bin"])},
        schema=pa.schema([pa.field("id", pa.int64()), blob_field("b")]),
    )
    lance.write_dataset(t, path, allow_external_blob_outside_bases=True)
    df = spark.read.format("lance").load(path)
    assert [r["id"] for r in df.select("id").collect()] == [0, 1]
    with pytest.raises(Exception) as e:
        df.select("b").collect()
    msg = short_error(e.value, 3000)
    assert (
        "LanceUnsupportedException" in msg and "'b'" in msg and "gs://no-such-bucket/x.bin" in msg
    ), msg


def test_blob_inside_list_is_unsupported(spark, tmp_path):
    path = str(tmp_path / "list.lance")
    f = pa.field("b", pa.large_binary(), metadata={"lance-encoding:blob": "true"})
    lance.write_dataset(
        pa.table({"l": pa.array([[b"a"], None, [b"b", None]], pa.list_(f))}),
        path,
        data_storage_version="2.1",
    )
    with pytest.raises(Exception) as e:
        spark.read.format("lance").load(path).collect()
    msg = short_error(e.value, 3000)
    assert "LanceUnsupportedException" in msg and "inside a list" in msg, msg


def test_read_then_write_without_blob_metadata_is_plain_binary(spark, tmp_path):
    """A blob column read through Spark carries lance-encoding:blob (written back as a blob, see
    tests/write/test_write_blobs.py); with that metadata dropped its bytes become an ordinary binary
    column, which pylance then reads back as those bytes."""
    src = BLOBS / "blob_v2_2.2.lance"
    out = str(tmp_path / "plain.lance")
    PLAIN = {"comment": "plain"}  # replaces the field metadata (an empty dict would keep it)
    df = spark.read.format("lance").load(str(src))
    df.select(
        "id", F.col("b").alias("b", metadata=PLAIN), F.col("c").alias("c", metadata=PLAIN)
    ).write.format("lance").save(out)
    ds = lance.dataset(str(src))
    got = lance.dataset(out).to_table()
    assert got.column("id").to_pylist() == ds.to_table(columns=["id"]).column("id").to_pylist()
    assert not blob_paths(lance.dataset(out).schema)
    for c in ["b", "c"]:
        assert_blobs_equal(
            c,
            take_blobs(ds, c),
            [None if v is None else bytes(v) for v in got.column(c).to_pylist()],
        )


def test_legacy_files_hold_blob_fields_as_plain_binary(spark, tmp_path):
    """The legacy (0.1) writer stores a ``lance-encoding:blob`` field as plain binary. pylance
    14.0.2 cannot read such a column back (its blob reader panics on it), so the only truth is
    what was written: Spark returns those bytes."""
    path = str(tmp_path / "legacy.lance")
    vals = [b"a", None, b"bbb" * 1000, b"z"]
    f = pa.field("b", pa.large_binary(), metadata={"lance-encoding:blob": "true"})
    lance.write_dataset(
        pa.table(
            {"id": pa.array(range(4), pa.int64()), "b": pa.array(vals, pa.large_binary())},
            schema=pa.schema([pa.field("id", pa.int64()), f]),
        ),
        path,
        data_storage_version="legacy",
    )
    rows = spark.read.format("lance").load(path).orderBy("id").collect()
    assert [None if r["b"] is None else bytes(r["b"]) for r in rows] == vals
