"""PySpark helpers for spark-lance, a pure-JVM Spark 4.0 DataSource V2 for the Lance format.

The installed package carries the connector's self-contained assembly jar, so a session
built through :func:`configure` or :func:`session` can use ``spark.read.format("lance")``
without ``--packages``::

    import spark_lance

    spark = spark_lance.session()                        # local[2], jar configured
    df = spark_lance.read_lance(spark, "/data/t.lance")  # == spark.read.format("lance").load(...)
    old = spark_lance.read_lance(spark, "/data/t.lance", version=2, columns=["id"])

Everything here is a thin wrapper: the reading and the errors are the connector's.
"""

from __future__ import annotations

import datetime as _dt
import glob
import numbers
import os
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence, Union

if TYPE_CHECKING:  # pyspark is imported lazily: jar_path() works without it
    from pyspark.sql import DataFrame, SparkSession

__version__ = "0.1.0"

#: The short name the connector registers with Spark (``spark.read.format(FORMAT)``).
FORMAT = "lance"

#: Scala binary version of the bundled jar (Spark 4.0 is built for Scala 2.13 only).
SCALA_BINARY_VERSION = "2.13"

#: Environment variable that, when set, overrides the bundled jar (a path to a jar file).
JAR_ENV_VAR = "SPARK_LANCE_JAR"

__all__ = [
    "FORMAT",
    "JAR_ENV_VAR",
    "JarNotFoundError",
    "__version__",
    "configure",
    "jar_path",
    "read_lance",
    "session",
    "write_lance",
]

_JARS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jars")


class JarNotFoundError(FileNotFoundError):
    """The spark-lance connector jar is not where this package expects it."""


def _jar_name(version: str = __version__) -> str:
    return f"spark-lance_{SCALA_BINARY_VERSION}-{version}.jar"


