"""TPC-H through Spark: the 22 queries on three copies of the same data — Parquet written by
Spark, Lance written by pylance, Lance written by Spark with this connector — every answer
compared with Parquet's, each query timed (median of runs after a warm-up). The data comes
from tpchgen-cli (PyPI); Spark's writes of each table as Parquet and as Lance are timed too.

Layout under <data>/tpch-sf<sf>/: source/ (tpchgen's Parquet), parquet/, lance-pylance/,
lance-spark/ — one directory or dataset per table."""

from __future__ import annotations

import math
import shutil
import statistics
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path

from .tpch_queries import QUERIES, TABLES

COPIES = ("parquet", "lance-pylance", "lance-spark")


def root(data: Path, sf: float) -> Path:
    return Path(data) / f"tpch-sf{sf:g}"


def tpchgen() -> str:
    exe = Path(sys.executable).parent / "tpchgen-cli"
    return str(exe) if exe.exists() else "tpchgen-cli"


def prepare(data: Path, sf: float, log) -> list[dict]:
    """tpchgen's Parquet (once) and pylance's Lance copy of every table (once)."""
    import lance
    import pyarrow as pa
    import pyarrow.parquet as pq

    r = root(data, sf)
    src = r / "source"
    if not (src / "lineitem.parquet").exists():
        src.mkdir(parents=True, exist_ok=True)
        log(f"tpch: generating scale factor {sf:g} with tpchgen-cli")
        subprocess.run(
            [tpchgen(), "parquet", "-s", f"{sf:g}", "-o", str(src), "--overwrite"], check=True
        )
    out = []
    for t in TABLES:
        dst = r / "lance-pylance" / f"{t}.lance"
        if (dst / "_versions").exists():
            continue
        table = pq.read_table(src / f"{t}.parquet")
        # tpchgen writes string_view; Lance (and Spark) take plain strings.
        table = table.cast(
            pa.schema(
                [
                    pa.field(f.name, pa.string(), f.nullable)
                    if pa.types.is_string_view(f.type)
                    else f.remove_metadata()
                    for f in table.schema
                ]
            )
        )
        t0 = time.time()
        lance.write_dataset(table, str(dst))
        out.append(
            dict(
                section="tpch",
                engine="pylance",
                format="lance",
                table=t,
                write_s=time.time() - t0,
                rows=table.num_rows,
            )
        )
        log(f"tpch: pylance wrote {t} ({table.num_rows:,} rows)")
    return out


def _normalize(v):
    if isinstance(v, float):
        return round(v, 6) if math.isfinite(v) else v
    if isinstance(v, Decimal):
        return v.normalize()
    return v


def _same(a: list, b: list) -> bool:
    if len(a) != len(b):
        return False
    for ra, rb in zip(a, b):
        for x, y in zip(ra, rb):
            if isinstance(x, float) and isinstance(y, float):
                if not math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-9):
                    return False
            elif _normalize(x) != _normalize(y):
                return False
    return True


def _executor_cpu_s(sc, group: str) -> float:
    """Executor CPU seconds of the tasks of a job group's stages (Spark's status store)."""
    store = sc._jsc.sc().statusStore()
    st = sc.statusTracker()
    ns = 0
    for j in st.getJobIdsForGroup(group):
        info = st.getJobInfo(j)
        for s in info.stageIds if info else []:
            try:
                ns += store.lastStageAttempt(s).executorCpuTime()
            except Exception:  # noqa: BLE001 - a stage the store no longer keeps counts 0
                pass
    return ns / 1e9


