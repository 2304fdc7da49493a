"""Runs with $SPARK_LANCE_JAR naming a jar built for another Spark line: the session still
writes and reads Parquet, format("lance") fails with the jar's explanation, and so does
spark_lance.session(). Writes what it saw as JSON (argv[1] names a JSON file of arguments)."""

import json
import sys

from pyspark.sql import SparkSession

import spark_lance


def error_of(action):
    try:
        action()
    except Exception as e:  # noqa: BLE001 - the message is what is checked
        return str(e)
    return None


def main(a):
    builder = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
    spark = spark_lance.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    out = {"jar": spark_lance.jar_path(), "spark": spark.version}

    df = spark.createDataFrame(a["rows"], a["schema"])
    df.write.parquet(a["parquet"])
    out["lance_error"] = error_of(lambda: spark.read.format("lance").load(a["lance"]).count())
    out["session_error"] = error_of(spark_lance.session)
    # Parquet keeps working after the connector refused.
    out["parquet_rows"] = [
        r.asDict() for r in spark.read.parquet(a["parquet"]).orderBy("id").collect()
    ]
    out["json_count"] = (df.write.json(a["json"]), spark.read.json(a["json"]).count())[1]
    spark.stop()

    with open(a["out"], "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        main(json.load(f))
