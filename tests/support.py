"""Shared helpers for the pytest suite: where things are, which fixtures exist, and how to
turn pylance's Arrow data and Spark's collected rows into comparable Python values."""

from __future__ import annotations

import datetime as dt
import glob
import json
import math
import os
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Optional

import pyarrow as pa

# ---------------------------------------------------------------------------------------------
# Locations
# ---------------------------------------------------------------------------------------------

REPO_ROOT = Path(__file__).resolve().parent.parent
SRC_TEST_DATA = REPO_ROOT / "src-test-data"
EXPECTED_DIR = SRC_TEST_DATA / "expected"
EXTERNAL_DIR = (
    SRC_TEST_DATA / "external" / "lance-spark-example-db"
)  # lance-spark's test data, copied in

#: The connector's message while row data scans are not written yet (LanceFileReader).
NOT_IMPLEMENTED_MARKER = "not implemented yet"


@dataclass(frozen=True)
class LanceFixture:
    """One dataset to test: a generated fixture or an external (old) dataset."""

    name: str  # "multifrag_2.2" or "external/test_dataset1"
    path: Path
    versions: tuple[int, ...]  # as recorded by src-test-data/generate.py from pylance
    tags: dict = field(default_factory=dict, hash=False, compare=False)  # tag -> version
    expected_file: Optional[Path] = None

    @property
    def latest(self) -> int:
        return max(self.versions)

    def __str__(self) -> str:  # used in test ids
        return self.name


# JIT settings of the test JVM. The suite runs thousands of short queries, each over a few
# rows, so the JVM spends most of its CPU compiling code it runs a handful of times: the C1
# compiler alone, on one thread, with the serial collector, takes ~40% less CPU and ~15% less
# wall time here (2 cores) and changes no result. SPARK_LANCE_TEST_JVM_OPTS replaces them.
TEST_JVM_OPTS = os.environ.get(
    "SPARK_LANCE_TEST_JVM_OPTS", "-XX:TieredStopAtLevel=1 -XX:CICompilerCount=1 -XX:+UseSerialGC"
)


def _load_fixture(json_path: Path, name: str) -> LanceFixture:
    doc = json.loads(json_path.read_text())
    rel = doc["path"]
    base = REPO_ROOT if doc.get("path_relative_to") == "repo root" else SRC_TEST_DATA
    path = (base / rel).resolve()
    versions = tuple(sorted(int(v["version"]) for v in doc["versions"]))
    tags = {str(k): int(v) for k, v in (doc.get("tags") or {}).items()}
    return LanceFixture(name=name, path=path, versions=versions, tags=tags, expected_file=json_path)


def generated_fixtures() -> list[LanceFixture]:
    """Every src-test-data/expected/<name>.json (not the _index/_skipped files)."""
    out = []
    for p in sorted(glob.glob(str(EXPECTED_DIR / "*.json"))):
        name = Path(p).stem
        if name.startswith("_"):
            continue
        out.append(_load_fixture(Path(p), name))
    return out


def external_fixtures() -> list[LanceFixture]:
    """Every src-test-data/expected/external/<name>.json: datasets under src-test-data/external."""
    out = []
    for p in sorted(glob.glob(str(EXPECTED_DIR / "external" / "*.json"))):
        out.append(_load_fixture(Path(p), "external/" + Path(p).stem))
    return out


def all_fixtures() -> list[LanceFixture]:
    return generated_fixtures() + external_fixtures()


def find_fixture(name: str) -> LanceFixture:
    for f in all_fixtures():
        if f.name == name:
            return f
    raise LookupError(f"no fixture named {name!r} in {EXPECTED_DIR}")


def manifest_file(dataset: Path, version: int) -> Path:
    """The _versions/ manifest of a version, in either naming scheme (v1: N.manifest,
    v2: (u64::MAX - N) zero-padded to 20 digits)."""
    v1 = dataset / "_versions" / f"{version}.manifest"
    v2 = dataset / "_versions" / f"{(2**64 - 1) - version:020d}.manifest"
    for p in (v2, v1):
        if p.exists():
            return p
    raise FileNotFoundError(f"no manifest for version {version} under {dataset / '_versions'}")


def page_kinds(path: str) -> dict[str, list[str]]:
    """Per top-level column of a flat dataset: for each data file, one letter per page, 'D' for
    a dictionary page (2.0's Dictionary encoding, 2.1+'s dictionary compression) or 'P',
    from pylance's own metadata (`LanceFileReader.metadata()`)."""
    import lance
    from lance.file import LanceFileReader

    names = lance.dataset(path).schema.names
    out: dict[str, list[str]] = {n: [] for n in names}
    for f in sorted(glob.glob(os.path.join(path, "data", "*.lance"))):
        for name, col in zip(names, LanceFileReader(f).metadata().columns):
            out[name].append(
                "".join(
                    "D"
                    if ("Dictionary(" in str(p.encoding) or "dictionary: Some" in str(p.encoding))
                    else "P"
                    for p in col.pages
                )
            )
    return out


