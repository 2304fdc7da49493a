"""pylance, the reference: it prepares the Lance data sets, and times the same writes and scans
the Spark engines run, as the native baseline."""
from __future__ import annotations

import shutil
import time

from .data import Paths, du, stats



def pylance_writes(paths: Paths, write_rows: int, runs: int, log, versions=("2.2", "2.0")) -> list[dict]:
    """Times `lance.write_dataset` of the first `write_rows` mixed rows (from the memory-mapped
    Arrow source, so generation is not timed) per file format: one warm-up, then `runs`."""
    import lance
    results = []
    for v in versions:
        times = []
        dst = paths.scratch / f"pylance_write_{v}"
        for i in range(runs + 1):
            shutil.rmtree(dst, ignore_errors=True)
            t0 = time.perf_counter()
            lance.write_dataset(_head(paths, write_rows), str(dst), data_storage_version=v, mode="create")
            if i > 0:
                times.append(time.perf_counter() - t0)
        log(f"  pylance write {v}: median {sorted(times)[len(times) // 2]:.2f}s")
        size = du(dst)
        shutil.rmtree(dst, ignore_errors=True)
        results.append(dict(section="write", engine="pylance", format=f"lance{v}", query="write_mixed",
                            rows=write_rows, bytes_on_disk=size, **stats(times, write_rows)))
    return results


def _head(paths: Paths, write_rows: int):
    import pyarrow as pa
    f = pa.ipc.open_file(pa.memory_map(str(paths.write_head(write_rows)), "r"))
    return pa.RecordBatchReader.from_batches(f.schema, (f.get_batch(i) for i in range(f.num_record_batches)))


def dataset_sizes(paths: Paths, rows: int) -> list[dict]:
    out = [dict(section="prep", engine="pylance", format=f"lance{v}", query=f"size_{t}", rows=rows, bytes_on_disk=du(p))
           for (t, v), p in paths.lance.items() if p.exists()]
    out += [dict(section="prep", engine="spark", format="parquet", query=f"size_{t}", rows=rows, bytes_on_disk=du(p))
            for t, p in paths.parquet.items() if (p / "_SUCCESS").exists()]
    return out


def pylance_query(ds, q: dict):
    import pyarrow.compute as pc
    cols, flt, red = q["pl"]
    if red == "count":
        return ds.count_rows(filter=flt) if flt else ds.count_rows()
    if red.startswith("topn:"):
        from lance.dataset import ColumnOrdering
        _, col, direction, n = red.split(":")
        top = ds.to_table(columns=cols, filter=flt, limit=int(n),
                          order_by=[ColumnOrdering(col, ascending=direction == "asc")])
        return top.column(0)[0].as_py()
    acc = None
    rows = 0
    for b in ds.to_batches(columns=cols, filter=flt):
        rows += b.num_rows
        if red == "none":
            continue
        c = b.column(0)
        if red == "sum":
            v = pc.sum(c).as_py()
        elif red == "max":
            v = pc.max(c).as_py()
        elif red == "strlen":
            v = pc.sum(pc.utf8_length(c)).as_py()
        elif red == "vec0":
            v = pc.sum(pc.list_element(c, 0)).as_py()
        if v is None:
            continue
        acc = v if acc is None else (max(acc, v) if red == "max" else acc + v)
    return rows if red == "none" else acc


def pylance_scans(paths: Paths, rows: int, qs: list[dict], runs: int, log) -> list[dict]:
    import lance
    results = []
    for q in qs:
        ds = lance.dataset(str(paths.lance[(q["table"], "2.2")]))
        try:
            pylance_query(ds, q)  # warm-up
            times = []
            for _ in range(runs):
                t0 = time.perf_counter()
                val = pylance_query(ds, q)
                times.append(time.perf_counter() - t0)
            r = dict(section="pylance", engine="pylance", format="lance2.2", query=q["name"], rows=rows,
                     result=str(val), **stats(times, rows))
            log(f"  pylance {q['name']}: median {r['median_s']:.3f}s")
        except Exception as e:  # noqa: BLE001
            r = dict(section="pylance", engine="pylance", format="lance2.2", query=q["name"], error=repr(e))
            log(f"  pylance {q['name']}: ERROR {e!r}")
        results.append(r)
    return results

