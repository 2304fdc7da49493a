"""The row-level benchmark (issue 15): DELETE of 0.1% of the rows, UPDATE of one column on 1%
and on 50% of them, and MERGE of a source a tenth the table's size (half its keys match) —
by this connector (Spark SQL on a LanceCatalog path), by Delta Lake (delta-spark from Maven
Central, fetched at bench time; deletion vectors on, Delta's merge-on-read) on the same rows,
and by pylance (`delete`, `update`, `merge_insert`, all cores). Each run works on a fresh
copy of the table (the copy is not timed); every engine must leave the same rows (count and
checksum, compared in the report)."""

from __future__ import annotations

import os
import shutil

from .data import Paths, stats
from .maintenance import on_copies

# name -> (Spark SQL on table `t` (and view `src`), pylance call on dataset `ds`, what it is)
OPS = {
    "delete_0.1pct": (
        "DELETE FROM {t} WHERE id % 1000 = 7",
        lambda ds, src: ds.delete("id % 1000 = 7"),
        "DELETE of 0.1% of the rows",
    ),
    "update_1pct": (
        "UPDATE {t} SET b = b + 1 WHERE id % 100 = 3",
        lambda ds, src: ds.update({"b": "b + 1"}, where="id % 100 = 3"),
        "UPDATE of one column on 1% of the rows",
    ),
    "update_50pct": (
        "UPDATE {t} SET b = b + 1 WHERE id % 2 = 0",
        lambda ds, src: ds.update({"b": "b + 1"}, where="id % 2 = 0"),
        "UPDATE of one column on 50% of the rows",
    ),
    "merge_10pct": (
        "MERGE INTO {t} t USING src s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
        lambda ds, src: (
            ds.merge_insert("id")
            .when_matched_update_all()
            .when_not_matched_insert_all()
            .execute(src)
        ),
        "MERGE of a source of rows/10 rows, half of them matching",
    ),
}

# UPDATEs this connector also writes as columns (LanceTable.update(mode="columns"): one new
# file of the column per touched fragment, rows kept in place): name -> (the OPS line it
# does again, update, where, what it is). Delta and pylance are compared on that line.
COLUMN_OPS = {
    "update_1pct_columns": (
        "update_1pct",
        {"b": "b + 1"},
        "id % 100 = 3",
        "UPDATE of one column on 1% of the rows, written as columns",
    ),
    "update_50pct_columns": (
        "update_50pct",
        {"b": "b + 1"},
        "id % 2 = 0",
        "UPDATE of one column on 50% of the rows, written as columns",
    ),
}

# pyspark line -> the delta-spark build for it (Maven Central)
DELTA = {"4.0": "io.delta:delta-spark_2.13:4.0.1", "3.5": "io.delta:delta-spark_2.12:3.3.2"}


def delta_package() -> str | None:
    import pyspark

    return DELTA.get(".".join(pyspark.__version__.split(".")[:2]))


def _batches(rows: int, start: int = 0, step: int = 1, b_shift: float = 0.0):
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    batch = 1 << 20
    for lo in range(0, rows, batch):
        n = min(batch, rows - lo)
        ids = (np.arange(lo, lo + n, dtype=np.int64) * step) + start
        rng = np.random.default_rng([7, start, lo])
        yield pa.RecordBatch.from_arrays(
            [
                pa.array(ids),
                pa.array(rng.integers(0, 1000, n, dtype=np.int32)),
                pa.array(rng.standard_normal(n) + b_shift),
                pc.cast(pa.array(rng.integers(0, 10**9, n)), pa.string()),
                pa.array(rng.integers(-(2**40), 2**40, n, dtype=np.int64)),
            ],
            names=["id", "a", "b", "s", "c"],
        )


def sources(paths: Paths) -> dict:
    root = paths.root
    return dict(
        lance=root / "dml_lance",
        parquet=root / "dml_parquet",
        delta=root / "dml_delta",
        merge=root / "dml_merge_source.parquet",
    )


def prepare(paths: Paths, rows: int, log) -> None:
    """The table (`rows` rows of id, a int, b double, s string, c bigint) as Lance 2.2 by
    pylance and as Parquet (Delta's copy is written from it by the Delta worker), and the
    MERGE source: ids id % 20 = 0 of the table (rows/20, matching) and as many new ids."""
    import lance
    import pyarrow as pa
    import pyarrow.parquet as pq

    src = sources(paths)
    paths.scratch.mkdir(parents=True, exist_ok=True)
    if not (src["lance"] / "_versions").exists():
        log(f"row-level table: {rows:,} rows -> {src['lance']}")
        shutil.rmtree(src["lance"], ignore_errors=True)
        first = _batches(rows)
        head = next(first)
        lance.write_dataset(
            pa.RecordBatchReader.from_batches(head.schema, _chain(head, first)),
            str(src["lance"]),
            data_storage_version="2.2",
        )
    if not src["parquet"].exists():
        src["parquet"].mkdir(parents=True)
        with pq.ParquetWriter(src["parquet"] / "part-0.parquet", next(_batches(1)).schema) as w:
            for b in _batches(rows):
                w.write_batch(b)
    if not src["merge"].exists():
        half = rows // 20
        t = pa.Table.from_batches(
            list(_batches(half, 0, 20, 100.0)) + list(_batches(half, rows, 1, 100.0))
        )
        pq.write_table(t, src["merge"])


def _chain(first, rest):
    yield first
    yield from rest


def _check(spark, table: str) -> dict:
    r = spark.sql(f"SELECT count(*) AS n, sum(b) AS sb FROM {table}").collect()[0]
    return dict(rows_after=int(r["n"]), checksum=round(float(r["sb"]), 2))


