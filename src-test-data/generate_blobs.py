#!/usr/bin/env python3
"""Blob-column fixtures (Lance ``lance-encoding:blob`` / ``lance.blob.v2``), written by pylance.

Run from the repository root:

    .venv/bin/python src-test-data/generate_blobs.py

Deletes and rewrites ``src-test-data/blobs/``: ``<name>.lance`` datasets and ``<name>.json``, the
blobs pylance's ``take_blobs`` returns for every row of the latest version, in scan order (row i
of the scan is dataset index i). Nothing is hand-typed. A blob is recorded as ``null`` or
``{"size": n, "sha256": hex}`` (the bytes themselves are up to 1.2 MiB); ``kind`` is the blob
v2 ``kind`` from pylance's descriptor (``to_table()``), or ``null`` for null rows and blob v1.
``kinds`` lists, per blob column, which kinds occur, so tests can check the fixtures still cover
them.

Datasets (all with several fragments, an append and deletions):

* ``blob_v1_2.0``, ``blob_v1_2.1``: blob v1 (``large_binary`` + ``lance-encoding:blob``): the
  bytes sit in the data file, descriptors are (position, size). Nulls, empty values, a 1.2 MiB
  value. 2.1 also has a blob inside a nullable struct (``s.b``).
* ``blob_v2_2.2``: a v1-style field (pylance 14 promotes it to blob v2 when writing 2.2) with the
  default thresholds (inline below 64 KiB, packed sidecar above; the 1.2 MiB value is packed),
  plus a ``lance.blob.v2`` field ``c`` with small thresholds (inline <= 16 B, dedicated > 1000 B)
  so every data-file-relative kind occurs: inline, packed, dedicated; and a blob in a struct.
* ``blob_managed_2.2``: schema metadata ``lance.blob.managed``: non-inline blobs are Managed
  objects under ``_blobs/`` of the dataset (kind 4; reader flag 16384).

External blobs and base paths need absolute URIs, so they are not fixtures here: the pytest
suite (tests/test_blobs.py) writes them in a temporary directory.
"""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import lance
from lance.blob import blob_array, blob_field

HERE = Path(__file__).resolve().parent
OUT = HERE / "blobs"
V1_META = {"lance-encoding:blob": "true"}
BIG = 1_200_000  # > 1 MiB


