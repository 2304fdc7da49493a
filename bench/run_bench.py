#!/usr/bin/env python3
"""spark-lance benchmark suite.

Generates a deterministic mixed-schema table and a 20-column wide table, writes them as
Lance 2.2 and 2.0 (pylance) and Parquet (Spark), times writes of the same rows by Spark
(Parquet; this connector as Lance 2.2/2.1/2.0) and pylance, then times the same queries
through Spark on every format with this connector, through pylance, and through lance-spark
(the JNI connector, fetched from Maven Central at bench time), and writes
<out>/latest.{json,md,png}. See bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib import (
    lance_spark,
    maintenance,
    prep,
    pylance_ref,
    report,  # noqa: E402
    rowlevel,
    tpch,
    vectors,
)
from benchlib.data import DEFAULT_ROWS, DEFAULT_WRITE_ROWS, Paths  # noqa: E402
from benchlib.queries import queries  # noqa: E402
from benchlib.spark_worker import run_worker, worker  # noqa: E402

HERE = Path(__file__).resolve().parent
_VERSION = (HERE.parent / "VERSION").read_text().strip()
DEFAULT_JAR = (
    HERE.parent
    / "connector"
    / "target"
    / "spark40_213"
    / "scala-2.13"
    / f"spark-lance-4.0_2.13-{_VERSION}.jar"
)
SECTIONS = [
    "prep",
    "write",
    "scan",
    "pylance",
    "lance-spark",
    "compact",
    "rowlevel",
    "tpch",
    "vectors",
    "report",
]


class LoadWatcher:
    """Highest 1-minute load average seen while the suite runs (goes into the report's notes)."""

    def __init__(self):
        self.peak = 0.0
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.wait(5):
            try:
                self.peak = max(self.peak, float(Path("/proc/loadavg").read_text().split()[0]))
            except (OSError, ValueError):
                return

    def __enter__(self):
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()


def parse_args(argv):
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rows", type=int, default=DEFAULT_ROWS, help="rows of both scan tables")
    ap.add_argument(
        "--write-rows", type=int, default=DEFAULT_WRITE_ROWS, help="rows of the timed writes"
    )
    ap.add_argument(
        "--write-versions",
        default="2.2,2.0",
        help="Lance versions of the timed writes (Spark and "
        "pylance), besides Spark's Parquet; 2.1 is left out by default to save time (the issue asks 2.2 and 2.0)",
    )
    ap.add_argument(
        "--only",
        default="",
        help=f"comma-separated section and/or query names (sections: {', '.join(SECTIONS)})",
    )
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default=str(HERE / "results"))
    ap.add_argument("--data", default=str(HERE / "data"))
    ap.add_argument("--jar", default=str(DEFAULT_JAR))
    ap.add_argument("--master", default="local[1]", help="Spark master for the main table")
    ap.add_argument(
        "--extra-masters",
        default="",
        help="also run this connector and Parquet scans on these masters, e.g. local[2]",
    )
    ap.add_argument(
        "--lance-spark",
        default="auto",
        help="Maven coordinates, 'auto' (newest release on Maven Central) or 'off'",
    )
    ap.add_argument("--driver-memory", default="4g")
    ap.add_argument("--worker-timeout", type=int, default=3600)
    ap.add_argument(
        "--jfr",
        default=None,
        help="record a JFR profile of this connector's scan worker to this file",
    )
    ap.add_argument(
        "--formats", default="parquet,lance2.2,lance2.0", help="formats the scan section reads"
    )
    ap.add_argument(
        "--keep-sources",
        action="store_true",
        help="keep the generated Arrow IPC sources after "
        "data preparation (deleted by default: only an intermediate)",
    )
    ap.add_argument(
        "--compact-fragments",
        type=int,
        default=maintenance.DEFAULT_FRAGMENTS,
        help="fragments of the compaction table (--rows rows, 5%% deleted)",
    )
    ap.add_argument(
        "--compact-master",
        default=f"local[{os.cpu_count()}]",
        help="Spark master of the compaction run (pylance uses every core)",
    )
    ap.add_argument(
        "--rowlevel-rows",
        type=int,
        default=None,
        help="rows of the row-level (DELETE/UPDATE/MERGE) table (default: --rows)",
    )
    ap.add_argument(
        "--rowlevel-master",
        default=f"local[{os.cpu_count()}]",
        help="Spark master of the row-level section (this connector and Delta; "
        "pylance uses every core)",
    )
    ap.add_argument("--tpch-sf", type=float, default=1.0, help="TPC-H scale factor (tpchgen-cli)")
    ap.add_argument("--tpch-runs", type=int, default=5, help="timed runs of each TPC-H query")
    ap.add_argument(
        "--tpch-master",
        default=f"local[{os.cpu_count()}]",
        help="Spark master of the TPC-H section",
    )
    ap.add_argument(
        "--vector-rows",
        type=int,
        default=vectors.DEFAULT_ROWS,
        help="rows of the vector search table (128-dimensional float32)",
    )
    ap.add_argument(
        "--vector-master",
        default=f"local[{os.cpu_count()}]",
        help="Spark master of the vector section (pylance uses every core)",
    )
    ap.add_argument(
        "--fresh", action="store_true", help="do not merge into an existing latest.json"
    )
    ap.add_argument("--worker-spec", help=argparse.SUPPRESS)
    ap.add_argument("--json-out", help=argparse.SUPPRESS)
    return ap, ap.parse_args(argv)


