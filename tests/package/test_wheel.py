"""The wheel in a clean venv per pyspark line (the running one plus $SPARK_LANCE_WHEEL_LINES):
`pip install pyspark==X dist/spark_lance-*.whl`, then spark_lance.session() picks the jar of
that line, writes and reads format("lance"), reads a Lance 2.2 dataset pylance wrote, pushes a
filter down, and starts again after stop(). Every value is compared with pylance's."""

from __future__ import annotations

import re
import time
from pathlib import Path

import clean_venv
import lance
import pytest
from sample import PUSHED_FILTER, SPARK_SCHEMA, as_lists, sample_rows


def by_id(rows):
    return sorted(rows, key=lambda r: r["id"])


def expected_jar(python: Path, pyspark_version: str) -> str:
    """The jar the package must pick: the 3.5 build on the venv's Scala for pyspark 3.5, the
    4.0 build (Scala 2.13) for 4.x."""
    spark_line = "3.5" if pyspark_version.startswith("3.5.") else "4.0"
    scala = ".".join(clean_venv.scala_of(python).split(".")[:2])
    return f"spark-lance-{spark_line}_{scala}-{clean_venv.VERSION}.jar"


@pytest.mark.parametrize("pyspark_version", clean_venv.wheel_lines())
def test_wheel_in_a_clean_venv(pyspark_version, pylance_dataset, tmp_path):
    started = time.monotonic()
    python = clean_venv.venv_python(pyspark_version)
    ready = time.monotonic()
    written_rows = sample_rows(40, seed=11)
    out = clean_venv.run_script(
        python,
        "wheel_script.py",
        {
            "rows": as_lists(written_rows),
            "schema": SPARK_SCHEMA,
            "written": str(tmp_path / "written.lance"),
            "pylance": pylance_dataset,
            "filter": PUSHED_FILTER,
        },
        tmp_path,
    )
    print(
        f"pyspark {pyspark_version}: venv {ready - started:.1f}s, script {time.monotonic() - ready:.1f}s"
    )

    # The package and jar of this line, from the venv.
    assert (out["pyspark"], out["spark"], out["version"]) == (
        pyspark_version,
        pyspark_version,
        clean_venv.VERSION,
    )
    jar = Path(out["jar"])
    assert jar.name == expected_jar(python, pyspark_version), jar
    assert jar.is_relative_to(clean_venv.VENVS / pyspark_version), jar
    assert out["master"] == "local[2]"

    # What Spark wrote, as pylance reads it, and as Spark reads it back.
    written = lance.dataset(str(tmp_path / "written.lance"))
    assert by_id(written.to_table().to_pylist()) == by_id(written_rows)
    assert out["written_read_back"] == by_id(written.to_table().to_pylist())

    # The dataset pylance wrote (Lance 2.2), whole and filtered.
    ds = lance.dataset(pylance_dataset)
    assert out["pylance_rows"] == by_id(ds.to_table().to_pylist())
    assert out["filtered_rows"] == by_id(ds.to_table(filter=PUSHED_FILTER).to_pylist())
    assert 0 < len(out["filtered_rows"]) < ds.count_rows()

    # The filter went to the connector, and Spark kept no Filter of its own.
    plan = out["plan"]
    pushed = re.search(r"PushedFilters: \[([^\]]*)\]", plan)
    assert pushed and "id" in pushed.group(1) and "s" in pushed.group(1), plan
    assert not re.search(r"^[\s+\-*()0-9]*Filter\b", plan, re.M), (
        plan
    )  # e.g. "+- Filter", "*(1) Filter"

    # A new session after stop() in the same process.
    assert out["new_session_after_stop"] is True
    assert out["count_after_stop"] == ds.count_rows()
