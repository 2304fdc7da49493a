"""The driver of the cluster test, run in its own interpreter (so its SparkContext, attached to
the standalone master, does not clash with the test session's local one).

    python driver.py <spec.json> <out.pickle>

spec.json: {"master": url, "jar": path, "tmp": dir, "reads": [{"name", "path", "options",
"select" (optional list), "op": "collect" | "count"}]}. For each read, out.pickle gets the
canonical rows (support.rows_from_spark) or the count, the column names, the number of
partitions and the executor id of every task of the read's jobs; plus the executors the
application had."""

from __future__ import annotations

import json
import os
import pickle
import sys
import time
from pathlib import Path

os.environ["TZ"] = "UTC"
time.tzset()

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/: support.py

from pyspark.sql import SparkSession  # noqa: E402

import support  # noqa: E402


def seq(s):
    """A Scala Seq through py4j -> Python list."""
    return [s.apply(i) for i in range(s.size())]


def task_executors(sc, group: str) -> list[str]:
    tracker = sc.statusTracker()
    store = sc._jsc.sc().statusStore()
    out = []
    for job in tracker.getJobIdsForGroup(group):
        info = tracker.getJobInfo(job)
        for stage in info.stageIds if info else []:
            for t in seq(store.taskList(stage, 0, 100000)):
                out.append(str(t.executorId()))
    return out


def session(spec: dict, app_name: str, extra_conf: dict | None = None) -> SparkSession:
    """A session attached to the standalone master of ``spec``, both executors registered."""
    tmp = spec["tmp"]
    builder = (
        SparkSession.builder.master(spec["master"])
        .appName(app_name)
        .config("spark.jars", spec["jar"])
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.local.dir", f"{tmp}/driver-local")
        .config("spark.executor.memory", "640m")
        .config("spark.executor.cores", "1")
        .config("spark.cores.max", "2")
        .config("spark.driver.memory", "768m")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.extraJavaOptions", f"-Duser.timezone=UTC {spec['jvm_opts']}")
        .config("spark.executor.extraJavaOptions", f"-Duser.timezone=UTC {spec['jvm_opts']}")
        .config("spark.sql.shuffle.partitions", "2")
        # start the jobs only once both executors are there, so tasks can spread
        .config("spark.scheduler.minRegisteredResourcesRatio", "1.0")
        .config("spark.scheduler.maxRegisteredResourcesWaitingTime", "60s")
        .config("spark.locality.wait", "0s")
        .config("spark.network.timeout", "60s")
    )
    for k, v in (extra_conf or {}).items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


def wait_for_executors(sc, n: int = 2, timeout: float = 60) -> list:
    """(id, host:port) of the application's executors, after waiting (bounded) for ``n``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        execs = [
            e for e in seq(sc._jsc.sc().statusStore().executorList(True)) if str(e.id()) != "driver"
        ]
        if len(execs) >= n:
            break
        time.sleep(1)
    return sorted(
        (str(e.id()), str(e.hostPort()))
        for e in seq(sc._jsc.sc().statusStore().executorList(True))
        if str(e.id()) != "driver"
    )


def main() -> None:
    t0 = time.monotonic()
    spec = json.loads(Path(sys.argv[1]).read_text())
    spark = session(spec, "spark-lance-cluster-test")
    sc = spark.sparkContext
    out = {"reads": {}, "app_id": sc.applicationId}
    try:
        out["executors"] = wait_for_executors(sc)
        out["startup_s"] = round(time.monotonic() - t0, 1)
        out["timings_s"] = {}
        for read in spec["reads"]:
            t1 = time.monotonic()
            name = read["name"]
            sc.setJobGroup(name, name)
            reader = spark.read.format("lance")
            for k, v in (read.get("options") or {}).items():
                reader = reader.option(k, v)
            df = reader.load(read["path"])
            if read.get("select"):
                df = df.select(*read["select"])
            res = {"columns": list(df.columns), "partitions": df.rdd.getNumPartitions()}
            try:
                if read["op"] == "count":
                    res["count"] = df.count()
                else:
                    res["rows"] = support.rows_from_spark(df.collect(), df.schema)
            except Exception as e:  # noqa: BLE001
                res["error"] = support.short_error(e, 2000)
            res["executors"] = task_executors(sc, name)
            out["reads"][name] = res
            out["timings_s"][name] = round(time.monotonic() - t1, 1)
    finally:
        Path(sys.argv[2]).write_bytes(pickle.dumps(out))
        spark.stop()


if __name__ == "__main__":
    main()
