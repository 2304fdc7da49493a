"""pytest fixtures: one local Spark session for the whole run, with the connector jar added
through spark_lance.configure (so every test that reads through Spark also checks that
configure() really makes format("lance") resolve)."""

from __future__ import annotations

import os
import time

# Both the pylance calls (LanceDataset.versions() returns naive *local* times) and the Spark
# JVM (started below, it inherits the environment) must agree on one zone: pin UTC before
# anything reads the zone.
os.environ["TZ"] = "UTC"
time.tzset()

import pytest  # noqa: E402

import support  # noqa: E402


@pytest.fixture(scope="session")
def spark():
    import spark_lance
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master("local[2]")
        .appName("spark-lance-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "2g")
        .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
    )
    session = spark_lance.configure(builder).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def repo_root():
    return support.REPO_ROOT


@pytest.fixture(scope="session")
def src_test_data():
    return support.SRC_TEST_DATA


@pytest.fixture(scope="session")
def external_dir():
    return support.EXTERNAL_DIR
