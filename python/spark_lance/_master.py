"""Whether something other than ``spark_lance.session()`` already decides the Spark master.

``session()`` uses ``local[2]`` only when nothing does: not ``spark-submit`` (``--master``),
not a running session, not ``spark.master`` in its ``conf``, ``$MASTER`` (read by
spark-submit), ``--master`` in ``$PYSPARK_SUBMIT_ARGS`` or ``spark.master`` in
``spark-defaults.conf``.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path
from typing import Any, List, Mapping, Optional

#: The master ``session()`` uses when nothing else sets one.
DEFAULT_MASTER = "local[2]"

#: Set by spark-submit (PythonRunner) for the Python process it starts: its JVM is running.
GATEWAY_ENV_VAR = "PYSPARK_GATEWAY_PORT"


def launched_by_spark_submit() -> bool:
    """True in a Python process started by spark-submit: the driver JVM runs already, with
    the classpath and master spark-submit gave it."""
    return GATEWAY_ENV_VAR in os.environ


def _submit_args_master(args: str) -> bool:
    try:
        words = shlex.split(args)
    except ValueError:
        words = args.split()
    for i, w in enumerate(words):
        if w == "--master" or w.startswith("--master="):
            return True
        if (
            w == "--conf"
            and i + 1 < len(words)
            and words[i + 1].split("=", 1)[0].strip() == "spark.master"
        ):
            return True
        if w.startswith("--conf=spark.master="):
            return True
    return False


def _defaults_files() -> List[Path]:
    """The spark-defaults.conf spark-submit reads (``$SPARK_CONF_DIR``, else ``$SPARK_HOME/conf``)."""
    if os.environ.get("SPARK_CONF_DIR"):
        return [Path(os.environ["SPARK_CONF_DIR"]) / "spark-defaults.conf"]
    if os.environ.get("SPARK_HOME"):
        return [Path(os.environ["SPARK_HOME"]) / "conf" / "spark-defaults.conf"]
    try:
        import pyspark  # a pip-installed pyspark is its own SPARK_HOME
    except ImportError:
        return []
    return [Path(pyspark.__file__).resolve().parent / "conf" / "spark-defaults.conf"]


def _defaults_file_master(path: Path) -> bool:
    try:
        text = path.read_text()
    except OSError:
        return False
    return any(re.match(r"\s*spark\.master(\s|=|:)", line) for line in text.splitlines())


def master_source(conf: Optional[Mapping[str, Any]] = None) -> Optional[str]:
    """What already decides the master (a short description), or ``None`` if nothing does."""
    if conf and "spark.master" in conf:
        return "spark.master in conf"
    if launched_by_spark_submit():
        return f"spark-submit (${GATEWAY_ENV_VAR} is set)"
    if os.environ.get("MASTER"):
        return "$MASTER"
    if _submit_args_master(os.environ.get("PYSPARK_SUBMIT_ARGS", "")):
        return "--master in $PYSPARK_SUBMIT_ARGS"
    for f in _defaults_files():
        if _defaults_file_master(f):
            return f"spark.master in {f}"
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        return None
    if SparkSession.getActiveSession() is not None:
        return "the running SparkSession"
    return None
