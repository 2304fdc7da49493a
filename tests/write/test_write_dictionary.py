"""Spark appends to pylance datasets with dictionary columns (pandas Categoricals,
``dictionary_encode()``): pylance must read every row back exactly, validate the dataset and
keep appending, for every file version, key width and value type.

pylance 14.0.2 decodes a dictionary field only from dictionary pages whose keys have the
declared width; a plain string page in such a column made the whole table unreadable for
pylance (``Expected 1 buffers in array of type Dictionary(Int32, Utf8), got 2``).
"""

import lance
import pyarrow as pa
import pytest

from helpers import lance_rows, spark_rows

VERSIONS = ["2.0", "2.1", "2.2"]

# (key type, value type) pairs: every key width, signed and unsigned, and each value shape.
DICT_TYPES = [
    (pa.int8(), pa.string()),
    (pa.int16(), pa.string()),
    (pa.int32(), pa.string()),
    (pa.uint8(), pa.string()),
    (pa.int32(), pa.large_string()),
    (pa.int16(), pa.binary()),
    (pa.int32(), pa.int64()),
]


def dict_id(p):
    key, value = p
    return f"{value}-{key}"


def values_of(value_type, n, start=0, distinct=5):
    """Low-cardinality values of `value_type`, every seventh one null."""

    def one(i):
        if i % 7 == 3:
            return None
        v = (i * 3) % distinct
        if pa.types.is_integer(value_type):
            return v * 1000
        s = f"v{v}"
        return s.encode() if pa.types.is_binary(value_type) else s

    return [one(i) for i in range(start, start + n)]


def dict_array(values, key_type, value_type):
    return (
        pa.array(values, value_type).dictionary_encode().cast(pa.dictionary(key_type, value_type))
    )


def base_table(key_type, value_type, n=300):
    return pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "d": dict_array(values_of(value_type, n), key_type, value_type),
        }
    )


def spark_value_sql(value_type):
    """The SQL expression for Spark-built rows matching `values_of` (on column `i`)."""
    v = "(i * 3) % 5"
    if pa.types.is_integer(value_type):
        expr = f"cast({v} * 1000 as bigint)"
    elif pa.types.is_binary(value_type):
        expr = f"cast(concat('v', {v}) as binary)"
    else:
        expr = f"concat('v', {v})"
    return f"case when i % 7 = 3 then null else {expr} end"


def check_pylance_reads(path, expected, key_type, value_type):
    ds = lance.dataset(path)
    ds.validate()
    assert ds.schema.field("d").type == pa.dictionary(key_type, value_type)
    table = ds.to_table()
    assert lance_rows(table) == sorted(expected, key=lambda r: r["id"])


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("types", DICT_TYPES, ids=dict_id)
def test_spark_appends_to_dictionary_column(spark, tmp_path, version, types):
    key_type, value_type = types
    path = str(tmp_path / "ds")
    base = base_table(key_type, value_type)
    lance.write_dataset(base, path, data_storage_version=version)
    expected = lance_rows(base)
    next_id = 1000
    for n in (1, 2, 100, 5000):
        # The dataset's own rows, read back through Spark (as many as asked, repeated).
        own = (
            spark.read.format("lance")
            .load(path)
            .crossJoin(spark.range((n + 299) // 300).withColumnRenamed("id", "r"))
            .selectExpr(f"id + {next_id} + r * 100000 as id", "d")
            .orderBy("id")
            .limit(n)
        )
        rows = spark_rows(own)
        own.write.format("lance").mode("append").save(path)
        expected += rows
        next_id += 1_000_000
        check_pylance_reads(path, expected, key_type, value_type)

        # New rows built in Spark.
        new = (
            spark.range(n)
            .selectExpr("id as i")
            .selectExpr(f"i + {next_id} as id", f"{spark_value_sql(value_type)} as d")
        )
        rows = spark_rows(new)
        new.write.format("lance").mode("append").save(path)
        expected += rows
        next_id += 1_000_000
        check_pylance_reads(path, expected, key_type, value_type)

    # pylance keeps appending its own dictionary rows, and Spark reads everything as pylance does.
    more = pa.table(
        {
            "id": pa.array(range(10**9, 10**9 + 50), pa.int64()),
            "d": dict_array(values_of(value_type, 50), key_type, value_type),
        }
    )
    lance.write_dataset(more, path, mode="append")
    expected += lance_rows(more)
    check_pylance_reads(path, expected, key_type, value_type)
    assert spark_rows(spark.read.format("lance").load(path)) == sorted(
        expected, key=lambda r: r["id"]
    )


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("key_type", [pa.int8(), pa.uint8()], ids=str)
def test_more_distinct_values_than_the_key_type_indexes(spark, tmp_path, version, key_type):
    """A page holds at most what its keys can index (128 for int8, 256 for uint8); the writer
    ends pages early so that 1000 distinct values still append."""
    path = str(tmp_path / "ds")
    base = base_table(key_type, pa.string(), n=10)
    lance.write_dataset(base, path, data_storage_version=version)
    new = spark.range(3000).selectExpr(
        "id + 100 as id", "case when id % 11 = 0 then null else concat('w', id % 1000) end as d"
    )
    rows = spark_rows(new)
    new.repartition(1).write.format("lance").mode("append").save(path)
    check_pylance_reads(path, lance_rows(base) + rows, key_type, pa.string())


@pytest.mark.parametrize("version", VERSIONS)
def test_all_null_and_single_value_pages(spark, tmp_path, version):
    path = str(tmp_path / "ds")
    base = base_table(pa.int32(), pa.string(), n=20)
    lance.write_dataset(base, path, data_storage_version=version)
    expected = lance_rows(base)
    for i, value in enumerate(["null", "'same'"]):
        new = spark.range(500).selectExpr(
            f"id + {1000 * (i + 1)} as id", f"cast({value} as string) as d"
        )
        expected += spark_rows(new)
        new.write.format("lance").mode("append").save(path)
        check_pylance_reads(path, expected, pa.int32(), pa.string())
