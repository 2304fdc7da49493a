"""Sessions that can read ``format("lance")``: :func:`configure` and :func:`session`."""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any, Dict, Mapping, Optional

from ._jars import jar_path
from ._lines import artifact
from ._master import DEFAULT_MASTER, launched_by_spark_submit, master_source
from ._version import __version__

if TYPE_CHECKING:  # pyspark is imported lazily
    from pyspark.sql import SparkSession

#: The short name the connector registers with Spark (``spark.read.format(FORMAT)``).
FORMAT = "lance"

#: The settings configure() appends the jar to, with their separators.
JAR_SETTINGS = (("spark.jars", ","), ("spark.driver.extraClassPath", os.pathsep))

DEFAULT_APP_NAME = "spark-lance"

#: The connector's SQL additions (the ``lance_nearest`` table function), which configure()
#: appends to ``spark.sql.extensions``.
EXTENSIONS = "io.sparklance.spark.LanceSparkSessionExtensions"


def _same_file_key(entry: str) -> str:
    """What makes two entries name the same file: Spark reports ``spark.jars`` entries as
    ``file:`` URIs (``file:///a/b.jar``) of the plain paths it was given (``/a/b.jar``)."""
    entry = entry.strip()
    if entry.startswith("file:"):
        from urllib.parse import unquote, urlparse

        entry = unquote(urlparse(entry).path)
    return os.path.normpath(entry)


def _append(existing: Optional[str], *items: Optional[str], sep: str) -> str:
    parts, seen = [], set()
    for value in (existing, *items):
        for p in (value or "").split(sep):
            key = _same_file_key(p) if p.strip() else None
            if key and key not in seen:
                seen.add(key)
                parts.append(p.strip())
    return sep.join(parts)


def _jvm_defaults() -> Dict[str, str]:
    """The jar settings a new SparkContext would inherit: ``SparkConf()`` reads the JVM's
    ``spark.*`` system properties when this process already runs a JVM (e.g. after
    ``spark.stop()``), and is empty before the first session."""
    from pyspark import SparkConf

    defaults = SparkConf()
    return {key: defaults.get(key) for key, _ in JAR_SETTINGS if defaults.get(key)}


def configure(
    builder: "SparkSession.Builder",
    conf: Optional[Mapping[str, Any]] = None,
    *,
    catalog: Optional[str] = "lance",
    root: Optional[str] = None,
    session_catalog: bool = False,
    extensions: bool = True,
) -> "SparkSession.Builder":
    """Add the connector jar to a ``SparkSession.Builder`` and return the builder.

    Also registers the Lance catalog (``io.sparklance.spark.LanceCatalog``) as ``catalog``
    (default ``lance``: ``SELECT * FROM lance.`/path` ``; ``None`` registers none), rooted at
    ``root`` (any Hadoop URI; its tables are pylance's directory namespace), and with
    ``session_catalog=True`` ``io.sparklance.spark.LanceSessionCatalog`` as Spark's built-in
    catalog (``CREATE TABLE t USING lance``). A catalog already set in ``conf`` is kept.
    With ``extensions`` (default), appends the connector's SQL additions (:data:`EXTENSIONS`:
    the ``lance_nearest`` table function, and an optimizer rule that reads only the columns an
    EXISTS subquery's join uses) to ``spark.sql.extensions`` as given in ``conf``.

    Sets ``spark.jars`` (Spark ships it to the executors) and ``spark.driver.extraClassPath``
    (the driver JVM that PySpark launches loads the connector from its classpath) to the
    values in ``conf`` (then those of a JVM this process already runs) with the connector
    jar appended. pyspark cannot tell what was set on the builder before, so give your own
    ``spark.jars`` / ``spark.driver.extraClassPath`` in ``conf`` (or ``session(conf=...)``),
    not on the builder: a value set there is replaced.

    Only a new driver JVM takes the classpath: call this before the process's first
    ``getOrCreate()``. Under spark-submit the driver JVM already runs, so the builder is
    returned unchanged: give the jar to spark-submit (``--jars``, ``--packages``).
    """
    given = dict(conf or {})
    builder = _catalogs(builder, given, catalog, root, session_catalog)
    if extensions:
        builder = builder.config(
            "spark.sql.extensions", _append(given.get("spark.sql.extensions"), EXTENSIONS, sep=",")
        )
    if launched_by_spark_submit():
        return builder
    jar = jar_path()
    running = _jvm_defaults()
    for key, sep in JAR_SETTINGS:
        builder = builder.config(key, _append(given.get(key), running.get(key), jar, sep=sep))
    return builder