def _source_checkout_root() -> Optional[str]:
    """The repository root if this module is being imported from a source checkout."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if os.path.isfile(os.path.join(root, "build.sbt")) and os.path.isdir(os.path.join(root, "connector")):
        return root
    return None


def jar_path() -> str:
    """Absolute path of the spark-lance connector jar this package uses.

    Resolution order:

    1. ``$SPARK_LANCE_JAR`` if set (it must name an existing file);
    2. the jar bundled in the installed package,
       ``spark_lance/jars/spark-lance_2.13-<version>.jar``.

    Raises :class:`JarNotFoundError` with instructions when there is no jar, for example
    when ``spark_lance`` is imported from a source checkout that has not been built.
    """
    override = os.environ.get(JAR_ENV_VAR)
    if override:
        path = os.path.abspath(os.path.expanduser(override))
        if not os.path.isfile(path):
            raise JarNotFoundError(f"${JAR_ENV_VAR} is set to {override!r}, but there is no file at {path}")
        return path

    expected = os.path.join(_JARS_DIR, _jar_name())
    if os.path.isfile(expected):
        return expected

    others = sorted(glob.glob(os.path.join(_JARS_DIR, f"spark-lance_{SCALA_BINARY_VERSION}-*.jar")))
    if len(others) == 1:
        # A jar of another connector version: usable, but say so if it ever matters.
        return others[0]

    found = f" (found {len(others)} candidate jars: {', '.join(os.path.basename(o) for o in others)})" if others else ""
    msg = f"The spark-lance connector jar is missing: expected {expected}{found}."
    checkout = _source_checkout_root()
    if checkout is not None:
        msg += (
            f" spark_lance is being imported from a source checkout ({checkout}) where the jar has not been"
            f" built: run `make python` in {checkout} (it builds the jar and installs this package with the"
            f" jar into {os.path.join(checkout, '.venv')}), or set ${JAR_ENV_VAR} to a built jar."
        )
    else:
        msg += f" Reinstall the spark-lance package, or set ${JAR_ENV_VAR} to the connector jar."
    raise JarNotFoundError(msg)


def _append(existing: Optional[str], item: str, sep: str) -> str:
    parts = [p for p in (existing or "").split(sep) if p.strip()]
    if item not in parts:
        parts.append(item)
    return sep.join(parts)


def configure(builder: "SparkSession.Builder") -> "SparkSession.Builder":
    """Add the connector jar to a ``SparkSession.Builder`` and return the builder.

    * ``spark.jars`` gets the jar appended (comma-separated; any value already set on the
      builder is kept). Spark ships it to the executors and, in client mode, puts it on the
      driver's classpath.
    * ``spark.driver.extraClassPath`` gets the jar appended (``os.pathsep``-separated), so
      the driver JVM that PySpark launches loads the connector from its system classpath.

    ``spark.executor.extraClassPath`` is not set: it names a path on the executor machines,
    which only exists in local mode; ``spark.jars`` already covers executors everywhere.

    The settings only take effect when the builder starts a new Spark JVM: call this before
    the first ``getOrCreate()`` of the process.
    """
    jar = jar_path()
    options: Mapping[str, Any] = getattr(builder, "_options", {}) or {}
    builder = builder.config("spark.jars", _append(options.get("spark.jars"), jar, ","))
    builder = builder.config(
        "spark.driver.extraClassPath", _append(options.get("spark.driver.extraClassPath"), jar, os.pathsep)
    )
    return builder


def session(
    master: Optional[str] = "local[2]",
    app_name: str = "spark-lance",
    conf: Optional[Mapping[str, Any]] = None,
) -> "SparkSession":
    """Get or create a SparkSession that can read ``format("lance")``.

    :param master: Spark master URL (default ``local[2]``); ``None`` leaves it unset, e.g.
        under ``spark-submit`` where ``--master`` decides.
    :param app_name: the application name.
    :param conf: extra Spark settings as a dict of literal Spark keys, e.g.
        ``{"spark.sql.shuffle.partitions": "4", "spark.ui.enabled": "false"}``.
        ``spark.jars`` / ``spark.driver.extraClassPath`` given here are kept and the
        connector jar is appended.

    Raises ``RuntimeError`` if a SparkSession was already running in this process without
    the connector jar (its JVM cannot load the jar any more: stop it first).
    """
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app_name)
    if master is not None:
        builder = builder.master(master)
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    jar = jar_path()
    spark = configure(builder).getOrCreate()
    jars = spark.sparkContext.getConf().get("spark.jars", "") or ""
    if os.path.basename(jar) not in [os.path.basename(j.strip()) for j in jars.split(",")]:
        raise RuntimeError(
            "A SparkSession was already running in this process without the spark-lance jar "
            f"(spark.jars={jars!r}); stop it (spark.stop()) before calling spark_lance.session(), "
            "or create it through spark_lance.configure(builder)."
        )
    return spark


def _version_option(version: Any) -> str:
    if isinstance(version, bool) or not isinstance(version, (numbers.Integral, str)):
        raise TypeError(f"version must be an int (version number) or a str (tag name), not {type(version).__name__}")
    if isinstance(version, str):
        if not version:
            raise ValueError("version must not be an empty string")
        return version
    if int(version) < 0:
        raise ValueError(f"version must be a non-negative version number, not {version}")
    return str(int(version))


def _timestamp_option(timestamp: Any) -> str:
    if isinstance(timestamp, str):
        if not timestamp:
            raise ValueError("timestamp must not be an empty string")
        return timestamp
    if isinstance(timestamp, _dt.datetime):
        if timestamp.tzinfo is None or timestamp.tzinfo.utcoffset(timestamp) is None:
            # Zone-less: passed as written; the connector reads it in the session time zone.
            return timestamp.isoformat()
        utc = timestamp.astimezone(_dt.timezone.utc).replace(tzinfo=None)
        return utc.isoformat(timespec="microseconds") + "Z"
    raise TypeError(f"timestamp must be an ISO-8601 str or a datetime.datetime, not {type(timestamp).__name__}")


def read_lance(
    spark: "SparkSession",
    path: str,
    version: Union[int, str, None] = None,
    columns: Union[str, Sequence[str], None] = None,
    timestamp: Union[str, _dt.datetime, None] = None,
    **options: Any,
) -> "DataFrame":
    """Read a Lance dataset: ``spark.read.format("lance").options(...).load(path)``.

    :param version: an ``int`` reads that version number; a ``str`` reads the version a tag
        points at. Both go to the connector's ``version`` option (which, like pylance's
        ``version=``, reads an all-digits string as a number: for a tag named ``"3"`` pass
        ``tag="3"``, which goes to the connector's ``tag`` option).
    :param columns: column name(s) to select (a projection, pushed down by Spark).
    :param timestamp: read the newest version committed at or before this instant (the
        ``timestamp`` option). A ``str`` is passed as written (anything Spark's
        ``CAST(... AS TIMESTAMP)`` accepts, e.g. ``2025-06-01T12:00:00Z``); a tz-aware
        ``datetime`` is converted to UTC (``...Z``); a naive one is passed without a zone, so
        the connector reads it in the session time zone (``spark.sql.session.timeZone``).
        Mutually exclusive with ``version``.
    :param options: any other connector options (``tag``, ``metadata_table``, ``batch_size``,
        ...), passed as they are.
    """
    if version is not None and timestamp is not None:
        raise ValueError("give either version or timestamp, not both")
    for name in ("version", "timestamp"):
        if name in options:
            raise TypeError(f"pass {name} as the {name}= argument, not as an extra option")
    reader = spark.read.format(FORMAT)
    if version is not None:
        reader = reader.option("version", _version_option(version))
    if timestamp is not None:
        reader = reader.option("timestamp", _timestamp_option(timestamp))
    if options:
        reader = reader.options(**options)
    df = reader.load(os.fspath(path))
    if columns is not None:
        cols = [columns] if isinstance(columns, str) else list(columns)
        if not cols:
            raise ValueError("columns must name at least one column")
        df = df.select(*cols)
    return df


def write_lance(df: "DataFrame", path: str, mode: str = "errorifexists", **options: Any) -> None:
    """Write a DataFrame as a Lance dataset: ``df.write.format("lance").mode(mode).save(path)``.

    :param mode: Spark save mode: ``errorifexists`` (default), ``append``, ``overwrite``
        or ``ignore``.
    :param options: connector write options, passed as they are.
    """
    writer = df.write.format(FORMAT).mode(mode)
    if options:
        writer = writer.options(**options)
    writer.save(os.fspath(path))
