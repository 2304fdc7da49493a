"""Spark session fixture for the write tests (local to tests/write until main has a shared conftest)."""
import glob
import os

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def _jar():
    jar = os.environ.get("SPARK_LANCE_JAR") or os.path.join(REPO, "connector/target/scala-2.13/spark-lance_2.13-0.1.0.jar")
    if not os.path.exists(jar):
        pytest.exit(f"assembly jar not found at {jar}; run build/sbt connector/assembly", returncode=2)
    return jar


@pytest.fixture(scope="session")
def spark():
    from pyspark.sql import SparkSession

    s = (
        SparkSession.builder.master("local[2]")
        .appName("spark-lance-write-tests")
        .config("spark.jars", _jar())
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .getOrCreate()
    )
    yield s
    s.stop()
