"""Vector columns as LanceDB and pylance index and search them, and exact nearest-neighbour
search in Spark: :func:`as_vector` and :func:`nearest`."""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any, Dict, Optional, Sequence, Union

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

#: The field-metadata key lance-spark documents for vector columns; the connector honours it.
FIXED_SIZE_LIST_KEY = "arrow.fixed-size-list.size"

_ITEM_TYPES = {"float32": "float", "float": "float", "float64": "double", "double": "double"}

#: pylance's distances: squared L2, 1 - cosine similarity, 1 - dot product.
METRICS = ("l2", "cosine", "dot")


def as_vector(df: "DataFrame", column: str, dim: int, dtype: str = "float32") -> "DataFrame":
    """``df`` with ``column`` written as a Lance vector, ``fixed_size_list<dtype>[dim]``: the
    column LanceDB and pylance build vector indices on and search. ``column`` may be an array
    of numbers or a ``pyspark.ml.linalg`` vector (VectorUDT). Every row must then hold exactly
    ``dim`` values (a write fails naming the column otherwise); a null vector stays null.

    Same as giving the column the field metadata ``{"arrow.fixed-size-list.size": dim}``."""
    from pyspark.sql import functions as F

    if not isinstance(dim, int) or isinstance(dim, bool) or dim <= 0:
        raise ValueError(f"dim must be a positive int, not {dim!r}")
    item = _ITEM_TYPES.get(dtype)
    if item is None:
        raise ValueError(f"dtype must be one of {sorted(_ITEM_TYPES)}, not {dtype!r}")
    if column not in df.columns:
        raise ValueError(f"no column {column!r} in {df.columns}")
    field = df.schema[column]
    if field.dataType.typeName() == "vector" or type(field.dataType).__name__ == "VectorUDT":
        dtype = "float32" if item == "float" else "float64"
        values = _ml_function("vector_to_array", F.col(column), dtype)
    else:
        values = F.col(column).cast(f"array<{item}>")
    return df.withColumn(column, values.alias(column, metadata={FIXED_SIZE_LIST_KEY: dim}))


def to_ml_vector(df: "DataFrame", column: str) -> "DataFrame":
    """``df`` with the Lance vector ``column`` (an array of numbers as Spark reads it) as a
    ``pyspark.ml.linalg`` dense vector column, for Spark ML: what a VectorUDT column written
    with ``vector_columns`` (or ``as_vector``) reads back as."""
    from pyspark.sql import functions as F

    if column not in df.columns:
        raise ValueError(f"no column {column!r} in {df.columns}")
    values = F.col(column).cast("array<double>")
    # array_to_vector fails on a null array: a null vector stays null.
    return df.withColumn(
        column,
        F.when(values.isNull(), F.lit(None)).otherwise(_ml_function("array_to_vector", values)),
    )


def _ml_function(name: str, col: "Column", *args: Any) -> "Column":
    """``pyspark.ml.functions.<name>(col, *args)``. pyspark 3.5's module imports pandas, which a
    Spark user need not have: without it, the same JVM function is called directly."""
    try:
        from pyspark.ml import functions
    except ImportError:
        from pyspark import SparkContext
        from pyspark.sql.column import Column, _to_java_column

        jvm = SparkContext._active_spark_context._jvm
        ml = jvm.org.apache.spark.ml.functions
        return Column(getattr(ml, name)(_to_java_column(col), *args))
    return getattr(functions, name)(col, *args)


def _literal_vector(q: Sequence[float], item: str) -> str:
    values = [float(x) for x in q]
    if not values:
        raise ValueError("the query vector is empty")
    return "array(" + ", ".join(f"cast({v!r} as {item})" for v in values) + ")"


def distance(column: str, q: Sequence[float], metric: str = "l2") -> "Column":
    """pylance's distance of every row's vector in ``column`` to ``q``: ``l2`` (squared
    Euclidean), ``cosine`` (1 - cosine similarity) or ``dot`` (1 - dot product), as float."""
    from pyspark.sql import functions as F

    metric = metric.lower()
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, not {metric!r}")
    c = "`" + column.replace("`", "``") + "`"
    qv = _literal_vector(q, "double")

    def total(expr: str) -> str:
        return f"aggregate(zip_with({c}, {qv}, (a, b) -> {expr}), 0D, (s, x) -> s + x)"

    if metric == "l2":
        sql = total("(cast(a as double) - b) * (cast(a as double) - b)")
    elif metric == "dot":
        sql = f"1D - {total('cast(a as double) * b')}"
    else:
        norm_q = sum(float(x) * float(x) for x in q) ** 0.5
        norm_v = f"sqrt(aggregate({c}, 0D, (s, a) -> s + cast(a as double) * a))"
        # A zero vector has no direction: its distance is null, and it is never returned.
        sql = f"1D - try_divide({total('cast(a as double) * b')}, {norm_v} * {norm_q!r})"
    return F.expr(f"cast({sql} as float)")


