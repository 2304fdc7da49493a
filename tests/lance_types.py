"""The Lance/Arrow -> Spark type mapping the connector promises, written once, for the tests.

The Scala side (the connector's schema conversion) must stay identical to
:func:`spark_type_for_arrow`; the conformance tests check Spark's schema against it for every
fixture dataset and version.
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import types as T


class UnsupportedArrowType(Exception):
    """An Arrow type the mapping has no Spark type for (the connector must refuse the column)."""


def spark_type_for_arrow(t: pa.DataType) -> T.DataType:
    """Map a Lance (Arrow) type to the Spark type the connector exposes. Lossless by design.

    ======================================  =============================================
    Lance / Arrow                           Spark
    ======================================  =============================================
    bool                                    boolean
    int8 / int16 / int32 / int64            byte / short / int / long
    uint8                                   short
    uint16                                  int
    uint32                                  long
    uint64                                  decimal(20,0)
    float16                                 float
    float32                                 float
    float64                                 double
    decimal128(p, s)                        decimal(p, s)
    string, large_string                    string
    binary, large_binary                    binary
    fixed_size_binary                       binary
    blob (large_binary + lance-encoding:    binary: the blob's bytes (what take_blobs
    blob, or lance.blob.v2 extension)       returns), not pylance's scan descriptors
    date32                                  date
    timestamp(s|ms|us, tz)                  timestamp
    timestamp(s|ms|us, no tz)               timestamp_ntz
    timestamp(ns, any tz)                   long (raw nanoseconds; Spark cannot hold ns)
    fixed_size_list<T>[n], list<T>,
    large_list<T>                           array<T> (containsNull = item field nullable)
    struct                                  struct (field nullability = Lance's)
    map<k, v>                               map<k, v> (valueContainsNull = value nullable)
    null                                    void
    dictionary<values=T>                    T (the decoded value; Lance's dictionary
                                            encoding is storage, not a logical type)
    ======================================  =============================================

    Field nullability in Spark equals the Lance field's nullability (see
    :func:`spark_field_for_arrow`). Any other type raises :class:`UnsupportedArrowType`.
    """
    if isinstance(t, pa.BaseExtensionType) and t.extension_name == "lance.blob.v2":
        return T.BinaryType()
    if pa.types.is_boolean(t):
        return T.BooleanType()
    if pa.types.is_int8(t):
        return T.ByteType()
    if pa.types.is_int16(t):
        return T.ShortType()
    if pa.types.is_int32(t):
        return T.IntegerType()
    if pa.types.is_int64(t):
        return T.LongType()
    if pa.types.is_uint8(t):
        return T.ShortType()
    if pa.types.is_uint16(t):
        return T.IntegerType()
    if pa.types.is_uint32(t):
        return T.LongType()
    if pa.types.is_uint64(t):
        return T.DecimalType(20, 0)
    if pa.types.is_float16(t) or pa.types.is_float32(t):
        return T.FloatType()
    if pa.types.is_float64(t):
        return T.DoubleType()
    if pa.types.is_decimal128(t):
        return T.DecimalType(t.precision, t.scale)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return T.StringType()
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return T.BinaryType()
    if pa.types.is_date32(t):
        return T.DateType()
    if pa.types.is_timestamp(t):
        if t.unit == "ns":
            return T.LongType()
        return T.TimestampType() if t.tz is not None else T.TimestampNTZType()
    if pa.types.is_fixed_size_list(t) or pa.types.is_list(t) or pa.types.is_large_list(t):
        item = t.value_field
        return T.ArrayType(spark_type_for_arrow(item.type), containsNull=item.nullable)
    if pa.types.is_struct(t):
        return T.StructType([spark_field_for_arrow(t.field(i)) for i in range(t.num_fields)])
    if pa.types.is_map(t):
        return T.MapType(
            spark_type_for_arrow(t.key_field.type),
            spark_type_for_arrow(t.item_field.type),
            valueContainsNull=t.item_field.nullable,
        )
    if pa.types.is_null(t):
        return T.NullType()
    if pa.types.is_dictionary(t):
        return spark_type_for_arrow(t.value_type)
    raise UnsupportedArrowType(f"no Spark mapping for Arrow type {t}")


def spark_field_for_arrow(f: pa.Field) -> T.StructField:
    return T.StructField(f.name, spark_type_for_arrow(f.type), nullable=f.nullable)


def spark_schema_for_arrow(schema: pa.Schema) -> T.StructType:
    return T.StructType([spark_field_for_arrow(f) for f in schema])


def unsupported_fields(schema: pa.Schema) -> list[str]:
    """Top-level field names whose type has no Spark mapping."""
    bad = []
    for f in schema:
        try:
            spark_type_for_arrow(f.type)
        except UnsupportedArrowType:
            bad.append(f.name)
    return bad


def type_shape(dt: T.DataType):
    """A comparable form of a Spark type: names, types and nullability; no field metadata."""
    if isinstance(dt, T.StructType):
        return ("struct", tuple((f.name, type_shape(f.dataType), f.nullable) for f in dt.fields))
    if isinstance(dt, T.ArrayType):
        return ("array", type_shape(dt.elementType), dt.containsNull)
    if isinstance(dt, T.MapType):
        return ("map", type_shape(dt.keyType), type_shape(dt.valueType), dt.valueContainsNull)
    return dt.simpleString()
