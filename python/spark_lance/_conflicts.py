"""Commit conflicts as Python exception classes of their own.

PySpark turns the JVM exceptions it knows (``AnalysisException``, ...) into its own Python
classes and leaves every other one a ``Py4JJavaError``. A write that lost to a concurrent
commit is worth catching by name, so this module adds the connector's two conflict classes to
PySpark's conversion (``pyspark.errors.exceptions.captured.convert_exception``) when
``spark_lance`` is imported:

* :class:`LanceConcurrentModificationException`: another writer changed the dataset in a way
  this write cannot be reconciled with (an overwrite or restore replaced what it read). Nothing
  was committed.
* :class:`LanceRetryableConflictException` (a subclass): a conflict that running the same
  operation again resolves, which outlasted the write's ``commit_retries`` /
  ``commit_timeout_seconds``. Nothing was committed; retrying is safe.

Both are PySpark ``CapturedException``s: ``str(e)`` starts with the connector's message, and
``getErrorClass()`` etc. behave as for other captured errors. Spark Connect sessions keep
PySpark's own conversion.
"""

from __future__ import annotations

import threading
from typing import Any, Optional

try:
    from pyspark.errors.exceptions.captured import CapturedException as _Base
except ImportError:  # pyspark missing: the helpers that need it say so themselves
    _Base = Exception  # type: ignore[assignment,misc]


class LanceConcurrentModificationException(_Base):  # type: ignore[misc,valid-type]
    """A commit lost to a concurrent change it cannot be rebased over; nothing was committed."""


class LanceRetryableConflictException(LanceConcurrentModificationException):
    """A retryable commit conflict that outlasted the retries; running the write again is safe."""


# Most specific first: the retryable class extends the other on the JVM too.
_CLASSES = (
    ("io.sparklance.LanceRetryableConflictException", LanceRetryableConflictException),
    ("io.sparklance.LanceConcurrentModificationException", LanceConcurrentModificationException),
)


def _conflict(java: Any) -> Optional[tuple]:
    """(Python class, JVM exception) of the first conflict in `java`'s cause chain, if any.

    Only class names are compared (``getClass``, ``getSuperclass``, ``getCause`` never throw):
    a lookup that could raise in the JVM (a JVM without the connector's classes) would come
    back through PySpark's conversion, and so here, again.
    """
    names = dict(_CLASSES)
    e, seen = java, 0
    while e is not None and seen < 32:
        cls, depth = e.getClass(), 0
        while cls is not None and depth < 16:
            found = names.get(cls.getName())
            if found is not None:
                return found, e
            cls, depth = cls.getSuperclass(), depth + 1
        e, seen = e.getCause(), seen + 1
    return None


_active = threading.local()


def install() -> None:
    """Adds the conflict classes to PySpark's exception conversion (once)."""
    try:
        import pyspark.errors.exceptions.captured as captured
    except ImportError:
        return
    original = captured.convert_exception
    if getattr(original, "_spark_lance", False):
        return

    def convert_exception(e: Any) -> Any:
        # Never twice on one thread: a failing lookup must not convert its own failure.
        if getattr(_active, "on", False):
            return original(e)
        _active.on = True
        try:
            found = _conflict(e)
        except Exception:  # noqa: BLE001 - never let the lookup hide the real error
            found = None
        finally:
            _active.on = False
        if found is not None:
            cls, java = found
            return cls(origin=java)
        return original(e)

    convert_exception._spark_lance = True  # type: ignore[attr-defined]
    captured.convert_exception = convert_exception