def spark_tpch(spark, data: Path, sf: float, runs: int, master: str, log) -> list[dict]:
    """Runs inside a Spark worker: Spark's copies (timed writes), then the 22 queries on each."""
    r = root(data, sf)
    results: list[dict] = []
    # Every table written `runs` times in each format after an untimed pass that warms the JIT
    # up, the formats alternating which goes first; each write's time is the median.
    # Besides the wall-clock time, the executor CPU time of each write's tasks (Spark's task
    # metrics): on a shared machine with as many tasks as cores, a write's time is its slowest
    # task's, which other work on the machine moves by ±20%; the CPU time moves far less.
    timed: dict[tuple[str, str], list[float]] = {}
    cpu: dict[tuple[str, str], list[float]] = {}
    sc = spark.sparkContext
    for rep in range(runs + 1):
        for t in TABLES:
            src = spark.read.parquet(str(r / "source" / f"{t}.parquet"))
            targets = [("parquet", r / "parquet" / t), ("lance", r / "lance-spark" / f"{t}.lance")]
            for fmt, dst in targets if rep % 2 == 0 else targets[::-1]:
                shutil.rmtree(dst, ignore_errors=True)
                group = f"tpch-write-{t}-{fmt}-{rep}"
                sc.setJobGroup(group, group)
                t0 = time.time()
                src.write.format(fmt).save(str(dst))
                if rep > 0:
                    timed.setdefault((fmt, t), []).append(time.time() - t0)
                    cpu.setdefault((fmt, t), []).append(_executor_cpu_s(sc, group))
        log(f"tpch: Spark wrote the tables as Parquet and Lance (pass {rep} of {runs})")
    sc.setJobGroup("tpch-queries", "tpch-queries")
    for (fmt, t), times in timed.items():
        results.append(
            dict(
                section="tpch",
                engine="ours",
                format=fmt,
                table=t,
                master=master,
                write_s=statistics.median(times),
                min_write_s=min(times),
                cpu_s=statistics.median(cpu[(fmt, t)]),
            )
        )

    def views(copy: str):
        for t in TABLES:
            path = r / copy / (t if copy == "parquet" else f"{t}.lance")
            df = (
                spark.read.parquet(str(path))
                if copy == "parquet"
                else spark.read.format("lance").load(str(path))
            )
            df.createOrReplaceTempView(t)

    # Query by query: each copy's warm-up (which also gives its answer), then the timed runs
    # with the copies interleaved run by run, their order rotating from query to query and
    # from run to run, so that load from outside the run weighs on the copies alike and no
    # copy gets a warmer JVM or page cache than the others.
    for n, sql in QUERIES.items():
        answers: dict[str, list] = {}
        times: dict[str, list[float]] = {}
        errors: dict[str, str] = {}
        for run in range(runs + 1):
            k = (n - 1 + run) % len(COPIES)
            for copy in COPIES[k:] + COPIES[:k]:
                if copy in errors:
                    continue
                views(copy)
                try:
                    t0 = time.time()
                    rows = spark.sql(sql).collect()
                    dt = time.time() - t0
                    if run == 0:  # warm-up, and the answer
                        answers[copy] = [tuple(x) for x in rows]
                    else:
                        times.setdefault(copy, []).append(dt)
                except Exception as e:  # noqa: BLE001 - one query's error is one result
                    errors[copy] = str(e)[:2000]
        for copy in COPIES:
            if copy in errors:
                results.append(
                    dict(
                        section="tpch",
                        engine="ours",
                        format=copy,
                        query=f"q{n}",
                        master=master,
                        error=errors[copy],
                    )
                )
            else:
                ts = times.get(copy, [])
                results.append(
                    dict(
                        section="tpch",
                        engine="ours",
                        format=copy,
                        query=f"q{n}",
                        master=master,
                        median_s=statistics.median(ts) if ts else None,
                        min_s=min(ts) if ts else None,
                        runs=len(ts),
                        rows=len(answers[copy]),
                        answer=answers[copy],
                    )
                )
        mine = [x for x in results if x.get("query") == f"q{n}"]
        want = next((x.get("answer") for x in mine if x["format"] == "parquet"), None)
        for x in mine:
            rows = x.pop("answer", None)
            if rows is not None and want is not None:
                x["same_answer"] = _same(rows, want)
        log(
            f"tpch q{n}: "
            + ", ".join(
                f"{x['format']} {x['median_s']:.2f}s"
                + ("" if x.get("same_answer", True) else " ANSWER DIFFERS FROM PARQUET")
                if x.get("median_s") is not None
                else f"{x['format']} error"
                for x in mine
            )
        )
    return results


