"""The compaction benchmark (issue 16): a table of many small fragments with 5% of the rows
deleted, compacted by this connector (`LanceMaintenance.compactFiles`, one Spark task per
rewrite group) and by pylance's `optimize.compact_files` (its own threads, all cores), each
on a fresh copy per run. Both must leave the same rows and fragments."""
from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from .data import Paths, mixed_batches, stats

DEFAULT_FRAGMENTS = 1000
DELETED = "id % 20 = 0"  # 5% of the rows, in every fragment


def source(paths: Paths, rows: int, fragments: int) -> Path:
    return paths.root / f"compact_source_{fragments}"


def prepare(paths: Paths, rows: int, fragments: int, log) -> Path:
    """`rows` rows of the mixed table without its vector column, written by pylance (2.2) as
    `fragments` fragments, then 5% of them deleted."""
    import lance
    import pyarrow as pa
    src = source(paths, rows, fragments)
    if (src / "_versions").exists():
        return src
    log(f"compaction source: {rows:,} rows in {fragments} fragments -> {src}")
    shutil.rmtree(src, ignore_errors=True)
    batches = (b.drop_columns(["vec"]) if hasattr(b, "drop_columns")
               else pa.RecordBatch.from_arrays([b.column(i) for i in range(b.num_columns)
                                                if b.schema.names[i] != "vec"],
                                               [n for n in b.schema.names if n != "vec"])
               for b in mixed_batches(rows))
    first = next(batches)
    reader = pa.RecordBatchReader.from_batches(first.schema, _chain(first, batches))
    lance.write_dataset(reader, str(src), data_storage_version="2.2",
                        max_rows_per_file=max(1, rows // fragments))
    lance.dataset(str(src)).delete(DELETED)
    return src


def _chain(first, rest):
    yield first
    yield from rest


def fresh_copy(src: Path, scratch: Path, name: str) -> Path:
    dst = scratch / name
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    return dst


def summary(path: Path) -> dict:
    import lance
    ds = lance.dataset(str(path))
    return dict(rows_after=ds.count_rows(), fragments_after=len(ds.get_fragments()))


def pylance_compaction(paths: Paths, rows: int, fragments: int, runs: int, log) -> list[dict]:
    import lance
    src = source(paths, rows, fragments)
    times, after = [], {}
    for i in range(runs + 1):
        dst = fresh_copy(src, paths.scratch, "compact_pylance")
        t0 = time.perf_counter()
        m = lance.dataset(str(dst)).optimize.compact_files()
        if i > 0:
            times.append(time.perf_counter() - t0)
        after = dict(summary(dst), fragments_removed=m.fragments_removed,
                     fragments_added=m.fragments_added)
        shutil.rmtree(dst, ignore_errors=True)
    log(f"  pylance compact_files: median {sorted(times)[len(times) // 2]:.2f}s {after}")
    return [dict(section="compact", engine="pylance", format="lance2.2", query="compact_files",
                 threads=os.cpu_count(), **after, **stats(times, rows))]


def spark_compaction(spark, jvm, paths: Paths, rows: int, fragments: int, runs: int, master: str,
                     log) -> list[dict]:
    src = source(paths, rows, fragments)
    times, after = [], {}
    opts = jvm.java.util.HashMap()
    for i in range(runs + 1):
        dst = fresh_copy(src, paths.scratch, "compact_ours")
        t0 = time.perf_counter()
        m = jvm.io.sparklance.spark.LanceMaintenance.compactFiles(
            spark._jsparkSession, str(dst), None, None, None, None, None, None, opts)
        if i > 0:
            times.append(time.perf_counter() - t0)
        after = dict(summary(dst), fragments_removed=int(m.get("fragments_removed")),
                     fragments_added=int(m.get("fragments_added")))
        shutil.rmtree(dst, ignore_errors=True)
    log(f"  ours compact_files ({master}): median {sorted(times)[len(times) // 2]:.2f}s {after}")
    return [dict(section="compact", engine="ours", format="lance2.2", query="compact_files",
                 master=master, **after, **stats(times, rows))]


def table(res: list[dict], fragments: int) -> list[str]:
    got = {r.get("engine"): r for r in res if r.get("section") == "compact" and not r.get("error")}
    if not got:
        return []
    ours, py = got.get("ours", {}), got.get("pylance", {})
    lines = ["", f"## Compaction ({fragments} fragments, 5% of rows deleted; seconds, median of "
                 "runs after a warm-up; lower is better)", "",
             "| engine | seconds | M rows/s | fragments after | rows after | ours ÷ pylance "
             "(throughput) |", "|---|---|---|---|---|---|"]
    for name, r in (("ours (" + str(ours.get("master")) + ")", ours),
                    (f"pylance ({py.get('threads')} threads)", py)):
        if r:
            ratio = (ours["rows_per_s"] / py["rows_per_s"]) if ours.get("rows_per_s") and \
                py.get("rows_per_s") and r is ours else None
            lines.append(f"| {name} | {r['median_s']:.2f} | {r['rows_per_s'] / 1e6:.2f} | "
                         f"{r.get('fragments_after')} | {r.get('rows_after')} | "
                         f"{f'{ratio:.2f}' if ratio else ''} |")
    if ours and py and (ours.get("rows_after"), ours.get("fragments_after")) != \
            (py.get("rows_after"), py.get("fragments_after")):
        lines.append("")
        lines.append("**The two compactions left different tables** (rows or fragments differ).")
    return lines
