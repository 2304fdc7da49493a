"""Reading and writing Lance datasets through the connector: :func:`read_lance`, :func:`write_lance`."""

from __future__ import annotations

import datetime as _dt
import numbers
import os
from typing import TYPE_CHECKING, Any, Sequence, Union

from ._session import FORMAT

if TYPE_CHECKING:  # pyspark is imported lazily
    from pyspark.sql import DataFrame, SparkSession


def _version_option(version: Any) -> str:
    if isinstance(version, bool) or not isinstance(version, (numbers.Integral, str)):
        raise TypeError(
            f"version must be an int (version number) or a str (tag name), not {type(version).__name__}"
        )
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
    raise TypeError(
        f"timestamp must be an ISO-8601 str or a datetime.datetime, not {type(timestamp).__name__}"
    )


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
