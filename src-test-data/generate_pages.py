#!/usr/bin/env python3
"""Datasets whose columns span many pages, for page-aligned split planning.

Run from the repository root:

    .venv/bin/python src-test-data/generate_pages.py

Writes src-test-data/pages/paged_<fmt>.lance for fmt in legacy, 2.0, 2.1, 2.2: one fragment of
4000 rows written in batches of 250 with a tiny page cache (so each column is cut into pages on
its own, at different rows), plus an appended fragment of 300 rows. Next to each:

- paged_<fmt>.jsonl.gz: the rows pylance's to_table() returns, in the canonical JSON encoding of
  generate.py (its encode_table_rows is reused);
- paged_<fmt>.pages.json: for every data file, its fragment, field ids and column indices, and
  the row count and buffer bytes of each page of each column as the file's own metadata records
  them (ColumnMetadata.pages[].length / buffer_sizes for 2.x; batch_offsets for legacy). pylance does not report page row counts, so they are read here from the file bytes
  with a few lines of protobuf decoding, independent of the connector.
"""
from __future__ import annotations

import gzip
import json
import shutil
import struct
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import lance

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from generate import encode_table_rows, dumps  # noqa: E402

OUT = HERE / "pages"
FORMATS = ["legacy", "2.0", "2.1", "2.2"]
ROWS = 4000
BATCH = 250


def table(start: int, n: int) -> pa.Table:
    rng = np.random.default_rng(start + 11)
    ids = np.arange(start, start + n, dtype=np.int64)
    x = [None if i % 7 == 3 else int(v) for i, v in zip(ids, rng.integers(-2**31, 2**31, n))]
    s = [None if i % 11 == 5 else ("k%d" % (i % 9)) * int(1 + i % 13) for i in ids]
    li = [None if i % 13 == 4 else ([] if i % 17 == 2 else [int(i + k) if k % 4 else None for k in range(int(i % 7))]) for i in ids]
    st = [{"a": None if i % 5 == 0 else int(i), "b": "b%d" % (i % 31)} for i in ids]
    vec = pa.FixedSizeListArray.from_arrays(pa.array((rng.integers(-4000, 4000, n * 8) / 8).astype(np.float32)), 8)
    return pa.table({
        "id": pa.array(ids),
        "x": pa.array(x, pa.int32()),
        "s": pa.array(s, pa.string()),
        "li": pa.array(li, pa.list_(pa.int32())),
        "st": pa.array(st, pa.struct([("a", pa.int64()), ("b", pa.string())])),
        "vec": vec,
    })


def batches(start: int, n: int):
    t = table(start, n)
    return pa.RecordBatchReader.from_batches(t.schema, t.to_batches(max_chunksize=BATCH))


# --- just enough protobuf to read page lengths -------------------------------------------------

def varint(b: bytes, p: int) -> tuple[int, int]:
    v = shift = 0
    while True:
        c = b[p]
        p += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return v, p


def fields(b: bytes):
    """(field number, wire type, value) of a message: ints for varints, bytes for length-delimited."""
    p = 0
    while p < len(b):
        key, p = varint(b, p)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, p = varint(b, p)
        elif wt == 2:
            ln, p = varint(b, p)
            v, p = b[p:p + ln], p + ln
        elif wt == 1:
            v, p = b[p:p + 8], p + 8
        elif wt == 5:
            v, p = b[p:p + 4], p + 4
        else:
            raise ValueError(f"wire type {wt}")
        yield num, wt, v


def packed_varints(wt: int, v) -> list[int]:
    if wt == 0:
        return [v]
    out, p = [], 0
    while p < len(v):
        x, p = varint(v, p)
        out.append(x)
    return out


def pages_v2(path: Path) -> list[dict]:
    """Rows and buffer bytes of every page of every column of a 2.x file (footer, CMO table, ColumnMetadata)."""
    data = path.read_bytes()
    assert data[-4:] == b"LANC"
    _meta_start, cmo_start, _gbo_start, _ngb, ncols, _maj, _min = struct.unpack_from("<QQQIIHH", data, len(data) - 40)
    out = []
    for c in range(ncols):
        pos, ln = struct.unpack_from("<QQ", data, cmo_start + 16 * c)
        rows, size = [], []
        for num, _wt, v in fields(data[pos:pos + ln]):
            if num == 2:  # ColumnMetadata.pages
                page = list(fields(v))
                rows.append(next((x for n, _w, x in page if n == 3), 0))  # Page.length
                size.append(sum(sum(packed_varints(w, x)) for n, w, x in page if n == 2))  # Page.buffer_sizes
        out.append({"page_rows": rows, "page_bytes": size})
    return out


def batch_offsets_legacy(path: Path) -> list[int]:
    data = path.read_bytes()
    meta_pos = struct.unpack_from("<q", data, len(data) - 16)[0]
    ln = struct.unpack_from("<I", data, meta_pos)[0]
    offsets = []
    for num, wt, v in fields(data[meta_pos + 4:meta_pos + 4 + ln]):
        if num == 2:  # Metadata.batch_offsets (packed or not)
            offsets += packed_varints(wt, v)
    return offsets


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    index = []
    for fmt in FORMATS:
        name = f"paged_{fmt}"
        path = OUT / f"{name}.lance"
        # A tiny page cache flushes a page every few batches, at different rows per column;
        # legacy files cut every column at the same row groups instead.
        opts = dict(data_storage_version=fmt, max_rows_per_group=700, data_cache_bytes=24 * 1024, max_page_bytes=16 * 1024)
        lance.write_dataset(batches(0, ROWS), str(path), **opts)
        lance.write_dataset(batches(ROWS, 300), str(path), mode="append", **opts)
        ds = lance.dataset(str(path))
        rows = encode_table_rows(ds.to_table())
        with open(OUT / f"{name}.jsonl.gz", "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as f:
            f.write("".join(dumps(r) + "\n" for r in rows).encode("utf-8"))
        files = {}
        for frag in ds.get_fragments():
            for df in frag.metadata.files:
                p = path / "data" / df.path
                files[df.path] = {"fragment": frag.fragment_id, "fields": list(df.fields), "column_indices": list(df.column_indices)}
                if fmt == "legacy":
                    files[df.path]["batch_offsets"] = batch_offsets_legacy(p)
                else:
                    files[df.path]["columns"] = pages_v2(p)
        (OUT / f"{name}.pages.json").write_text(json.dumps({"pylance": lance.__version__, "files": files}, indent=1))
        index.append({"name": name, "rows": len(rows), "fragments": [f.metadata.physical_rows for f in ds.get_fragments()]})
    (OUT / "_index.json").write_text(json.dumps({"pylance": lance.__version__, "datasets": index}, indent=1))


if __name__ == "__main__":
    main()
