"""spark-submit --packages io.sparklance:spark-lance_2.13:<version> resolves the connector from
the local Maven repository (~/.m2, filled by `make publish-m2`) and reads a fixture with
format("lance") — no spark_lance helper involved."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import lance

import spark_lance
import support

GROUP, ARTIFACT = "io.sparklance", "spark-lance_2.13"
M2 = Path.home() / ".m2" / "repository"


def sha256(p) -> str:
    return hashlib.sha256(Path(p).read_bytes()).hexdigest()


def test_published_jar_is_the_packaged_jar():
    jar = M2 / GROUP.replace(".", "/") / ARTIFACT / spark_lance.__version__ / f"{ARTIFACT}-{spark_lance.__version__}.jar"
    assert jar.is_file(), f"{jar} is missing: run `make publish-m2`"
    assert sha256(jar) == sha256(spark_lance.jar_path()), f"{jar} is stale: run `make publish-m2`"
    pom = jar.with_suffix(".pom")
    assert pom.is_file(), f"{pom} is missing"
    assert "<dependency>" not in pom.read_text(), "the published pom must not pull dependencies"


def test_spark_submit_packages(tmp_path):
    fx = next(f for f in support.generated_fixtures() if len(f.versions) > 1)
    script = tmp_path / "count_lance.py"
    script.write_text(
        textwrap.dedent(
            """
            import sys
            from pyspark.sql import SparkSession
            spark = SparkSession.builder.appName("packages-test").getOrCreate()
            n = spark.read.format("lance").load(sys.argv[1]).count()
            print(f"LANCE_COUNT={n}")
            spark.stop()
            """
        )
    )
    spark_submit = Path(sys.executable).parent / "spark-submit"
    assert spark_submit.exists(), f"{spark_submit} missing (pyspark installs it into the venv)"
    env = dict(os.environ)
    env.pop(spark_lance.JAR_ENV_VAR, None)
    env["PYSPARK_PYTHON"] = sys.executable
    env.pop("SPARK_HOME", None)
    cmd = [
        str(spark_submit),
        "--master", "local[1]",
        "--packages", f"{GROUP}:{ARTIFACT}:{spark_lance.__version__}",
        "--repositories", M2.as_uri(),
        "--conf", f"spark.jars.ivy={tmp_path / 'ivy'}",
        "--conf", "spark.ui.enabled=false",
        str(script),
        str(fx.path),
    ]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, cwd=str(tmp_path))
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("LANCE_COUNT=")]
    assert r.returncode == 0 and lines, f"{' '.join(cmd)}\nexit {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr[-6000:]}"
    assert int(lines[0].split("=", 1)[1]) == lance.dataset(str(fx.path)).count_rows()
    # The jar Spark used came from the ivy resolution of the published artifact.
    resolved = list((tmp_path / "ivy" / "jars").glob("*.jar"))
    assert [p.name for p in resolved] == [f"{GROUP}_{ARTIFACT}-{spark_lance.__version__}.jar"], resolved
