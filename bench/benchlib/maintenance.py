"""The maintenance benchmark (issue 16). Compaction: a table of many small fragments with 5%
of the rows deleted, compacted by this connector (`LanceMaintenance.compactFiles`, one Spark
task per rewrite group), by pylance's `optimize.compact_files` (its own threads, all cores)
and by Delta Lake's OPTIMIZE on the same rows as as many small files (5% deleted through
deletion vectors), each on a fresh copy per run; the Lance ones must leave the same rows and
fragments. Cleanup: `cleanup_old_versions` of a table of CLEANUP_VERSIONS versions (one small
append each), by this connector and by pylance, on fresh copies."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from .data import Paths, mixed_batches, stats

DEFAULT_FRAGMENTS = 1000
DELETED = "id % 20 = 0"  # 5% of the rows, in every fragment
CLEANUP_VERSIONS = 1000


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
    batches = (
        b.drop_columns(["vec"])
        if hasattr(b, "drop_columns")
        else pa.RecordBatch.from_arrays(
            [b.column(i) for i in range(b.num_columns) if b.schema.names[i] != "vec"],
            [n for n in b.schema.names if n != "vec"],
        )
        for b in mixed_batches(rows)
    )
    first = next(batches)
    reader = pa.RecordBatchReader.from_batches(first.schema, _chain(first, batches))
    lance.write_dataset(
        reader, str(src), data_storage_version="2.2", max_rows_per_file=max(1, rows // fragments)
    )
    lance.dataset(str(src)).delete(DELETED)
    return src


def parquet_source(paths: Paths, rows: int, fragments: int) -> Path:
    """The compaction source's rows (before the delete) as Parquet, for Delta's copy."""
    return paths.root / f"compact_source_{fragments}_parquet"


def delta_source(paths: Paths, rows: int, fragments: int) -> Path:
    return paths.root / f"compact_source_{fragments}_delta"


def prepare_parquet(paths: Paths, rows: int, fragments: int, log) -> Path:
    import lance
    import pyarrow.parquet as pq

    out = parquet_source(paths, rows, fragments)
    if out.exists():
        return out
    out.mkdir(parents=True)
    # Version 1 of the Lance source holds every row (the delete came after).
    ds = lance.dataset(str(source(paths, rows, fragments)), version=1)
    with pq.ParquetWriter(out / "part-0.parquet", ds.schema) as w:
        for b in ds.to_batches():
            w.write_batch(b)
    return out


def cleanup_source(paths: Paths) -> Path:
    return paths.root / f"cleanup_source_{CLEANUP_VERSIONS}"


def prepare_cleanup(paths: Paths, log) -> Path:
    """CLEANUP_VERSIONS versions by pylance: a 1,000-row table, then one-row appends."""
    import lance
    import pyarrow as pa

    src = cleanup_source(paths)
    if (src / "_versions").exists():
        return src
    log(f"cleanup source: {CLEANUP_VERSIONS} versions -> {src}")
    lance.write_dataset(pa.table({"id": list(range(1000))}), str(src))
    for i in range(CLEANUP_VERSIONS - 1):
        lance.write_dataset(pa.table({"id": [1000 + i]}), str(src), mode="append")
    return src


def _chain(first, rest):
    yield first
    yield from rest


def fresh_copy(src: Path, scratch: Path, name: str) -> Path:
    dst = scratch / name
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    return dst


def on_copies(src: Path, scratch: Path, name: str, runs: int, run, after) -> tuple:
    """`run(copy)` timed on a fresh copy of `src` each time (a warm-up, then `runs`);
    `after(copy, result)` describes the table it left (not timed). Returns the times and the
    last description."""
    times, described = [], {}
    for i in range(runs + 1):
        dst = fresh_copy(src, scratch, name)
        t0 = time.perf_counter()
        result = run(dst)
        if i > 0:
            times.append(time.perf_counter() - t0)
        described = after(dst, result)
        shutil.rmtree(dst, ignore_errors=True)
    return times, described


def summary(path: Path) -> dict:
    import lance

    ds = lance.dataset(str(path))
    return dict(rows_after=ds.count_rows(), fragments_after=len(ds.get_fragments()))


def pylance_compaction(paths: Paths, rows: int, fragments: int, runs: int, log) -> list[dict]:
    import lance

    times, after = on_copies(
        source(paths, rows, fragments),
        paths.scratch,
        "compact_pylance",
        runs,
        lambda dst: lance.dataset(str(dst)).optimize.compact_files(),
        lambda dst, m: dict(
            summary(dst), fragments_removed=m.fragments_removed, fragments_added=m.fragments_added
        ),
    )
    log(f"  pylance compact_files: median {sorted(times)[len(times) // 2]:.2f}s {after}")
    return [
        dict(
            section="compact",
            engine="pylance",
            format="lance2.2",
            query="compact_files",
            threads=os.cpu_count(),
            **after,
            **stats(times, rows),
        )
    ]


def spark_compaction(
    spark, jvm, paths: Paths, rows: int, fragments: int, runs: int, master: str, log
) -> list[dict]:
    opts = jvm.java.util.HashMap()
    times, after = on_copies(
        source(paths, rows, fragments),
        paths.scratch,
        "compact_ours",
        runs,
        lambda dst: jvm.io.sparklance.spark.LanceMaintenance.compactFiles(
            spark._jsparkSession, str(dst), None, None, None, None, None, None, opts
        ),
        lambda dst, m: dict(
            summary(dst),
            fragments_removed=int(m.get("fragments_removed")),
            fragments_added=int(m.get("fragments_added")),
        ),
    )
    log(f"  ours compact_files ({master}): median {sorted(times)[len(times) // 2]:.2f}s {after}")
    return [
        dict(
            section="compact",
            engine="ours",
            format="lance2.2",
            query="compact_files",
            master=master,
            **after,
            **stats(times, rows),
        )
    ]


def pylance_cleanup(paths: Paths, runs: int, log) -> list[dict]:
    import datetime

    import lance

    times, after = on_copies(
        cleanup_source(paths),
        paths.scratch,
        "cleanup_pylance",
        runs,
        lambda dst: lance.dataset(str(dst)).cleanup_old_versions(older_than=datetime.timedelta(0)),
        lambda dst, st: dict(old_versions=st.old_versions, bytes_removed=st.bytes_removed),
    )
    log(f"  pylance cleanup: median {sorted(times)[len(times) // 2]:.2f}s {after}")
    return [
        dict(
            section="cleanup",
            engine="pylance",
            format="lance2.2",
            query="cleanup",
            threads=os.cpu_count(),
            **after,
            **stats(times, CLEANUP_VERSIONS),
        )
    ]


def spark_cleanup(spark, jvm, paths: Paths, runs: int, master: str, log) -> list[dict]:
    opts = jvm.java.util.HashMap()
    times, after = on_copies(
        cleanup_source(paths),
        paths.scratch,
        "cleanup_ours",
        runs,
        lambda dst: jvm.io.sparklance.spark.LanceMaintenance.cleanupOldVersions(
            spark._jsparkSession, str(dst), 0.0, None, False, True, False, opts
        ),
        lambda dst, m: dict(
            old_versions=int(m.get("old_versions")), bytes_removed=int(m.get("bytes_removed"))
        ),
    )
    log(f"  ours cleanup: median {sorted(times)[len(times) // 2]:.2f}s {after}")
    return [
        dict(
            section="cleanup",
            engine="ours",
            format="lance2.2",
            query="cleanup",
            master=master,
            **after,
            **stats(times, CLEANUP_VERSIONS),
        )
    ]


def delta_optimize(
    spark, paths: Paths, rows: int, fragments: int, runs: int, master: str, log
) -> list[dict]:
    """Delta's OPTIMIZE of the same rows as `fragments` small files, 5% deleted (deletion
    vectors), on fresh copies."""
    src = delta_source(paths, rows, fragments)
    if not (src / "_delta_log").exists():
        log(f"Delta compaction source: {fragments} files -> {src}")
        shutil.rmtree(src, ignore_errors=True)
        spark.read.parquet(str(parquet_source(paths, rows, fragments))).repartition(
            fragments
        ).write.format("delta").option("delta.enableDeletionVectors", "true").save(str(src))
        spark.sql(f"DELETE FROM delta.`{src}` WHERE {DELETED}")

    def described(dst, _):
        n = spark.sql(f"SELECT count(*) FROM delta.`{dst}`").collect()[0][0]
        files = spark.sql(f"DESCRIBE DETAIL delta.`{dst}`").collect()[0]["numFiles"]
        return dict(rows_after=int(n), fragments_after=int(files))

    times, after = on_copies(
        src,
        paths.scratch,
        "compact_delta",
        runs,
        lambda dst: spark.sql(f"OPTIMIZE delta.`{dst}`").collect(),
        described,
    )
    log(f"  delta OPTIMIZE ({master}): median {sorted(times)[len(times) // 2]:.2f}s {after}")
    return [
        dict(
            section="compact",
            engine="delta",
            format="delta",
            query="compact_files",
            master=master,
            **after,
            **stats(times, rows),
        )
    ]


def cleanup_table(res: list[dict]) -> list[str]:
    got = {r.get("engine"): r for r in res if r.get("section") == "cleanup" and not r.get("error")}
    if not got:
        return []
    ours, py = got.get("ours"), got.get("pylance")
    lines = [
        "",
        f"## Cleanup of {CLEANUP_VERSIONS} versions (seconds, median of runs after a "
        "warm-up; lower is better)",
        "",
        "| engine | seconds | versions removed | bytes removed | pylance ÷ ours (seconds) |",
        "|---|---|---|---|---|",
    ]
    for name, r in (
        ("ours (driver)", ours),
        (f"pylance ({py.get('threads') if py else ''} threads)", py),
    ):
        if r:
            ratio = f"{py['median_s'] / ours['median_s']:.2f}" if r is ours and py else ""
            lines.append(
                f"| {name} | {r['median_s']:.2f} | {r['old_versions']} | "
                f"{r['bytes_removed']} | {ratio} |"
            )
    return lines


def table(res: list[dict], fragments: int) -> list[str]:
    got = {r.get("engine"): r for r in res if r.get("section") == "compact" and not r.get("error")}
    if not got:
        return []
    ours, py = got.get("ours", {}), got.get("pylance", {})
    lines = [
        "",
        f"## Compaction ({fragments} fragments, 5% of rows deleted; seconds, median of "
        "runs after a warm-up; lower is better)",
        "",
        "| engine | seconds | M rows/s | fragments (files) after | rows after | "
        "ours ÷ this (throughput) |",
        "|---|---|---|---|---|---|",
    ]
    delta = got.get("delta", {})
    for name, r in (
        ("ours (" + str(ours.get("master")) + ")", ours),
        (f"pylance ({py.get('threads')} threads)", py),
        ("Delta OPTIMIZE (" + str(delta.get("master")) + ")", delta),
    ):
        if r:
            ratio = (
                (ours["rows_per_s"] / r["rows_per_s"])
                if ours.get("rows_per_s") and r.get("rows_per_s") and r is not ours
                else None
            )
            lines.append(
                f"| {name} | {r['median_s']:.2f} | {r['rows_per_s'] / 1e6:.2f} | "
                f"{r.get('fragments_after')} | {r.get('rows_after')} | "
                f"{f'{ratio:.2f}' if ratio else ''} |"
            )
    if (
        ours
        and py
        and (ours.get("rows_after"), ours.get("fragments_after"))
        != (py.get("rows_after"), py.get("fragments_after"))
    ):
        lines.append("")
        lines.append("**The two compactions left different tables** (rows or fragments differ).")
    return lines
