"""Build script of the spark-lance Python package (the metadata is in pyproject.toml).

* The version is the repository's ``VERSION`` file (``../VERSION``); the build writes it into
  the package as ``spark_lance/VERSION``, which ``spark_lance.__version__`` reads.
* The package must carry the connector jar of every built line in ``spark_lance/jars/``
  (``make wheel`` in the repository root builds them and copies them there). Without them the
  build fails, naming the command, instead of installing a package that cannot work.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent
VERSION_FILE = REPO_ROOT / "VERSION"
JARS_DIR = HERE / "spark_lance" / "jars"


def _load_lines():
    """spark_lance/_lines.py (the built lines, jar names), loaded without importing the package."""
    spec = importlib.util.spec_from_file_location(
        "_spark_lance_lines", HERE / "spark_lance" / "_lines.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read_version() -> str:
    if not VERSION_FILE.is_file():
        raise SystemExit(
            f"spark-lance: {VERSION_FILE} is missing: build this package from a clone of the spark-lance"
            " repository (`make wheel` in its root)."
        )
    version = VERSION_FILE.read_text().strip()
    if not version:
        raise SystemExit(f"spark-lance: {VERSION_FILE} is empty")
    return version


def check_jars(version: str) -> None:
    """Fail unless spark_lance/jars/ holds exactly the jar of every built line."""
    lines = _load_lines()
    expected = [lines.jar_name(line, version) for line in lines.BUILT_LINES]
    present = sorted(p.name for p in JARS_DIR.glob("*.jar")) if JARS_DIR.is_dir() else []
    missing = [n for n in expected if n not in present]
    unexpected = [n for n in present if n not in expected]
    if not missing and not unexpected:
        return
    if not present:
        problem = f"there are no connector jars in {JARS_DIR}"
    else:
        problem = f"{JARS_DIR} does not hold the jar of every Spark line"
        if missing:
            problem += f": missing {', '.join(missing)}"
        if unexpected:
            problem += (
                f"{';' if missing else ':'} not of this version or line: {', '.join(unexpected)}"
            )
    raise SystemExit(
        f"spark-lance {version}: {problem}. The package carries the connector jar of every Spark line"
        f" ({', '.join(lines.BUILT_LINES)}), which the Scala build makes. Build them and the wheel in the"
        f" repository root ({REPO_ROOT}):\n\n"
        f"    make wheel\n"
        f"    pip install dist/spark_lance-{version}-py3-none-any.whl\n"
    )


class BuildPy(build_py):
    """build_py that refuses to build without the jars and writes spark_lance/VERSION."""

    def run(self):
        check_jars(VERSION)
        super().run()
        target = Path(self.build_lib) / "spark_lance" / "VERSION"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(VERSION + "\n")


VERSION = read_version()

setup(version=VERSION, cmdclass={"build_py": BuildPy})
