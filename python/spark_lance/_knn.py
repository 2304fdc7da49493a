"""Batch k-nearest-neighbour search ("k-NN join") of a Lance table: for every row of a query
DataFrame, the table's ``k`` rows nearest its vector — :meth:`LanceTable.knn_join`."""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Union

from ._vectors import METRICS, _positive

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

#: The prefix of a matched row's column whose name a query column has already.
MATCH_PREFIX = "match_"
#: Above this many distinct matched rows, they are found by a join, not an ``IN`` list.
_IN_LIST_LIMIT = 10000
_QID, _RANK, _ADDR = "__knn_query", "__knn_rank", "__knn_rowaddr"


def _values(v: Any, row: int, column: str) -> Optional[List[float]]:
    """The query vector of row ``row`` as floats; None for a null vector."""
    if v is None:
        return None
    if hasattr(v, "toArray"):  # pyspark.ml.linalg vectors
        v = v.toArray()
    try:
        return [float(x) for x in v]
    except (TypeError, ValueError):
        raise ValueError(
            f"query row {row}: column {column!r} holds {v!r}, not a vector of numbers"
        ) from None


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def knn_join(
    spark: "SparkSession",
    path: str,
    options: Dict[str, str],
    queries: "DataFrame",
    column: str,
    k: int,
    query_column: Optional[str] = None,
    metric: Optional[str] = None,
    nprobes: Optional[int] = None,
    refine_factor: Optional[int] = None,
    use_index: bool = True,
    filter: Optional[str] = None,  # noqa: A002 - pylance's name
    columns: Union[str, Sequence[str], None] = None,
) -> "DataFrame":
    """See :meth:`LanceTable.knn_join`."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import FloatType, IntegerType, LongType, StructField, StructType

    from . import _maintenance
    from ._io import read_lance

    if not isinstance(k, int) or isinstance(k, bool) or k <= 0:
        raise ValueError(f"k must be a positive int, not {k!r}")
    _positive("nprobes", nprobes)
    _positive("refine_factor", refine_factor)
    if metric is not None and (not isinstance(metric, str) or metric.lower() not in METRICS):
        raise ValueError(f"metric must be one of {METRICS}, not {metric!r}")
    qcol = query_column or column
    if qcol not in queries.columns:
        raise ValueError(
            f"query_column: no column {qcol!r} in the query DataFrame (columns: {queries.columns})"
        )
    query_names = list(queries.columns)
    taken = {c.lower() for c in query_names}
    for name in ("_distance", _QID, _RANK, _ADDR):
        if name.lower() in taken:
            raise ValueError(
                f"the query DataFrame has a column {name!r}, a name knn_join "
                "gives its own column: rename it"
            )

    rows = read_lance(spark, path, **options)
    names = (
        rows.columns
        if columns is None
        else ([columns] if isinstance(columns, str) else list(columns))
    )
    renamed = []
    for name in names:
        out = MATCH_PREFIX + name if name.lower() in taken else name
        if out.lower() in taken:
            raise ValueError(
                f"the matched column {name!r} clashes with the query "
                f"DataFrame's columns {name!r} and {out!r}: rename one, or leave "
                "it out of columns"
            )
        taken.add(out.lower())
        renamed.append(out)

    query_rows = queries.collect()
    vectors = [_values(r[qcol], i, qcol) for i, r in enumerate(query_rows)]
    flat = [x for v in vectors if v is not None for x in v]
    lengths = [-1 if v is None else len(v) for v in vectors]
    jvm = spark.sparkContext._jvm
    out = bytes(
        jvm.io.sparklance.spark.vector.KnnJoinJob.knnJoin(
            spark._jsparkSession,
            path,
            column,
            qcol,
            bytearray(struct.pack(f"<{len(flat)}f", *flat)),
            bytearray(struct.pack(f"<{len(lengths)}i", *lengths)),
            k,
            metric,
            nprobes,
            refine_factor,
            bool(use_index),
            filter,
            _maintenance._options(spark, dict(options)),
        )
    )
    searched, n = struct.unpack_from("<qi", out, 0)
    at, hits = 12, []
    for qid in range(n):
        (count,) = struct.unpack_from("<i", out, at)
        at += 4
        for rank in range(count):
            addr, dist = struct.unpack_from("<qf", out, at)
            at += 12
            hits.append((qid, rank, addr, dist))

    found = spark.createDataFrame(
        hits,
        StructType(
            [
                StructField(_QID, LongType()),
                StructField(_RANK, IntegerType()),
                StructField(_ADDR, LongType()),
                StructField("_distance", FloatType()),
            ]
        ),
    )
    asked = spark.createDataFrame(
        [tuple(r) + (i,) for i, r in enumerate(query_rows)],
        StructType(list(queries.schema.fields) + [StructField(_QID, LongType())]),
    )
    matched = read_lance(spark, path, version=searched, **options).select(
        *[F.col(_quote(c)).alias(r) for c, r in zip(names, renamed)], F.col("_rowaddr").alias(_ADDR)
    )
    addresses = sorted({h[2] for h in hits})
    if len(addresses) <= _IN_LIST_LIMIT:
        matched = matched.where(F.col(_ADDR).isin(addresses) if addresses else F.lit(False))
    joined = asked.join(found, _QID).join(matched, _ADDR)
    return joined.orderBy(_QID, _RANK).select(
        *[_quote(c) for c in query_names + renamed], "_distance"
    )
