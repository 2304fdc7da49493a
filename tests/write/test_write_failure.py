"""A write that fails midway commits nothing and leaves no data files behind."""

import lance
import pytest
from pyspark.sql.functions import udf

from helpers import data_files


def explode_at_1500(col):
    # Defined inside a function so cloudpickle ships it by value (workers cannot import this module).
    def boom(x):
        if x == 1500:
            raise ValueError("boom at 1500")
        return x

    return udf(boom, "long")(col)


@pytest.mark.parametrize("mode", ["append", "overwrite"])
def test_failing_udf_leaves_previous_version_intact(spark, tmp_path, mode):
    path = str(tmp_path / "ds")
    spark.range(100).write.format("lance").save(path)
    before = data_files(path)
    df = spark.range(3000).repartition(3).select(explode_at_1500("id").alias("id"))
    with pytest.raises(Exception, match="boom at 1500"):
        df.write.format("lance").mode(mode).save(path)
    ds = lance.dataset(path)
    assert ds.version == 1
    assert sorted(ds.to_table()["id"].to_pylist()) == list(range(100))
    assert data_files(path) == before


def test_failing_create_leaves_no_dataset(spark, tmp_path):
    path = str(tmp_path / "ds")
    df = spark.range(3000).repartition(3).select(explode_at_1500("id").alias("id"))
    with pytest.raises(Exception, match="boom at 1500"):
        df.write.format("lance").save(path)
    import os

    assert not os.path.exists(os.path.join(path, "_versions")) or not os.listdir(
        os.path.join(path, "_versions")
    )
    assert data_files(path) == []
    # The path is still free for a later create.
    spark.range(5).write.format("lance").save(path)
    assert lance.dataset(path).count_rows() == 5