def payload(rng: np.random.Generator, n: int) -> bytes:
    """n deterministic bytes: a repeated random 4 KiB block (compresses well in git)."""
    block = rng.integers(0, 256, size=4096, dtype=np.uint8).tobytes()
    return (block * (n // 4096 + 1))[:n]


def values(rng: np.random.Generator, start: int, n: int, big: bool = False) -> list:
    """A mix of null, empty, small and medium (> 64 KiB) values; with `big`, one of 1.2 MiB."""
    sizes = [5, None, 0, BIG if big else 100_000, 300, None, 0, 70_000, 10, 5_000, 1, 2_000, None, 17, 900]
    out = []
    for i in range(start, start + n):
        s = sizes[i % len(sizes)]
        out.append(None if s is None else payload(rng, s))
    return out


def v1_table(rng, start: int, n: int, nested: bool) -> pa.Table:
    ids = pa.array(range(start, start + n), pa.int64())
    b = pa.array(values(rng, start, n, big=True), pa.large_binary())
    fields = [pa.field("id", pa.int64(), nullable=False), pa.field("b", pa.large_binary(), metadata=V1_META)]
    cols = [ids, b]
    if nested:
        inner = pa.field("b", pa.large_binary(), metadata=V1_META)
        st = pa.struct([pa.field("x", pa.int32()), inner])
        vals = values(rng, start + 3, n)
        cols.append(pa.array([None if i % 4 == 1 else {"x": i, "b": vals[i - start]} for i in range(start, start + n)], st))
        fields.append(pa.field("s", st))
    return pa.Table.from_arrays(cols, schema=pa.schema(fields))


def v2_table(rng, start: int, n: int) -> pa.Table:
    small = blob_field("c", inline_size_threshold=16, dedicated_size_threshold=1000)
    st = pa.struct([pa.field("x", pa.int32()), blob_field("b")])
    vals = values(rng, start + 5, n)
    s = pa.StructArray.from_arrays(
        [pa.array(range(start, start + n), pa.int32()), blob_array(vals)],
        fields=[st.field(0), st.field(1)],
        mask=pa.array([i % 5 == 2 for i in range(start, start + n)]))
    return pa.Table.from_arrays(
        [pa.array(range(start, start + n), pa.int64()),
         pa.array(values(rng, start, n, big=True), pa.large_binary()),
         blob_array(values(rng, start + 1, n)),
         s],
        schema=pa.schema([pa.field("id", pa.int64(), nullable=False),
                          pa.field("b", pa.large_binary(), metadata=V1_META), small, pa.field("s", st)]))


def managed_table(rng, start: int, n: int) -> pa.Table:
    small = blob_field("b", inline_size_threshold=16, dedicated_size_threshold=1000)
    return pa.Table.from_arrays(
        [pa.array(range(start, start + n), pa.int64()), blob_array(values(rng, start, n))],
        schema=pa.schema([pa.field("id", pa.int64(), nullable=False), small], metadata={"lance.blob.managed": "true"}))


def blob_columns(schema: pa.Schema, prefix: str = "") -> list[str]:
    """Dotted paths of the blob columns (v1 metadata or lance.blob.v2 extension), structs walked."""
    out = []
    for f in schema:
        md = f.metadata or {}
        is_blob = b"lance-encoding:blob" in md or isinstance(f.type, pa.ExtensionType) and \
            f.type.extension_name == "lance.blob.v2"
        if is_blob:
            out.append(prefix + f.name)
        elif pa.types.is_struct(f.type):
            out += blob_columns(pa.schema(list(f.type)), prefix + f.name + ".")
    return out


def descriptor_kinds(ds, path: str) -> list:
    """Per row, the blob v2 `kind` pylance's descriptor says (None for nulls and blob v1)."""
    col = ds.to_table(columns=[path.split(".")[0]]).column(0).combine_chunks()
    for name in path.split(".")[1:]:
        col = col.flatten()[col.type.get_field_index(name)]
    if not pa.types.is_struct(col.type) or col.type.get_field_index("kind") < 0:
        return [None] * len(col)
    kinds = col.flatten()[col.type.get_field_index("kind")]
    return [None if not col[i].is_valid else kinds[i].as_py() for i in range(len(col))]


def expected(ds) -> dict:
    n = ds.count_rows()
    ids = ds.to_table(columns=["id"]).column("id").to_pylist()
    rows = [{"id": i} for i in ids]
    kinds = {}
    for path in blob_columns(ds.schema):
        files = ds.take_blobs(path, indices=list(range(n)))
        k = descriptor_kinds(ds, path)
        kinds[path] = sorted({x for x in k if x is not None})
        for r, f, kind in zip(rows, files, k):
            if f is None:
                r[path] = None
            else:
                data = f.readall() if hasattr(f, "readall") else f.read()
                r[path] = {"size": len(data), "sha256": hashlib.sha256(data).hexdigest(), "kind": kind}
    return {"pylance": lance.__version__, "rows": rows, "kinds": kinds, "version": ds.version}


def build(name: str, fmt: str, make, **write_kw):
    rng = np.random.default_rng(sum(map(ord, name)))
    path = OUT / f"{name}.lance"
    lance.write_dataset(make(rng, 0, 12), str(path), data_storage_version=fmt, max_rows_per_file=5, **write_kw)
    lance.write_dataset(make(rng, 12, 6), str(path), mode="append", **write_kw)
    ds = lance.dataset(str(path))
    ds.delete("id = 4 OR id = 13")
    ds = lance.dataset(str(path))
    (OUT / f"{name}.json").write_text(json.dumps(expected(ds), indent=1) + "\n")


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    build("blob_v1_2.0", "2.0", lambda rng, s, n: v1_table(rng, s, n, nested=False))
    build("blob_v1_2.1", "2.1", lambda rng, s, n: v1_table(rng, s, n, nested=True))
    build("blob_v2_2.2", "2.2", v2_table)
    build("blob_managed_2.2", "2.2", managed_table)


if __name__ == "__main__":
    main()
