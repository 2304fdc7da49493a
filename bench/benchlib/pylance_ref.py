"""pylance, the reference: it prepares the Lance data sets, and times the same writes and scans
the Spark engines run, as the native baseline."""
from __future__ import annotations

import shutil
import time

from .data import Paths, du, head_reader, source_reader, stats

WRITE_VERSIONS = ("2.2", "2.1", "2.0")


def prepare_lance(paths: Paths, write_rows: int, log) -> None:
    """Writes every Lance scan data set, and the Lance 2.2 source of the Spark writes, once."""
    import lance
    for (t, v), p in paths.lance.items():
        if not (p / "_versions").exists():
            log(f"pylance write {t} lance {v} -> {p}")
            shutil.rmtree(p, ignore_errors=True)
            t0 = time.perf_counter()
            lance.write_dataset(source_reader(paths, t), str(p), data_storage_version=v, mode="create")
            log(f"  {time.perf_counter() - t0:.1f}s")
    ws = paths.write_source(write_rows)
    if not (ws / "_versions").exists():
        shutil.rmtree(ws, ignore_errors=True)
        lance.write_dataset(head_reader(paths, "mixed", write_rows), str(ws), data_storage_version="2.2", mode="create")


def pylance_writes(paths: Paths, write_rows: int, runs: int, log) -> list[dict]:
    """Times `lance.write_dataset` of the first `write_rows` mixed rows (from the memory-mapped
    Arrow source, so generation is not timed) per file format: one warm-up, then `runs`."""
    import lance
    results = []
    for v in WRITE_VERSIONS:
        times = []
        dst = paths.scratch / f"pylance_write_{v}"
        for i in range(runs + 1):
            shutil.rmtree(dst, ignore_errors=True)
            t0 = time.perf_counter()
            lance.write_dataset(head_reader(paths, "mixed", write_rows), str(dst), data_storage_version=v, mode="create")
            if i > 0:
                times.append(time.perf_counter() - t0)
        log(f"  pylance write {v}: median {sorted(times)[len(times) // 2]:.2f}s")
        size = du(dst)
        shutil.rmtree(dst, ignore_errors=True)
        results.append(dict(section="write", engine="pylance", format=f"lance{v}", query="write_mixed",
                            rows=write_rows, bytes_on_disk=size, **stats(times, write_rows)))
    return results


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