def nearest(
    df: Any,
    column: str,
    q: Sequence[float],
    k: int = 10,
    metric: Optional[str] = None,
    filter: Optional[str] = None,  # noqa: A002
    columns: Union[str, Sequence[str], None] = None,
    *,
    nprobes: Optional[int] = None,
    refine_factor: Optional[int] = None,
    use_index: bool = True,
) -> "DataFrame":
    """The ``k`` rows of ``df`` whose ``column`` vectors are nearest ``q``, nearest first,
    with their ``_distance``.

    ``df`` a :class:`~spark_lance.LanceTable`: as :meth:`LanceTable.nearest` (through the
    table's IVF index when it has one). ``df`` a DataFrame: pylance's exact search
    (``to_table(nearest={..., "use_index": False}, prefilter=True)``), distributed: every
    task keeps its own top ``k`` and Spark merges them (``nprobes``, ``refine_factor`` and
    ``use_index`` then do nothing). ``filter`` (SQL) selects the rows searched; rows with a
    null vector are never returned. ``metric`` defaults to ``l2``."""
    from pyspark.sql import functions as F

    if not isinstance(k, int) or isinstance(k, bool) or k <= 0:
        raise ValueError(f"k must be a positive int, not {k!r}")
    from ._table import LanceTable

    if isinstance(df, LanceTable):
        return df.nearest(
            column,
            q,
            k=k,
            metric=metric,
            filter=filter,
            columns=columns,
            nprobes=nprobes,
            refine_factor=refine_factor,
            use_index=use_index,
        )
    metric = metric or "l2"
    dim = len(q)
    rows = df.where(filter) if filter else df
    rows = rows.where(F.col(column).isNotNull())
    size = F.size(F.col(column))
    rows = rows.withColumn(
        "_distance",
        F.when(size == dim, distance(column, q, metric)).otherwise(
            F.raise_error(
                F.concat(
                    F.lit(f"column {column!r} holds a vector of "),
                    size.cast("string"),
                    F.lit(f" values; the query has {dim}"),
                )
            )
        ),
    )
    if columns is not None:
        keep = [columns] if isinstance(columns, str) else list(columns)
        rows = rows.select(*keep, "_distance")
    return rows.orderBy(F.col("_distance").asc_nulls_last()).limit(k)


def _positive(name: str, value: Optional[int]) -> Optional[int]:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{name} must be a positive int, not {value!r}")
    return value


def table_nearest(
    spark: "SparkSession",
    path: str,
    options: Dict[str, str],
    column: str,
    q: Sequence[float],
    k: int,
    metric: Optional[str],
    nprobes: Optional[int],
    refine_factor: Optional[int],
    use_index: bool,
    columns: Union[str, Sequence[str], None],
    version: Union[int, str, None],
    filter: Optional[str] = None,
) -> "DataFrame":  # noqa: A002
    """The search of :meth:`LanceTable.nearest`, run now by the connector (``NearestRows``,
    also SQL's ``lance_nearest``); the DataFrame reads only the batches holding the rows
    found."""
    from pyspark.sql import DataFrame

    from . import _maintenance

    _positive("nprobes", nprobes)
    _positive("refine_factor", refine_factor)
    values, opts = _checked(q, k, metric, options, version)
    jvm = spark.sparkContext._jvm
    names = None
    if columns is not None:
        wanted = [columns] if isinstance(columns, str) else list(columns)
        names = spark.sparkContext._gateway.new_array(jvm.java.lang.String, len(wanted))
        for i, name in enumerate(wanted):
            names[i] = name
    rows = jvm.io.sparklance.spark.vector.NearestRows
    # float32 as numpy (and pylance) round the query's values.
    floats = rows.floats(bytearray(struct.pack(f"<{len(values)}f", *values)))
    jdf = rows.nearest(
        spark._jsparkSession,
        path,
        _maintenance._options(spark, opts),
        column,
        floats,
        k,
        metric,
        nprobes,
        refine_factor,
        bool(use_index),
        filter,
        names,
    )
    return DataFrame(jdf, spark)


def _checked(
    q: Sequence[float],
    k: int,
    metric: Optional[str],
    options: Dict[str, str],
    version: Union[int, str, None],
):
    """A search's query values and read options (with ``version``), its arguments checked."""
    if not isinstance(k, int) or isinstance(k, bool) or k <= 0:
        raise ValueError(f"k must be a positive int, not {k!r}")
    if metric is not None and metric.lower() not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, not {metric!r}")
    values = [float(x) for x in q]
    if not values:
        raise ValueError("the query vector is empty")
    opts = dict(options)
    if version is not None:
        opts["version"] = str(version)
    return values, opts
