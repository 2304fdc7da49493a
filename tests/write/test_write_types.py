"""Spark writes every Spark type, nulls everywhere, in 2.0/2.1/2.2; pylance reads exactly what Spark had."""

import lance
import pytest

from helpers import lance_rows, sorted_map_rows, spark_rows
from support import spark_saves_intervals

# Every Spark type the connector writes, with nulls in every nullable position (top level,
# struct fields, list items, map values, vector rows) and non-null rows too.
ALL_TYPES_SQL = """
select
  id,
  if(id % 7 = 0, null, id % 2 = 0) as b,
  if(id % 5 = 0, null, cast(id % 128 as tinyint)) as i8,
  if(id % 5 = 1, null, cast(id * 3 as smallint)) as i16,
  if(id % 5 = 2, null, cast(id * 100003 as int)) as i32,
  if(id % 5 = 3, null, id * 1000000007) as i64,
  if(id % 6 = 0, null, cast(id as float) / 3) as f32,
  if(id % 6 = 1, null, cast(id as double) / 7) as f64,
  if(id % 4 = 0, null, concat('str-', id, repeat('x', cast(id % 20 as int)))) as s,
  if(id % 9 = 0, null, repeat('long', 80 + cast(id % 40 as int))) as long_s,
  if(id % 4 = 1, null, cast(concat('bin', id) as binary)) as bin,
  if(id % 8 = 0, null, cast(id * 12.345 as decimal(12, 3))) as dec_small,
  if(id % 8 = 1, null, cast(id * 1234567890123.45678 as decimal(38, 5))) as dec_big,
  if(id % 3 = 0, null, date_add(date'2020-01-01', cast(id as int))) as dt,
  if(id % 3 = 1, null, timestamp_micros(1600000000000000 + id * 1234567)) as ts,
  if(id % 3 = 2, null, cast(timestamp_micros(1600000000000000 + id * 7654321) as timestamp_ntz)) as ts_ntz,
  if(id % 10 = 0, null, array(id, null, id + 1)) as l,
  if(id % 10 = 1, null, if(id % 10 = 2, array(), array(array('a', null), null, array()))) as ll,
  if(id % 11 = 0, null, named_struct('x', if(id % 2 = 0, null, id), 'y', concat('y', id),
      'z', array(cast(id as double), null))) as st,
  if(id % 12 = 0, null, array(named_struct('a', cast(id as int), 'b', if(id % 3 = 0, null, 'b')))) as lst,
  if(id % 13 = 0, null, map('k1', if(id % 2 = 0, null, id), 'k2', id + 1)) as m,
  if(id % 14 = 0, null, make_dt_interval(0, 0, 0, id)) as dti
from range(3000)
"""

VERSIONS = ["2.0", "2.1", "2.2"]


def frame(spark, version):
    df = spark.sql(ALL_TYPES_SQL)
    if not spark_saves_intervals(spark):
        df = df.drop("dti")
    if version != "2.2":
        df = df.drop("m")  # maps need 2.2 (as in pylance)
    if version == "2.0":
        # 2.0 cannot store null structs (pylance refuses them too): keep the struct always present.
        df = df.drop("st", "lst").selectExpr(
            "*", "named_struct('x', if(id % 2 = 0, null, id), 'y', concat('y', id)) as st"
        )
    return df


@pytest.mark.parametrize("version", VERSIONS)
def test_pylance_reads_what_spark_wrote(spark, tmp_path, version):
    df = frame(spark, version).repartition(3)
    path = str(tmp_path / "ds")
    df.write.format("lance").option("data_storage_version", version).option(
        "max_rows_per_file", 700
    ).save(path)

    ds = lance.dataset(path)
    ds.validate()
    assert ds.version == 1
    assert ds.data_storage_version == version
    frags = ds.get_fragments()
    assert len(frags) >= 5  # 3 tasks, files rolled at 700 rows
    assert all(f.count_rows() <= 700 for f in frags)

    maps = ["m"] if version == "2.2" else []
    expected = sorted_map_rows(spark_rows(df), maps)
    actual = sorted_map_rows(lance_rows(ds.to_table()), maps)
    assert len(actual) == len(expected) == 3000
    for e, a in zip(expected, actual):
        assert a == e, f"row {e['id']}: pylance read {a}, Spark wrote {e}"

    # Random access (take) goes through the repetition index and chunk metadata.
    idx = [0, 1, 2, 699, 700, 1500, 2999]
    taken = ds.take(idx).to_pylist()
    assert len(taken) == len(idx)


@pytest.mark.parametrize("version", VERSIONS)
def test_spark_reads_back_what_it_wrote(spark, tmp_path, version):
    df = frame(spark, version)
    path = str(tmp_path / "ds")
    df.write.format("lance").option("data_storage_version", version).save(path)
    back = spark.read.format("lance").load(path)
    maps = ["m"] if version == "2.2" else []
    assert sorted_map_rows(spark_rows(back), maps) == sorted_map_rows(spark_rows(df), maps)


@pytest.mark.line_smoke
def test_interval_columns_on_spark_35_are_refused_by_spark(spark, tmp_path):
    """On Spark 3.5 the refusal is Spark's own, before the connector sees the data."""
    if spark_saves_intervals(spark):
        pytest.skip("Spark 4 saves interval columns (covered by the tests above)")
    df = spark.sql("select id, make_dt_interval(0, 0, 0, id) as dti from range(3)")
    with pytest.raises(Exception, match="interval"):
        df.write.format("lance").save(str(tmp_path / "ds"))


def test_lance_types_survive_read_then_write(spark, tmp_path):
    """Types Spark has no exact name for (unsigned, half float, ns timestamps, vectors) keep their Lance type."""
    import numpy as np
    import pyarrow as pa

    src = str(tmp_path / "src")
    t = pa.table(
        {
            "id": pa.array(range(100), pa.int64()),
            "u8": pa.array([i % 256 for i in range(100)], pa.uint8()),
            "u32": pa.array([i * 40000000 for i in range(100)], pa.uint32()),
            "u64": pa.array([2**63 + i for i in range(100)], pa.uint64()),
            "h": pa.array(np.arange(100, dtype=np.float16)),
            "tsns": pa.array(
                [1_600_000_000_000_000_001 + i for i in range(100)], pa.timestamp("ns")
            ),
            "vec": pa.FixedSizeListArray.from_arrays(pa.array(np.arange(400, dtype=np.float32)), 4),
            "big": pa.FixedSizeListArray.from_arrays(
                pa.array(np.arange(100 * 128, dtype=np.float32)), 128
            ),
            "ls": pa.array([f"s{i}" for i in range(100)], pa.large_string()),
        }
    )
    lance.write_dataset(t, src)
    dst = str(tmp_path / "dst")
    spark.read.format("lance").load(src).write.format("lance").save(dst)
    got = lance.dataset(dst).to_table()
    assert got.schema == lance.dataset(src).to_table().schema
    assert got.sort_by("id").equals(t)
