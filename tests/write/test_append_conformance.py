"""Append conformance: for every Arrow type pylance writes and the connector reads, pylance
writes a base dataset, Spark appends 1, 2, 100 and 5000 low-cardinality rows (the dataset's
own rows read back through Spark, and new rows built in Spark from the same values), and after
each append pylance reads the table exactly as its own base rows plus the appended ones (the
base values under new ids), validates it; then it appends to it, and Spark reads it all as
pylance does. Dictionary columns have their own, wider, test (test_write_dictionary.py).
"""

import datetime as dt
from decimal import Decimal

import lance
import numpy as np
import pyarrow as pa
import pytest

from support import rows_from_arrow, rows_from_spark, spark_saves_intervals

VERSIONS = ["2.0", "2.1", "2.2"]
UTC = dt.timezone.utc


# name -> (Arrow type, field metadata, versions pylance writes it in). A packed struct's rows
# and fields are never null: pylance packs only structs without null children (and strings
# from 2.2 on).
TYPES = {
    "null": (pa.null(), None, VERSIONS),
    "bool": (pa.bool_(), None, VERSIONS),
    "uint8": (pa.uint8(), None, VERSIONS),
    "uint16": (pa.uint16(), None, VERSIONS),
    "uint32": (pa.uint32(), None, VERSIONS),
    "uint64": (pa.uint64(), None, VERSIONS),
    "float16": (pa.float16(), None, VERSIONS),
    "fixed_size_binary": (pa.binary(4), None, VERSIONS),
    "decimal128": (pa.decimal128(12, 3), None, VERSIONS),
    "decimal256": (pa.decimal256(20, 4), None, VERSIONS),
    "date64": (pa.date64(), None, VERSIONS),
    "time32": (pa.time32("ms"), None, VERSIONS),
    "time64": (pa.time64("us"), None, VERSIONS),
    "duration_us": (pa.duration("us"), None, VERSIONS),
    "duration_ns": (pa.duration("ns"), None, VERSIONS),
    "timestamp_ns_utc": (pa.timestamp("ns", "UTC"), None, VERSIONS),
    "timestamp_ns": (pa.timestamp("ns"), None, VERSIONS),
    "timestamp_s_utc": (pa.timestamp("s", "UTC"), None, VERSIONS),
    "timestamp_ms": (pa.timestamp("ms"), None, VERSIONS),
    "large_string": (pa.large_string(), None, VERSIONS),
    "large_binary": (pa.large_binary(), None, VERSIONS),
    "fixed_size_list": (pa.list_(pa.float32(), 4), None, VERSIONS),
    "large_list": (pa.large_list(pa.int32()), None, VERSIONS),
    "list_of_struct": (
        pa.list_(pa.struct([("a", pa.int32()), ("b", pa.string())])),
        None,
        VERSIONS,
    ),
    "struct_with_null": (pa.struct([("x", pa.null()), ("y", pa.int32())]), None, VERSIONS),
    "map": (pa.map_(pa.string(), pa.int64()), None, ["2.2"]),
    "packed_struct": (
        pa.struct([("x", pa.int32()), ("y", pa.float64())]),
        {"lance-encoding:packed": "true"},
        VERSIONS,
    ),
    "variable_packed_struct": (
        pa.struct([("x", pa.int32()), ("s", pa.string())]),
        {"lance-encoding:packed": "true"},
        ["2.2"],
    ),
    "blob": (pa.large_binary(), {"lance-encoding:blob": "true"}, VERSIONS),
    "zstd_string": (pa.string(), {"lance-encoding:compression": "zstd"}, VERSIONS),
}


def arrow_value(t, i, version, nulls=True):
    """A low-cardinality value of Arrow type `t` for row `i` (None every seventh row)."""
    if pa.types.is_null(t):
        return None
    if nulls and i % 7 == 3 and not (pa.types.is_struct(t) and version == "2.0"):
        return None
    v = (i * 3) % 5
    if pa.types.is_boolean(t):
        return v % 2 == 0
    if pa.types.is_integer(t):
        return v * 11
    if pa.types.is_floating(t):
        return np.float16(v + 0.5) if pa.types.is_float16(t) else v + 0.5
    if pa.types.is_fixed_size_binary(t):
        return bytes([v, v + 1, v + 2, v + 3])
    if pa.types.is_decimal(t):
        return Decimal(v) / 4
    if pa.types.is_date(t):
        return dt.date(2021, 3, 1) + dt.timedelta(days=v)
    if pa.types.is_time(t):
        return dt.time(10, v, 30)
    if pa.types.is_duration(t):
        return dt.timedelta(seconds=v, milliseconds=v)
    if pa.types.is_timestamp(t):
        ts = dt.datetime(2022, 5, 6, 7, 8, v)
        return ts.replace(tzinfo=UTC) if t.tz else ts
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return f"value-{v}"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return f"bytes-{v}".encode()
    if pa.types.is_fixed_size_list(t):
        return [arrow_value(t.value_type, i + k, version) for k in range(t.list_size)]
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return [arrow_value(t.value_type, i + k, version) for k in range(v % 3)]
    if pa.types.is_map(t):
        return [(f"k{k}", arrow_value(t.item_type, i + k, version)) for k in range(v % 3)]
    if pa.types.is_struct(t):
        return {
            t.field(k).name: arrow_value(t.field(k).type, i + k, version, nulls)
            for k in range(t.num_fields)
        }
    raise AssertionError(f"no value for {t}")


