"""A jar built for another Spark line ($SPARK_LANCE_JAR overrides the package's choice): the
session keeps reading and writing Parquet and JSON, and format("lance") fails with a message
naming the jar's line and the running Spark (not a linkage error). Both ways: the 4.0 jar in a
clean pyspark 3.5 venv, and a jar of another line in the running pyspark."""

from __future__ import annotations

import sys
import time
import zipfile
from pathlib import Path

import clean_venv
import pytest
from sample import SPARK_SCHEMA, as_lists, sample_rows


def build_properties(jar: Path) -> dict:
    with zipfile.ZipFile(jar) as z:
        text = z.read("io/sparklance/build.properties").decode()
    return dict(
        ln.split("=", 1) for ln in text.splitlines() if "=" in ln and not ln.startswith("#")
    )


def jar_in(python: Path, line: str) -> Path:
    jar = (
        clean_venv.site_packages(python)
        / "spark_lance"
        / "jars"
        / f"spark-lance-{line}-{clean_venv.VERSION}.jar"
    )
    assert jar.is_file(), jar
    return jar


def other_line(pyspark_version: str) -> str:
    """A built line that does not serve `pyspark_version`."""
    return "4.0_2.13" if pyspark_version.startswith("3.") else "3.5_2.12"


CASES = [
    pytest.param(
        clean_venv.PYSPARK_35, "clean-venv", id=f"pyspark-{clean_venv.PYSPARK_35}-clean-venv"
    ),
    pytest.param(
        clean_venv.running_pyspark(),
        "running",
        id=f"pyspark-{clean_venv.running_pyspark()}-running",
    ),
]


@pytest.mark.parametrize("pyspark_version, where", CASES)
def test_wrong_line_jar_explains_and_spares_other_sources(
    pyspark_version, where, pylance_dataset, tmp_path
):
    started = time.monotonic()
    python = (
        clean_venv.venv_python(pyspark_version) if where == "clean-venv" else Path(sys.executable)
    )
    jar = jar_in(python, other_line(pyspark_version))
    rows = sample_rows(25, seed=3)
    out = clean_venv.run_script(
        python,
        "wrong_line_script.py",
        {
            "rows": as_lists(rows),
            "schema": SPARK_SCHEMA,
            "parquet": str(tmp_path / "t.parquet"),
            "json": str(tmp_path / "t.json"),
            "lance": pylance_dataset,
        },
        tmp_path,
        env={"SPARK_LANCE_JAR": str(jar)},
    )
    print(f"pyspark {pyspark_version} ({where}) with {jar.name}: {time.monotonic() - started:.1f}s")

    assert out["jar"] == str(jar) and out["spark"] == pyspark_version
    assert out["parquet_rows"] == rows and out["json_count"] == len(rows)

    props = build_properties(jar)
    scala = clean_venv.scala_of(python)
    expected = (
        f"This spark-lance jar ({jar.name}) is built for Spark {props['spark.lines.served'].replace(',', '/')}"
        f" with Scala {props['scala.binary']}, but this is Spark {pyspark_version} with Scala {scala}"
    )
    for key in ("lance_error", "session_error"):
        assert out[key] and expected in out[key], f"{key}: {out[key]!r:.3000}\nexpected: {expected}"
    assert (
        "NoSuchMethodError" not in out["lance_error"]
        and "AbstractMethodError" not in out["lance_error"]
    )
