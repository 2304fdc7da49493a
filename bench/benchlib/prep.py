"""Data preparation, once per --rows (reused by later runs): the scan data sets and the sources
of the timed writes, all made from the generated Arrow IPC sources, which are deleted
afterwards (they are only an intermediate; at 10M rows they are 7 GB of disk and page cache).

Lance data sets are written by pylance (the reference writer). Parquet data sets are written
by pyarrow with the settings Spark's own Parquet writer (parquet-mr) uses by default, because
Spark's writer needs ~60 s per million rows of the mixed table on this box (it writes every
vector element with its repetition level) and the scan figures do not depend on who wrote
the files, only on what is in them. Spark's Parquet *writer* is still timed, in the `write`
section."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from .data import Paths, gen_sources, head_reader, source_reader

# parquet-mr's defaults as Spark 4.0 uses them (checked with spark.conf / parquet-mr 1.15's
# ParquetProperties): 128 MiB row groups (parquet.block.size), 1 MiB pages and dictionary
# pages, at most 20,000 rows a page, column and offset indexes (page-level min/max, which
# Spark's reader uses to skip pages), snappy, INT96 timestamps
# (spark.sql.parquet.outputTimestampType), v1 data pages.
SPARK_ROW_GROUP_BYTES = 128 * 2**20
SPARK_PARQUET_OPTIONS = dict(
    compression="snappy",
    use_dictionary=True,
    write_statistics=True,
    data_page_size=2**20,
    dictionary_pagesize_limit=2**20,
    max_rows_per_page=20_000,
    write_page_index=True,
    use_deprecated_int96_timestamps=True,
    data_page_version="1.0",
    store_schema=False,
)
# One file per 1,048,576 rows, like the fragments pylance writes (max_rows_per_file default),
# which are the partitions Spark reads and so the files its writer would make from them.
ROWS_PER_FILE = 1_048_576


def missing(paths: Paths, write_rows: int) -> dict:
    """What still has to be made: {table: [data set paths]} plus the write sources."""
    need = {t: [] for t in ("mixed", "wide")}
    for (t, _), p in paths.lance.items():
        if not (p / "_versions").exists():
            need[t].append(p)
    for t, p in paths.parquet.items():
        if not (p / "_SUCCESS").exists():
            need[t].append(p)
    if (
        not (paths.write_source(write_rows) / "_versions").exists()
        or not paths.write_head(write_rows).exists()
    ):
        need["mixed"].append(paths.write_source(write_rows))
    return {t: v for t, v in need.items() if v}


def prepare(
    paths: Paths, rows: int, write_rows: int, log, keep_sources: bool = False
) -> list[dict]:
    """Makes whatever is missing; returns timing rows (section "prep") for the report."""
    need = missing(paths, write_rows)
    if not need:
        return []
    out = []
    for t, v in gen_sources(paths, rows, log, tables=list(need)).items():
        log(f"generated {t}: {v['seconds']:.1f}s, {v['bytes'] / 1e6:,.0f} MB Arrow IPC")
        out.append(
            dict(section="prep", engine="numpy", format="arrow", query=f"gen_{t}", rows=rows, **v)
        )
    for t in need:
        for v in ("2.2", "2.0"):
            p = paths.lance[(t, v)]
            if p in need[t]:
                out.append(
                    _timed(
                        f"pylance write {t} lance {v}",
                        log,
                        lambda: _write_lance(paths, t, v, p),
                        dict(engine="pylance", format=f"lance{v}", query=f"prep_{t}", rows=rows),
                    )
                )
        p = paths.parquet[t]
        if p in need[t]:
            out.append(
                _timed(
                    f"pyarrow parquet write {t}",
                    log,
                    lambda: write_parquet_like_spark(paths, t, p),
                    dict(engine="pyarrow", format="parquet", query=f"prep_{t}", rows=rows),
                )
            )
    if "mixed" in need:
        _write_heads(paths, write_rows)
    if not keep_sources:
        for p in paths.src.values():
            p.unlink(missing_ok=True)
    return out


def _timed(what: str, log, fn, row: dict) -> dict:
    log(what)
    t0 = time.perf_counter()
    fn()
    dt = time.perf_counter() - t0
    log(f"  {dt:.1f}s")
    return dict(section="prep", seconds=dt, **row)


def _write_lance(paths: Paths, t: str, v: str, p: Path) -> None:
    import lance

    shutil.rmtree(p, ignore_errors=True)
    lance.write_dataset(source_reader(paths, t), str(p), data_storage_version=v, mode="create")


def write_parquet_like_spark(paths: Paths, t: str, dst: Path) -> None:
    """The table as Spark's Parquet writer would lay it out: part files of ROWS_PER_FILE rows,
    128 MiB row groups (in rows, from the table's uncompressed size), parquet-mr's page
    settings, and a _SUCCESS marker."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .data import open_source

    shutil.rmtree(dst, ignore_errors=True)
    tmp = dst.with_name(dst.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    f = open_source(paths, t)
    batches, n, part = [], 0, 0

    def flush():
        nonlocal batches, n, part
        if not batches:
            return
        tbl = pa.Table.from_batches(batches)
        rg_rows = max(1, SPARK_ROW_GROUP_BYTES * tbl.num_rows // max(1, tbl.nbytes))
        with pq.ParquetWriter(
            str(tmp / f"part-{part:05d}.snappy.parquet"),
            tbl.schema,
            flavor="spark",
            **SPARK_PARQUET_OPTIONS,
        ) as w:
            w.write_table(tbl, row_group_size=rg_rows)
        batches, n, part = [], 0, part + 1

    for i in range(f.num_record_batches):
        b = f.get_batch(i)
        while b.num_rows:
            take = min(b.num_rows, ROWS_PER_FILE - n)
            batches.append(b.slice(0, take))
            n += take
            b = b.slice(take)
            if n == ROWS_PER_FILE:
                flush()
    flush()
    (tmp / "_SUCCESS").touch()
    tmp.rename(dst)


def _write_heads(paths: Paths, write_rows: int) -> None:
    """The first `write_rows` mixed rows twice: as Arrow IPC (what the timed pylance writes
    read, memory-mapped) and as Lance 2.2 (what the timed Spark writes read)."""
    import lance
    import pyarrow as pa

    head = paths.write_head(write_rows)
    if not head.exists():
        r = head_reader(paths, "mixed", write_rows)
        tmp = head.with_suffix(".tmp")
        with pa.OSFile(str(tmp), "wb") as f, pa.ipc.new_file(f, r.schema) as w:
            for b in r:
                w.write_batch(b)
        tmp.rename(head)
    ws = paths.write_source(write_rows)
    if not (ws / "_versions").exists():
        shutil.rmtree(ws, ignore_errors=True)
        f = pa.ipc.open_file(pa.memory_map(str(head), "r"))
        reader = pa.RecordBatchReader.from_batches(
            f.schema, (f.get_batch(i) for i in range(f.num_record_batches))
        )
        lance.write_dataset(reader, str(ws), data_storage_version="2.2", mode="create")
