"""Shared helpers: normalizing rows from Spark and pylance so they compare exactly."""

import datetime
import math
import os


def norm(v):
    """A canonical Python value: maps as sorted key/value lists, floats exact (NaN as a tag)."""
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [norm(x) for x in v]
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    if isinstance(v, bytearray):
        return bytes(v)
    if isinstance(v, datetime.datetime) and v.tzinfo is not None:
        return v.astimezone(datetime.timezone.utc)
    return v


def spark_rows(df, key="id"):
    """Rows of a Spark DataFrame as dicts (maps as (key, value) lists like pyarrow), sorted by key."""
    import pyspark.sql.types as T

    def conv(value, dt):
        if value is None:
            return None
        if isinstance(dt, T.StructType):
            return {f.name: conv(value[f.name], f.dataType) for f in dt.fields}
        if isinstance(dt, T.ArrayType):
            return [conv(x, dt.elementType) for x in value]
        if isinstance(dt, T.MapType):
            return [(conv(k, dt.keyType), conv(x, dt.valueType)) for k, x in value.items()]
        if isinstance(dt, T.TimestampType):
            return value.replace(tzinfo=datetime.timezone.utc) if value.tzinfo is None else value
        return value

    rows = [{f.name: conv(r[f.name], f.dataType) for f in df.schema.fields} for r in df.collect()]
    return [norm(r) for r in sorted(rows, key=lambda r: r[key])]


def lance_rows(table, key="id"):
    rows = table.to_pylist()
    return [norm(r) for r in sorted(rows, key=lambda r: r[key])]


def sorted_map_rows(rows, cols):
    """Maps have no order in Spark; sort their entries for comparison."""
    out = []
    for r in rows:
        r = dict(r)
        for c in cols:
            if r[c] is not None:
                r[c] = sorted(r[c], key=lambda kv: kv[0])
        out.append(r)
    return out


def data_files(path):
    d = os.path.join(path, "data")
    return sorted(os.listdir(d)) if os.path.isdir(d) else []


def versions(path):
    import lance

    return [v["version"] for v in lance.dataset(path).versions()]
