"""The Spark side: each Spark engine runs in its own child process (`run_bench.py
--worker-spec ...`), so one connector's JIT profile, heap or classpath never leaks into
another's numbers. A worker prepares the Parquet data, times Spark writes, or times scans."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from .data import Paths, du, stats
from .queries import queries

# lance-spark resolves format("lance") through a catalog named "lance" that it must be given.
LANCE_SPARK_CATALOG = ("spark.sql.catalog.lance", "com.lancedb.lance.spark.LanceCatalog")
SPARK_WRITE_FORMATS = (
    "parquet",
    "lance2.2",
    "lance2.1",
    "lance2.0",
)  # the order of the report's rows


class HeapSampler:
    """Samples the (driver = executor, local mode) JVM's heap use every `period` seconds."""

    def __init__(self, jvm, period=0.1):
        self.mx = jvm.java.lang.management.ManagementFactory.getMemoryMXBean()
        self.period = period
        self.peak = 0
        self._stop = threading.Event()
        self._t = None

    def __enter__(self):
        self.peak = self.mx.getHeapMemoryUsage().getUsed()
        self._stop.clear()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()
        return self

    def _run(self):
        while not self._stop.wait(self.period):
            try:
                self.peak = max(self.peak, self.mx.getHeapMemoryUsage().getUsed())
            except Exception:  # noqa: BLE001
                return

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()
        self.peak = max(self.peak, self.mx.getHeapMemoryUsage().getUsed())


def spark_session(
    engine: str,
    master: str,
    jar: str | None,
    packages: str | None,
    jfr: str | None,
    driver_memory: str,
    ivy: str,
):
    from pyspark.sql import SparkSession

    b = (
        SparkSession.builder.master(master)
        .appName(f"spark-lance-bench-{engine}")
        .config("spark.driver.memory", driver_memory)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
    )
    if jar:
        b = b.config("spark.jars", jar)
        if "," in jar:  # several jars (lance-spark with its dependencies): on the driver too
            b = b.config("spark.driver.extraClassPath", jar.replace(",", os.pathsep))
    if packages:
        b = b.config("spark.jars.packages", packages).config("spark.jars.ivy", ivy)
    if engine == "lance-spark" and "," not in (jar or ""):  # the bundle (com.lancedb) needs it
        b = b.config(*LANCE_SPARK_CATALOG)
    if engine == "ours":  # as spark_lance.configure() sets it (EXISTS column pruning, SQL)
        b = b.config("spark.sql.extensions", "io.sparklance.spark.LanceSparkSessionExtensions")
    if engine == "delta":
        b = b.config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension").config(
            "spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog"
        )
    if jfr:
        b = b.config(
            "spark.driver.extraJavaOptions",
            f"-XX:StartFlightRecording=filename={jfr},settings=profile,dumponexit=true",
        )
    return b.getOrCreate()


def java_message(e: Exception) -> str:
    """The Java exception line of a Py4J error (': some.Exception: message'), else str(e)."""
    msg = str(e)
    for line in msg.splitlines():
        if line.startswith(": "):
            return line[2:].strip()
    return msg.strip().splitlines()[0] if msg.strip() else repr(e)


class JvmDied(Exception):
    """The worker's JVM is gone (a Rust panic inside lance-spark aborts it): every later call
    would fail with 'Connection refused', so the worker stops and reports the crash once."""

    def __init__(self, msg: str, fmt: str):
        super().__init__(msg)
        self.fmt = fmt


def jvm_alive(jvm) -> bool:
    try:
        jvm.java.lang.System.nanoTime()
        return True
    except Exception:  # noqa: BLE001
        return False


