"""Option names of other formats: time travel with Delta's and Iceberg's versionAsOf and
timestampAsOf reads what `version`/`timestamp` read (as pylance reads that version); write
options that would change what a write does are refused, never silently ignored."""

import datetime as dt

import lance
import pyarrow as pa
import pytest


def table(start, n):
    return pa.table({"id": pa.array(range(start, start + n), pa.int64())})


@pytest.fixture
def three_versions(tmp_path):
    path = str(tmp_path / "ds")
    lance.write_dataset(table(0, 5), path)
    lance.write_dataset(table(5, 5), path, mode="append")
    lance.dataset(path).delete("id < 3")
    return path


def ids(df):
    return sorted(r[0] for r in df.select("id").collect())


@pytest.mark.parametrize("version", [1, 2, 3])
def test_version_as_of_reads_that_version(spark, three_versions, version):
    want = sorted(lance.dataset(three_versions, version=version).to_table()["id"].to_pylist())
    df = spark.read.format("lance").option("versionAsOf", version).load(three_versions)
    assert ids(df) == want
    assert ids(spark.read.format("lance").option("version", version).load(three_versions)) == want


def test_timestamp_as_of_reads_the_version_committed_then(spark, three_versions):
    # The newest version at or before each commit time is that commit's version.
    for v in lance.dataset(three_versions).versions():
        micros = int(v["timestamp"].timestamp() * 1_000_000) + 1
        stamp = dt.datetime.fromtimestamp(micros / 1_000_000, dt.timezone.utc).isoformat()
        a = spark.read.format("lance").option("timestampAsOf", stamp).load(three_versions)
        b = spark.read.format("lance").option("timestamp", stamp).load(three_versions)
        want = sorted(lance.dataset(three_versions, version=v["version"]).to_table()["id"]
                      .to_pylist())
        assert ids(a) == ids(b) == want


def test_version_as_of_rejects_a_tag_name_and_two_version_options(spark, three_versions):
    with pytest.raises(Exception, match="versionAsOf"):
        spark.read.format("lance").option("versionAsOf", "nightly").load(three_versions) \
            .collect()
    with pytest.raises(Exception, match="set only one of"):
        spark.read.format("lance").option("versionAsOf", 1).option("version", 2) \
            .load(three_versions).collect()


@pytest.mark.parametrize("option,value", [("partitionOverwriteMode", "dynamic")])
def test_result_changing_write_options_are_refused(spark, three_versions, option, value):
    before = lance.dataset(three_versions)
    df = spark.range(100, 103)
    with pytest.raises(Exception, match=option):
        df.write.format("lance").mode("overwrite").option(option, value).save(three_versions)
    after = lance.dataset(three_versions)
    assert after.version == before.version
    assert after.to_table() == before.to_table()


def test_partition_by_and_unreadable_names_are_refused(spark, tmp_path):
    path = str(tmp_path / "p")
    df = spark.range(4).selectExpr("id", "id % 2 as part")
    with pytest.raises(Exception, match="partition"):
        df.write.format("lance").partitionBy("part").save(path)
    with pytest.raises(Exception, match="'a.b'"):
        spark.range(2).selectExpr("id as `a.b`").write.format("lance").save(path)
    with pytest.raises(Exception, match="no columns"):
        spark.range(2).select().write.format("lance").save(path)
    import os
    assert not os.path.exists(os.path.join(path, "_versions"))
