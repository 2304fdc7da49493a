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

# The line smoke: how many test functions of each module run their first parameter set.
LINE_SMOKE_FUNCTIONS_PER_MODULE = 2


def pytest_addoption(parser):
    parser.addoption(
        "--line-smoke",
        action="store_true",
        help="run what another Spark line needs: every test marked every_line; the first "
        "parameter set of every function marked line_smoke and of the first "
        f"{LINE_SMOKE_FUNCTIONS_PER_MODULE} test functions of every module; nothing marked "
        "default_line_only (the default line runs everything)",
    )


def pytest_collection_modifyitems(config, items):
    if not config.getoption("--line-smoke"):
        return
    seen, per_module, keep, drop = set(), {}, [], []
    for item in items:
        function = item.nodeid.split("[", 1)[0]
        module = function.split("::", 1)[0]
        first = function not in seen
        if first:
            per_module[module] = per_module.get(module, 0) + 1
        seen.add(function)
        if item.get_closest_marker("default_line_only"):
            drop.append(item)
        elif item.get_closest_marker("every_line"):
            keep.append(item)
        elif first and (
            item.get_closest_marker("line_smoke")
            or per_module[module] <= LINE_SMOKE_FUNCTIONS_PER_MODULE
        ):
            keep.append(item)
        else:
            drop.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = keep


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    from pyspark.sql import SparkSession

    import spark_lance

    builder = (
        SparkSession.builder.master("local[2]")
        .appName("spark-lance-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "2g")
        .config("spark.driver.extraJavaOptions", f"-Duser.timezone=UTC {support.TEST_JVM_OPTS}")
        # Each pytest-xdist worker has its own session: keep their warehouses apart.
        .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("warehouse")))
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