# ---------------------------------------------------------------------------------------------
# Times
# ---------------------------------------------------------------------------------------------


def iso_utc(instant: dt.datetime) -> str:
    """ISO-8601 in UTC with microseconds and a Z, e.g. 2026-01-02T03:04:05.123456Z."""
    return (
        instant.astimezone(dt.timezone.utc).replace(tzinfo=None).isoformat(timespec="microseconds")
        + "Z"
    )


def local_naive(instant: dt.datetime) -> dt.datetime:
    """pylance compares naive *local* datetimes (LanceDataset.versions() returns those)."""
    return instant.astimezone().replace(tzinfo=None)


def version_instants(ds) -> dict[int, dt.datetime]:
    """version -> commit instant (tz-aware, UTC) from pylance's naive local timestamps."""
    return {int(v["version"]): v["timestamp"].astimezone(dt.timezone.utc) for v in ds.versions()}


# ---------------------------------------------------------------------------------------------
# Values: pylance (Arrow) -> what Spark's collect() returns under the documented mapping, and
# Spark's collected values -> a canonical form. Floats become ("f", repr) so NaN == NaN and
# -0.0 != 0.0; binaries become bytes; maps become dicts (Spark's collect loses map order).
# The Python process and the Spark JVM both run with TZ=UTC (see conftest.py), so Spark's
# naive datetimes for `timestamp` columns are UTC wall-clock times.
# ---------------------------------------------------------------------------------------------


def _canon_float(x: Optional[float]):
    return None if x is None else ("f", repr(float(x)))


def arrow_to_spark_values(arr: pa.Array) -> list:
    """Canonical Python values of an Arrow array, as Spark would present them."""
    if isinstance(arr, pa.ChunkedArray):
        out: list = []
        for c in arr.chunks:
            out.extend(arrow_to_spark_values(c))
        return out
    t = arr.type
    nulls = arr.is_null().to_pylist() if arr.null_count else [False] * len(arr)

    if pa.types.is_dictionary(t):
        return arrow_to_spark_values(arr.dictionary_decode())
    if pa.types.is_timestamp(t):
        if t.unit == "ns":
            return arr.cast(pa.int64()).to_pylist()
        micros = (
            arr.cast(pa.timestamp(t.unit)).cast(pa.timestamp("us")).cast(pa.int64()).to_pylist()
        )
        epoch = dt.datetime(1970, 1, 1)
        return [None if m is None else epoch + dt.timedelta(microseconds=m) for m in micros]
    if pa.types.is_time(t) or (pa.types.is_duration(t) and t.unit == "ns"):
        # Spark has no exact type for these: they read as the raw count of the unit (a long).
        raw = pa.int32() if t.bit_width == 32 else pa.int64()
        return [None if v is None else int(v) for v in arr.view(raw).to_pylist()]
    if pa.types.is_uint64(t):
        return [None if v is None else Decimal(v) for v in arr.to_pylist()]
    if pa.types.is_floating(t):
        return [_canon_float(v) for v in arr.to_pylist()]
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return [None if v is None else bytes(v) for v in arr.to_pylist()]
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        if pa.types.is_fixed_size_list(t):
            n = t.list_size
            # .values ignores slicing and keeps the slots of null lists; take the range directly.
            flat = arr.values.slice(arr.offset * n, len(arr) * n)
            items = arrow_to_spark_values(flat)
            return [None if nulls[i] else items[i * n : (i + 1) * n] for i in range(len(arr))]
        offsets = arr.offsets.to_pylist()
        items = arrow_to_spark_values(arr.values.slice(offsets[0], offsets[-1] - offsets[0]))
        base = offsets[0]
        return [
            None if nulls[i] else items[offsets[i] - base : offsets[i + 1] - base]
            for i in range(len(arr))
        ]
    if pa.types.is_map(t):
        offsets = arr.offsets.to_pylist()
        entries = arrow_to_spark_values(arr.values.slice(offsets[0], offsets[-1] - offsets[0]))
        kname, vname = t.key_field.name, t.item_field.name
        base = offsets[0]
        out = []
        for i in range(len(arr)):
            if nulls[i]:
                out.append(None)
            else:
                out.append(
                    {e[kname]: e[vname] for e in entries[offsets[i] - base : offsets[i + 1] - base]}
                )
        return out
    if pa.types.is_struct(t):
        children = []
        for i in range(t.num_fields):
            child = arr.field(i)  # pyarrow applies the struct's slice; older versions did not
            if len(child) != len(arr):
                child = child.slice(arr.offset, len(arr))
            children.append(arrow_to_spark_values(child))
        names = [t.field(i).name for i in range(t.num_fields)]
        return [
            None if nulls[r] else {names[c]: children[c][r] for c in range(len(names))}
            for r in range(len(arr))
        ]
    if pa.types.is_null(t):
        return [None] * len(arr)
    return arr.to_pylist()