def main(argv=None) -> int:
    ap, args = parse_args(argv)
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
        if (
            old.get("rows") == args.rows
            and old.get("master") == args.master
            and old.get("write_rows") == args.write_rows
        ):
            doc = old
    if doc is None:
        doc = dict(rows=args.rows, write_rows=args.write_rows, master=args.master, results=[])
    doc.pop("notes", None)  # notes are derived from the run now (report.run_notes)
    report_only = sections == ["report"] and doc.get("machine")
    if not report_only:  # re-rendering a report keeps the run's own time and machine state
        doc["started"] = time.strftime("%Y-%m-%d %H:%M:%S %Z")
        doc["machine"] = report.machine_info()
        doc["runs"] = args.runs

    def replace(rs):
        keys = {
            (r.get("section"), r.get("engine"), r.get("format"), r.get("query"), r.get("master"))
            for r in rs
        }
        ran = {(r.get("section"), r.get("engine")) for r in rs}
        # A worker that failed as a whole left an error without a query: a new run replaces it.
        doc["results"] = [
            r
            for r in doc["results"]
            if (r.get("section"), r.get("engine"), r.get("format"), r.get("query"), r.get("master"))
            not in keys
            and not (
                r.get("query") is None
                and r.get("error")
                and (r.get("section"), r.get("engine")) in ran
            )
        ] + rs
        (out / "latest.json").write_text(json.dumps(doc, indent=1, default=str))

    jar = Path(args.jar)
    if (
        any(s in sections for s in ("write", "scan", "compact", "tpch", "vectors"))
        and not jar.exists()
    ):
        log(f"connector jar missing: {jar} (run bench/run.sh, which builds it)")
        return 2

    phases = doc.setdefault("phases_s", {})

    @contextmanager
    def phase(name):
        """Wall time of one section, into the report (what a run spends where)."""
        t0 = time.time()
        yield
        phases[name] = time.time() - t0
        log(f"{name}: {phases[name] / 60:.1f} min")

    with LoadWatcher() as load:
        # Data: always made when missing, whatever --only says, if a later step needs it.
        if any(s in sections for s in ("prep", "write", "scan", "pylance", "lance-spark")):
            with phase("prep"):
                replace(
                    prep.prepare(
                        paths, args.rows, args.write_rows, log, keep_sources=args.keep_sources
                    )
                )
        # pylance's writes and scans on as many cores as the main Spark master has task slots
        pylance_threads = pylance_ref.task_slots(args.master)
        threads_said = f"{pylance_threads} thread" + ("" if pylance_threads == 1 else "s")
        base_spec = dict(
            rows=args.rows,
            runs=args.runs,
            queries=[q["name"] for q in qs],
            write_rows=args.write_rows,
        )
        if "write" in sections:
            wv = [v.strip() for v in args.write_versions.split(",") if v.strip()]
            with phase("write"):
                replace(
                    run_worker(
                        args,
                        dict(
                            base_spec,
                            engine="ours",
                            section="write",
                            master=args.master,
                            jar=str(jar),
                            sections=["write"],
                            formats=[],
                            write_versions=wv,
                        ),
                        log,
                    )
                )
                log(f"pylance writes ({threads_said})")
                replace(
                    pylance_ref.per_core(
                        pylance_threads,
                        pylance_ref.pylance_writes,
                        paths,
                        args.write_rows,
                        args.runs,
                        log=log,
                        versions=wv,
                    )
                )
        replace(pylance_ref.dataset_sizes(paths, args.rows))
        if "scan" in sections:
            with phase("scan"):
                for m in [args.master] + [x for x in args.extra_masters.split(",") if x.strip()]:
                    replace(
                        run_worker(
                            args,
                            dict(
                                base_spec,
                                engine="ours",
                                section="scan",
                                master=m,
                                jar=str(jar),
                                jfr=args.jfr,
                                formats=[f for f in args.formats.split(",") if f],
                            ),
                            log,
                        )
                    )
        if "pylance" in sections:
            with phase("pylance"):
                log(f"pylance reference scans (Lance 2.2, {threads_said})")
                replace(
                    pylance_ref.per_core(
                        pylance_threads,
                        pylance_ref.pylance_scans,
                        paths,
                        args.rows,
                        qs,
                        args.runs,
                        log=log,
                    )
                )
        if "lance-spark" in sections and args.lance_spark != "off":
            with phase("lance-spark"):
                doc["results"] = [r for r in doc["results"] if r.get("engine") != "lance-spark"]
                replace(lance_spark.run(args, base_spec, log))
        if "compact" in sections:
            with phase("compact"):
                doc["compact_fragments"] = args.compact_fragments
                maintenance.prepare(paths, args.rows, args.compact_fragments, log)
                maintenance.prepare_cleanup(paths, log)
                replace(
                    run_worker(
                        args,
                        dict(
                            base_spec,
                            engine="ours",
                            section="compact",
                            master=args.compact_master,
                            jar=str(jar),
                            compact_fragments=args.compact_fragments,
                        ),
                        log,
                    )
                )
                log("pylance compaction")
                replace(
                    maintenance.pylance_compaction(
                        paths, args.rows, args.compact_fragments, args.runs, log
                    )
                )
                replace(maintenance.pylance_cleanup(paths, args.runs, log))
                pkg = rowlevel.delta_package()
                if pkg:
                    maintenance.prepare_parquet(paths, args.rows, args.compact_fragments, log)
                    replace(
                        run_worker(
                            args,
                            dict(
                                base_spec,
                                engine="delta",
                                section="compact",
                                master=args.compact_master,
                                packages=pkg,
                                compact_fragments=args.compact_fragments,
                            ),
                            log,
                        )
                    )
        if "rowlevel" in sections:
            with phase("rowlevel"):
                rl_rows = args.rowlevel_rows or args.rows
                doc["rowlevel_rows"] = rl_rows
                rl_paths = Paths(Path(args.data), rl_rows)
                rowlevel.prepare(rl_paths, rl_rows, log)
                spec = dict(
                    base_spec,
                    section="rowlevel",
                    master=args.rowlevel_master,
                    rowlevel_rows=rl_rows,
                )
                # Runs with --rows rl_rows so the worker's Paths is rl_paths.
                rl_args = argparse.Namespace(**dict(vars(args), rows=rl_rows))
                replace(run_worker(rl_args, dict(spec, engine="ours", jar=str(jar)), log))
                pkg = rowlevel.delta_package()
                if pkg:
                    replace(run_worker(rl_args, dict(spec, engine="delta", packages=pkg), log))
                else:
                    log("no delta-spark build for this pyspark: Delta skipped")
                log("pylance row-level changes")
                replace(rowlevel.pylance_rowlevel(rl_paths, rl_rows, args.runs, log))
        if "tpch" in sections:
            with phase("tpch"):
                doc["tpch_sf"] = args.tpch_sf
                replace(tpch.prepare(Path(args.data), args.tpch_sf, log))
                replace(
                    run_worker(
                        args,
                        dict(
                            base_spec,
                            engine="ours",
                            section="tpch",
                            master=args.tpch_master,
                            jar=str(jar),
                            tpch_sf=args.tpch_sf,
                            tpch_runs=args.tpch_runs,
                        ),
                        log,
                    )
                )
                doc["tpch_sizes"] = tpch.sizes(Path(args.data), args.tpch_sf)
        if "vectors" in sections:
            with phase("vectors"):
                doc["vector_rows"] = args.vector_rows
                vectors.prepare(paths, args.vector_rows, log)
                replace(
                    run_worker(
                        args,
                        dict(
                            base_spec,
                            engine="ours",
                            section="vectors",
                            master=args.vector_master,
                            jar=str(jar),
                            vector_rows=args.vector_rows,
                        ),
                        log,
                    )
                )
                log("pylance vector search")
                replace(vectors.pylance_vectors(paths, args.vector_rows, args.runs, log))
                if args.lance_spark != "off":
                    replace(lance_spark.run_vectors(args, base_spec, log))
    if not report_only:
        doc["elapsed_s"] = time.time() - t_start
        doc["load_max"] = load.peak
    report.build_report(doc, out)
    (out / "latest.json").write_text(json.dumps(doc, indent=1, default=str))
    log(
        f"wrote {out / 'latest.md'}, {out / 'latest.json'}, {out / 'latest.png'} "
        f"in {(time.time() - t_start) / 60:.1f} min"
    )
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TZ", "UTC")
    sys.exit(main())
