"""Spark writes blob columns (``lance-encoding:blob``) as pylance 14.0.2 writes them.

A binary column whose Spark field metadata has ``lance-encoding:blob`` = "true" becomes a blob
column: blob v1 in 2.0/2.1 (descriptors + bytes in the data file), blob v2 in 2.2 (inline,
packed and dedicated sidecars by the field's thresholds). The same values are written by
pylance (the reference) and by Spark, then:
  * the Lance schema of our dataset equals pylance's (so pylance returns the same descriptor
    struct from ``to_table()``);
  * pylance's ``take_blobs`` returns exactly the bytes Spark was given;
  * per row, the descriptor says what pylance's own write says (v2: kind, size, blob id; v1:
    null / empty / size), and every data file has the same sidecar files as pylance's;
  * ``validate()`` passes, Spark reads the bytes back, and deletions, appends (Spark and
    pylance), compaction and ``cleanup_old_versions`` keep every blob readable.
"""

from __future__ import annotations

import datetime
import os
import shutil

import lance
import numpy as np
import pyarrow as pa
import pytest
from pyspark.sql import types as T

from support import SRC_TEST_DATA, short_error

BLOBS = SRC_TEST_DATA / "blobs"
V1 = {"lance-encoding:blob": "true"}
FORMATS = ["2.0", "2.1", "2.2"]


