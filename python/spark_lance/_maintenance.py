"""Table maintenance by path, as pylance names it: :func:`cleanup_old_versions`,
:func:`compact_files`, :func:`restore` and tags.

Each call runs on the driver through the connector's JVM classes (no pylance involved); the
results use pylance's names (``CleanupStats`` fields)."""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Any, Dict, Optional

from ._errors import SparkErrorsProxy

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def _jvm(spark: "SparkSession"):
    return SparkErrorsProxy(spark, spark.sparkContext._jvm.io.sparklance.spark.LanceMaintenance)


def _options(spark: "SparkSession", options: Optional[Dict[str, str]]):
    m = spark.sparkContext._jvm.java.util.HashMap()
    for k, v in (options or {}).items():
        m.put(str(k), str(v))
    return m


def cleanup_old_versions(
    spark: "SparkSession",
    path: str,
    older_than: Optional[_dt.timedelta] = None,
    retain_versions: Optional[int] = None,
    *,
    delete_unverified: bool = False,
    error_if_tagged_old_versions: bool = True,
    dry_run: bool = False,
    options: Optional[Dict[str, str]] = None,
) -> Dict[str, Any]:
    """pylance's ``cleanup_old_versions``: removes versions older than ``older_than`` and not
    among the last ``retain_versions`` (two weeks when neither is given) and the files only
    they use. Returns pylance's CleanupStats fields as a dict, plus ``files`` (removed, or
    with ``dry_run`` the files that would be)."""
    if older_than is not None and not isinstance(older_than, _dt.timedelta):
        raise TypeError(f"older_than must be a datetime.timedelta, not {type(older_than).__name__}")
    if retain_versions is not None and (isinstance(retain_versions, bool) or retain_versions < 1):
        raise ValueError(f"retain_versions must be a positive int, not {retain_versions!r}")
    seconds = None if older_than is None else float(older_than.total_seconds())
    stats = _jvm(spark).cleanupOldVersions(
        spark._jsparkSession,
        path,
        seconds,
        retain_versions,
        bool(delete_unverified),
        bool(error_if_tagged_old_versions),
        bool(dry_run),
        _options(spark, options),
    )
    out = {k: stats.get(k) for k in stats.keySet()}
    out["files"] = list(out["files"])
    return out


def _typed(value, kind, name):
    """``value`` as ``kind`` (None stays None); an int is a float too, a bool is no number."""
    if value is None:
        return None
    ok = (
        isinstance(value, bool)
        if kind is bool
        else (
            not isinstance(value, bool)
            and isinstance(value, (int, float) if kind is float else kind)
        )
    )
    if not ok:
        raise TypeError(f"{name} must be {kind.__name__}, not {type(value).__name__}")
    return kind(value)


def compact_files(
    spark: "SparkSession",
    path: str,
    *,
    target_rows_per_fragment: Optional[int] = None,
    max_rows_per_group: Optional[int] = None,
    max_bytes_per_file: Optional[int] = None,
    materialize_deletions: Optional[bool] = None,
    materialize_deletions_threshold: Optional[float] = None,
    defer_index_remap: Optional[bool] = None,
    options: Optional[Dict[str, str]] = None,
) -> Dict[str, int]:
    """pylance's ``optimize.compact_files``: rewrites small fragments (fewer rows than
    ``target_rows_per_fragment``, default 1Mi) with their neighbours, and fragments with more
    than ``materialize_deletions_threshold`` (default 10%) of their rows deleted, one Spark
    task per group; commits as pylance does. Indices covering compacted fragments are treated
    as pylance treats them in the same commit: without stable row ids BTREE, BITMAP,
    LABEL_LIST, NGRAM, IVF_FLAT, IVF_SQ and IVF_PQ indices are remapped (ZONEMAP and
    BLOOMFILTER left as pylance leaves them); with stable row ids BTREE indices are remapped and
    the others kept with their fragment bitmaps moved. Fragments an INVERTED or IVF_HNSW_*
    index covers on a table without stable row ids are left alone. Returns pylance's
    CompactionMetrics fields plus ``indexed_fragments_skipped`` (the fragments left alone)."""
    m = _jvm(spark).compactFiles(
        spark._jsparkSession,
        path,
        _typed(target_rows_per_fragment, int, "target_rows_per_fragment"),
        _typed(max_rows_per_group, int, "max_rows_per_group"),
        _typed(max_bytes_per_file, int, "max_bytes_per_file"),
        _typed(materialize_deletions, bool, "materialize_deletions"),
        _typed(materialize_deletions_threshold, float, "materialize_deletions_threshold"),
        _typed(defer_index_remap, bool, "defer_index_remap"),
        _options(spark, options),
    )
    return {k: int(m.get(k)) for k in m.keySet()}


def restore(
    spark: "SparkSession", path: str, version, *, options: Optional[Dict[str, str]] = None
) -> int:
    """pylance's ``lance.dataset(path, version=version).restore()``: commits a new version
    holding that version's data, schema, config and indices (``version``: a number or a tag
    name). Returns the new version."""
    if isinstance(version, bool) or not isinstance(version, (int, str)):
        raise TypeError(f"version must be an int or a tag name, not {type(version).__name__}")
    return int(
        _jvm(spark).restore(spark._jsparkSession, path, str(version), _options(spark, options))
    )


def create_tag(
    spark: "SparkSession",
    path: str,
    tag: str,
    version: int,
    *,
    options: Optional[Dict[str, str]] = None,
) -> None:
    """pylance's ``tags.create(tag, version)``."""
    _jvm(spark).createTag(spark._jsparkSession, path, tag, int(version), _options(spark, options))


def update_tag(
    spark: "SparkSession",
    path: str,
    tag: str,
    version: int,
    *,
    options: Optional[Dict[str, str]] = None,
) -> None:
    """pylance's ``tags.update(tag, version)``."""
    _jvm(spark).updateTag(spark._jsparkSession, path, tag, int(version), _options(spark, options))


def delete_tag(
    spark: "SparkSession", path: str, tag: str, *, options: Optional[Dict[str, str]] = None
) -> None:
    """pylance's ``tags.delete(tag)``."""
    _jvm(spark).deleteTag(spark._jsparkSession, path, tag, _options(spark, options))


def list_tags(
    spark: "SparkSession", path: str, *, options: Optional[Dict[str, str]] = None
) -> Dict[str, int]:
    """tag name -> version, as pylance's ``tags.list()`` names them."""
    m = _jvm(spark).listTags(spark._jsparkSession, path, _options(spark, options))
    return {k: int(m.get(k)) for k in m.keySet()}


def register_catalog(
    spark: "SparkSession", name: str = "lance", root: Optional[str] = None, **options: str
) -> str:
    """Registers the Lance SQL catalog as ``name`` in ``spark`` (at runtime, for this session):
    ``SELECT * FROM lance.`/path/to/ds` ``, and with ``root`` pylance's directory namespace at
    that root (``lance.db.table``). Other keyword arguments are catalog options (e.g.
    ``fs.*`` storage settings). Returns ``name``."""
    if not name or "." in name:
        raise ValueError(f"not a catalog name: {name!r}")
    spark.conf.set(f"spark.sql.catalog.{name}", "io.sparklance.spark.LanceCatalog")
    if root is not None:
        spark.conf.set(f"spark.sql.catalog.{name}.root", str(root))
    for k, v in options.items():
        spark.conf.set(f"spark.sql.catalog.{name}.{k}", str(v))
    return name
