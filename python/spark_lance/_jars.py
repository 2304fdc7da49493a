"""Which connector jar this process uses.

``$SPARK_LANCE_JAR`` if set; else the bundled jar of the built line that serves the installed
pyspark: pyspark 3.5.x -> ``spark-lance-3.5_<scala>`` (Scala read from the Spark
distribution's ``scala-library-*.jar``), pyspark 4.0-4.3 -> ``spark-lance-4.0_2.13``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import List, Optional

from ._lines import UnsupportedSparkError, built_line, jar_name, needs_scala, supported_lines
from ._version import __version__

#: Environment variable that, when set, overrides the bundled jar (a path to a jar file).
JAR_ENV_VAR = "SPARK_LANCE_JAR"

#: Where the wheel carries the jar of every built line.
JARS_DIR = Path(__file__).resolve().parent / "jars"


class JarNotFoundError(FileNotFoundError):
    """The spark-lance connector jar is not where this package expects it."""


def installed_pyspark():
    """The importable ``pyspark`` module (raises :class:`UnsupportedSparkError` without one)."""
    try:
        import pyspark
    except ImportError as e:
        raise UnsupportedSparkError(
            f"pyspark is not installed: spark-lance needs one of {supported_lines()}. Install pyspark,"
            f" pass pyspark_version= to jar_path(), or set ${JAR_ENV_VAR} to a connector jar."
        ) from e
    return pyspark


def spark_jars_dirs(pyspark_module=None) -> List[Path]:
    """The jars directory of the Spark that pyspark launches: ``$SPARK_HOME/jars`` when
    ``SPARK_HOME`` is set (pyspark then runs that Spark), else pyspark's own ``jars``."""
    home = os.environ.get("SPARK_HOME")
    if home:
        home_path = Path(home).expanduser()
        return [home_path / "jars", *sorted(home_path.glob("assembly/target/scala-*/jars"))]
    module = pyspark_module or installed_pyspark()
    return [Path(module.__file__).resolve().parent / "jars"]


def scala_binary_of(jars_dirs: List[Path]) -> str:
    """The Scala version (``2.12.18``) of the ``scala-library-*.jar`` in the first directory
    that has one; raises :class:`UnsupportedSparkError` naming the directories otherwise."""
    for d in jars_dirs:
        found = sorted(
            {
                m.group(1)
                for p in d.glob("scala-library-*.jar")
                if (m := re.fullmatch(r"scala-library-(\d+\.\d+(?:\.\d+)?).*\.jar", p.name))
            }
        )
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            raise UnsupportedSparkError(f"several Scala versions in {d}: {', '.join(found)}")
    where = ", ".join(str(d) for d in jars_dirs)
    raise UnsupportedSparkError(
        f"cannot tell which Scala version this Spark runs on: no scala-library-*.jar in {where}."
        f" Set ${JAR_ENV_VAR} to the connector jar built for it, or pass scala_version= to jar_path()."
    )


def bundled_jars() -> List[Path]:
    return sorted(JARS_DIR.glob("*.jar")) if JARS_DIR.is_dir() else []


def _source_checkout_root() -> Optional[Path]:
    """The repository root if this package is imported from a source checkout."""
    root = JARS_DIR.parent.parent.parent
    if (root / "build.sbt").is_file() and (root / "connector").is_dir():
        return root
    return None


def _missing_jar(expected: Path, line: str, spark: str) -> JarNotFoundError:
    found = [p.name for p in bundled_jars()]
    msg = (
        f"The spark-lance connector jar for Spark {spark} ({line}) is missing: expected {expected}"
        f" ({'found: ' + ', '.join(found) if found else 'no jar in ' + str(JARS_DIR)})."
    )
    checkout = _source_checkout_root()
    wheel = f"dist/spark_lance-{__version__}-py3-none-any.whl"
    if checkout is not None:
        msg += (
            f" spark_lance is imported from a source checkout ({checkout}) that carries no jars: build"
            f" the wheel there with `make wheel` and install it (`pip install {checkout / wheel}`;"
            f" `make python` does both for {checkout / '.venv'}), or set ${JAR_ENV_VAR} to a built jar."
        )
    else:
        msg += (
            f" Reinstall spark-lance from a wheel that carries every line's jar (`make wheel` in the"
            f" repository, then `pip install {wheel}`), or set ${JAR_ENV_VAR} to the connector jar."
        )
    return JarNotFoundError(msg)


def jar_path(pyspark_version: Optional[str] = None, scala_version: Optional[str] = None) -> str:
    """Absolute path of the spark-lance connector jar for this process's Spark.

    1. ``$SPARK_LANCE_JAR`` if set (it must name an existing file), whatever the Spark;
    2. else the bundled ``spark_lance/jars/spark-lance-<line>_<scala>-<version>.jar`` serving
       ``pyspark_version`` (default: the installed pyspark's) on ``scala_version`` (default:
       the Scala of the Spark pyspark runs, for the 3.5 line, built for 2.12 and 2.13).

    Raises :class:`UnsupportedSparkError` for a pyspark no jar serves, and
    :class:`JarNotFoundError` (a ``FileNotFoundError``) when the jar is missing.
    """
    override = os.environ.get(JAR_ENV_VAR)
    if override:
        path = Path(override).expanduser().resolve()
        if not path.is_file():
            raise JarNotFoundError(
                f"${JAR_ENV_VAR} is set to {override!r}, but there is no file at {path}"
            )
        return str(path)

    module = None
    if pyspark_version is None:
        module = installed_pyspark()
        pyspark_version = module.__version__
    if scala_version is None and needs_scala(pyspark_version):
        scala_version = scala_binary_of(spark_jars_dirs(module))
    line = built_line(pyspark_version, scala_version)
    expected = JARS_DIR / jar_name(line, __version__)
    if not expected.is_file():
        raise _missing_jar(expected, line, pyspark_version)
    return str(expected)
