"""The driver of the cluster write test, in its own interpreter like driver.py.

    python write_driver.py <spec.json> <out.pickle>

spec.json: {"master", "jar", "tmp", "speculation": bool, "writes": [{"name", "source" (a
Parquet path), "dest", "mode", "options", "partitions", "slow_first_attempt" (partition 0's
first attempt sleeps so speculation starts a copy)}]}. For each write, out.pickle gets an
error or nothing, and every task of its jobs as (partition index, attempt, speculative,
status, executor id)."""

from __future__ import annotations

import json
import os
import pickle
import sys
import time
from pathlib import Path

os.environ["TZ"] = "UTC"
time.tzset()

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/

from cluster.driver import seq, session, wait_for_executors  # noqa: E402

import support  # noqa: E402

SLOW_SECONDS = 25


def tasks(sc, group: str) -> list[tuple]:
    store = sc._jsc.sc().statusStore()
    out = []
    for job in sc.statusTracker().getJobIdsForGroup(group):
        info = sc.statusTracker().getJobInfo(job)
        for stage in info.stageIds if info else []:
            for t in seq(store.taskList(stage, 0, 100000)):
                out.append(
                    (
                        int(t.index()),
                        int(t.attempt()),
                        bool(t.speculative()),
                        str(t.status()),
                        str(t.executorId()),
                    )
                )
    return out


def slow_first_attempt(df):
    """Partition 0's first attempt sleeps before its rows reach the writer; later attempts do not."""
    from pyspark.sql.functions import col, udf

    def delay(x):
        from pyspark import TaskContext

        tc = TaskContext.get()
        if tc.partitionId() == 0 and tc.attemptNumber() == 0 and not getattr(delay, "slept", False):
            delay.slept = True
            time.sleep(SLOW_SECONDS)
        return x

    return df.withColumn("id", udf(delay, "long")(col("id")))


def main() -> None:
    spec = json.loads(Path(sys.argv[1]).read_text())
    extra = {}
    if spec.get("speculation"):
        extra = {
            "spark.speculation": "true",
            "spark.speculation.interval": "200ms",
            "spark.speculation.multiplier": "1.5",
            "spark.speculation.quantile": "0.5",
            "spark.speculation.minTaskRuntime": "2s",
        }
    spark = session(spec, "spark-lance-cluster-write-test", extra)
    sc = spark.sparkContext
    out = {"writes": {}}
    try:
        out["executors"] = wait_for_executors(sc)
        for w in spec["writes"]:
            name = w["name"]
            sc.setJobGroup(name, name)
            df = spark.read.parquet(w["source"]).repartition(w["partitions"])
            if w.get("slow_first_attempt"):
                df = slow_first_attempt(df)
            res = {}
            t0 = time.monotonic()
            try:
                writer = df.write.format("lance").mode(w["mode"])
                for k, v in (w.get("options") or {}).items():
                    writer = writer.option(k, v)
                writer.save(w["dest"])
            except Exception as e:  # noqa: BLE001
                res["error"] = support.short_error(e, 3000)
            res["seconds"] = round(time.monotonic() - t0, 1)
            # A losing speculative attempt is killed asynchronously: wait (bounded) until every
            # attempt has ended, so the test sees final states and whatever files they left.
            deadline = time.monotonic() + 90
            while any(t[3] == "RUNNING" for t in tasks(sc, name)) and time.monotonic() < deadline:
                time.sleep(0.5)
            res["tasks"] = tasks(sc, name)
            out["writes"][name] = res
    finally:
        Path(sys.argv[2]).write_bytes(pickle.dumps(out))
        spark.stop()


if __name__ == "__main__":
    main()
