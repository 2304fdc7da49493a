"""TPC-H hang hunt: the 22 queries over the Lance copies, again and again, under a watchdog.

A query that stops making progress is what this looks for (issue 67: q7 hung once in three
full runs, a lock cycle between a shuffle exchange and a pruning subquery). Each query runs on
a worker thread; when one takes longer than --timeout seconds, the JVM's thread stacks are
written to --dump and the run fails. Answers are checked against the first loop's.

    bench/.venv/bin/python bench/tpch_stress.py --sf 1 --loops 20 --master local[2]
    bench/.venv/bin/python bench/tpch_stress.py --sf 0.1 --loops 50 --master local[4] --aqe off

Uses the data bench/run.sh --only tpch makes (tpchgen-cli, pylance's copy), under --data;
makes what is missing. Not a test: it runs for minutes to hours.
"""

from __future__ import annotations

import argparse
import random
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib import tpch  # noqa: E402
from benchlib.tpch_queries import QUERIES, TABLES  # noqa: E402


def thread_dump(spark) -> str:
    """Every JVM thread's stack, as a jstack-like text."""
    jvm = spark.sparkContext._jvm
    out = []
    for entry in jvm.java.lang.Thread.getAllStackTraces().entrySet().toArray():
        t, frames = entry.getKey(), entry.getValue()
        out.append(f'"{t.getName()}" state={t.getState().toString()}')
        out.extend(f"    at {f.toString()}" for f in frames)
        out.append("")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(Path(__file__).resolve().parent / "data"))
    ap.add_argument("--sf", type=float, default=1.0)
    ap.add_argument("--loops", type=int, default=20)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--aqe", choices=["on", "off"], default="on")
    ap.add_argument("--copy", choices=["lance-pylance", "lance-spark"], default="lance-pylance")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds a query may take")
    ap.add_argument(
        "--jitter",
        type=float,
        default=0.2,
        help="at most this many seconds of random sleep before each query",
    )
    ap.add_argument("--dump", default="tpch-stress-threads.txt")
    ap.add_argument(
        "--shuffle-partitions", type=int, help="spark.sql.shuffle.partitions (default: Spark's)"
    )
    ap.add_argument("--jvm-opts", default="", help="the driver JVM's extra options")
    args = ap.parse_args(argv)

    from pyspark.sql import SparkSession

    import spark_lance

    def log(msg):
        print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)

    data = Path(args.data)
    tpch.prepare(data, args.sf, log)
    builder = (
        SparkSession.builder.master(args.master)
        .appName("tpch-stress")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.adaptive.enabled", "true" if args.aqe == "on" else "false")
    )
    if args.shuffle_partitions:
        builder = builder.config("spark.sql.shuffle.partitions", str(args.shuffle_partitions))
    if args.jvm_opts:
        builder = builder.config("spark.driver.extraJavaOptions", args.jvm_opts)
    spark = spark_lance.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    root = tpch.root(data, args.sf)
    if args.copy == "lance-spark" and not (root / "lance-spark" / "lineitem.lance").exists():
        for t in TABLES:
            spark.read.parquet(str(root / "source" / f"{t}.parquet")).write.format("lance").mode(
                "overwrite"
            ).save(str(root / "lance-spark" / f"{t}.lance"))
    for t in TABLES:
        spark.read.format("lance").load(
            str(root / args.copy / f"{t}.lance")
        ).createOrReplaceTempView(t)

    answers: dict[int, list] = {}
    rng = random.Random(67)
    start = time.time()
    for loop in range(1, args.loops + 1):
        order = list(QUERIES)
        rng.shuffle(order)
        for q in order:
            time.sleep(rng.uniform(0, args.jitter))
            box: dict = {}

            def run(q=q, box=box):
                try:
                    box["rows"] = [tuple(r) for r in spark.sql(QUERIES[q]).collect()]
                except Exception as e:  # noqa: BLE001 - reported below
                    box["error"] = e

            worker = threading.Thread(target=run, daemon=True)
            t0 = time.time()
            worker.start()
            worker.join(args.timeout)
            if worker.is_alive():
                Path(args.dump).write_text(thread_dump(spark))
                log(
                    f"loop {loop}: q{q} made no progress for {args.timeout:.0f} s; JVM threads "
                    f"written to {args.dump}"
                )
                return 1
            if "error" in box:
                log(f"loop {loop}: q{q} failed: {box['error']}")
                return 1
            rows = box["rows"]
            if q in answers and not tpch._same(answers[q], rows):
                log(f"loop {loop}: q{q}'s answer differs from the first loop's")
                return 1
            answers.setdefault(q, rows)
            log(f"loop {loop}: q{q} {time.time() - t0:.2f} s")
    log(f"{args.loops} loops of 22 queries in {time.time() - start:.0f} s, no hang, answers equal")
    return 0


if __name__ == "__main__":
    sys.exit(main())
