"""spark-submit with the connector:

* `--packages io.sparklance:spark-lance-<line>_<scala>:<version>` (the artifact of the line that
  serves the running pyspark) resolves the connector from the local Maven repository (~/.m2,
  filled by `make publish-m2`) and reads a fixture with format("lance"), no spark_lance helper;
* a script calling spark_lance.session() keeps spark-submit's --master, and explains what to
  pass when spark-submit was not given the jar."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import lance

import spark_lance
import support

GROUP = "io.sparklance"
M2 = Path.home() / ".m2" / "repository"
VERSION = spark_lance.__version__
SPARK_SUBMIT = Path(sys.executable).parent / "spark-submit"


def artifact() -> str:
    """The artifact of the jar spark_lance picks for the running pyspark, e.g. spark-lance-4.0_2.13."""
    name = Path(spark_lance.jar_path()).name
    suffix = f"-{VERSION}.jar"
    assert name.startswith("spark-lance-") and name.endswith(suffix), name
    return name[: -len(suffix)]


def sha256(p) -> str:
    return hashlib.sha256(Path(p).read_bytes()).hexdigest()


def spark_submit(
    tmp_path: Path, script: str, options: list, script_args: list
) -> subprocess.CompletedProcess:
    """Run `script` (source text) by spark-submit `options` (the one pyspark installed in this venv)."""
    assert SPARK_SUBMIT.exists(), f"{SPARK_SUBMIT} missing (pyspark installs it into the venv)"
    path = tmp_path / "job.py"
    path.write_text(textwrap.dedent(script))
    env = dict(os.environ)
    for var in (spark_lance.JAR_ENV_VAR, "SPARK_HOME", "MASTER", "PYSPARK_SUBMIT_ARGS"):
        env.pop(var, None)
    env["PYSPARK_PYTHON"] = sys.executable
    cmd = [str(SPARK_SUBMIT), *options, "--conf", "spark.ui.enabled=false", str(path), *script_args]
    return subprocess.run(
        cmd, capture_output=True, text=True, env=env, timeout=600, cwd=str(tmp_path)
    )


def result_of(r: subprocess.CompletedProcess) -> dict:
    line = next((ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")), None)
    assert r.returncode == 0 and line, (
        f"{r.args}\nexit {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr[-6000:]}"
    )
    return json.loads(line[len("RESULT ") :])


def a_fixture() -> support.LanceFixture:
    return next(f for f in support.generated_fixtures() if len(f.versions) > 1)


def test_published_jar_is_the_packaged_jar():
    jar = M2 / GROUP.replace(".", "/") / artifact() / VERSION / f"{artifact()}-{VERSION}.jar"
    assert jar.is_file(), f"{jar} is missing: run `make publish-m2`"
    assert sha256(jar) == sha256(spark_lance.jar_path()), f"{jar} is stale: run `make publish-m2`"
    pom = jar.with_suffix(".pom")
    assert pom.is_file(), f"{pom} is missing"
    assert "<dependency>" not in pom.read_text(), "the published pom must not pull dependencies"


def test_spark_submit_packages(tmp_path):
    fx = a_fixture()
    r = spark_submit(
        tmp_path,
        """
        import json, sys
        from pyspark.sql import SparkSession
        spark = SparkSession.builder.appName("packages-test").getOrCreate()
        print("RESULT " + json.dumps({"count": spark.read.format("lance").load(sys.argv[1]).count()}))
        spark.stop()
        """,
        [
            "--master",
            "local[1]",
            "--packages",
            f"{GROUP}:{artifact()}:{VERSION}",
            "--repositories",
            M2.as_uri(),
            "--conf",
            f"spark.jars.ivy={tmp_path / 'ivy'}",
        ],
        [str(fx.path)],
    )
    assert result_of(r)["count"] == lance.dataset(str(fx.path)).count_rows()
    # The jar Spark used came from the ivy resolution of the published artifact.
    resolved = list((tmp_path / "ivy" / "jars").glob("*.jar"))
    assert [p.name for p in resolved] == [f"{GROUP}_{artifact()}-{VERSION}.jar"], resolved


SESSION_SCRIPT = """
    import json, sys
    import spark_lance
    try:
        spark = spark_lance.session()
    except RuntimeError as e:
        print("RESULT " + json.dumps({"error": str(e)}))
        sys.exit(0)
    out = {"master": spark.sparkContext.master, "app": spark.sparkContext.appName,
           "count": spark.read.format("lance").load(sys.argv[1]).count()}
    print("RESULT " + json.dumps(out))
    spark.stop()
    """


def test_session_keeps_spark_submit_master(tmp_path):
    fx = a_fixture()
    r = spark_submit(
        tmp_path,
        SESSION_SCRIPT,
        ["--master", "local[1]", "--name", "submitted", "--jars", spark_lance.jar_path()],
        [str(fx.path)],
    )
    assert result_of(r) == {
        "master": "local[1]",
        "app": "submitted",
        "count": lance.dataset(str(fx.path)).count_rows(),
    }


def test_session_under_spark_submit_without_the_jar_explains(tmp_path):
    r = spark_submit(tmp_path, SESSION_SCRIPT, ["--master", "local[1]"], [str(a_fixture().path)])
    text = result_of(r).get("error")
    assert text, "session() accepted a spark-submit JVM without the connector"
    assert "spark-submit" in text, text
    assert f"--jars {spark_lance.jar_path()}" in text, text
    assert f"--packages {GROUP}:{artifact()}:{VERSION}" in text, text
