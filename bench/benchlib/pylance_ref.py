"""pylance, the reference: it prepares the Lance data sets, and times the same writes and scans
the Spark engines run, as the native baseline."""

from __future__ import annotations

import multiprocessing
import os
import re
import shutil
import time

from .data import Paths, du, stats


def task_slots(master: str) -> int:
    """Task slots of a local Spark master: `local` 1, `local[N]` N, `local[*]` every core;
    every core too for a master that is not local (its slots are not known here)."""
    m = re.fullmatch(r"local(?:\[(\d+|\*)(?:,\s*\d+)?\])?", master.strip())
    if not m:
        return os.cpu_count() or 1
    if m.group(1) is None:
        return 1
    return (os.cpu_count() or 1) if m.group(1) == "*" else int(m.group(1))


def per_core(threads: int, fn, *args, log, **kwargs) -> list[dict]:
    """Runs `fn(*args, log=..., **kwargs)` (a module-level function, so that it pickles) in a
    fresh process whose Lance compute and I/O pools have `threads` threads each, so that
    pylance uses as many cores as the Spark run it is compared with has task slots (pylance
    reads `LANCE_CPU_THREADS` and `LANCE_IO_THREADS` once per process, and this one's pools may
    be running already). The child's log lines are passed on when it ends; each result records
    `threads`."""
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        results, lines = pool.apply(_per_core_child, (threads, fn, args, kwargs))
    for line in lines:
        log(line)
    return [dict(r, threads=threads) for r in results]


def _per_core_child(threads: int, fn, args: tuple, kwargs: dict):
    os.environ["LANCE_CPU_THREADS"] = os.environ["LANCE_IO_THREADS"] = str(threads)
    lines: list[str] = []
    return fn(*args, log=lines.append, **kwargs), lines


def pylance_writes(
    paths: Paths, write_rows: int, runs: int, log, versions=("2.2", "2.0")
) -> list[dict]:
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
            lance.write_dataset(
                _head(paths, write_rows), str(dst), data_storage_version=v, mode="create"
            )
            if i > 0:
                times.append(time.perf_counter() - t0)
        log(f"  pylance write {v}: median {sorted(times)[len(times) // 2]:.2f}s")
        size = du(dst)
        shutil.rmtree(dst, ignore_errors=True)
        results.append(
            dict(
                section="write",
                engine="pylance",
                format=f"lance{v}",
                query="write_mixed",
                rows=write_rows,
                bytes_on_disk=size,
                **stats(times, write_rows),
            )
        )
    return results


def _head(paths: Paths, write_rows: int):
    import pyarrow as pa

    f = pa.ipc.open_file(pa.memory_map(str(paths.write_head(write_rows)), "r"))
    return pa.RecordBatchReader.from_batches(
        f.schema, (f.get_batch(i) for i in range(f.num_record_batches))
    )


def dataset_sizes(paths: Paths, rows: int) -> list[dict]:
    out = [
        dict(
            section="prep",
            engine="pylance",
            format=f"lance{v}",
            query=f"size_{t}",
            rows=rows,
            bytes_on_disk=du(p),
        )
        for (t, v), p in paths.lance.items()
        if p.exists()
    ]
    out += [
        dict(
            section="prep",
            engine="spark",
            format="parquet",
            query=f"size_{t}",
            rows=rows,
            bytes_on_disk=du(p),
        )
        for t, p in paths.parquet.items()
        if (p / "_SUCCESS").exists()
    ]
    return out


def pylance_query(ds, q: dict):
    import pyarrow.compute as pc

    cols, flt, red = q["pl"]
    if red == "count":
        return ds.count_rows(filter=flt) if flt else ds.count_rows()
    if red.startswith("topn:"):
        from lance.dataset import ColumnOrdering

        _, col, direction, n = red.split(":")
        top = ds.to_table(
            columns=cols,
            filter=flt,
            limit=int(n),
            order_by=[ColumnOrdering(col, ascending=direction == "asc")],
        )
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
            r = dict(
                section="pylance",
                engine="pylance",
                format="lance2.2",
                query=q["name"],
                rows=rows,
                result=str(val),
                **stats(times, rows),
            )
            log(f"  pylance {q['name']}: median {r['median_s']:.3f}s")
        except Exception as e:  # noqa: BLE001
            r = dict(
                section="pylance",
                engine="pylance",
                format="lance2.2",
                query=q["name"],
                error=repr(e),
            )
            log(f"  pylance {q['name']}: ERROR {e!r}")
        results.append(r)
    return results
