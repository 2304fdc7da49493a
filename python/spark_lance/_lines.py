"""The Spark lines spark-lance is built for, and which built jar serves a given Spark.

A *built line* is ``<spark line>_<scala binary>`` (e.g. ``3.5_2.12``); its jar is
``spark-lance-<built line>-<version>.jar``. The 4.0 build serves every Spark 4.x up to 4.3.

This module imports nothing from the package (nor pyspark): ``setup.py`` loads it by path.
"""

from __future__ import annotations

import re
from typing import Optional

#: Every built line; the wheel carries the jar of each (the Makefile's BUILT_LINES).
BUILT_LINES = ("3.5_2.12", "3.5_2.13", "4.0_2.13")

#: Spark ``major.minor`` -> the Spark line of the jar that serves it.
SERVED_BY = {"3.5": "3.5", "4.0": "4.0", "4.1": "4.0", "4.2": "4.0", "4.3": "4.0"}


class UnsupportedSparkError(RuntimeError):
    """The installed pyspark (or its Scala version) is not one spark-lance is built for."""


def jar_name(built_line: str, version: str) -> str:
    """``spark-lance-<built line>-<version>.jar``, the name of a built line's jar."""
    return f"spark-lance-{built_line}-{version}.jar"


def artifact(built_line: str) -> str:
    """The Maven artifact id of a built line, e.g. ``spark-lance-4.0_2.13``."""
    return f"spark-lance-{built_line}"


def scala_binaries(spark_line: str) -> tuple:
    """The Scala binary versions a Spark line is built for, e.g. ``("2.12", "2.13")`` for 3.5."""
    return tuple(b.split("_")[1] for b in BUILT_LINES if b.split("_")[0] == spark_line)


def supported_lines() -> str:
    """Human-readable list of what is supported, for error messages."""
    by_line: dict = {}
    for minor, line in SERVED_BY.items():
        by_line.setdefault(line, []).append(minor)
    parts = []
    for line, minors in by_line.items():
        spark = minors[0] if len(minors) == 1 else f"{minors[0]}-{minors[-1]}"
        parts.append(f"Spark {spark} (Scala {' or '.join(scala_binaries(line))})")
    return ", ".join(parts)


def major_minor(version: str) -> Optional[str]:
    """``"3.5.9"`` -> ``"3.5"``, ``"4.1.0.dev1"`` -> ``"4.1"``; ``None`` if unparsable."""
    m = re.match(r"\s*(\d+)\.(\d+)", version or "")
    return f"{int(m.group(1))}.{int(m.group(2))}" if m else None


def needs_scala(spark_version: str) -> bool:
    """True if the Spark line of ``spark_version`` is built for more than one Scala version."""
    line = SERVED_BY.get(major_minor(spark_version) or "")
    return line is not None and len(scala_binaries(line)) > 1


def built_line(spark_version: str, scala_binary: Optional[str] = None) -> str:
    """The built line whose jar serves Spark ``spark_version`` on Scala ``scala_binary``.

    ``scala_binary`` (``"2.12"``, ``"2.13"``, or a full ``"2.12.18"``) may be omitted for a
    line built for one Scala version only. Raises :class:`UnsupportedSparkError`.
    """
    minor = major_minor(spark_version)
    line = SERVED_BY.get(minor or "")
    if line is None:
        raise UnsupportedSparkError(
            f"pyspark {spark_version} is not supported by spark-lance: it is built for {supported_lines()}."
        )
    scalas = scala_binaries(line)
    if scala_binary is None:
        if len(scalas) > 1:
            raise UnsupportedSparkError(
                f"Spark {spark_version}: spark-lance has a jar for each Scala version ({', '.join(scalas)});"
                " the Scala version of this Spark is needed to pick one."
            )
        return f"{line}_{scalas[0]}"
    scala = major_minor(scala_binary)
    if scala not in scalas:
        raise UnsupportedSparkError(
            f"pyspark {spark_version} runs on Scala {scala_binary}, but spark-lance's jar for Spark {minor} is"
            f" built for Scala {' or '.join(scalas)} only (it is built for {supported_lines()})."
        )
    return f"{line}_{scala}"
