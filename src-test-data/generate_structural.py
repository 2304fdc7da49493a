#!/usr/bin/env python3
"""Extra 2.1 / 2.2 fixtures for the structural reader, with encodings forced through field metadata.

Run from the repository root:

    .venv/bin/python src-test-data/generate_structural.py

Writes src-test-data/structural/<name>_<fmt>.lance (one fragment each) and
src-test-data/structural/<name>_<fmt>.jsonl.gz: the rows pylance's to_table() returns, in the canonical
JSON encoding of generate.py (its encode_table_rows is reused). Nothing is hand-typed. Datasets pylance
refuses for a format are skipped and listed in structural/_skipped.json.
"""
from __future__ import annotations

import gzip
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import lance

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from generate import encode_table_rows, dumps  # noqa: E402

OUT = HERE / "structural"
FORMATS = ["2.1", "2.2"]


def meta(**kw):
    return {f"lance-encoding:{k.replace('_', '-')}": v for k, v in kw.items()}


def strings(rng, n, lo, hi, null_every=0, alphabet="abcdefghij klmnop"):
    out = []
    for i in range(n):
        if null_every and i % null_every == 3:
            out.append(None)
        else:
            k = int(rng.integers(lo, hi + 1))
            out.append("".join(rng.choice(list(alphabet), k)))
    return out


def datasets():
    rng = np.random.default_rng(7)
    n = 3000
    ints = rng.integers(-1000, 1000, n).astype(np.int64)
    ints_null = pa.array([None if i % 7 == 0 else int(v) for i, v in enumerate(ints)], pa.int64())
    floats = pa.array(rng.normal(size=n).astype(np.float32))
    short = strings(rng, n, 0, 30, null_every=11)
    long = strings(rng, 120, 200, 1500, null_every=9)
    yield "compression", pa.table({
        "i_zstd": ints_null, "i_lz4": ints_null, "i_none": ints_null,
        "s_zstd": pa.array(short), "s_lz4": pa.array(short), "s_fsst": pa.array(short), "s_none": pa.array(short),
        "f_bss": floats,
    }), {
        "i_zstd": meta(compression="zstd"), "i_lz4": meta(compression="lz4"), "i_none": meta(compression="none"),
        "s_zstd": meta(compression="zstd"), "s_lz4": meta(compression="lz4"), "s_fsst": meta(compression="fsst"),
        "s_none": meta(compression="none"), "f_bss": {**meta(compression="zstd"), "lance-encoding:bss": "on"},
    }
    yield "fullzip_forced", pa.table({
        "i": ints_null,
        "s": pa.array(short),
        "li": pa.array([None if i % 13 == 5 else ([] if i % 17 == 2 else list(range(i % 9))) for i in range(n)],
                       pa.list_(pa.int32())),
        "st": pa.array([None if i % 19 == 1 else {"a": i, "b": None if i % 5 == 0 else str(i)} for i in range(n)],
                       pa.struct([("a", pa.int32()), ("b", pa.string())])),
    }), {k: meta(structural_encoding="fullzip") for k in ["i", "s", "li", "st"]}
    yield "long_values", pa.table({
        "text": pa.array(long),
        "text_zstd": pa.array(long),
        "big_list": pa.array([None if i % 10 == 4 else [None if j % 31 == 0 else "x" * (j % 300) for j in range(i % 40)]
                              for i in range(120)], pa.list_(pa.string())),
        "vec": pa.array([None if i % 8 == 3 else [float(i + j) for j in range(96)] for i in range(120)],
                        pa.list_(pa.float32(), 96)),
    }), {"text_zstd": meta(compression="zstd")}
    packed = pa.struct([("a", pa.int32()), ("b", pa.float64()), ("c", pa.int16())])
    vpacked = pa.struct([("a", pa.int32()), ("s", pa.string())])
    yield "packed", pa.table({
        "id": pa.array(range(2000), pa.int64()),
        "ps": pa.array([None if i % 9 == 2 else {"a": i, "b": i / 4, "c": i % 300} for i in range(2000)], packed),
        "vps": pa.array([{"a": i, "s": "v" * (i % 13)} for i in range(2000)], vpacked),
    }), {"ps": meta(packed="true"), "vps": meta(packed="true")}
    # Lists long enough to span mini-block chunks, and pages small enough to split columns.
    yield "long_lists", pa.table({
        "li": pa.array([None if i % 50 == 7 else list(range(i * 37 % 1300)) for i in range(200)], pa.list_(pa.int64())),
        "nested": pa.array([None if i % 23 == 1 else [None if j % 5 == 4 else [f"{i}.{j}.{k}" for k in range(j % 4)]
                                                         for j in range(i % 30)] for i in range(200)],
                           pa.list_(pa.list_(pa.string()))),
        "m": pa.array([None if i % 29 == 3 else [(f"k{j}", None if j % 3 == 1 else j * i) for j in range(i % 12)]
                       for i in range(200)], pa.map_(pa.string(), pa.int64())),
    }), {}
    yield "misc_types", pa.table({
        "fsb": pa.array([None if i % 6 == 1 else bytes([i % 256, (i * 7) % 256, 3]) for i in range(3000)], pa.binary(3)),
        "ffsl": pa.array([None if i % 10 == 5 else [[i, None if i % 4 == 0 else i + 1], [i + 2, i + 3], [0, 1]]
                          for i in range(3000)], pa.list_(pa.list_(pa.int32(), 2), 3)),
        "bools": pa.array([None if i % 5 == 0 else (i % 3 == 0) for i in range(3000)]),
        "runs": pa.array(np.repeat(np.arange(30, dtype=np.int32), 100)),
        "lowcard": pa.array([None if i % 17 == 0 else f"category-{i % 6}" for i in range(3000)]),
        "dec": pa.array([None if i % 8 == 0 else i * 1000003 for i in range(3000)], pa.decimal128(20, 3)),
        "small": pa.array((np.arange(3000) % 100).astype(np.uint16)),
    }), {}


def with_meta(tbl, md):
    fields = [pa.field(f.name, f.type, nullable=True, metadata=md.get(f.name)) for f in tbl.schema]
    return pa.Table.from_arrays(tbl.columns, schema=pa.schema(fields))


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    skipped = []
    index = []
    for name, tbl, md in datasets():
        tbl = with_meta(tbl, md)
        for fmt in FORMATS:
            ds_name = f"{name}_{fmt}"
            path = OUT / f"{ds_name}.lance"
            kwargs = {"data_storage_version": fmt}
            if name == "long_lists":
                kwargs["max_bytes_per_file"] = 1 << 30
            try:
                lance.write_dataset(tbl, str(path), **kwargs)
                got = lance.dataset(str(path)).to_table()
            except Exception as e:  # noqa: BLE001
                shutil.rmtree(path, ignore_errors=True)
                skipped.append({"dataset": ds_name, "error": f"{type(e).__name__}: {e}"})
                continue
            rows = encode_table_rows(got)
            text = "".join(dumps(r) + "\n" for r in rows).encode("utf-8")
            with open(OUT / f"{ds_name}.jsonl.gz", "wb") as raw, \
                    gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as f:
                f.write(text)
            index.append({"name": ds_name, "rows": len(rows)})
    (OUT / "_skipped.json").write_text(json.dumps({"pylance": lance.__version__, "skipped": skipped}, indent=1))
    (OUT / "_index.json").write_text(json.dumps({"pylance": lance.__version__, "datasets": index}, indent=1))


if __name__ == "__main__":
    main()
