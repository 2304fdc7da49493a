"""Connector errors raised by the helpers' direct JVM calls as PySpark's own exception classes
(``AnalysisException``, ``IllegalArgumentException``), as the DataFrame API raises them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def raise_as_pyspark(spark: "SparkSession", error: Exception) -> None:
    """Re-raises a ``Py4JJavaError`` of the connector as PySpark's class for it (the JVM's
    ``SparkErrors.toSpark``); anything PySpark has no class for is re-raised unchanged."""
    from pyspark.errors.exceptions.captured import UnknownException, convert_exception

    java = getattr(error, "java_exception", None)
    if java is None:
        raise error
    converted = convert_exception(
        spark.sparkContext._jvm.io.sparklance.spark.errors.SparkErrors.toSpark(java)
    )
    if isinstance(converted, UnknownException):
        raise error
    raise converted from None


class SparkErrorsProxy:
    """A JVM object whose method calls raise connector errors as PySpark's classes."""

    def __init__(self, spark: "SparkSession", target: Any):
        self._spark = spark
        self._target = target

    def __getattr__(self, name: str):
        method = getattr(self._target, name)

        def call(*args: Any):
            from py4j.protocol import Py4JJavaError

            try:
                return method(*args)
            except Py4JJavaError as e:
                raise_as_pyspark(self._spark, e)

        return call