def write_lines(res: list[dict]) -> list[str]:
    """Spark's timed writes of each table as Parquet and as Lance, and their total."""
    w = {
        (x.get("format"), x.get("table")): x
        for x in res
        if x.get("section") == "tpch" and x.get("engine") == "ours" and x.get("write_s") is not None
    }
    both = [t for t in TABLES if ("parquet", t) in w and ("lance", t) in w]
    if not both:
        return []
    pw = sum(w[("parquet", t)]["write_s"] for t in both)
    lw = sum(w[("lance", t)]["write_s"] for t in both)
    lines = [
        "",
        f"Spark's writes of the {len(both)} tables (each the median of the timed runs "
        f"after an untimed pass): Parquet {pw:.1f}s, Lance {lw:.1f}s "
        f"(Lance ÷ Parquet throughput {pw / lw:.2f}). Per table (seconds; the "
        "smallest are a few dozen rows, where Spark's fixed cost of a write job "
        "dominates both):",
        "",
        "| table | Parquet | Lance | Parquet ÷ Lance | fastest runs "
        "| executor CPU s, Parquet | Lance | Parquet ÷ Lance |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for t in both:
        p, x = w[("parquet", t)], w[("lance", t)]
        fast = (
            f"{p['min_write_s'] / x['min_write_s']:.2f}"
            if p.get("min_write_s") and x.get("min_write_s")
            else "—"
        )
        cpu = (
            f"{p['cpu_s']:.3f} | {x['cpu_s']:.3f} | {p['cpu_s'] / x['cpu_s']:.2f}"
            if p.get("cpu_s") and x.get("cpu_s")
            else "— | — | —"
        )
        lines.append(
            f"| {t} | {p['write_s']:.3f} | {x['write_s']:.3f} | "
            f"{p['write_s'] / x['write_s']:.2f} | {fast} | {cpu} |"
        )
    if all(w[(f, t)].get("cpu_s") for f in ("parquet", "lance") for t in both):
        pc = sum(w[("parquet", t)]["cpu_s"] for t in both)
        lc = sum(w[("lance", t)]["cpu_s"] for t in both)
        lines += [
            "",
            f"Executor CPU time of the writes' tasks (median per table; the driver's "
            f"commit not included): Parquet {pc:.1f}s, Lance {lc:.1f}s "
            f"(Parquet ÷ Lance {pc / lc:.2f}).",
        ]
    return lines


def sizes(data: Path, sf: float) -> dict:
    """Bytes on disk of each copy."""

    def du(p: Path) -> int:
        return sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) if p.exists() else 0

    r = root(data, sf)
    return {c: du(r / c) for c in COPIES}


def table(res: list[dict], sf, sizes_by_copy: dict | None) -> list[str]:
    got = {
        (x.get("format"), x.get("query")): x
        for x in res
        if x.get("section") == "tpch" and x.get("query")
    }
    if not got:
        return []
    runs = {x["runs"] for x in got.values() if x.get("runs")}  # not recorded by older runs
    of = f"median of {runs.pop()} runs" if len(runs) == 1 else "median of runs"
    lines = [
        "",
        f"## TPC-H scale factor {sf} (seconds, {of} after a warm-up, the copies "
        f"interleaved run by run; "
        "ratios Parquet ÷ Lance, above 1 means Lance is faster)",
        "",
        "| query | Parquet | Lance (pylance-written) | Lance (Spark-written) | "
        "Parquet ÷ pylance-written | Parquet ÷ Spark-written | answers |",
        "|---|---|---|---|---|---|---|",
    ]
    ratios = {"lance-pylance": [], "lance-spark": []}
    # The fastest runs' ratios too: less moved by load from outside the run.
    fastest = {"lance-pylance": [], "lance-spark": []}
    for n in QUERIES:
        q = f"q{n}"
        p, lp, ls = (got.get((c, q), {}) for c in COPIES)

        def cell(x):
            return "err" if x.get("error") else (f"{x['median_s']:.2f}" if x else "—")

        def rat(x, key):
            if p.get("median_s") and x.get("median_s"):
                v = p["median_s"] / x["median_s"]
                ratios[key].append(v)
                if p.get("min_s") and x.get("min_s"):
                    fastest[key].append(p["min_s"] / x["min_s"])
                return f"{v:.2f}"
            return "—"

        same = all(x.get("same_answer", True) for x in (lp, ls) if x)
        lines.append(
            f"| {q} | {cell(p)} | {cell(lp)} | {cell(ls)} | {rat(lp, 'lance-pylance')} | "
            f"{rat(ls, 'lance-spark')} | {'equal' if same else '**DIFFER**'} |"
        )

    def geo(v):
        return f"{math.exp(sum(map(math.log, v)) / len(v)):.2f}" if v else "—"

    lines.append(
        f"| geometric mean | | | | {geo(ratios['lance-pylance'])} | "
        f"{geo(ratios['lance-spark'])} | |"
    )
    lines.append(
        f"| geometric mean of the fastest runs | | | | {geo(fastest['lance-pylance'])} | "
        f"{geo(fastest['lance-spark'])} | |"
    )
    lines += write_lines(res)
    if sizes_by_copy:
        pq_bytes = sizes_by_copy.get("parquet") or 0
        lines += [
            "",
            "Bytes on disk: "
            + ", ".join(
                f"{c} {b / 2**20:.0f} MiB"
                + (f" ({b / pq_bytes:.2f}× Parquet)" if pq_bytes and c != "parquet" else "")
                for c, b in sizes_by_copy.items()
            )
            + ".",
        ]
    return lines
