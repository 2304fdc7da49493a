#!/usr/bin/env python3
"""spark-lance benchmark suite.

Generates a deterministic mixed-schema table and a 20-column wide table, writes them as
Lance 2.2 and Lance 2.0 (pylance) and Parquet (Spark), then times the same queries through
Spark on every format with this connector, through pylance, and through lance-spark (the
JNI connector, fetched from Maven Central at bench time), and writes
<out>/latest.{json,md,png}.

Every Spark engine runs in its own child process (its own JVM), so one connector's JIT
profile, heap or classpath never leaks into another's numbers. See bench/README.md.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
import traceback
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_JAR = REPO / "connector" / "target" / "scala-2.13" / "spark-lance_2.13-0.1.0.jar"

# 10M rows would not finish in 30 min on the shared 2-core box: measured at 1M rows, the
# one-time data preparation alone (Spark's Parquet write of 128-float vectors) runs ~64 s
# per million rows. See README.
DEFAULT_ROWS = 5_000_000
BATCH_ROWS = 262_144        # generation batch; data of row i does not depend on --rows
VEC_DIM = 128
WIDE_COLS = 20
SEED = 20240611

LANCE_SPARK_GROUPS = ("org.lance", "com.lancedb")
LANCE_SPARK_ARTIFACT = "lance-spark-bundle-4.0_2.13"
MAVEN = "https://repo1.maven.org/maven2"

# ---------------------------------------------------------------------------------------
# Queries. `table` is "mixed" or "wide"; `sql` uses {t} for the view name; `noop` queries
# write the whole projection to Spark's noop sink instead of collecting a result.
# `pylance` says how pylance answers the same question: (columns, filter, reducer).
# ---------------------------------------------------------------------------------------


def range_bounds(rows: int) -> tuple[int, int]:
    lo = rows // 2
    return lo, lo + max(1, rows // 1000)


def queries(rows: int) -> list[dict]:
    lo, hi = range_bounds(rows)
    return [
        dict(name="sum_int", table="mixed", sql="SELECT sum(i32) FROM {t}",
             what="sum of a random int32 column", pl=(["i32"], None, "sum")),
        dict(name="sum_bigint", table="mixed", sql="SELECT sum(i64) FROM {t}",
             what="sum of a random int64 column (values in ±2^39, so sums of 10M rows fit)", pl=(["i64"], None, "sum")),
        dict(name="sum_double", table="mixed", sql="SELECT sum(f64) FROM {t}",
             what="sum of a random float64 column", pl=(["f64"], None, "sum")),
        dict(name="sum_strlen_high", table="mixed", sql="SELECT sum(length(s_high)) FROM {t}",
             what="sum(length()) of a high-cardinality string column (1-19 chars, ~all distinct)",
             pl=(["s_high"], None, "strlen")),
        dict(name="sum_strlen_low", table="mixed", sql="SELECT sum(length(s_low)) FROM {t}",
             what="sum(length()) of a low-cardinality string column (12 distinct values)",
             pl=(["s_low"], None, "strlen")),
        dict(name="sum_nullable", table="mixed", sql="SELECT sum(opt_i64) FROM {t}",
             what="sum of an int64 column with 25% nulls", pl=(["opt_i64"], None, "sum")),
        dict(name="max_ts", table="mixed", sql="SELECT max(ts) FROM {t}",
             what="max of a timestamp column", pl=(["ts"], None, "max")),
        dict(name="vector_elem0", table="mixed", sql="SELECT sum(vec[0]) FROM {t}",
             what="sum of element 0 of a 128 x float32 fixed-size-list column (reads the whole vector)",
             pl=(["vec"], None, "vec0")),
        dict(name="full_scan_noop", table="mixed", noop=True, sql="{t}",
             what="every column of every row into Spark's noop sink", pl=(None, None, "none")),
        dict(name="wide_one_of_20", table="wide", sql="SELECT sum(c07) FROM {t}",
             what="one float64 column of a 20-column table", pl=(["c07"], None, "sum")),
        dict(name="count_star", table="mixed", sql="SELECT count(*) FROM {t}",
             what="count(*) (metadata for Lance and Parquet)", pl=(None, None, "count")),
        dict(name="filter_mod", table="mixed", sql="SELECT count(*) FROM {t} WHERE id % 1000 = 0",
             what="count of a 0.1% selective predicate no statistics can prune (id % 1000 = 0)",
             pl=(["id"], "id % 1000 = 0", "count")),
        dict(name="filter_range", table="mixed",
             sql=f"SELECT count(*) FROM {{t}} WHERE id >= {lo} AND id < {hi}",
             what="count of a 0.1% range predicate on the sorted id column (Parquet prunes row groups by min/max)",
             pl=(["id"], f"id >= {lo} AND id < {hi}", "count")),
    ]


SECTIONS = ["gen", "pylance-write", "parquet-write", "spark-lance-write",
            "scan", "pylance", "lance-spark", "report"]

# ---------------------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------------------


def mixed_batches(rows: int):
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    names = pa.array([f"category_{i:02d}" for i in range(12)])
    base_ts = 1_704_067_200_000_000  # 2024-01-01T00:00:00Z in microseconds
    pool = np.random.default_rng([SEED, 2**31]).standard_normal((4096, VEC_DIM), dtype=np.float32)
    for start in range(0, rows, BATCH_ROWS):
        n = min(BATCH_ROWS, rows - start)
        rng = np.random.default_rng([SEED, start // BATCH_ROWS])
        ids = np.arange(start, start + n, dtype=np.int64)
        i32 = rng.integers(-2**31, 2**31 - 1, n, dtype=np.int32)
        i64 = rng.integers(-2**39, 2**39, n, dtype=np.int64)  # 10M rows sum without overflow
        f64 = rng.standard_normal(n)
        low_idx = rng.integers(0, len(names), n, dtype=np.int32)
        s_low = names.take(pa.array(low_idx))
        digits = rng.integers(1, 19, n)
        high_vals = rng.integers(0, 2**62, n, dtype=np.int64) % (10 ** digits)
        s_high = pc.cast(pa.array(high_vals), pa.string())
        ts = pa.array(base_ts + ids * 1_000_000 + rng.integers(0, 1_000_000, n), pa.timestamp("us", tz="UTC"))
        # Rows pick from a fixed pool of random vectors (drawing 128 fresh normals per row
        # would dominate generation time); element 0 is fresh per row, so rows differ.
        vecs = pool[rng.integers(0, len(pool), n)]
        vecs[:, 0] = rng.standard_normal(n, dtype=np.float32)
        vec = pa.FixedSizeListArray.from_arrays(pa.array(vecs.reshape(-1)), VEC_DIM)
        opt = pa.array(rng.integers(-1_000_000, 1_000_000, n, dtype=np.int64), mask=rng.random(n) < 0.25)
        yield pa.RecordBatch.from_arrays(
            [pa.array(ids), pa.array(i32), pa.array(i64), pa.array(f64), s_low, s_high, ts, vec, opt],
            names=["id", "i32", "i64", "f64", "s_low", "s_high", "ts", "vec", "opt_i64"])


def wide_batches(rows: int):
    import numpy as np
    import pyarrow as pa
    for start in range(0, rows, BATCH_ROWS):
        n = min(BATCH_ROWS, rows - start)
        rng = np.random.default_rng([SEED + 1, start // BATCH_ROWS])
        cols = [pa.array(np.arange(start, start + n, dtype=np.int64))]
        cols += [pa.array(rng.standard_normal(n)) for _ in range(WIDE_COLS - 1)]
        yield pa.RecordBatch.from_arrays(cols, names=["id"] + [f"c{i:02d}" for i in range(1, WIDE_COLS)])


def du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


class Paths:
    def __init__(self, data: Path, rows: int):
        self.root = data / f"rows_{rows}"
        self.src = {t: self.root / f"source_{t}.arrow" for t in ("mixed", "wide")}
        self.lance = {(t, v): self.root / f"{t}_lance{v.replace('.', '')}" for t in ("mixed", "wide") for v in ("2.2", "2.0")}
        self.parquet = {t: self.root / f"{t}_parquet" for t in ("mixed", "wide")}
        self.scratch = self.root / "scratch"


def gen_sources(paths: Paths, rows: int, log) -> dict:
    import pyarrow as pa
    out = {}
    paths.root.mkdir(parents=True, exist_ok=True)
    for t, gen in (("mixed", mixed_batches), ("wide", wide_batches)):
        p = paths.src[t]
        if p.exists():
            continue
        log(f"generating {t} source ({rows:,} rows) -> {p}")
        t0 = time.perf_counter()
        it = gen(rows)
        first = next(it)
        tmp = p.with_suffix(".tmp")
        with pa.OSFile(str(tmp), "wb") as f, pa.ipc.new_file(f, first.schema) as w:
            w.write_batch(first)
            for b in it:
                w.write_batch(b)
        tmp.rename(p)
        out[t] = dict(seconds=time.perf_counter() - t0, bytes=p.stat().st_size)
    return out


def open_source(paths: Paths, t: str):
    import pyarrow as pa
    return pa.ipc.open_file(pa.memory_map(str(paths.src[t]), "r"))


def source_reader(paths: Paths, t: str):
    import pyarrow as pa
    f = open_source(paths, t)
    return pa.RecordBatchReader.from_batches(f.schema, (f.get_batch(i) for i in range(f.num_record_batches)))


def pylance_write(paths: Paths, rows: int, runs: int, log) -> list[dict]:
    """Writes every Lance dataset once (keeping it as bench data; that write is the
    warm-up), then rewrites the mixed table `runs` times into scratch for the timing."""
    import lance
    results = []
    for (t, v), p in paths.lance.items():
        if not (p / "_versions").exists() and not list(p.glob("_versions*")):
            log(f"pylance write {t} lance {v} -> {p}")
            shutil.rmtree(p, ignore_errors=True)
            t0 = time.perf_counter()
            lance.write_dataset(source_reader(paths, t), str(p), data_storage_version=v, mode="create")
            log(f"  {time.perf_counter() - t0:.1f}s")
    for v in ("2.2", "2.0"):
        times = []
        dst = paths.scratch / f"pylance_write_{v}"
        for i in range(runs):
            shutil.rmtree(dst, ignore_errors=True)
            t0 = time.perf_counter()
            lance.write_dataset(source_reader(paths, "mixed"), str(dst), data_storage_version=v, mode="create")
            times.append(time.perf_counter() - t0)
            log(f"  pylance write mixed {v} run {i + 1}: {times[-1]:.2f}s")
        size = du(dst)
        shutil.rmtree(dst, ignore_errors=True)
        results.append(dict(section="pylance-write", engine="pylance", format=f"lance{v}", query="write_mixed",
                            rows=rows, bytes_on_disk=size, **stats(times, rows)))
    for (t, v), p in paths.lance.items():
        results.append(dict(section="pylance-write", engine="pylance", format=f"lance{v}", query=f"size_{t}",
                            rows=rows, bytes_on_disk=du(p)))
    return results


def stats(times: list[float], rows: int) -> dict:
    med = statistics.median(times)
    return dict(times_s=[round(x, 4) for x in times], median_s=med, min_s=min(times), max_s=max(times),
                rows_per_s=rows / med if med > 0 else None)


# ---------------------------------------------------------------------------------------
# pylance reference scans
# ---------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------
# Spark worker (child process): one SparkSession, one engine
# ---------------------------------------------------------------------------------------


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


def spark_session(engine: str, master: str, jar: str | None, packages: str | None, jfr: str | None,
                  driver_memory: str, ivy: str):
    from pyspark.sql import SparkSession
    b = (SparkSession.builder.master(master).appName(f"spark-lance-bench-{engine}")
         .config("spark.driver.memory", driver_memory)
         .config("spark.ui.enabled", "false")
         .config("spark.sql.shuffle.partitions", "2")
         .config("spark.sql.session.timeZone", "UTC"))
    if jar:
        b = b.config("spark.jars", jar)
    if packages:
        b = b.config("spark.jars.packages", packages).config("spark.jars.ivy", ivy)
    if jfr:
        b = b.config("spark.driver.extraJavaOptions",
                     f"-XX:StartFlightRecording=filename={jfr},settings=profile,dumponexit=true")
    return b.getOrCreate()


def java_message(e: Exception) -> str:
    """The Java exception line of a Py4J error (': some.Exception: message'), else str(e)."""
    msg = str(e)
    for line in msg.splitlines():
        if line.startswith(": "):
            return line[2:].strip()
    return msg.strip().splitlines()[0] if msg.strip() else repr(e)


# A read-only connector rejects df.write.format("lance") in one of these ways: Spark 4.0
# says "does not allow create table as select" or "does not support batch write" for a
# table without BATCH_WRITE, and for a path that does not exist yet the connector's
# schema inference fails first with LanceNotFoundException.
UNSUPPORTED_WRITE = re.compile(r"not support|unsupported|does not allow create table|"
                               r"LanceNotFoundException|dataset path does not exist", re.I)


def is_unsupported(msg: str) -> bool:
    return bool(UNSUPPORTED_WRITE.search(msg))


def worker(args) -> None:
    """Runs inside a child process. Writes a JSON list of result dicts to args.json_out."""
    results = []
    spec = json.loads(args.worker_spec)
    engine, master = spec["engine"], spec["master"]
    qs = [q for q in queries(args.rows) if q["name"] in spec["queries"]]
    paths = Paths(Path(args.data), args.rows)
    rows = args.rows

    def emit():
        Path(args.json_out).write_text(json.dumps(results, indent=1, default=str))

    def log(msg):
        print(f"[{engine} {master}] {msg}", flush=True)

    try:
        spark = spark_session(engine, master, spec.get("jar"), spec.get("packages"), spec.get("jfr"),
                              args.driver_memory, str(paths.root.parent / "ivy"))
    except Exception as e:  # noqa: BLE001
        results.append(dict(section=spec["section"], engine=engine, master=master, error=f"SparkSession: {e!r}"[:4000]))
        emit()
        return
    spark.sparkContext.setLogLevel("ERROR")
    jvm = spark.sparkContext._jvm

    # --- writes -------------------------------------------------------------------------
    if "parquet-write" in spec.get("sections", []):
        for t in ("mixed", "wide"):
            p = paths.parquet[t]
            if (p / "_SUCCESS").exists():
                continue
            log(f"spark parquet write {t} (source: Lance 2.2 via this connector) -> {p}")
            src = spark.read.format("lance").load(str(paths.lance[(t, "2.2")]))
            with HeapSampler(jvm) as hs:
                t0 = time.perf_counter()
                src.write.mode("overwrite").parquet(str(p))
                dt = time.perf_counter() - t0
            results.append(dict(section="parquet-write", engine="spark", format="parquet", query=f"write_{t}",
                                master=master, rows=rows, bytes_on_disk=du(p), peak_heap_bytes=hs.peak,
                                note="single run; source read through this connector from Lance 2.2",
                                **stats([dt], rows)))
    if "spark-lance-write" in spec.get("sections", []):
        src = spark.read.parquet(str(paths.parquet["mixed"])) if (paths.parquet["mixed"] / "_SUCCESS").exists() \
            else spark.read.format("lance").load(str(paths.lance[("mixed", "2.2")]))
        base = dict(section="spark-lance-write", engine=engine, format="lance", query="write_mixed", master=master)
        dst = paths.scratch / "spark_lance_write"
        try:
            times, peak = [], 0
            for i in range(spec["runs"] + 1):
                shutil.rmtree(dst, ignore_errors=True)
                with HeapSampler(jvm) as hs:
                    t0 = time.perf_counter()
                    src.write.format("lance").mode("overwrite").save(str(dst))
                    dt = time.perf_counter() - t0
                if i > 0:
                    times.append(dt)
                    peak = max(peak, hs.peak)
                log(f"spark-lance write run {i}: {dt:.2f}s")
            results.append(dict(base, rows=rows, bytes_on_disk=du(dst), peak_heap_bytes=peak, **stats(times, rows)))
        except Exception as e:  # noqa: BLE001
            jm = java_message(e)
            if is_unsupported(jm):
                log(f"spark-lance write: SKIPPED, the connector does not support writing yet ({jm[:200]})")
                results.append(dict(base, skipped=True, note="SKIPPED: df.write.format('lance') is not supported "
                                    "by this build: " + jm[:300]))
            else:
                results.append(dict(base, error=str(e)[:4000]))
        shutil.rmtree(dst, ignore_errors=True)
        emit()

    # --- scans ---------------------------------------------------------------------------
    # One warm-up pass over every (query, format) first, so the JIT has seen every code path
    # before anything is timed; then the timed runs interleave formats query by query, so
    # load from other processes on a shared box hits every format alike (ratios stay fair).
    fmts = spec.get("formats", [])
    if not fmts:
        emit()
        spark.stop()
        return
    for fmt in fmts:
        for t in ("mixed", "wide"):
            if fmt == "parquet":
                df = spark.read.parquet(str(paths.parquet[t]))
            else:
                df = spark.read.format("lance").load(str(paths.lance[(t, fmt.replace("lance", ""))]))
            df.createOrReplaceTempView(f"{t}_{fmt.replace('.', '')}")

    def once(q, fmt):
        view = f"{q['table']}_{fmt.replace('.', '')}"
        if q.get("noop"):
            spark.table(view).write.format("noop").mode("overwrite").save()
            return None
        return spark.sql(q["sql"].format(t=view)).collect()[0][0]

    state = {}
    for q in qs:
        for fmt in fmts:
            st = state[(q["name"], fmt)] = dict(times=[], peak=0, error=None, result=None)
            try:
                st["result"] = once(q, fmt)
            except Exception as e:  # noqa: BLE001
                st["error"] = str(e)[:4000]
                log(f"{fmt} {q['name']}: ERROR {java_message(e)[:300]}")
    log("warm-up pass done")
    for run in range(spec["runs"]):
        for q in qs:
            for fmt in fmts:
                st = state[(q["name"], fmt)]
                if st["error"]:
                    continue
                try:
                    with HeapSampler(jvm) as hs:
                        t0 = time.perf_counter()
                        once(q, fmt)
                        st["times"].append(time.perf_counter() - t0)
                    st["peak"] = max(st["peak"], hs.peak)
                except Exception as e:  # noqa: BLE001
                    st["error"] = str(e)[:4000]
        log(f"timed run {run + 1}/{spec['runs']} done")
    for q in qs:
        for fmt in fmts:
            st = state[(q["name"], fmt)]
            base = dict(section=spec["section"], engine=engine, format=fmt, query=q["name"], master=master, rows=rows)
            if st["error"] or not st["times"]:
                results.append(dict(base, error=st["error"] or "no timed run"))
                continue
            r = dict(base, result=str(st["result"]), peak_heap_bytes=st["peak"], **stats(st["times"], rows))
            log(f"{fmt:9s} {q['name']:16s} median {r['median_s']:.3f}s  ({r['rows_per_s'] / 1e6:.1f} M rows/s)")
            results.append(r)
    emit()
    spark.stop()


def run_worker(args, spec: dict, log) -> list[dict]:
    """Starts a child process for one Spark engine and returns its results."""
    out = Path(args.out) / f".worker-{spec['engine']}-{spec['section']}.json"
    out.unlink(missing_ok=True)
    cmd = [sys.executable, __file__, "--worker-spec", json.dumps(spec), "--json-out", str(out),
           "--rows", str(args.rows), "--data", args.data, "--driver-memory", args.driver_memory]
    log(f"starting worker: {spec['engine']} {spec['section']} {spec['master']} formats={spec.get('formats')}")
    env = dict(os.environ)
    env.setdefault("PYSPARK_PYTHON", sys.executable)
    logf = Path(args.out) / f".worker-{spec['engine']}-{spec['section']}.log"
    with open(logf, "w") as lf:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=lf, text=True, env=env)
        for line in p.stdout:
            print("   " + line.rstrip(), flush=True)
        rc = p.wait(timeout=args.worker_timeout)
    res = json.loads(out.read_text()) if out.exists() else []
    out.unlink(missing_ok=True)
    if rc != 0 or not res:
        tail = logf.read_text()[-3000:]
        res.append(dict(section=spec["section"], engine=spec["engine"], master=spec["master"],
                        error=f"worker exited {rc}; stderr tail:\n{tail}"))
    return res


# ---------------------------------------------------------------------------------------
# lance-spark discovery
# ---------------------------------------------------------------------------------------


def find_lance_spark(log) -> tuple[str | None, str]:
    """Returns (coordinates, note). Reads maven-metadata.xml for the newest release."""
    notes = []
    for g in LANCE_SPARK_GROUPS:
        url = f"{MAVEN}/{g.replace('.', '/')}/{LANCE_SPARK_ARTIFACT}/maven-metadata.xml"
        try:
            with urllib.request.urlopen(url, timeout=30) as r:
                xml = r.read().decode()
            m = re.search(r"<release>([^<]+)</release>", xml) or re.search(r"<latest>([^<]+)</latest>", xml)
            if m:
                coords = f"{g}:{LANCE_SPARK_ARTIFACT}:{m.group(1)}"
                log(f"lance-spark: newest release {coords}")
                return coords, f"from {url}"
            notes.append(f"{url}: no <release>")
        except Exception as e:  # noqa: BLE001
            notes.append(f"{url}: {e}")
    return None, "; ".join(notes)


# ---------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------


def machine_info() -> dict:
    def sh(c):
        try:
            return subprocess.run(c, shell=True, capture_output=True, text=True, timeout=30).stdout.strip()
        except Exception:  # noqa: BLE001
            return ""
    cpu = sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2").strip()
    mem_kb = sh("grep MemTotal /proc/meminfo | awk '{print $2}'")
    import pyspark
    try:
        import lance
        lv = lance.__version__
    except Exception:  # noqa: BLE001
        lv = "?"
    return dict(nproc=sh("nproc"), cpu=cpu, mem_gib=round(int(mem_kb) / 1024 / 1024, 1) if mem_kb else None,
                java=sh("java -version 2>&1 | head -1"), python=platform.python_version(),
                pyspark=pyspark.__version__, pylance=lv, os=platform.platform(),
                loadavg=sh("cat /proc/loadavg"),
                git=sh(f"git -C {REPO} rev-parse --short HEAD"))


def ratio(a, b):
    if a and b:
        return a / b
    return None


def fmt_rate(r):
    return f"{r / 1e6:.1f}" if r else "—"


def fmt_ratio(x):
    return f"{x:.2f}" if x else "—"


def index(results):
    return {(r.get("engine"), r.get("format"), r.get("query"), r.get("master")): r for r in results}


def build_report(doc: dict, out: Path) -> None:
    res = doc["results"]
    idx = index(res)
    rows = doc["rows"]
    master = doc["master"]
    qs = queries(rows)
    lines = []
    m = doc["machine"]
    lines += [f"# spark-lance benchmark — {rows:,} rows", "",
              f"Run {doc['started']} (took {doc.get('elapsed_s', 0) / 60:.1f} min), git {m.get('git')}. "
              f"Spark master `{master}` unless a column says otherwise.", "",
              "| machine | |", "|---|---|",
              f"| nproc | {m['nproc']} |", f"| CPU | {m['cpu']} |", f"| memory | {m['mem_gib']} GiB |",
              f"| Java | {m['java']} |", f"| Spark / pylance | pyspark {m['pyspark']} / pylance {m['pylance']} |",
              f"| load average at start | {m['loadavg']} |", ""]
    if doc.get("notes"):
        lines += ["Notes:", ""] + [f"- {n}" for n in doc["notes"]] + [""]
    lines += ["## Scans (M rows/s, median of runs after a warm-up; higher is better)", "",
              "Ratios are throughput ratios: **ours ÷ other**; above 1 means this connector is faster.", "",
              "| query | Parquet | ours 2.2 | ours 2.0 | pylance 2.2 | lance-spark 2.2 | ours2.2/Parquet | ours2.0/Parquet "
              "| ours2.2/lance-spark | ours2.2/pylance | ours 2.2 min–max s | heap peak ours2.2 / Parquet MB |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    chart = []
    for q in qs:
        n = q["name"]
        pq = idx.get(("ours", "parquet", n, master), {})
        o22 = idx.get(("ours", "lance2.2", n, master), {})
        o20 = idx.get(("ours", "lance2.0", n, master), {})
        pl = idx.get(("pylance", "lance2.2", n, None), {})
        ls = idx.get(("lance-spark", "lance2.2", n, master), {})
        if not any((pq, o22, o20, pl, ls)):
            continue
        rp, r22, r20, rpl, rls = (x.get("rows_per_s") for x in (pq, o22, o20, pl, ls))
        rat = dict(parquet=ratio(r22, rp), parquet20=ratio(r20, rp), lance_spark=ratio(r22, rls), pylance=ratio(r22, rpl))
        chart.append((n, dict(rat, pylance=None) if n == "count_star" else rat))
        mm = f"{o22['min_s']:.2f}–{o22['max_s']:.2f}" if o22.get("min_s") is not None else "—"
        heap = " / ".join(f"{x['peak_heap_bytes'] / 2**20:.0f}" if x.get("peak_heap_bytes") else "—" for x in (o22, pq))
        err = lambda x: "err" if x.get("error") else fmt_rate(x.get("rows_per_s"))  # noqa: E731
        lines.append(f"| {n} | {err(pq)} | {err(o22)} | {err(o20)} | {err(pl)} | {err(ls)} | {fmt_ratio(rat['parquet'])} | "
                     f"{fmt_ratio(rat['parquet20'])} | {fmt_ratio(rat['lance_spark'])} | {fmt_ratio(rat['pylance'])} | {mm} | {heap} |")
    doc["ratios"] = {n: r for n, r in chart}
    # other masters (e.g. local[2])
    others = sorted({r.get("master") for r in res if r.get("master") and r.get("master") != master})
    for om in others:
        lines += ["", f"### Spark master `{om}`", "", "| query | Parquet | ours 2.2 | ours 2.0 | ours2.2/Parquet | ours2.0/Parquet |",
                  "|---|---|---|---|---|---|"]
        for q in qs:
            n = q["name"]
            pq, o22, o20 = (idx.get(("ours", f, n, om), {}) for f in ("parquet", "lance2.2", "lance2.0"))
            if not any((pq, o22, o20)):
                continue
            rp, r22, r20 = (x.get("rows_per_s") for x in (pq, o22, o20))
            lines.append(f"| {n} | {fmt_rate(rp)} | {fmt_rate(r22)} | {fmt_rate(r20)} | {fmt_ratio(ratio(r22, rp))} | {fmt_ratio(ratio(r20, rp))} |")
    lines += ["", "## Writes", "", "`write_*` rows are timed writes; `size_*` rows give the size of the bench data sets. "
              "MB/s is bytes written to disk per second. Peak heap only applies to Spark (JVM) writes.", "",
              "| what | engine | format | M rows/s | MB/s | median s (min–max) | bytes on disk | peak heap MB | note |",
              "|---|---|---|---|---|---|---|---|---|"]
    for r in res:
        if r.get("section") not in ("pylance-write", "parquet-write", "spark-lance-write"):
            continue
        note = r.get("note") or (("ERROR: " + r["error"].splitlines()[0][:200]) if r.get("error") else "")
        mm = f"{r['median_s']:.2f} ({r['min_s']:.2f}–{r['max_s']:.2f})" if r.get("median_s") else "—"
        size = f"{r['bytes_on_disk'] / 1e6:,.0f} MB" if r.get("bytes_on_disk") else "—"
        heap = f"{r['peak_heap_bytes'] / 2**20:.0f}" if r.get("peak_heap_bytes") else "—"
        rate = f"{r['rows_per_s'] / 1e6:.2f}" if r.get("rows_per_s") else "—"
        mbs = f"{r['bytes_on_disk'] / 1e6 / r['median_s']:.0f}" if r.get("median_s") and r.get("bytes_on_disk") else "—"
        lines.append(f"| {r['query']} | {r['engine']} | {r.get('format', '')} | {rate} | {mbs} | {mm} | {size} | {heap} | {note} |")
    errs = [r for r in res if r.get("error")]
    if errs:
        lines += ["", "## Errors", ""]
        for r in errs:
            lines += [f"- **{r.get('engine')} {r.get('section')} {r.get('format', '')} {r.get('query', '')}**:", "",
                      "  ```", *("  " + x for x in r["error"].strip().splitlines()[-25:]), "  ```"]
    lines += ["", "## Queries", "", "| name | Spark SQL | what it measures |", "|---|---|---|"]
    for q in qs:
        sql = "write.format(\"noop\") of the whole table" if q.get("noop") else q["sql"].format(t="t")
        lines.append(f"| {q['name']} | `{sql}` | {q['what']} |")
    (out / "latest.md").write_text("\n".join(lines) + "\n")
    chart_png(chart, out / "latest.png", rows, master)


def chart_png(chart, path: Path, rows: int, master: str) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as e:  # noqa: BLE001
        print(f"(no chart: matplotlib unavailable: {e})")
        return
    import numpy as np
    series = [("parquet", "ours 2.2 / Parquet"), ("parquet20", "ours 2.0 / Parquet"),
              ("lance_spark", "ours 2.2 / lance-spark"), ("pylance", "ours 2.2 / pylance")]
    series = [s for s in series if any(r.get(s[0]) for _, r in chart)]
    names = [n for n, _ in chart]
    x = np.arange(len(names))
    w = 0.8 / max(1, len(series))
    fig, ax = plt.subplots(figsize=(max(8, len(names) * 1.1), 5))
    for i, (k, label) in enumerate(series):
        vals = [r.get(k) or 0 for _, r in chart]
        ax.bar(x + (i - (len(series) - 1) / 2) * w, vals, w, label=label)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(x, names, rotation=35, ha="right")
    ax.set_ylabel("throughput ratio (>1: spark-lance faster)")
    ax.set_yscale("log")
    ax.set_title(f"spark-lance scan throughput ratios — {rows:,} rows, {master}\n"
                 "(count_star / pylance left off: pylance answers it from the manifest without a query engine)",
                 fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


# ---------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=DEFAULT_ROWS)
    ap.add_argument("--only", default="", help="comma-separated section and/or query names "
                    f"(sections: {', '.join(SECTIONS)})")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default=str(HERE / "results"))
    ap.add_argument("--data", default=str(HERE / "data"))
    ap.add_argument("--jar", default=str(DEFAULT_JAR))
    ap.add_argument("--master", default="local[1]", help="Spark master for the main table")
    ap.add_argument("--extra-masters", default="", help="also run this connector and Parquet scans on these "
                    "masters, e.g. local[2]")
    ap.add_argument("--lance-spark", default="auto", help="Maven coordinates, 'auto' (newest release on Maven "
                    "Central) or 'off'")
    ap.add_argument("--driver-memory", default="4g")
    ap.add_argument("--worker-timeout", type=int, default=3600)
    ap.add_argument("--jfr", default=None, help="record a JFR profile of this connector's scan worker to this file")
    ap.add_argument("--formats", default="parquet,lance2.2,lance2.0", help="formats the scan section reads")
    ap.add_argument("--fresh", action="store_true", help="do not merge into an existing latest.json")
    ap.add_argument("--worker-spec", help=argparse.SUPPRESS)
    ap.add_argument("--json-out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.worker_spec:
        worker(args)
        return 0

    t_start = time.time()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    all_q = [q["name"] for q in queries(args.rows)]
    only = [x.strip() for x in args.only.split(",") if x.strip()]
    unknown = [x for x in only if x not in SECTIONS and x not in all_q]
    if unknown:
        ap.error(f"unknown --only names {unknown}; sections: {SECTIONS}; queries: {all_q}")
    sections = [s for s in SECTIONS if s in only] or list(SECTIONS)
    qnames = [q for q in all_q if q in only] or all_q
    if "report" not in sections:
        sections.append("report")
    qs = [q for q in queries(args.rows) if q["name"] in qnames]

    def log(msg):
        print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)

    paths = Paths(Path(args.data), args.rows)
    prev = out / "latest.json"
    doc = None
    if prev.exists() and not args.fresh:
        old = json.loads(prev.read_text())
        if old.get("rows") == args.rows and old.get("master") == args.master:
            doc = old
    if doc is None:
        doc = dict(rows=args.rows, master=args.master, results=[], notes=[])
    report_only = sections == ["report"] and doc.get("machine")
    if not report_only:  # re-rendering a report keeps the run's own time and machine state
        doc["started"] = time.strftime("%Y-%m-%d %H:%M:%S %Z")
        doc["machine"] = machine_info()
        doc["runs"] = args.runs
    new: list[dict] = []

    def replace(rs):
        keys = {(r.get("section"), r.get("engine"), r.get("format"), r.get("query"), r.get("master")) for r in rs}
        doc["results"] = [r for r in doc["results"] if (r.get("section"), r.get("engine"), r.get("format"),
                                                        r.get("query"), r.get("master")) not in keys] + rs
        (out / "latest.json").write_text(json.dumps(doc, indent=1, default=str))

    jar = Path(args.jar)
    need_jar = any(s in sections for s in ("parquet-write", "spark-lance-write", "scan"))
    if need_jar and not jar.exists():
        log(f"connector jar missing: {jar} (run bench/run.sh, which builds it)")
        return 2

    # Data: always make sure it exists, whatever --only says, when a later step needs it.
    needs_data = any(s in sections for s in SECTIONS[:-1])
    if needs_data:
        g = gen_sources(paths, args.rows, log)
        for t, v in g.items():
            log(f"generated {t}: {v['seconds']:.1f}s, {v['bytes'] / 1e6:,.0f} MB Arrow IPC")
    if "pylance-write" in sections or any(not (p / "_versions").exists() for p in paths.lance.values()):
        if "pylance-write" in sections:
            replace(pylance_write(paths, args.rows, args.runs, log))
        else:
            pylance_write(paths, args.rows, 0, log)
    base_spec = dict(rows=args.rows, runs=args.runs, queries=[q["name"] for q in qs])
    parquet_missing = any(not (p / "_SUCCESS").exists() for p in paths.parquet.values())
    if "parquet-write" in sections or "spark-lance-write" in sections or (parquet_missing and "scan" in sections):
        ws = [s for s in ("parquet-write", "spark-lance-write") if s in sections]
        if parquet_missing and "parquet-write" not in ws:
            ws.insert(0, "parquet-write")
        if "parquet-write" in sections and not parquet_missing:
            log("Parquet data exists; not rewritten (delete it to time the Spark Parquet write again)")
        replace(run_worker(args, dict(base_spec, engine="ours", section="write", master=args.master, jar=str(jar),
                                      sections=ws, formats=[]), log))
    if "scan" in sections:
        for m in [args.master] + [x for x in args.extra_masters.split(",") if x.strip()]:
            replace(run_worker(args, dict(base_spec, engine="ours", section="scan", master=m, jar=str(jar),
                                          jfr=args.jfr, formats=[f for f in args.formats.split(",") if f]), log))
    if "pylance" in sections:
        log("pylance reference scans (Lance 2.2)")
        replace(pylance_scans(paths, args.rows, qs, args.runs, log))
    if "lance-spark" in sections and args.lance_spark != "off":
        coords, note = (args.lance_spark, "given on the command line") if args.lance_spark != "auto" \
            else find_lance_spark(log)
        if coords is None:
            log(f"lance-spark: not found on Maven Central ({note}); skipped")
            replace([dict(section="lance-spark", engine="lance-spark", master=args.master,
                          error=f"lance-spark bundle for Spark 4.0 / Scala 2.13 not found on Maven Central: {note}")])
        else:
            res = run_worker(args, dict(base_spec, engine="lance-spark", section="lance-spark", master=args.master,
                                        packages=coords, formats=["lance2.2"]), log)
            for r in res:
                r["coordinates"] = coords
            replace(res)
    if not report_only:
        doc["elapsed_s"] = time.time() - t_start
    (out / "latest.json").write_text(json.dumps(doc, indent=1, default=str))
    build_report(doc, out)
    (out / "latest.json").write_text(json.dumps(doc, indent=1, default=str))
    log(f"wrote {out / 'latest.md'}, {out / 'latest.json'}, {out / 'latest.png'} in {(time.time() - t_start) / 60:.1f} min")
    return 0


if __name__ == "__main__":
    sys.exit(main())
