"""Clean virtualenvs for the package tests: each holds one pyspark (and py4j, which it needs)
plus the spark_lance wheel from dist/, nothing else, so a test run in one shows what a user
who does `pip install pyspark==X dist/spark_lance-*.whl` gets.

They live under .venv-wheel/<pytest-xdist worker>/<pyspark version>/ in the repository and are reused across runs
while their pyspark is the one asked for (creating one takes ~15 s with pip's cache warm, far
longer the first time: pyspark is a ~300 MB download); the wheel is reinstalled once per run.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import support

# One set per pytest-xdist worker: a venv is rebuilt in place, and another worker may be
# running a script in its twin meanwhile.
VENVS = support.REPO_ROOT / ".venv-wheel" / os.environ.get("PYTEST_XDIST_WORKER", "main")
VERSION = (support.REPO_ROOT / "VERSION").read_text().strip()
WHEEL = support.REPO_ROOT / "dist" / f"spark_lance-{VERSION}-py3-none-any.whl"

#: pyspark versions to test besides the running one, e.g. "3.5.9 4.0.1 4.1.4 4.2.1 4.3.0".
LINES_ENV_VAR = "SPARK_LANCE_WHEEL_LINES"
#: The pyspark 3.5 release the wrong-line test runs.
PYSPARK_35 = "3.5.9"
#: What a clean venv may hold (pip list names).
ALLOWED = {"pip", "setuptools", "wheel", "pyspark", "py4j", "spark-lance", "spark_lance"}
#: Environment variables that would steer pyspark or spark_lance in the child processes.
STEERING = (
    "SPARK_LANCE_JAR",
    "SPARK_HOME",
    "SPARK_CONF_DIR",
    "MASTER",
    "PYSPARK_SUBMIT_ARGS",
    "PYSPARK_GATEWAY_PORT",
    "PYSPARK_PYTHON",
    "PYSPARK_DRIVER_PYTHON",
    "PYTHONPATH",
    "PYTHONHOME",
)


def running_pyspark() -> str:
    import pyspark

    return pyspark.__version__


def wheel_lines() -> list:
    """The running pyspark, then those named by $SPARK_LANCE_WHEEL_LINES (no repeats)."""
    out = [running_pyspark()]
    for v in os.environ.get(LINES_ENV_VAR, "").split():
        if v not in out:
            out.append(v)
    return out


def wheel() -> Path:
    if not WHEEL.is_file():
        pytest.fail(
            f"{WHEEL} is missing: build it in {support.REPO_ROOT} with `make wheel` (it builds the jars first)",
            pytrace=False,
        )
    return WHEEL


def _run(cmd, **kw) -> subprocess.CompletedProcess:
    r = subprocess.run(
        [str(c) for c in cmd], capture_output=True, text=True, env=child_env(), timeout=1800, **kw
    )
    if r.returncode != 0:
        pytest.fail(
            f"{' '.join(map(str, cmd))}\nexit {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}",
            pytrace=False,
        )
    return r


def child_env(extra: dict | None = None) -> dict:
    env = {
        k: v for k, v in os.environ.items() if k not in STEERING and not k.startswith("VIRTUAL_ENV")
    }
    env.update(extra or {})
    return env


def installed(python: Path) -> dict:
    """name -> version of every distribution in the venv of `python`."""
    r = _run([python, "-m", "pip", "list", "--format=json", "--disable-pip-version-check"])
    return {d["name"].lower(): d["version"] for d in json.loads(r.stdout)}


@functools.lru_cache(maxsize=None)
def venv_python(pyspark_version: str) -> Path:
    """The python of a clean venv with pyspark `pyspark_version` and the current wheel."""
    home = VENVS / pyspark_version
    python = home / "bin" / "python"
    if not (python.exists() and installed(python).get("pyspark") == pyspark_version):
        shutil.rmtree(home, ignore_errors=True)
        _run([sys.executable, "-m", "venv", home])
        _run(
            [
                python,
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-compile",  # no bytecode up front: the same files, less CPU
                f"pyspark=={pyspark_version}",
            ]
        )
    _run(
        [
            python,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-compile",
            "--no-deps",
            "--force-reinstall",
            wheel(),
        ]
    )
    have = installed(python)
    extra = sorted(set(have) - ALLOWED)
    assert not extra, f"{home} is not clean: it also holds {extra}"
    assert have.get("pyspark") == pyspark_version and have.get("spark-lance") == VERSION, have
    return python


def site_packages(python: Path) -> Path:
    r = _run([python, "-I", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
    return Path(r.stdout.strip())


def scala_of(python: Path) -> str:
    """The full Scala version of the Spark that `python`'s pyspark runs (its scala-library jar)."""
    jars = sorted((site_packages(python) / "pyspark" / "jars").glob("scala-library-*.jar"))
    assert len(jars) == 1, jars
    return jars[0].name[len("scala-library-") : -len(".jar")]


def run_script(
    python: Path, script: str, args: dict, tmp_path: Path, env: dict | None = None
) -> dict:
    """Run tests/package/<script> isolated (-I: no script dir, no user site, no PYTHON* vars)
    with `args` as a JSON file; return the JSON it wrote."""
    args = dict(args, out=str(tmp_path / "out.json"))
    args_file = tmp_path / "args.json"
    args_file.write_text(json.dumps(args))
    r = subprocess.run(
        [str(python), "-I", str(Path(__file__).parent / script), str(args_file)],
        capture_output=True,
        text=True,
        env=child_env(dict(env or {}, PYSPARK_PYTHON=str(python))),
        cwd=str(tmp_path),
        timeout=600,
    )
    out = Path(args["out"])
    assert r.returncode == 0 and out.is_file(), (
        f"{python} {script}: exit {r.returncode}\nstdout:\n{r.stdout[-4000:]}\nstderr:\n{r.stderr[-6000:]}"
    )
    return json.loads(out.read_text())