def timed_writes(
    spark, jvm, paths: Paths, write_rows: int, runs: int, master: str, log, versions=("2.2", "2.0")
) -> list[dict]:
    """Spark writes the same `write_rows` mixed rows (read through this connector from the
    Lance 2.2 write source, the same read for every format) as Parquet and as Lance of each of
    `versions`: one warm-up pass, then `runs` passes interleaving the formats, so load from other
    processes falls on every format alike."""
    src = spark.read.format("lance").load(str(paths.write_source(write_rows)))
    fmts = ["parquet"] + [f"lance{v}" for v in versions]
    state = {f: dict(times=[], peak=0, error=None, size=None) for f in fmts}
    for run in range(runs + 1):
        for fmt in fmts:
            st = state[fmt]
            if st["error"]:
                continue
            dst = paths.scratch / f"spark_write_{fmt}"
            shutil.rmtree(dst, ignore_errors=True)
            try:
                with HeapSampler(jvm) as hs:
                    t0 = time.perf_counter()
                    if fmt == "parquet":
                        src.write.mode("overwrite").parquet(str(dst))
                    else:
                        src.write.format("lance").option(
                            "data_storage_version", fmt[len("lance") :]
                        ).save(str(dst))
                    dt = time.perf_counter() - t0
                if run > 0:
                    st["times"].append(dt)
                    st["peak"] = max(st["peak"], hs.peak)
                st["size"] = du(dst)
            except Exception as e:  # noqa: BLE001
                st["error"] = str(e)[:4000]
                log(f"write {fmt}: ERROR {java_message(e)[:300]}")
            shutil.rmtree(dst, ignore_errors=True)
        log(f"write pass {run}/{runs} done" + (" (warm-up)" if run == 0 else ""))
    out = []
    for fmt, st in state.items():
        base = dict(
            section="write",
            engine="spark" if fmt == "parquet" else "ours",
            format=fmt,
            query="write_mixed",
            master=master,
            rows=write_rows,
        )
        if st["error"] or not st["times"]:
            out.append(dict(base, error=st["error"] or "no timed run"))
            continue
        r = dict(
            base,
            bytes_on_disk=st["size"],
            peak_heap_bytes=st["peak"],
            **stats(st["times"], write_rows),
        )
        log(
            f"write {fmt:9s} median {r['median_s']:.2f}s ({write_rows / r['median_s'] / 1e6:.2f} M rows/s), "
            f"{st['size'] / 1e6:,.0f} MB"
        )
        out.append(r)
    return out


