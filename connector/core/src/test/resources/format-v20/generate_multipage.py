#!/usr/bin/env python3
"""Writes multipage_2.0.lance: a small 2.0 dataset whose columns span many pages (tiny page
cache), so scans cross page boundaries, list offsets pages and item pages fall out of step, and
pages of one column mix encodings (all-null, some-null, dictionary, plain). Expected rows are
whatever pylance's to_table() returns, in the canonical JSON of src-test-data/generate.py.

Run from the repository root:  .venv/bin/python connector/src/test/resources/format-v20/generate_multipage.py
"""
import gzip, json, shutil, sys
from pathlib import Path
import numpy as np
import pyarrow as pa
import lance

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[3] / "src-test-data"))
from generate import encode_array  # canonical value encoding  # noqa: E402

OUT = HERE / "multipage_2.0.lance"
N = 6000
rng = np.random.default_rng(7)

def batch(start, n):
    ids = np.arange(start, start + n, dtype=np.int64)
    i32 = [None if (i % 7 == 0 or 2000 <= i < 2600) else int(v) for i, v in zip(ids, rng.integers(-2**31, 2**31, n))]
    s = [None if i % 11 == 0 else ("w%d" % (i % 5) if i < 3000 else "x" * int(i % 23) + str(i)) for i in ids]
    li = [None if i % 13 == 0 else [int(i + k) if k % 3 else None for k in range(int(i % 6))] for i in ids]
    vec = [None if i % 17 == 0 else [float(i), -float(i), 0.5, float(i % 9)] for i in ids]
    st = [{"a": int(i) if i % 5 else None, "b": [str(i)] * int(i % 3)} for i in ids]
    flag = [None if i % 19 == 0 else bool(i % 2) for i in ids]
    return pa.table({
        "id": pa.array(ids),
        "i32": pa.array(i32, pa.int32()),
        "s": pa.array(s, pa.string()),
        "li": pa.array(li, pa.list_(pa.int32())),
        "vec": pa.array(vec, pa.list_(pa.float32(), 4)),
        "st": pa.array(st, pa.struct([("a", pa.int64()), ("b", pa.list_(pa.string()))])),
        "flag": pa.array(flag, pa.bool_()),
    })

def main():
    if OUT.exists():
        shutil.rmtree(OUT)
    tables = [batch(s, 500) for s in range(0, N, 500)]
    reader = pa.RecordBatchReader.from_batches(tables[0].schema, [b for t in tables for b in t.to_batches()])
    # A tiny per-column cache makes the 2.0 writer flush a page for nearly every batch.
    lance.write_dataset(reader, OUT, data_storage_version="2.0", max_rows_per_file=N,
                        max_rows_per_group=500, data_cache_bytes=4096)
    ds = lance.dataset(OUT)
    t = ds.to_table()
    rows_out = HERE / "multipage_2.0.jsonl.gz"
    cols = {name: encode_array(t.column(name)) for name in t.column_names}
    with gzip.open(rows_out, "wt", encoding="utf-8") as f:
        for i in range(t.num_rows):
            f.write(json.dumps({name: cols[name][i] for name in t.column_names}, ensure_ascii=False) + "\n")
    meta = {"pylance": lance.__version__, "rows": t.num_rows, "version": ds.version}
    (HERE / "multipage_2.0.json").write_text(json.dumps(meta, indent=1) + "\n")

if __name__ == "__main__":
    main()