def pylance_table(name, version, start, n):
    t, md, _ = TYPES[name]
    nulls = not name.endswith("packed_struct")
    values = [arrow_value(t, i, version, nulls) for i in range(start, start + n)]
    if pa.types.is_float16(t):
        col = pa.array(
            np.array([np.nan if v is None else v for v in values], np.float16),
            mask=np.array([v is None for v in values]),
        )
    else:
        col = pa.array(values, t)
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("c", t, metadata=md)])
    return pa.Table.from_arrays([pa.array(range(start, start + n), pa.int64()), col], schema=schema)


def spark_form(value):
    """A canonical value (support.arrow_to_spark_values) as createDataFrame takes it."""
    if isinstance(value, tuple) and len(value) == 2 and value[0] == "f":
        return float(value[1])
    if isinstance(value, list):
        return [spark_form(v) for v in value]
    if isinstance(value, dict):
        return {k: spark_form(v) for k, v in value.items()}
    return value


def is_blob(field):
    return (field.metadata or {}).get(b"lance-encoding:blob") == b"true" or "blob" in str(
        field.type
    )


def pylance_rows(path):
    """What pylance reads: canonical rows sorted by id; a blob column as take_blobs' bytes."""
    ds = lance.dataset(path)
    ds.validate()
    if is_blob(ds.schema.field("c")):
        ids = ds.to_table(columns=["id"]).column("id").to_pylist()
        blobs = ds.take_blobs("c", indices=list(range(len(ids))))
        return sorted((i, None if f is None else f.read()) for i, f in zip(ids, blobs))
    return sorted(rows_from_arrow(ds.to_table()), key=lambda r: r[0])


def spark_rows(df):
    return sorted(rows_from_spark(df.collect(), df.schema), key=lambda r: r[0])


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name", list(TYPES))
def test_spark_appends_then_pylance_reads_validates_and_appends(spark, tmp_path, name, version):
    if version not in TYPES[name][2]:
        pytest.skip(f"pylance 14.0.2 does not write {name} in {version}")
    path = str(tmp_path / "ds")
    base = pylance_table(name, version, 0, 300)
    lance.write_dataset(base, path, data_storage_version=version)
    expected = pylance_rows(path)
    assert len(expected) == 300
    schema = spark.read.format("lance").load(path).schema
    interval = any("interval" in f.dataType.simpleString() for f in schema.fields)
    base_values = [tuple(spark_form(v) for v in r) for r in rows_from_arrow(base)]

    # What each append must add, as pylance reads it: pylance's own base rows under new ids.
    base_rows = expected
    next_id = 1000
    for n in (1, 2, 100, 5000):
        # The dataset's own rows read back through Spark, repeated to n rows.
        copies = (n + 299) // 300
        own = (
            spark.read.format("lance")
            .load(path)
            .where("id < 300")
            .crossJoin(spark.range(copies).withColumnRenamed("id", "r"))
            .selectExpr(f"id + {next_id} + r * 1000 as id", "c")
            .orderBy("id")
            .limit(n)
        )
        own_rows = sorted(
            (row[0] + next_id + r * 1000,) + row[1:] for r in range(copies) for row in base_rows
        )[:n]
        # New rows built in Spark from Python values.
        rows = [(next_id + 500_000 + k,) + base_values[k % 300][1:] for k in range(n)]
        new = spark.createDataFrame(rows, schema)
        new_rows = [(next_id + 500_000 + k,) + base_rows[k % 300][1:] for k in range(n)]
        for df, appended in ((own, own_rows), (new, new_rows)):
            if interval and not spark_saves_intervals(spark):
                # Spark 3.5's save() refuses interval columns for every format: writeTo.
                df.writeTo(f"lance.`{path}`").append()
            else:
                df.write.format("lance").mode("append").save(path)
            expected = sorted(expected + appended, key=lambda r: r[0])
            assert pylance_rows(path) == expected, f"after appending {n} rows"
        next_id += 1_000_000

    # pylance appends after Spark, and Spark reads everything as pylance does.
    more = pylance_table(name, version, 10**9, 50)
    lance.write_dataset(more, path, mode="append")
    final = pylance_rows(path)
    assert len(final) == len(expected) + 50
    assert spark_rows(spark.read.format("lance").load(path)) == final
