"""Runs inside a clean venv (pyspark + the spark_lance wheel only): spark_lance.session(), a
format("lance") write read back, a read of a pylance-written dataset, a filter pushed down to
the connector, and a second session after stop(). Writes what it saw as JSON (argv[1] names
a JSON file of arguments)."""

import contextlib
import io
import json
import sys

import pyspark

import spark_lance


def rows(df):
    return [r.asDict() for r in df.orderBy("id").collect()]


def main(a):
    spark = spark_lance.session(
        conf={"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"}
    )
    spark.sparkContext.setLogLevel("ERROR")
    out = {
        "pyspark": pyspark.__version__,
        "spark": spark.version,
        "jar": spark_lance.jar_path(),
        "master": spark.sparkContext.master,
        "version": spark_lance.__version__,
    }

    spark_lance.write_lance(spark.createDataFrame(a["rows"], a["schema"]), a["written"])
    out["written_read_back"] = rows(spark_lance.read_lance(spark, a["written"]))

    out["pylance_rows"] = rows(spark.read.format("lance").load(a["pylance"]))

    filtered = spark.read.format("lance").load(a["pylance"]).filter(a["filter"])
    plan = io.StringIO()
    with contextlib.redirect_stdout(plan):
        filtered.explain()
    out["plan"] = plan.getvalue()
    out["filtered_rows"] = rows(filtered)

    spark.stop()
    again = spark_lance.session()
    out["new_session_after_stop"] = again is not spark
    out["count_after_stop"] = again.read.format("lance").load(a["pylance"]).count()
    again.stop()

    with open(a["out"], "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        main(json.load(f))