def spark_value(v: Any, dtype) -> Any:
    """Canonical form of one value from a Spark Row, guided by its Spark type."""
    from pyspark.sql import types as T

    if v is None:
        return None
    if isinstance(dtype, T.StructType):
        return {f.name: spark_value(v[i], f.dataType) for i, f in enumerate(dtype.fields)}
    if isinstance(dtype, T.ArrayType):
        return [spark_value(x, dtype.elementType) for x in v]
    if isinstance(dtype, T.MapType):
        return {
            spark_value(k, dtype.keyType): spark_value(x, dtype.valueType) for k, x in v.items()
        }
    if isinstance(dtype, (T.FloatType, T.DoubleType)):
        return _canon_float(v)
    if isinstance(dtype, T.BinaryType):
        return bytes(v)
    if isinstance(dtype, T.DecimalType):
        return Decimal(v)
    return v


def rows_from_arrow(table: pa.Table) -> list[tuple]:
    cols = [arrow_to_spark_values(table.column(i)) for i in range(table.num_columns)]
    return list(zip(*cols)) if cols else [()] * table.num_rows


def rows_from_spark(rows, schema) -> list[tuple]:
    fields = schema.fields
    return [tuple(spark_value(r[i], f.dataType) for i, f in enumerate(fields)) for r in rows]