def spark_rowlevel(
    spark, engine: str, paths: Paths, rows: int, runs: int, master: str, log
) -> list[dict]:
    """This connector ("ours", a LanceCatalog on paths) or Delta ("delta") on fresh copies."""
    src = sources(paths)
    if engine == "delta" and not (src["delta"] / "_delta_log").exists():
        log(f"Delta table from {src['parquet']}")
        shutil.rmtree(src["delta"], ignore_errors=True)
        spark.read.parquet(str(src["parquet"])).write.format("delta").option(
            "delta.enableDeletionVectors", "true"
        ).save(str(src["delta"]))
    if engine == "ours":
        spark.conf.set("spark.sql.catalog.lance", "io.sparklance.spark.LanceCatalog")
    spark.read.parquet(str(src["merge"])).createOrReplaceTempView("src")
    results = []

    def table(dst):
        return f"lance.`{dst}`" if engine == "ours" else f"delta.`{dst}`"

    def column_update(updates, where):
        # What LanceTable.update(updates, where, mode="columns") calls (the bench's
        # environment has the jar, not the Python package).
        def run(dst):
            jvm = spark.sparkContext._jvm
            jvm.io.sparklance.spark.write.ColumnRewrite.update(
                spark._jsparkSession,
                str(dst),
                list(updates),
                list(updates.values()),
                where,
                "columns",
                jvm.java.util.HashMap(),
            )

        return run

    todo = [
        (name, lambda dst, sql=sql: spark.sql(sql.format(t=table(dst))))
        for name, (sql, _, _) in OPS.items()
    ]
    if engine == "ours":
        todo += [(name, column_update(u, w)) for name, (_, u, w, _) in COLUMN_OPS.items()]
    for name, run in todo:
        try:
            times, after = on_copies(
                src["lance" if engine == "ours" else "delta"],
                paths.scratch,
                f"dml_{engine}",
                runs,
                run,
                lambda dst, _: _check(spark, table(dst)),
            )
            log(f"  {engine} {name}: median {sorted(times)[len(times) // 2]:.2f}s {after}")
            results.append(
                dict(
                    section="rowlevel",
                    engine=engine,
                    format=engine,
                    query=name,
                    master=master,
                    **after,
                    **stats(times, rows),
                )
            )
        except Exception as e:  # noqa: BLE001 - reported in the results
            log(f"  {engine} {name} failed: {e!r}"[:600])
            results.append(
                dict(
                    section="rowlevel",
                    engine=engine,
                    format=engine,
                    query=name,
                    master=master,
                    error=f"{e!r}"[:2000],
                )
            )
    return results


def pylance_rowlevel(paths: Paths, rows: int, runs: int, log) -> list[dict]:
    import lance
    import pyarrow.parquet as pq

    src = sources(paths)
    merge_src = pq.read_table(src["merge"])
    results = []
    for name, (_, call, _) in OPS.items():

        def described(dst, _):
            t = lance.dataset(str(dst)).to_table(columns=["b"])
            return dict(
                rows_after=t.num_rows, checksum=round(float(t.column("b").to_numpy().sum()), 2)
            )

        times, after = on_copies(
            src["lance"],
            paths.scratch,
            "dml_pylance",
            runs,
            lambda dst: call(lance.dataset(str(dst)), merge_src),
            described,
        )
        log(f"  pylance {name}: median {sorted(times)[len(times) // 2]:.2f}s {after}")
        results.append(
            dict(
                section="rowlevel",
                engine="pylance",
                format="lance2.2",
                query=name,
                threads=os.cpu_count(),
                **after,
                **stats(times, rows),
            )
        )
    return results


def table(res: list[dict], rows: int) -> list[str]:
    got = {
        (r.get("engine"), r.get("query")): r
        for r in res
        if r.get("section") == "rowlevel" and not r.get("error")
    }
    if not got:
        return []
    lines = [
        "",
        f"## Row-level changes ({rows:,}-row table; seconds, median of runs after a "
        "warm-up; lower is better)",
        "",
        "Delta Lake with deletion vectors (its merge-on-read); ratios are **other ÷ ours** "
        "in seconds: above 1 means this connector is faster.",
        "",
        "| operation | ours | Delta | pylance | Delta ÷ ours | pylance ÷ ours | same rows |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, (_, _, what) in OPS.items():
        o, d, p = (got.get((e, name)) for e in ("ours", "delta", "pylance"))

        def sec(r):
            return f"{r['median_s']:.2f}" if r else "—"

        def ratio(r):
            return f"{r['median_s'] / o['median_s']:.2f}" if r and o else "—"

        checks = {(r["rows_after"], r["checksum"]) for r in (o, d, p) if r}
        same = "yes" if len(checks) == 1 else "**no**"
        lines.append(
            f"| {what} | {sec(o)} | {sec(d)} | {sec(p)} | {ratio(d)} | {ratio(p)} | {same} |"
        )
    for name, (base, _, _, what) in COLUMN_OPS.items():
        o = got.get(("ours", name))
        if not o:
            continue
        d, p = (got.get((e, base)) for e in ("delta", "pylance"))

        def ratio(r):
            return f"{r['median_s'] / o['median_s']:.2f}" if r else "—"

        checks = {(r["rows_after"], r["checksum"]) for r in (o, d, p) if r}
        same = "yes" if len(checks) == 1 else "**no**"
        lines.append(
            f"| {what} | {o['median_s']:.2f} | "
            f"{d['median_s'] if d else float('nan'):.2f} | "
            f"{p['median_s'] if p else float('nan'):.2f} | {ratio(d)} | {ratio(p)} | "
            f"{same} |"
        )
    errors = [r for r in res if r.get("section") == "rowlevel" and r.get("error")]
    for r in errors:
        lines.append(f"\n- {r['engine']} {r.get('query') or '(all)'}: `{r['error'][:300]}`")
    return lines
