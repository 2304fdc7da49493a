"""The spark_lance Python package: jar selection, the build (setup.py), configure, session,
read_lance, write_lance."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import textwrap
import types
import zipfile
from pathlib import Path

import lance
import pytest

import spark_lance
import support
from spark_lance import _lines, _master, _session

# The package finds and checks the jar of the running line.
pytestmark = pytest.mark.every_line

DATA_SOURCE_SERVICE = "META-INF/services/org.apache.spark.sql.sources.DataSourceRegister"
BUILD_PROPERTIES = "io/sparklance/build.properties"
JARS_DIR = Path(spark_lance.__file__).parent / "jars"
VERSION = (support.REPO_ROOT / "VERSION").read_text().strip()


def multi_version_fixture() -> support.LanceFixture:
    """A generated fixture with several versions and at least one tag."""
    for f in support.generated_fixtures():
        if len(f.versions) >= 3 and f.tags:
            return f
    pytest.fail("no generated fixture with >= 3 versions and a tag")


def clean_env(extra: dict | None = None) -> dict:
    """This environment without anything that would steer spark_lance or pyspark."""
    env = dict(os.environ)
    for var in (
        spark_lance.JAR_ENV_VAR,
        "SPARK_HOME",
        "SPARK_CONF_DIR",
        "MASTER",
        "PYSPARK_SUBMIT_ARGS",
        _master.GATEWAY_ENV_VAR,
        "PYTHONPATH",
    ):
        env.pop(var, None)
    env.update(extra or {})
    return env


def run_python(
    code: str, env_extra: dict | None = None, cwd: str | None = None, timeout: int = 300
):
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=clean_env(env_extra),
        cwd=cwd or "/",
        timeout=timeout,
    )


def result_of(r: subprocess.CompletedProcess) -> dict:
    """The JSON a helper process printed on its `RESULT ` line."""
    line = next((ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")), None)
    assert r.returncode == 0 and line, (
        f"exit {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr[-4000:]}"
    )
    return json.loads(line[len("RESULT ") :])


def running_built_line() -> str:
    """The built line that serves the running pyspark, worked out here from pyspark's own jars
    (Spark 3.5 -> 3.5 on its Scala, 4.x -> 4.0 on Scala 2.13)."""
    import pyspark

    scala = {
        p.name.split("-")[2].rsplit(".", 2)[0]
        for p in (Path(pyspark.__file__).parent / "jars").glob("scala-library-*.jar")
    }
    assert len(scala) == 1, scala
    spark_line = "3.5" if pyspark.__version__.startswith("3.5.") else "4.0"
    return f"{spark_line}_{scala.pop()}"


def fake_pyspark(monkeypatch, tmp_path: Path, version: str, scala: str | None) -> Path:
    """Make `import pyspark` return a stand-in of `version` whose jars directory holds
    scala-library-<scala>.jar (none if scala is None)."""
    home = tmp_path / "fake_pyspark"
    (home / "jars").mkdir(parents=True)
    if scala:
        (home / "jars" / f"scala-library-{scala}.jar").write_bytes(b"PK")
    module = types.ModuleType("pyspark")
    module.__version__ = version
    module.__file__ = str(home / "__init__.py")
    monkeypatch.setitem(sys.modules, "pyspark", module)
    for var in (spark_lance.JAR_ENV_VAR, "SPARK_HOME"):
        monkeypatch.delenv(var, raising=False)
    return home


# ---- the installed package -------------------------------------------------------------------------


def test_installed_package_carries_every_line():
    assert "site-packages" in spark_lance.__file__, spark_lance.__file__  # the wheel, not python/
    assert sorted(p.name for p in JARS_DIR.glob("*.jar")) == sorted(
        _lines.jar_name(line, VERSION) for line in _lines.BUILT_LINES
    )


def test_version_comes_from_the_version_file():
    import importlib.metadata

    assert spark_lance.__version__ == VERSION
    assert importlib.metadata.version("spark-lance") == VERSION


def test_jar_for_the_running_pyspark(monkeypatch):
    monkeypatch.delenv(spark_lance.JAR_ENV_VAR, raising=False)
    monkeypatch.delenv("SPARK_HOME", raising=False)
    path = Path(spark_lance.jar_path())
    assert path == JARS_DIR / f"spark-lance-{running_built_line()}-{VERSION}.jar"
    assert path.is_file()


@pytest.mark.parametrize("line", _lines.BUILT_LINES)
def test_bundled_jar_registers_the_data_source_and_names_its_line(line):
    with zipfile.ZipFile(JARS_DIR / _lines.jar_name(line, VERSION)) as jar:
        names = set(jar.namelist())
        assert DATA_SOURCE_SERVICE in names, "the jar does not register a Spark data source"
        classes = [c.strip() for c in jar.read(DATA_SOURCE_SERVICE).decode().splitlines()]
        classes = [c for c in classes if c and not c.startswith("#")]
        assert classes, "empty DataSourceRegister service file"
        for c in classes:
            assert c.replace(".", "/") + ".class" in names, f"{c} is registered but not in the jar"
        # protobuf is relocated, never shipped under its own package name.
        assert not any(n.startswith("com/google/protobuf/") for n in names)
        props = dict(
            ln.split("=", 1)
            for ln in jar.read(BUILD_PROPERTIES).decode().splitlines()
            if "=" in ln and not ln.startswith("#")
        )
    spark_line, scala = line.split("_")
    assert (props["version"], props["spark.line"], props["scala.binary"]) == (
        VERSION,
        spark_line,
        scala,
    ), props
    served = [m for m, by in _lines.SERVED_BY.items() if by == spark_line]
    assert props["spark.lines.served"].split(",") == served, props


# ---- jar selection ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "pyspark_version, scala, line",
    [
        ("3.5.9", "2.12.18", "3.5_2.12"),
        ("3.5.1", "2.13.8", "3.5_2.13"),
        ("4.0.1", "2.13.16", "4.0_2.13"),
        ("4.1.4", "2.13.16", "4.0_2.13"),
        ("4.2.1", "2.13.17", "4.0_2.13"),
        ("4.3.0", "2.13.17", "4.0_2.13"),
        ("4.3.1.dev0", "2.13.17", "4.0_2.13"),
    ],
)
def test_selection_follows_the_installed_pyspark(
    monkeypatch, tmp_path, pyspark_version, scala, line
):
    fake_pyspark(monkeypatch, tmp_path, pyspark_version, scala)
    assert spark_lance.jar_path() == str(JARS_DIR / _lines.jar_name(line, VERSION))
    # The same given as arguments (pyspark is then not consulted).
    assert spark_lance.jar_path(pyspark_version, scala) == str(
        JARS_DIR / _lines.jar_name(line, VERSION)
    )


def test_scala_comes_from_spark_home_when_set(monkeypatch, tmp_path):
    fake_pyspark(monkeypatch, tmp_path, "3.5.3", "2.12.18")
    home = tmp_path / "spark-3.5.3-bin-scala2.13"
    (home / "jars").mkdir(parents=True)
    (home / "jars" / "scala-library-2.13.8.jar").write_bytes(b"PK")
    monkeypatch.setenv("SPARK_HOME", str(home))
    assert Path(spark_lance.jar_path()).name == _lines.jar_name("3.5_2.13", VERSION)


def test_unknown_scala_is_explained(monkeypatch, tmp_path):
    home = fake_pyspark(monkeypatch, tmp_path, "3.5.3", None)
    with pytest.raises(spark_lance.UnsupportedSparkError, match="scala-library") as e:
        spark_lance.jar_path()
    assert str(home / "jars") in str(e.value) and spark_lance.JAR_ENV_VAR in str(e.value)
    with pytest.raises(spark_lance.UnsupportedSparkError, match="2.11"):
        spark_lance.jar_path("3.5.3", "2.11.12")


@pytest.mark.parametrize("pyspark_version", ["3.4.3", "4.4.0", "5.0.0", "2.4.8", "banana"])
def test_unsupported_pyspark_is_named(monkeypatch, tmp_path, pyspark_version):
    fake_pyspark(monkeypatch, tmp_path, pyspark_version, "2.13.16")
    with pytest.raises(spark_lance.UnsupportedSparkError) as e:
        spark_lance.jar_path()
    text = str(e.value)
    assert f"pyspark {pyspark_version} " in text and _lines.supported_lines() in text, text
    assert "Spark 3.5 (Scala 2.12 or 2.13)" in text and "Spark 4.0-4.3 (Scala 2.13)" in text, text


def test_jar_env_override_beats_everything(tmp_path, monkeypatch):
    fake_pyspark(monkeypatch, tmp_path, "2.4.8", None)  # unsupported: the override still wins
    fake = tmp_path / "custom.jar"
    fake.write_bytes(b"PK")
    monkeypatch.setenv(spark_lance.JAR_ENV_VAR, str(fake))
    assert spark_lance.jar_path() == str(fake)
    monkeypatch.setenv(spark_lance.JAR_ENV_VAR, str(tmp_path / "missing.jar"))
    with pytest.raises(spark_lance.JarNotFoundError, match="missing.jar"):
        spark_lance.jar_path()


def test_missing_line_jar_is_named(monkeypatch, tmp_path):
    """A package without the jar of the running line names the file it expected."""
    only = tmp_path / "jars"
    only.mkdir()
    shutil.copy(JARS_DIR / _lines.jar_name("4.0_2.13", VERSION), only)
    monkeypatch.setattr(spark_lance._jars, "JARS_DIR", only)
    monkeypatch.delenv(spark_lance.JAR_ENV_VAR, raising=False)
    assert Path(spark_lance.jar_path("4.2.1")).parent == only
    with pytest.raises(spark_lance.JarNotFoundError) as e:
        spark_lance.jar_path("3.5.9", "2.12.18")
    text = str(e.value)
    assert (
        str(only / _lines.jar_name("3.5_2.12", VERSION)) in text
        and _lines.jar_name("4.0_2.13", VERSION) in text
    )


def test_missing_jar_in_source_checkout_explains(tmp_path):
    """Importing from an unbuilt source checkout: its VERSION is the version, and the error
    says to build and install the wheel."""
    checkout = tmp_path / "checkout"
    (checkout / "connector").mkdir(parents=True)
    (checkout / "build.sbt").write_text("// stand-in\n")
    (checkout / "VERSION").write_text("9.9.9\n")
    shutil.copytree(
        JARS_DIR.parent,
        checkout / "python" / "spark_lance",
        ignore=shutil.ignore_patterns("jars", "__pycache__", "VERSION"),
    )
    r = run_python(
        """
        import json, spark_lance
        assert spark_lance.__file__.startswith(%r), spark_lance.__file__
        try:
            spark_lance.jar_path()
        except spark_lance.JarNotFoundError as e:
            print("RESULT " + json.dumps({"version": spark_lance.__version__, "error": str(e)}))
        """
        % str(checkout),
        env_extra={"PYTHONPATH": str(checkout / "python")},
    )
    out = result_of(r)
    assert out["version"] == "9.9.9"
    text = out["error"]
    assert "make wheel" in text and str(checkout) in text, text
    assert f"spark-lance-{running_built_line()}-9.9.9.jar" in text, text
    assert f"pip install {checkout / 'dist' / 'spark_lance-9.9.9-py3-none-any.whl'}" in text, text


def test_missing_jar_outside_checkout(tmp_path):
    shutil.copytree(
        JARS_DIR.parent,
        tmp_path / "site" / "spark_lance",
        ignore=shutil.ignore_patterns("jars", "__pycache__"),
    )
    r = run_python(
        """
        import json, spark_lance
        try:
            spark_lance.jar_path()
        except FileNotFoundError as e:
            print("RESULT " + json.dumps({"version": spark_lance.__version__, "error": str(e)}))
        """,
        env_extra={"PYTHONPATH": str(tmp_path / "site")},
    )
    out = result_of(r)
    assert out["version"] == VERSION  # from the spark_lance/VERSION the build wrote
    assert "Reinstall" in out["error"] and "make wheel" in out["error"], out["error"]


# ---- the build: setup.py ---------------------------------------------------------------------------


def build_wheel(
    tmp_path: Path, version: str, jar_lines
) -> tuple[subprocess.CompletedProcess, Path]:
    """`pip wheel` on a copy of python/ in a stand-in repository whose VERSION is `version`,
    with dummy jars for `jar_lines` in spark_lance/jars/ (no jars directory if None)."""
    repo = tmp_path / "repo"
    shutil.copytree(
        support.REPO_ROOT / "python",
        repo / "python",
        ignore=shutil.ignore_patterns("jars", "build", "dist", "*.egg-info", "__pycache__"),
    )
    (repo / "VERSION").write_text(version + "\n")
    if jar_lines is not None:
        (repo / "python" / "spark_lance" / "jars").mkdir()
        for line in jar_lines:
            (repo / "python" / "spark_lance" / "jars" / _lines.jar_name(line, version)).write_bytes(
                b"PK"
            )
    dist = tmp_path / "dist"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(dist),
            str(repo / "python"),
        ],
        capture_output=True,
        text=True,
        env=clean_env(),
        cwd=str(tmp_path),
        timeout=300,
    )
    return r, dist


@pytest.mark.parametrize("jars", [None, []], ids=["no-jars-dir", "empty-jars-dir"])
def test_build_without_jars_fails_with_the_command(tmp_path, jars):
    r, dist = build_wheel(tmp_path, "7.8.9", jars)
    out = r.stdout + r.stderr
    assert r.returncode != 0 and not list(dist.glob("*.whl")), out
    assert "no connector jars" in out and "make wheel" in out, out
    assert "pip install dist/spark_lance-7.8.9-py3-none-any.whl" in out, out


def test_build_without_one_line_fails_naming_it(tmp_path):
    missing = _lines.BUILT_LINES[1]
    r, dist = build_wheel(tmp_path, "7.8.9", [ln for ln in _lines.BUILT_LINES if ln != missing])
    out = r.stdout + r.stderr
    assert r.returncode != 0 and not list(dist.glob("*.whl")), out
    assert f"missing {_lines.jar_name(missing, '7.8.9')}" in out and "make wheel" in out, out


def test_build_takes_the_version_from_the_version_file(tmp_path):
    r, dist = build_wheel(tmp_path, "7.8.9", _lines.BUILT_LINES)
    assert r.returncode == 0, r.stdout + r.stderr
    wheel = dist / "spark_lance-7.8.9-py3-none-any.whl"
    assert wheel.is_file(), list(dist.iterdir())
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        assert z.read("spark_lance/VERSION").decode().strip() == "7.8.9"
        metadata = z.read("spark_lance-7.8.9.dist-info/METADATA").decode()
    for line in _lines.BUILT_LINES:
        assert f"spark_lance/jars/{_lines.jar_name(line, '7.8.9')}" in names
    extra = next(ln for ln in metadata.splitlines() if ln.startswith("Requires-Dist: pyspark"))
    assert ">=3.5" in extra and "<4.4" in extra and 'extra == "pyspark"' in extra, extra


# ---- configure -------------------------------------------------------------------------------------


class _Builder:
    """Stands in for SparkSession.Builder: records config()."""

    def __init__(self):
        self.options = {}

    def config(self, key, value):
        self.options[key] = value
        return self


#: What configure() adds to spark.sql.extensions.
EXT = {"spark.sql.extensions": spark_lance.EXTENSIONS}


def test_configure_appends_the_jar_to_given_settings(monkeypatch):
    monkeypatch.delenv(_master.GATEWAY_ENV_VAR, raising=False)
    monkeypatch.setattr(_session, "_jvm_defaults", lambda: {})  # as before the first session
    jar = spark_lance.jar_path()
    conf = {"spark.jars": "/opt/other.jar", "spark.driver.extraClassPath": "/opt/cp.jar"}
    b = _Builder()
    assert spark_lance.configure(b, conf) is b  # returns the builder it was given
    assert b.options == {
        "spark.jars": f"/opt/other.jar,{jar}",
        "spark.driver.extraClassPath": f"/opt/cp.jar{os.pathsep}{jar}",
        "spark.sql.catalog.lance": "io.sparklance.spark.LanceCatalog",
        **EXT,
    }
    # The jar given again is not repeated.
    b = spark_lance.configure(_Builder(), {"spark.jars": f"/opt/other.jar,{jar}"})
    assert b.options["spark.jars"] == f"/opt/other.jar,{jar}"


def test_configure_on_a_fresh_builder(monkeypatch):
    monkeypatch.delenv(_master.GATEWAY_ENV_VAR, raising=False)
    monkeypatch.setattr(_session, "_jvm_defaults", lambda: {})  # as before the first session
    b = spark_lance.configure(_Builder())
    assert b.options == {
        "spark.jars": spark_lance.jar_path(),
        "spark.driver.extraClassPath": spark_lance.jar_path(),
        "spark.sql.catalog.lance": "io.sparklance.spark.LanceCatalog",
        **EXT,
    }


def test_configure_does_not_repeat_the_jar_a_running_jvm_reports_as_a_uri(monkeypatch):
    """After a session, Spark reports spark.jars as file: URIs of the paths it was given."""
    monkeypatch.delenv(_master.GATEWAY_ENV_VAR, raising=False)
    jar = spark_lance.jar_path()
    running = {"spark.jars": f"file:///opt/other.jar,{Path(jar).as_uri()}"}
    monkeypatch.setattr(_session, "_jvm_defaults", lambda: running)
    b = spark_lance.configure(_Builder())
    assert b.options["spark.jars"] == running["spark.jars"]
    assert b.options["spark.driver.extraClassPath"] == jar


def test_configure_leaves_spark_submit_alone(monkeypatch):
    """Under spark-submit the driver JVM runs already: its jars come from spark-submit (the
    catalogs, SQL settings, still go on the builder)."""
    monkeypatch.setenv(_master.GATEWAY_ENV_VAR, "12345")
    b = _Builder()
    assert spark_lance.configure(b, {"spark.jars": "/opt/other.jar"}) is b
    assert b.options == {"spark.sql.catalog.lance": "io.sparklance.spark.LanceCatalog", **EXT}


def test_configure_registers_the_lance_catalogs(monkeypatch, tmp_path):
    monkeypatch.setenv(_master.GATEWAY_ENV_VAR, "12345")  # catalogs only
    b = spark_lance.configure(_Builder(), catalog="lc", root=str(tmp_path), session_catalog=True)
    assert b.options == {
        "spark.sql.catalog.lc": "io.sparklance.spark.LanceCatalog",
        "spark.sql.catalog.lc.root": str(tmp_path),
        "spark.sql.catalog.spark_catalog": "io.sparklance.spark.LanceSessionCatalog",
        **EXT,
    }
    assert spark_lance.configure(_Builder(), catalog=None).options == EXT
    assert spark_lance.configure(_Builder(), catalog=None, extensions=False).options == {}
    # A catalog the caller configured is kept; extensions given are kept, the connector's added.
    given = {"spark.sql.catalog.lance": "my.Catalog", "spark.sql.extensions": "a.B"}
    assert spark_lance.configure(_Builder(), given).options == {
        "spark.sql.extensions": f"a.B,{spark_lance.EXTENSIONS}"
    }
    with pytest.raises(ValueError, match="root"):
        spark_lance.configure(_Builder(), catalog=None, root="/x")


def test_the_lance_catalog_is_registered(spark, tmp_path):
    """The session fixture was built with configure(): path identifiers work at once."""
    import lance
    import pyarrow as pa

    lance.write_dataset(pa.table({"id": [1, 2]}), str(tmp_path / "t"))
    assert [
        r.id for r in spark.sql(f"select id from lance.`{tmp_path / 't'}` order by id").collect()
    ] == [1, 2]


def test_configure_makes_lance_resolve(spark):
    """The session fixture was built with configure(): Spark resolves "lance" to a class loaded
    from the packaged jar."""
    jvm = spark._jvm
    cls = jvm.org.apache.spark.sql.execution.datasources.DataSource.lookupDataSource(
        "lance", spark._jsparkSession.sessionState().conf()
    )
    location = cls.getProtectionDomain().getCodeSource().getLocation().toString()
    assert location.endswith(os.path.basename(spark_lance.jar_path())), location
    assert spark_lance.jar_path() in spark.sparkContext.getConf().get("spark.jars")


def test_configure_then_read(spark):
    fx = multi_version_fixture()
    df = spark.read.format("lance").load(str(fx.path))
    assert df.count() == lance.dataset(str(fx.path)).count_rows()


# ---- the master session() uses ---------------------------------------------------------------------


@pytest.fixture
def no_master_env(monkeypatch, tmp_path):
    for var in (_master.GATEWAY_ENV_VAR, "MASTER", "PYSPARK_SUBMIT_ARGS", "SPARK_HOME"):
        monkeypatch.delenv(var, raising=False)
    conf_dir = tmp_path / "conf"
    conf_dir.mkdir()
    monkeypatch.setenv("SPARK_CONF_DIR", str(conf_dir))
    return conf_dir


def test_master_from_conf_spark_submit_and_env(monkeypatch, no_master_env):
    assert _master.master_source({"spark.master": "yarn"}) == "spark.master in conf"
    monkeypatch.setenv("MASTER", "local[3]")
    assert _master.master_source({}) == "$MASTER"
    monkeypatch.setenv(_master.GATEWAY_ENV_VAR, "12345")
    assert "spark-submit" in _master.master_source({})


@pytest.mark.parametrize(
    "args, decides",
    [
        ("--master local[3] pyspark-shell", True),
        ("--master=local[3] pyspark-shell", True),
        ("--conf spark.master=local[3] pyspark-shell", True),
        ("--driver-memory 2g --conf spark.ui.enabled=false pyspark-shell", False),
    ],
)
def test_master_from_pyspark_submit_args(monkeypatch, no_master_env, args, decides):
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", args)
    assert (_master.master_source({}) == "--master in $PYSPARK_SUBMIT_ARGS") is decides


def test_master_from_spark_defaults(no_master_env):
    defaults = no_master_env / "spark-defaults.conf"
    defaults.write_text("# spark.master  yarn\nspark.executor.memory 1g\n")
    assert "spark-defaults" not in str(_master.master_source({}))
    defaults.write_text("spark.master  spark://h:7077\n")
    assert _master.master_source({}) == f"spark.master in {defaults}"


# ---- session (each in a fresh process: a JVM's classpath is fixed when it starts) -------------------


def test_session_in_a_fresh_process():
    fx = multi_version_fixture()
    r = run_python(
        """
        import json, sys, spark_lance
        spark = spark_lance.session(master=None, app_name="sl-test",
                                    conf={"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "3"})
        jvm = spark._jvm
        cls = jvm.org.apache.spark.sql.execution.datasources.DataSource.lookupDataSource(
            "lance", spark._jsparkSession.sessionState().conf())
        out = {
            "master": spark.sparkContext.master,
            "app": spark.sparkContext.appName,
            "shuffle": spark.conf.get("spark.sql.shuffle.partitions"),
            "ui": spark.sparkContext.getConf().get("spark.ui.enabled"),
            "source": cls.getProtectionDomain().getCodeSource().getLocation().toString(),
            "count": spark.read.format("lance").load(%r).count(),
        }
        again = spark_lance.session()  # getOrCreate: the same session
        out["same"] = again is spark
        print("RESULT " + json.dumps(out))
        spark.stop()
        """
        % str(fx.path)
    )
    out = result_of(r)
    assert out["master"] == _master.DEFAULT_MASTER  # nothing else set one
    assert out["app"] == "sl-test"
    assert out["shuffle"] == "3"
    assert out["ui"] == "false"
    assert out["source"].endswith(os.path.basename(spark_lance.jar_path()))
    assert out["count"] == lance.dataset(str(fx.path)).count_rows()
    assert out["same"] is True


def test_session_keeps_the_master_of_the_environment():
    """$MASTER (read by spark-submit, which pyspark runs) decides; session() does not override it."""
    r = run_python(
        """
        import json, spark_lance
        spark = spark_lance.session(conf={"spark.ui.enabled": "false"})
        print("RESULT " + json.dumps({"master": spark.sparkContext.master, "app": spark.sparkContext.appName}))
        spark.stop()
        """,
        env_extra={"MASTER": "local[3]"},
    )
    assert result_of(r) == {"master": "local[3]", "app": "spark-lance"}


def test_session_after_stop():
    """spark.stop() then session() again in the same process: a new session that reads."""
    fx = multi_version_fixture()
    r = run_python(
        """
        import json, spark_lance
        path = %r
        first = spark_lance.session(conf={"spark.ui.enabled": "false"})
        counts = [first.read.format("lance").load(path).count()]
        first.stop()
        second = spark_lance.session(conf={"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "5"})
        counts.append(second.read.format("lance").load(path).count())
        counts.append(spark_lance.read_lance(second, path, version=%d).count())
        print("RESULT " + json.dumps({"counts": counts, "new": second is not first,
                                      "master": second.sparkContext.master,
                                      "shuffle": second.conf.get("spark.sql.shuffle.partitions")}))
        second.stop()
        """
        % (str(fx.path), fx.versions[0])
    )
    out = result_of(r)
    latest = lance.dataset(str(fx.path)).count_rows()
    first_version = lance.dataset(str(fx.path), version=fx.versions[0]).count_rows()
    assert out == {
        "counts": [latest, latest, first_version],
        "new": True,
        "master": _master.DEFAULT_MASTER,
        "shuffle": "5",
    }


def test_session_refuses_a_jvm_started_without_the_jar():
    """A session (running, or stopped: pyspark keeps its JVM) created without the jar: session()
    says why format("lance") cannot work and what to do."""
    r = run_python(
        """
        import json
        from pyspark.sql import SparkSession
        import spark_lance
        plain = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
        errors = []
        for _ in ("running", "stopped"):
            try:
                spark_lance.session()
            except RuntimeError as e:
                errors.append(str(e))
            else:
                errors.append(None)
            SparkSession.builder.getOrCreate().stop()
        print("RESULT " + json.dumps(errors))
        """
    )
    errors = result_of(r)
    for text in errors:
        assert text is not None, "session() accepted a JVM without the connector"
        assert (
            'format("lance") is not available' in text and "restart the Python process" in text
        ), text
        assert "spark_lance.configure(builder)" in text, text


# ---- read_lance / write_lance: what they ask of Spark (no JVM) -----------------------------------


class _Recorder:
    """Stands in for SparkSession.read / DataFrame(.write): records the calls."""

    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        def method(*args, **kwargs):
            self.calls.append((name, args, kwargs))
            return self

        return method


class _FakeSpark:
    def __init__(self):
        self.read = _Recorder()


def test_read_lance_builds_the_reader():
    s = _FakeSpark()
    spark_lance.read_lance(s, "/d/t.lance")
    assert s.read.calls == [("format", ("lance",), {}), ("load", ("/d/t.lance",), {})]

    s = _FakeSpark()
    spark_lance.read_lance(s, Path("/d/t.lance"), version=7, columns=["a", "b"], foo="bar")
    assert s.read.calls == [
        ("format", ("lance",), {}),
        ("option", ("version", "7"), {}),
        ("options", (), {"foo": "bar"}),
        ("load", ("/d/t.lance",), {}),
        ("select", ("a", "b"), {}),
    ]

    s = _FakeSpark()
    spark_lance.read_lance(s, "/d/t.lance", version="prod", columns="a")
    assert ("option", ("version", "prod"), {}) in s.read.calls
    assert s.read.calls[-1] == ("select", ("a",), {})


def test_read_lance_timestamps():
    s = _FakeSpark()
    spark_lance.read_lance(s, "/t", timestamp="2024-01-02T03:04:05Z")
    assert ("option", ("timestamp", "2024-01-02T03:04:05Z"), {}) in s.read.calls

    s = _FakeSpark()
    ny = dt.timezone(dt.timedelta(hours=-5))
    spark_lance.read_lance(s, "/t", timestamp=dt.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=ny))
    assert ("option", ("timestamp", "2024-01-02T08:04:05.000006Z"), {}) in s.read.calls


def test_read_lance_rejects_bad_arguments():
    with pytest.raises(ValueError, match="either version or timestamp"):
        spark_lance.read_lance(_FakeSpark(), "/t", version=1, timestamp="2024-01-01T00:00:00Z")
    with pytest.raises(TypeError):
        spark_lance.read_lance(_FakeSpark(), "/t", version=1.5)
    with pytest.raises(TypeError):
        spark_lance.read_lance(_FakeSpark(), "/t", version=True)
    with pytest.raises(ValueError):
        spark_lance.read_lance(_FakeSpark(), "/t", version=-1)
    with pytest.raises(TypeError):
        spark_lance.read_lance(_FakeSpark(), "/t", timestamp=12345)
    with pytest.raises(ValueError):
        spark_lance.read_lance(_FakeSpark(), "/t", columns=[])


class _FakeDF:
    def __init__(self):
        self.write = _Recorder()


def test_write_lance_builds_the_writer():
    df = _FakeDF()
    spark_lance.write_lance(df, "/out.lance")
    assert df.write.calls == [
        ("format", ("lance",), {}),
        ("mode", ("errorifexists",), {}),
        ("save", ("/out.lance",), {}),
    ]
    df = _FakeDF()
    spark_lance.write_lance(df, Path("/out.lance"), mode="append", max_rows_per_file=10)
    assert df.write.calls == [
        ("format", ("lance",), {}),
        ("mode", ("append",), {}),
        ("options", (), {"max_rows_per_file": 10}),
        ("save", ("/out.lance",), {}),
    ]


# ---- read_lance against pylance ------------------------------------------------------------------


def test_read_lance_versions_tags_and_columns(spark):
    fx = multi_version_fixture()
    path = str(fx.path)
    for v in fx.versions:
        assert (
            spark_lance.read_lance(spark, path, version=v).count()
            == lance.dataset(path, version=v).count_rows()
        )
    for tag in fx.tags:
        assert (
            spark_lance.read_lance(spark, path, version=tag).count()
            == lance.dataset(path, version=tag).count_rows()
        )
    names = lance.dataset(path).schema.names
    cols = [names[-1], names[0]]
    df = spark_lance.read_lance(spark, path, columns=cols)
    assert df.columns == cols
    assert spark_lance.read_lance(spark, path).columns == names


def test_read_lance_timestamp(spark):
    fx = multi_version_fixture()
    path = str(fx.path)
    instants = support.version_instants(lance.dataset(path))
    v = sorted(instants)[0]
    t = instants[v] + dt.timedelta(microseconds=2)  # clear of pylance's float rounding
    expected = lance.dataset(path, asof=support.local_naive(t)).count_rows()
    assert spark_lance.read_lance(spark, path, timestamp=t).count() == expected
    assert spark_lance.read_lance(spark, path, timestamp=support.iso_utc(t)).count() == expected


def test_write_lance_round_trip(spark, tmp_path):
    """Once the connector writes, pylance must read back exactly what was written."""
    out = tmp_path / "written.lance"
    df = spark.createDataFrame([(1, "a"), (2, None), (3, "c")], "id long, s string")
    try:
        spark_lance.write_lance(df, str(out))
    except Exception as e:  # noqa: BLE001
        text = str(e)
        # While the connector cannot write, it either says so ("not implemented yet"), or Spark
        # refuses for lack of write support, or the connector treats the new target as a
        # dataset to read and reports that it does not exist.
        refusals = (
            support.NOT_IMPLEMENTED_MARKER,
            "does not support batch write",
            "does not allow create table as select",
            f"Lance dataset path does not exist: {out}",
        )
        if any(r in text for r in refusals):
            pytest.xfail(f"writing is not implemented yet: {text.splitlines()[0][:300]}")
        raise
    rows = sorted(lance.dataset(str(out)).to_table().to_pylist(), key=lambda r: r["id"])
    assert rows == [{"id": 1, "s": "a"}, {"id": 2, "s": None}, {"id": 3, "s": "c"}]