def timed_scans(
    spark,
    jvm,
    paths: Paths,
    qs: list[dict],
    fmts: list[str],
    runs: int,
    rows: int,
    engine: str,
    master: str,
    section: str,
    log,
) -> list[dict]:
    """One warm-up pass over every (query, format) first, so the JIT has seen every code path
    before anything is timed; then the timed runs interleave formats query by query, so load
    from other processes on a shared box hits every format alike (ratios stay fair)."""
    results = []
    for fmt in fmts:
        for t in ("mixed", "wide"):
            if fmt == "parquet":
                df = spark.read.parquet(str(paths.parquet[t]))
            else:
                df = spark.read.format("lance").load(
                    str(paths.lance[(t, fmt.replace("lance", ""))])
                )
            df.createOrReplaceTempView(f"{t}_{fmt.replace('.', '')}")

    def once(q, fmt):
        view = f"{q['table']}_{fmt.replace('.', '')}"
        if q.get("noop"):
            spark.table(view).write.format("noop").mode("overwrite").save()
            return None
        return spark.sql(q["sql"].format(t=view)).collect()[0][0]

    # Whole-table queries last in the warm-up, so the data they leave in the page cache is what
    # the heavy block below reads first.
    light = [q for q in qs if not q.get("whole_table")]
    heavy = [q for q in qs if q.get("whole_table")]
    state = {}
    for q in light + heavy:
        for fmt in fmts:
            st = state[(q["name"], fmt)] = dict(times=[], peak=0, error=None, result=None)
            try:
                st["result"] = once(q, fmt)
            except Exception as e:  # noqa: BLE001
                if not jvm_alive(jvm):
                    raise JvmDied(f"JVM died in the warm-up of {q['name']} on {fmt}", fmt) from e
                st["error"] = str(e)[:4000]
                log(f"{fmt} {q['name']}: ERROR {java_message(e)[:300]}")
    log("warm-up pass done")

    def timed(q, fmt, run):
        st = state[(q["name"], fmt)]
        if st["error"]:
            return
        try:
            with HeapSampler(jvm) as hs:
                t0 = time.perf_counter()
                once(q, fmt)
                st["times"].append(time.perf_counter() - t0)
            st["peak"] = max(st["peak"], hs.peak)
        except Exception as e:  # noqa: BLE001
            if not jvm_alive(jvm):
                raise JvmDied(
                    f"JVM died in timed run {run + 1} of {q['name']} on {fmt}", fmt
                ) from e
            st["error"] = str(e)[:4000]

    # Column queries read a few hundred MB per format: their runs interleave the formats, so
    # load from other processes falls on every format alike.
    for run in range(runs):
        for q in light:
            for fmt in fmts:
                timed(q, fmt, run)
        log(f"timed run {run + 1}/{runs} of the column queries done")
    # Whole-table queries read the entire table (5-6 GB per format at 10M rows): the three
    # mixed tables together do not fit in the page cache of a 23 GB box shared with other
    # work, so interleaving formats would make every run a disk read. Each format's runs are
    # consecutive instead, the format warmed last first; at most the first run of a block
    # reads from disk, which the median of the runs absorbs (min/max show it).
    for fmt in reversed(fmts):
        for q in heavy:
            for run in range(runs):
                timed(q, fmt, run)
        if heavy:
            log(f"timed runs of the whole-table queries on {fmt} done")
    for q in qs:
        for fmt in fmts:
            st = state[(q["name"], fmt)]
            base = dict(
                section=section,
                engine=engine,
                format=fmt,
                query=q["name"],
                master=master,
                rows=rows,
            )
            if st["error"] or not st["times"]:
                results.append(dict(base, error=st["error"] or "no timed run"))
                continue
            r = dict(
                base,
                result=str(st["result"]),
                peak_heap_bytes=st["peak"],
                **stats(st["times"], rows),
            )
            log(
                f"{fmt:9s} {q['name']:16s} median {r['median_s']:.3f}s  ({r['rows_per_s'] / 1e6:.1f} M rows/s)"
            )
            results.append(r)
    return results


def worker(args) -> None:
    """Runs inside a child process. Writes a JSON list of result dicts to args.json_out."""
    spec = json.loads(args.worker_spec)
    engine, master = spec["engine"], spec["master"]
    results: list[dict] = []
    paths = Paths(Path(args.data), args.rows)

    def emit():
        Path(args.json_out).write_text(json.dumps(results, indent=1, default=str))

    def log(msg):
        print(f"[{engine} {master}] {msg}", flush=True)

    try:
        spark = spark_session(
            engine,
            master,
            spec.get("jar"),
            spec.get("packages"),
            spec.get("jfr"),
            args.driver_memory,
            str(paths.root.parent / "ivy"),
        )
    except Exception as e:  # noqa: BLE001
        results.append(
            dict(
                section=spec["section"],
                engine=engine,
                master=master,
                error=f"SparkSession: {e!r}"[:4000],
            )
        )
        emit()
        return
    spark.sparkContext.setLogLevel("ERROR")
    jvm = spark.sparkContext._jvm
    if spec["section"] == "compact" and engine == "delta":
        from .maintenance import delta_optimize

        results += delta_optimize(
            spark, paths, args.rows, spec["compact_fragments"], spec["runs"], master, log
        )
        emit()
    elif spec["section"] == "compact":
        from .maintenance import spark_cleanup, spark_compaction

        results += spark_compaction(
            spark, jvm, paths, args.rows, spec["compact_fragments"], spec["runs"], master, log
        )
        emit()
        results += spark_cleanup(spark, jvm, paths, spec["runs"], master, log)
        emit()
    if spec["section"] == "rowlevel":
        from .rowlevel import spark_rowlevel

        results += spark_rowlevel(
            spark, engine, paths, spec["rowlevel_rows"], spec["runs"], master, log
        )
        emit()
    if spec["section"] == "tpch":
        from .tpch import spark_tpch

        results += spark_tpch(
            spark, Path(args.data), spec["tpch_sf"], spec["tpch_runs"], master, log
        )
        emit()
    if spec["section"] == "vectors":
        from .vectors import lance_spark_vectors, spark_vectors

        search = lance_spark_vectors if engine == "lance-spark" else spark_vectors
        results += search(spark, paths, spec["vector_rows"], master, log)
        emit()
    if "write" in spec.get("sections", []):
        results += timed_writes(
            spark, jvm, paths, spec["write_rows"], spec["runs"], master, log, spec["write_versions"]
        )
        emit()
    # Formats are timed in groups, one after the other (results saved after each), so a crash
    # on a later group (lance-spark on Lance 2.2) loses nothing of the earlier ones.
    qs = [q for q in queries(args.rows) if q["name"] in spec["queries"]]
    for group in spec.get("format_groups") or ([spec["formats"]] if spec.get("formats") else []):
        try:
            results += timed_scans(
                spark,
                jvm,
                paths,
                qs,
                group,
                spec["runs"],
                args.rows,
                engine,
                master,
                spec["section"],
                log,
            )
        except JvmDied as e:
            # one error row for the format, no per-query rows; run_worker adds the JVM's last
            # words (the panic message) from the worker's stderr
            log(f"{e}; the remaining queries of this worker are skipped")
            results.append(
                dict(
                    section=spec["section"],
                    engine=engine,
                    master=master,
                    format=e.fmt,
                    error=str(e),
                    jvm_died=True,
                )
            )
            emit()
            sys.exit(3)
        emit()
    emit()
    spark.stop()