def values_equal(a: Any, b: Any) -> bool:
    """Strict equality of canonical values (Decimal('1.50') == Decimal('1.5') is fine: the
    scale is part of the checked schema)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(values_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(values_equal(x, y) for x, y in zip(a, b))
    if type(a) is bool or type(b) is bool:
        return type(a) is type(b) and a == b
    return a == b


def first_difference(expected: list[tuple], actual: list[tuple], names: list[str]) -> Optional[str]:
    if len(expected) != len(actual):
        return f"row count differs: pylance {len(expected)}, Spark {len(actual)}"
    for r, (e, a) in enumerate(zip(expected, actual)):
        for c, (ev, av) in enumerate(zip(e, a)):
            if not values_equal(ev, av):
                return f"row {r}, column {names[c]!r}: pylance {ev!r:.300}, Spark {av!r:.300}"
    return None


def short_error(e: BaseException, limit: int = 400) -> str:
    """The line of an error that says what went wrong (for Py4J errors, the Java exception's
    message rather than "An error occurred while calling o123.count")."""
    text = str(e)
    for line in text.splitlines():
        line = line.strip()
        if (
            ("Exception" in line or "Error" in line)
            and ":" in line
            and "An error occurred while calling" not in line
        ):
            if not line.startswith("at "):
                return line[:limit]
    first = text.strip().splitlines()[0] if text.strip() else type(e).__name__
    return first[:limit]


def is_nan_canon(x) -> bool:
    return isinstance(x, tuple) and x[:1] == ("f",) and math.isnan(float(x[1]))


# ---------------------------------------------------------------------------------------------
# What differs between the Spark lines the suite runs on (3.5 and 4.x)
# ---------------------------------------------------------------------------------------------


def spark_major(spark) -> int:
    return int(spark.version.split(".")[0])


def spark_saves_intervals(spark) -> bool:
    """Spark 3.5's DataFrameWriter refuses interval columns for every source it saves through
    CreatableRelationProvider (Parquet too); Spark 4 asks the source, and we take every type."""
    return spark_major(spark) >= 4


def remainder_reaches_sources(spark) -> bool:
    """Spark hands `a % k` to a data source only when it may translate Remainder: under ANSI
    mode, the default from Spark 4.0 on (Spark 3.5 defaults to non-ANSI)."""
    # No default argument: get(key, default) answers the default given when the key was never set.
    return spark.conf.get("spark.sql.ansi.enabled").lower() == "true"


def to_arrow(df) -> pa.Table:
    """A DataFrame's rows as an Arrow table: `toArrow` from pyspark 4.0 on; pyspark 3.5 has
    only the collection `toPandas` uses underneath."""
    if hasattr(df, "toArrow"):
        return df.toArrow()
    from pyspark.sql.pandas.types import to_arrow_schema

    batches = df._collect_as_arrow()
    return pa.Table.from_batches(batches) if batches else to_arrow_schema(df.schema).empty_table()


def _all_nullable(t: pa.DataType) -> pa.DataType:
    """`t` with every nested field nullable (Spark and Lance differ in element nullability)."""

    def field(f: pa.Field) -> pa.Field:
        return pa.field(f.name, _all_nullable(f.type), True)

    if pa.types.is_fixed_size_list(t):
        return pa.list_(field(t.value_field), t.list_size)
    if pa.types.is_large_list(t):
        return pa.large_list(field(t.value_field))
    if pa.types.is_list(t):
        return pa.list_(field(t.value_field))
    if pa.types.is_map(t):
        return pa.map_(t.key_field, field(t.item_field))
    if pa.types.is_struct(t):
        return pa.struct([field(t.field(i)) for i in range(t.num_fields)])
    return t


def assert_same_table(actual: pa.Table, expected: pa.Table, what: str = "") -> None:
    """The same column names and rows in the same order. Arrow's own comparison of each column
    (type and values) decides when it says equal, the cheap common case; otherwise the rows are
    compared as canonical values (NaN equal to NaN), naming the first one that differs. Field
    nullability and metadata are not compared."""
    assert actual.column_names == expected.column_names, (
        f"{what}: columns {actual.column_names} != {expected.column_names}"
    )

    def same(a: pa.ChunkedArray, e: pa.ChunkedArray) -> bool:
        if a.type != e.type and _all_nullable(a.type) == _all_nullable(e.type):
            a, e = a.cast(_all_nullable(a.type)), e.cast(_all_nullable(e.type))
        return a.equals(e)

    if actual.num_rows == expected.num_rows and all(
        same(a, e) for a, e in zip(actual.columns, expected.columns)
    ):
        return
    diff = first_difference(rows_from_arrow(expected), rows_from_arrow(actual), actual.column_names)
    assert diff is None, f"{what}: {diff}"


def scan_metrics(spark, df):
    """Collects `df` and returns the metrics of its one Lance scan (name -> value)."""
    spark.conf.set("spark.sql.adaptive.enabled", "false")  # the plan holds the scan itself
    try:
        df.collect()
        plan = df._jdf.queryExecution().executedPlan()
    finally:
        spark.conf.unset("spark.sql.adaptive.enabled")
    leaves = plan.collectLeaves()
    for i in range(leaves.size()):
        metrics = leaves.apply(i).metrics()
        if metrics.contains("storageRequests"):
            keys = metrics.keys().toSeq()
            return {keys.apply(k): metrics.apply(keys.apply(k)).value() for k in range(keys.size())}
    raise AssertionError(f"no Lance scan in {plan.treeString()}")


def write_metrics(result):
    """The metrics of the Lance write a SQL command (`spark.sql("insert ...")`) ran."""
    plan = result._jdf.queryExecution().executedPlan()
    try:
        plan = plan.commandPhysicalPlan()  # Spark 4: the command under CommandResultExec
    except Exception:  # noqa: BLE001 - other shapes hold the write themselves
        pass
    metrics = plan.metrics()
    keys = metrics.keys().toSeq()
    return {keys.apply(k): metrics.apply(keys.apply(k)).value() for k in range(keys.size())}


_catalog_names = __import__("itertools").count()


def lance_catalog(spark, root=None) -> str:
    """A fresh name for io.sparklance.spark.LanceCatalog (Spark caches catalogs by name),
    optionally with a root directory; returns the name."""
    name = f"lance_cat{next(_catalog_names)}"
    spark.conf.set(f"spark.sql.catalog.{name}", "io.sparklance.spark.LanceCatalog")
    if root is not None:
        spark.conf.set(f"spark.sql.catalog.{name}.root", str(root))
    return name


# ---------------------------------------------------------------------------------------------
# Twin datasets (ours and pylance's copy of the same table)
# ---------------------------------------------------------------------------------------------

#: (file format version, stable row ids) the twin tests run on.
TWIN_PARAMS = [("2.0", False), ("2.1", True), ("2.2", False), ("2.2", True)]


def twin_id(param) -> str:
    return f"{param[0]}-{'stable' if param[1] else 'addr'}"


def make_twins(tmp_path, make, version: str, stable: bool):
    """`make(path, version, stable)` run twice: (ours, theirs)."""
    paths = str(tmp_path / "ours"), str(tmp_path / "theirs")
    for p in paths:
        make(p, version, stable)
    return paths
