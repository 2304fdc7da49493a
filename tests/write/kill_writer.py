"""A Spark driver the kill test starts in its own process group and SIGKILLs mid-commit.

    python kill_writer.py <dataset> <pause point> <first id> <rows> <format version>

It appends ids [first, first + rows) to <dataset> (creating it with <format version> if it does
not exist) in a local Spark whose driver JVM holds the commit at <pause point> (see the Scala
object CommitPauses) for ten minutes, long enough to be killed there."""

import sys

from pyspark.sql import SparkSession

import spark_lance

path, point, first, rows, fmt = (
    sys.argv[1],
    sys.argv[2],
    int(sys.argv[3]),
    int(sys.argv[4]),
    sys.argv[5],
)
builder = (
    SparkSession.builder.master("local[2]")
    .appName("spark-lance-kill-test")
    .config("spark.ui.enabled", "false")
    .config("spark.driver.extraJavaOptions", f"-Dsparklance.test.commitPause={point}:600000")
)
spark = spark_lance.configure(builder).getOrCreate()
df = spark.range(first, first + rows, numPartitions=3).selectExpr("id", "cast(id as string) AS s")
df.write.format("lance").mode("append").option("data_storage_version", fmt).save(path)
print("commit finished: the pause did not happen", flush=True)