def payload(seed: int, n: int) -> bytes:
    block = np.random.default_rng(seed).integers(0, 256, size=4096, dtype=np.uint8).tobytes()
    return (block * (n // 4096 + 1))[:n]


def mixed_values(n: int, big: bool = True) -> list:
    """Nulls, empty, tiny, medium (> 64 KiB: packed in 2.2) and, with `big`, > 1 MiB and > 4 MiB
    (dedicated in 2.2) values."""
    sizes = [5, None, 0, 300, 70_000, 1, None, 0, 2_000, 17]
    if big:
        sizes[3] = 1_200_000
        sizes[8] = 4_500_000
    return [
        None if sizes[i % len(sizes)] is None else payload(i, sizes[i % len(sizes)])
        for i in range(n)
    ]


def spark_schema(meta: dict | None = None) -> T.StructType:
    return T.StructType(
        [
            T.StructField("id", T.LongType(), False),
            T.StructField("b", T.BinaryType(), True, metadata=dict(V1, **(meta or {}))),
        ]
    )


def arrow_table(ids, vals, meta: dict | None = None) -> pa.Table:
    return pa.table(
        {"id": pa.array(ids, pa.int64()), "b": pa.array(vals, pa.large_binary())},
        schema=pa.schema(
            [
                pa.field("id", pa.int64(), nullable=False),
                pa.field("b", pa.large_binary(), metadata=dict(V1, **(meta or {}))),
            ]
        ),
    )


def spark_write(spark, path, ids, vals, fmt=None, mode="errorifexists", meta=None, **opts):
    df = spark.createDataFrame(list(zip(ids, vals)), spark_schema(meta)).coalesce(1)
    w = df.write.format("lance").mode(mode)
    if fmt:
        w = w.option("data_storage_version", fmt)
    for k, v in opts.items():
        w = w.option(k, v)
    w.save(str(path))


def take_blobs(ds, col="b") -> list:
    n = ds.count_rows()
    return (
        [None if f is None else f.read() for f in ds.take_blobs(col, indices=list(range(n)))]
        if n
        else []
    )


def ids_of(ds) -> list:
    return ds.to_table(columns=["id"]).column("id").to_pylist()


def descriptors(ds, col="b") -> list:
    """Per row, what the descriptor says apart from where bytes sit in a file (positions differ
    between writers): v2 (kind, size, blob_id), v1 2.1 (size) with null rows None, v1 2.0 the
    raw (position == 1, size) pair only for null/empty rows."""
    arr = ds.to_table(columns=[col]).column(col).combine_chunks()
    names = [arr.type.field(i).name for i in range(arr.type.num_fields)]
    out = []
    for i, v in enumerate(arr.to_pylist()):
        if v is None:
            out.append(None)
        elif "kind" in names:
            out.append((v["kind"], v["size"], v["blob_id"], v["blob_uri"]))
        elif v["size"] == 0:
            out.append(("null" if v["position"] == 1 else "empty", 0))
        else:
            out.append(("bytes", v["size"]))
    return out


def sidecars(path) -> list:
    """Per data file in manifest order, its sidecar files: (name, size), sorted."""
    ds = lance.dataset(str(path))
    out = []
    for fr in ds.get_fragments():
        for df in fr.data_files():
            d = os.path.join(str(path), "data", df.path[: -len(".lance")])
            out.append(
                sorted((f, os.path.getsize(os.path.join(d, f))) for f in os.listdir(d))
                if os.path.isdir(d)
                else []
            )
    return out


def all_blob_files(path) -> set:
    return {
        os.path.relpath(os.path.join(r, f), str(path))
        for r, _, fs in os.walk(str(path))
        for f in fs
        if f.endswith(".blob")
    }


def assert_same_blobs(spark, path, want_ids, want_vals):
    """pylance's take_blobs and Spark's scan both return exactly `want_vals` for `want_ids`."""
    ds = lance.dataset(str(path))
    ds.validate()
    got = dict(zip(ids_of(ds), take_blobs(ds)))
    assert sorted(got) == sorted(want_ids)
    for i, v in zip(want_ids, want_vals):
        assert got[i] == v, (
            f"take_blobs row id {i}: {None if got[i] is None else len(got[i])} bytes, want "
            f"{None if v is None else len(v)}"
        )
    rows = spark.read.format("lance").load(str(path)).collect()
    sgot = {r["id"]: None if r["b"] is None else bytes(r["b"]) for r in rows}
    assert sgot == dict(zip(want_ids, want_vals))


@pytest.mark.parametrize("fmt", FORMATS)
def test_create_matches_pylance(spark, tmp_path, fmt):
    n = 23
    ids, vals = list(range(n)), mixed_values(n)
    ours, ref = tmp_path / "ours.lance", tmp_path / "ref.lance"
    spark_write(spark, ours, ids, vals, fmt, max_rows_per_file=10)
    lance.write_dataset(
        arrow_table(ids, vals), str(ref), data_storage_version=fmt, max_rows_per_file=10
    )
    a, b = lance.dataset(str(ours)), lance.dataset(str(ref))
    assert a.schema.equals(b.schema, check_metadata=True), (a.schema, b.schema)
    assert a.data_storage_version == b.data_storage_version
    assert [f.count_rows() for f in a.get_fragments()] == [
        f.count_rows() for f in b.get_fragments()
    ]
    assert descriptors(a) == descriptors(b)
    assert sidecars(ours) == sidecars(ref)
    if fmt == "2.2":
        kinds = {d[0] for d in descriptors(a) if d is not None}
        assert kinds == {0, 1, 2}, kinds  # inline, packed and dedicated all occur
    assert take_blobs(a) == vals
    assert_same_blobs(spark, ours, ids, vals)


@pytest.mark.parametrize("fmt", ["2.1", "2.2"])
def test_blob_in_nullable_struct(spark, tmp_path, fmt):
    n = 12
    vals = mixed_values(n, big=False)
    inner = pa.field("b", pa.large_binary(), metadata=V1)
    st = pa.struct([pa.field("x", pa.int32()), inner])
    rows = [None if i % 4 == 1 else {"x": i, "b": vals[i]} for i in range(n)]
    t = pa.table({"id": pa.array(range(n), pa.int64()), "s": pa.array(rows, st)})
    ref = tmp_path / "ref.lance"
    lance.write_dataset(t, str(ref), data_storage_version=fmt)
    schema = T.StructType(
        [
            T.StructField("id", T.LongType()),
            T.StructField(
                "s",
                T.StructType(
                    [
                        T.StructField("x", T.IntegerType()),
                        T.StructField("b", T.BinaryType(), True, metadata=V1),
                    ]
                ),
            ),
        ]
    )
    ours = tmp_path / "ours.lance"
    spark.createDataFrame(
        [(i, None if r is None else (r["x"], r["b"])) for i, r in enumerate(rows)], schema
    ).coalesce(1).write.format("lance").option("data_storage_version", fmt).save(str(ours))
    a, b = lance.dataset(str(ours)), lance.dataset(str(ref))
    assert a.schema.equals(b.schema, check_metadata=True), (a.schema, b.schema)
    a.validate()
    assert take_blobs(a, "s.b") == take_blobs(b, "s.b")
    got = spark.read.format("lance").load(str(ours)).orderBy("id").collect()
    assert [None if r["s"] is None or r["s"]["b"] is None else bytes(r["s"]["b"]) for r in got] == [
        None if r is None else r["b"] for r in rows
    ]


def test_thresholds_from_field_metadata(spark, tmp_path):
    """Blob v2 thresholds in the field metadata place values as pylance places them (and stay in
    the schema)."""
    meta = {
        "lance-encoding:blob-inline-size-threshold": "16",
        "lance-encoding:blob-dedicated-size-threshold": "1000",
        "lance-encoding:blob-pack-file-size-threshold": "700",
    }
    n = 20
    ids, vals = (
        list(range(n)),
        [payload(i, [3, 16, 17, 300, 999, 1000, 1001, 0][i % 8]) for i in range(n)],
    )
    ours, ref = tmp_path / "ours.lance", tmp_path / "ref.lance"
    spark_write(spark, ours, ids, vals, "2.2", meta=meta)
    lance.write_dataset(arrow_table(ids, vals, meta), str(ref), data_storage_version="2.2")
    a, b = lance.dataset(str(ours)), lance.dataset(str(ref))
    assert a.schema.equals(b.schema, check_metadata=True), (a.schema, b.schema)
    assert descriptors(a) == descriptors(b)
    assert sidecars(ours) == sidecars(ref)
    assert len(sidecars(ours)[0]) > 3  # several packs (700-byte limit) and dedicated files
    assert_same_blobs(spark, ours, ids, vals)


@pytest.mark.parametrize("fmt", FORMATS)
def test_empty_and_all_null_columns(spark, tmp_path, fmt):
    for name, vals in [("nulls", [None] * 7), ("empty", [b""] * 7), ("tiny", [b"x"] * 7)]:
        ours, ref = tmp_path / f"{name}.lance", tmp_path / f"{name}_ref.lance"
        spark_write(spark, ours, list(range(7)), vals, fmt)
        lance.write_dataset(arrow_table(list(range(7)), vals), str(ref), data_storage_version=fmt)
        a, b = lance.dataset(str(ours)), lance.dataset(str(ref))
        assert a.schema.equals(b.schema, check_metadata=True)
        assert descriptors(a) == descriptors(b), name
        assert_same_blobs(spark, ours, list(range(7)), vals)


@pytest.mark.parametrize("fmt", FORMATS)
def test_deletes_compaction_and_cleanup(spark, tmp_path, fmt):
    n = 30
    ids, vals = list(range(n)), mixed_values(n)
    path = tmp_path / "d.lance"
    spark_write(spark, path, ids, vals, fmt, max_rows_per_file=8)
    ds = lance.dataset(str(path))
    ds.delete("id % 3 = 0")
    keep = [i for i in ids if i % 3]
    assert_same_blobs(spark, path, keep, [vals[i] for i in keep])
    lance.dataset(str(path)).optimize.compact_files()
    assert_same_blobs(spark, path, keep, [vals[i] for i in keep])
    # Overwrite, then clean up every older version: the old data files and their sidecars go.
    spark_write(spark, path, ids[:5], vals[:5], mode="overwrite")
    lance.dataset(str(path)).cleanup_old_versions(
        older_than=datetime.timedelta(0), delete_unverified=True
    )
    assert_same_blobs(spark, path, ids[:5], vals[:5])
    live = {
        os.path.join("data", df.path[: -len(".lance")])
        for fr in lance.dataset(str(path)).get_fragments()
        for df in fr.data_files()
    }
    assert {os.path.dirname(f) for f in all_blob_files(path)} <= live, all_blob_files(path)


@pytest.mark.parametrize("fmt", FORMATS)
def test_appends_between_spark_and_pylance(spark, tmp_path, fmt):
    """pylance creates, Spark appends, pylance appends, Spark appends again, pylance deletes."""
    path = tmp_path / "a.lance"
    vals = mixed_values(40)
    lance.write_dataset(arrow_table(range(0, 10), vals[0:10]), str(path), data_storage_version=fmt)
    spark_write(spark, path, list(range(10, 20)), vals[10:20], mode="append")
    lance.write_dataset(arrow_table(range(20, 30), vals[20:30]), str(path), mode="append")
    spark_write(spark, path, list(range(30, 40)), vals[30:40], mode="append", max_rows_per_file=4)
    assert lance.dataset(str(path)).data_storage_version == fmt
    assert_same_blobs(spark, path, list(range(40)), vals)
    lance.dataset(str(path)).delete("id % 4 = 1")
    keep = [i for i in range(40) if i % 4 != 1]
    assert_same_blobs(spark, path, keep, [vals[i] for i in keep])


@pytest.mark.parametrize("name", ["blob_v1_2.0", "blob_v1_2.1", "blob_v2_2.2"])
def test_append_to_pylance_fixture(spark, tmp_path, name):
    """Spark appends what it reads (bytes) to pylance's blob fixtures, nested blobs included."""
    path = tmp_path / "copy.lance"
    shutil.copytree(BLOBS / f"{name}.lance", path)
    ds = lance.dataset(str(path))
    cols = [f.name for f in ds.schema]
    before = {c: take_blobs(ds, c) for c in ("b", "c") if c in cols}
    n = ds.count_rows()
    df = spark.read.format("lance").load(str(path))
    df.write.format("lance").mode("append").save(str(path))
    ds = lance.dataset(str(path))
    ds.validate()
    assert ds.count_rows() == 2 * n
    for c, want in before.items():
        assert take_blobs(ds, c) == want + want, c


@pytest.mark.parametrize("name", ["blob_v1_2.1", "blob_v2_2.2"])
def test_read_then_overwrite_keeps_blob_columns(spark, tmp_path, name):
    """Spark exposes a blob column's lance-encoding metadata, so writing what it read keeps a blob
    column with the same Lance schema as the source (for blobs made from lance-encoding:blob)."""
    src = lance.dataset(str(BLOBS / f"{name}.lance"))
    out = tmp_path / "out.lance"
    df = spark.read.format("lance").load(str(BLOBS / f"{name}.lance")).select("id", "b")
    assert df.schema["b"].metadata.get("lance-encoding:blob") == "true"
    df.write.format("lance").option("data_storage_version", src.data_storage_version).save(str(out))
    got = lance.dataset(str(out))
    assert got.schema.field("b").equals(src.schema.field("b"), check_metadata=True), (
        got.schema,
        src.schema,
    )
    assert take_blobs(got) == take_blobs(src)
    got.validate()


def test_encoding_metadata_round_trips(spark, tmp_path):
    """lance-encoding:* field metadata read through Spark is written back."""
    src = tmp_path / "src.lance"
    f = pa.field("s", pa.string(), metadata={"lance-encoding:compression": "zstd"})
    lance.write_dataset(
        pa.table(
            {"id": pa.array(range(50), pa.int64()), "s": pa.array([f"v{i}" for i in range(50)])},
            schema=pa.schema([pa.field("id", pa.int64()), f]),
        ),
        str(src),
    )
    df = spark.read.format("lance").load(str(src))
    assert df.schema["s"].metadata.get("lance-encoding:compression") == "zstd"
    out = tmp_path / "out.lance"
    df.write.format("lance").save(str(out))
    assert lance.dataset(str(out)).schema.field("s").metadata == {
        b"lance-encoding:compression": b"zstd"
    }


def test_blob_metadata_on_a_non_binary_column_is_refused(spark, tmp_path):
    schema = T.StructType([T.StructField("b", T.StringType(), True, metadata=V1)])
    with pytest.raises(Exception) as e:
        spark.createDataFrame([("x",)], schema).write.format("lance").save(
            str(tmp_path / "bad.lance")
        )
    msg = short_error(e.value, 3000)
    assert "lance-encoding:blob" in msg and "'b'" in msg, msg
    assert not (tmp_path / "bad.lance").exists() or not list(
        (tmp_path / "bad.lance").rglob("*.manifest")
    )


def explode_at(n):
    # Defined inside a function so cloudpickle ships it by value (workers cannot import this module).
    from pyspark.sql.functions import udf

    def boom(x):
        if x == n:
            raise ValueError(f"boom at {n}")
        return x

    return udf(boom, "long")


def test_failing_write_leaves_no_sidecars(spark, tmp_path):
    """Tasks that wrote data files and packed/dedicated sidecars before the job failed: the abort
    deletes the sidecars with their data files, and nothing is committed."""
    from pyspark.sql import functions as F

    path = tmp_path / "f.lance"
    spark_write(spark, path, [0, 1], [b"x", payload(1, 70_000)], "2.2")
    before = all_blob_files(path)
    assert len(before) == 1
    df = (
        spark.range(600)
        .repartition(3)
        .select(
            explode_at(590)("id").alias("id"),
            F.expr(
                "unhex(repeat(lpad(hex(id % 251), 2, '0'), 70000 + cast(id as int) * 100))"
            ).alias("b", metadata=V1),
        )
    )
    with pytest.raises(Exception, match="boom at 590"):
        df.write.format("lance").mode("append").option("max_rows_per_file", 20).save(str(path))
    ds = lance.dataset(str(path))
    assert ds.version == 1 and ds.count_rows() == 2
    assert all_blob_files(path) == before
    assert sorted(os.listdir(path / "data")) == sorted(
        [df_.path for fr in ds.get_fragments() for df_ in fr.data_files()]
        + [os.path.dirname(f)[len("data/") :] for f in before]
    )


def test_blob_inside_a_list_before_2_2_is_refused_on_the_driver(spark, tmp_path):
    """pylance writes blob v1 in lists of 2.0/2.1 files but cannot read them back: refused (2.2
    lists of blobs are tests/write/test_write_blob_lists.py)."""
    schema = T.StructType(
        [
            T.StructField(
                "l",
                T.ArrayType(T.StructType([T.StructField("b", T.BinaryType(), True, metadata=V1)])),
            )
        ]
    )
    with pytest.raises(Exception) as e:
        spark.createDataFrame([([(b"x",)],)], schema).write.format("lance").option(
            "data_storage_version", "2.1"
        ).save(str(tmp_path / "l.lance"))
    msg = short_error(e.value, 3000)
    assert "inside lists need data_storage_version 2.2" in msg and "'b'" in msg, msg
    assert (
        not list((tmp_path / "l.lance").rglob("*.lance"))
        if (tmp_path / "l.lance").exists()
        else True
    )
