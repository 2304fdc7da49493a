"""PySpark helpers for spark-lance, a pure-JVM Spark DataSource V2 for the Lance format.

The installed package carries the connector's self-contained jar for every Spark line it is
built for (3.5 on Scala 2.12 and 2.13; 4.0, serving Spark 4.0-4.3) and picks the one that
matches the installed pyspark, so a session built through :func:`configure` or
:func:`session` can use ``spark.read.format("lance")`` without ``--packages``::

    import spark_lance

    spark = spark_lance.session()                        # local[2] unless a master is set
    df = spark_lance.read_lance(spark, "/data/t.lance")  # == spark.read.format("lance").load(...)
    old = spark_lance.read_lance(spark, "/data/t.lance", version=2, columns=["id"])

Everything here is a thin wrapper: the reading and the errors are the connector's.
"""

from ._conflicts import (
    LanceConcurrentModificationException,
    LanceRetryableConflictException,
)
from ._conflicts import (
    install as _install_conflict_classes,
)
from ._io import read_lance, write_lance
from ._jars import JAR_ENV_VAR, JarNotFoundError, jar_path
from ._lines import UnsupportedSparkError
from ._maintenance import (
    cleanup_old_versions,
    compact_files,
    create_tag,
    delete_tag,
    list_tags,
    register_catalog,
    restore,
    update_tag,
)
from ._session import EXTENSIONS, FORMAT, configure, session
from ._table import LanceTable
from ._vectors import as_vector, distance, nearest, to_ml_vector
from ._version import __version__

__all__ = [
    "EXTENSIONS",
    "FORMAT",
    "JAR_ENV_VAR",
    "JarNotFoundError",
    "LanceConcurrentModificationException",
    "LanceRetryableConflictException",
    "LanceTable",
    "UnsupportedSparkError",
    "__version__",
    "as_vector",
    "cleanup_old_versions",
    "compact_files",
    "configure",
    "create_tag",
    "delete_tag",
    "distance",
    "jar_path",
    "list_tags",
    "nearest",
    "read_lance",
    "register_catalog",
    "restore",
    "session",
    "to_ml_vector",
    "update_tag",
    "write_lance",
]

_install_conflict_classes()