def _catalogs(
    builder: "SparkSession.Builder",
    given: Mapping[str, Any],
    catalog: Optional[str],
    root: Optional[str],
    session_catalog: bool,
) -> "SparkSession.Builder":
    """The Lance catalogs ``configure`` registers, unless ``given`` sets them already."""
    if catalog is not None:
        key = f"spark.sql.catalog.{catalog}"
        if key not in given:
            builder = builder.config(key, "io.sparklance.spark.LanceCatalog")
            if root is not None:
                builder = builder.config(f"{key}.root", str(root))
    elif root is not None:
        raise ValueError("root is the Lance catalog's; give a catalog name with it")
    if session_catalog and "spark.sql.catalog.spark_catalog" not in given:
        builder = builder.config(
            "spark.sql.catalog.spark_catalog", "io.sparklance.spark.LanceSessionCatalog"
        )
    return builder


def session(
    master: Optional[str] = None,
    app_name: Optional[str] = None,
    conf: Optional[Mapping[str, Any]] = None,
    *,
    catalog: Optional[str] = "lance",
    root: Optional[str] = None,
    session_catalog: bool = False,
    extensions: bool = True,
) -> "SparkSession":
    """Get or create a SparkSession that can read ``format("lance")``.

    :param master: the Spark master URL. ``None`` (default) keeps the master that is already
        decided (spark-submit's ``--master``, ``spark.master`` in ``conf`` or
        spark-defaults.conf, ``$MASTER``, a running session) and uses ``local[2]`` otherwise.
    :param app_name: the application name; ``None`` keeps spark-submit's (or
        ``spark.app.name`` in ``conf``), else ``spark-lance``.
    :param conf: extra Spark settings as a dict of literal Spark keys, e.g.
        ``{"spark.sql.shuffle.partitions": "4"}``. ``spark.jars`` /
        ``spark.driver.extraClassPath`` given here are kept and the connector jar is appended.
    :param catalog, root, session_catalog: the Lance catalogs to register (see
        :func:`configure`).
    :param extensions: whether to add the connector's SQL additions (see :func:`configure`).

    Raises ``RuntimeError`` if ``format("lance")`` does not work in the session: its JVM was
    started without the jar (an earlier session of this process, even if stopped since, or
    spark-submit without ``--jars``), or the jar is built for another Spark line.
    """
    from pyspark.sql import SparkSession

    conf = dict(conf or {})
    builder = SparkSession.builder
    if master is None and master_source(conf) is None:
        master = DEFAULT_MASTER
    if master is not None:
        builder = builder.master(master)
    if app_name is None and "spark.app.name" not in conf and not launched_by_spark_submit():
        app_name = DEFAULT_APP_NAME
    if app_name is not None:
        builder = builder.appName(app_name)
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = configure(
        builder,
        conf,
        catalog=catalog,
        root=root,
        session_catalog=session_catalog,
        extensions=extensions,
    ).getOrCreate()
    problem = connector_problem(spark)
    if problem is not None:
        raise RuntimeError(problem)
    return spark


def _is_not_found(text: str) -> bool:
    """Spark's error for a format no jar on the classpath registers."""
    return (
        "DATA_SOURCE_NOT_FOUND" in text
        or re.search(r"Failed to find (the )?data source: lance\b", text) is not None
    )


def connector_problem(spark: "SparkSession") -> Optional[str]:
    """Why ``format("lance")`` does not work in ``spark``, or ``None`` if it does.

    Asks Spark itself: a read with no path makes Spark look the connector up and the
    connector check that it is built for this Spark, then refuse the missing path."""
    try:
        spark.read.format(FORMAT).load()
    except Exception as e:  # noqa: BLE001 - classified below
        text = str(e)
    else:
        return None
    for line in text.splitlines():
        if "This spark-lance jar (" in line:
            return "spark_lance: " + line[line.index("This spark-lance jar (") :].strip()
    if not _is_not_found(text):
        return None  # the connector answered (it wants a path)
    if launched_by_spark_submit():
        return _not_loaded_under_spark_submit(
            spark.sparkContext.getConf().get("spark.jars", "") or ""
        )
    return (
        'spark_lance: format("lance") is not available in this SparkSession: the Spark JVM of this process'
        " was started without the spark-lance jar on its classpath, and a running JVM cannot add it."
        " This happens when an earlier SparkSession of this process (even one stopped since: pyspark keeps"
        " its JVM) was created without spark_lance.configure(builder). Create the process's first session"
        " with spark_lance.session() or spark_lance.configure(builder) (restart the Python process or"
        " kernel)."
    )


def _not_loaded_under_spark_submit(jars: str) -> str:
    try:
        jar = jar_path()
    except Exception as e:  # noqa: BLE001 - only to improve the message
        hint = f"--jars <the spark-lance jar> (spark_lance.jar_path() fails here: {e})"
    else:
        hint = f"--jars {jar}"
        m = re.fullmatch(
            r"spark-lance-(.+)-" + re.escape(__version__) + r"\.jar", os.path.basename(jar)
        )
        if m:
            hint += f" or --packages io.sparklance:{artifact(m.group(1))}:{__version__}"
    return (
        f'spark_lance: format("lance") is not available: this Python process was started by spark-submit,'
        f" whose driver JVM runs without the spark-lance jar (spark.jars={jars!r}), and a running JVM"
        f" cannot add it. Give the jar to spark-submit: {hint}."
    )