def run_worker(args, spec: dict, log, python: str | None = None) -> list[dict]:
    """Starts a child process for one Spark engine (with `python`, default this interpreter)
    and returns its results; a worker that dies (a JVM crash) becomes an error result."""
    python = python or sys.executable
    out = Path(args.out) / f".worker-{spec['engine']}-{spec['section']}.json"
    out.unlink(missing_ok=True)
    cmd = [
        python,
        str(Path(__file__).resolve().parent.parent / "run_bench.py"),
        "--worker-spec",
        json.dumps(spec),
        "--json-out",
        str(out),
        "--rows",
        str(args.rows),
        "--data",
        args.data,
        "--driver-memory",
        args.driver_memory,
    ]
    log(
        f"starting worker: {spec['engine']} {spec['section']} {spec['master']} "
        f"formats={spec.get('format_groups') or spec.get('formats')}"
    )
    env = dict(os.environ)
    env["PYSPARK_PYTHON"] = python
    logf = Path(args.out) / f".worker-{spec['engine']}-{spec['section']}.log"
    with open(logf, "w") as lf:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=lf, text=True, env=env)
        for line in p.stdout:
            print("   " + line.rstrip(), flush=True)
        rc = p.wait(timeout=args.worker_timeout)
    res = json.loads(out.read_text()) if out.exists() else []
    out.unlink(missing_ok=True)
    if rc != 0 or not res:
        text = logf.read_text()
        tail = text[-3000:]
        lines = text.splitlines()
        panic = next((i for i, x in enumerate(lines) if "panicked at" in x), None)
        if panic is not None:  # a Rust panic aborted the JVM: its first report says why
            tail = "\n".join(lines[panic : panic + 2]) + "\n...\n" + tail
        dead = next((r for r in res if r.get("jvm_died")), None)
        if dead:
            dead["error"] = f"{dead['error']} (worker exited {rc}); stderr tail:\n{tail}"
        else:
            fmts = spec.get("formats") or []
            res.append(
                dict(
                    section=spec["section"],
                    engine=spec["engine"],
                    master=spec["master"],
                    format=fmts[0] if len(fmts) == 1 else None,
                    error=f"worker exited {rc}; stderr tail:\n{tail}",
                )
            )
    return res
