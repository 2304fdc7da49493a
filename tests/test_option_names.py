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
        want = sorted(
            lance.dataset(three_versions, version=v["version"]).to_table()["id"].to_pylist()
        )
        assert ids(a) == ids(b) == want


def test_version_as_of_rejects_a_tag_name_and_two_version_options(spark, three_versions):
    with pytest.raises(Exception, match="versionAsOf"):
        spark.read.format("lance").option("versionAsOf", "nightly").load(three_versions).collect()
    with pytest.raises(Exception, match="set only one of"):
        spark.read.format("lance").option("versionAsOf", 1).option("version", 2).load(
            three_versions
        ).collect()


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


# ---- No option silently ignored --------------------------------------------------------------


@pytest.mark.parametrize(
    "typo,known",
    [
        ("verison", "version"),
        ("batchsize", "batch_size"),
        ("Timestampp", "timestamp"),
        ("tga", "tag"),
    ],
)
def test_a_misspelt_read_option_is_refused_naming_the_nearest(spark, three_versions, typo, known):
    with pytest.raises(
        Exception, match=f"Unknown option '{typo}' for format lance; did you mean '{known}'"
    ):
        spark.read.format("lance").option(typo, "1").load(three_versions).collect()


def test_a_misspelt_write_option_is_refused_and_nothing_is_written(spark, three_versions):
    before = lance.dataset(three_versions).version
    with pytest.raises(Exception, match="did you mean 'max_rows_per_file'"):
        spark.range(5).write.format("lance").mode("append").option("max_rows_per_fil", 10).save(
            three_versions
        )
    with pytest.raises(Exception, match="did you mean 'data_storage_version'"):
        spark.range(5).writeTo(f"lance.`{three_versions}`").option(
            "data_storage_verison", "2.1"
        ).append()
    assert lance.dataset(three_versions).version == before


def test_the_python_helpers_pass_the_same_check(spark, three_versions):
    import spark_lance

    with pytest.raises(Exception, match="did you mean 'tag'"):
        spark_lance.read_lance(spark, three_versions, tagg="x").collect()
    with pytest.raises(Exception, match="did you mean 'commit_message'"):
        spark_lance.write_lance(spark.range(1), three_versions, mode="append", comit_message="m")


@pytest.mark.parametrize(
    "option", ["readChangeFeed", "snapshot-id", "startingVersion", "as-of-timestamp"]
)
def test_other_formats_read_options_are_refused_saying_why(spark, three_versions, option):
    with pytest.raises(Exception, match=f"Option '{option}' is not supported by format lance"):
        spark.read.format("lance").option(option, "1").load(three_versions).collect()


@pytest.mark.parametrize("option", ["overwriteSchema", "txnAppId", "partitionOverwriteMode"])
def test_other_formats_write_options_are_refused(spark, three_versions, option):
    with pytest.raises(Exception, match=option):
        spark.range(1).write.format("lance").mode("overwrite").option(option, "true").save(
            three_versions
        )
    assert lance.dataset(three_versions).version == 3


def test_storage_settings_and_hadoop_keys_pass(spark, three_versions):
    df = (
        spark.read.format("lance")
        .option("aws_region", "eu-west-1")
        .option("fs.permissions.umask-mode", "022")
        .option("storage_options.timeout", "30s")
        .load(three_versions)
    )
    assert ids(df) == sorted(lance.dataset(three_versions).to_table()["id"].to_pylist())


def test_the_session_setting_lets_unknown_names_through_but_not_other_formats(
    spark, three_versions
):
    # On the session itself: Spark 3.5's provider sees the active (default) session's conf.
    spark.conf.set("spark.lance.allowUnknownOptions", "true")
    try:
        df = spark.read.format("lance").option("header", "true").load(three_versions)
        assert ids(df) == sorted(lance.dataset(three_versions).to_table()["id"].to_pylist())
        with pytest.raises(Exception, match="readChangeFeed"):
            spark.read.format("lance").option("readChangeFeed", "true").load(
                three_versions
            ).collect()
    finally:
        spark.conf.unset("spark.lance.allowUnknownOptions")


def test_a_misspelt_catalog_option_is_refused(spark, three_versions, tmp_path):
    s = spark.newSession()
    s.conf.set("spark.sql.catalog.typo_cat", "io.sparklance.spark.LanceCatalog")
    s.conf.set("spark.sql.catalog.typo_cat.rooot", str(tmp_path))
    with pytest.raises(Exception, match="did you mean 'root'"):
        s.sql(f"select * from typo_cat.`{three_versions}`").collect()


def readme_table_names(header):
    """Backticked names in the first column of the README table under `header`."""
    import re
    from pathlib import Path

    lines = (Path(__file__).resolve().parents[1] / "README.md").read_text().splitlines()
    start = lines.index(header)
    names = set()
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        names |= set(re.findall(r"`([^`]+)`", line.split("|")[1]))
    return names


def test_the_readme_lists_every_option_of_the_registry(spark):
    reg = spark._jvm.io.sparklance.spark.LanceOptionNames

    def names(kind):
        return set(reg.documented(kind).split(","))

    read_and_write = names("read") | names("write")
    documented = set()
    import re
    from pathlib import Path

    lines = (Path(__file__).resolve().parents[1] / "README.md").read_text().splitlines()
    for i, line in enumerate(lines):
        if line == "| option | meaning |":
            for row in lines[i + 2 :]:
                if not row.startswith("|"):
                    break
                documented |= set(re.findall(r"`([^`]+)`", row.split("|")[1]))
    assert documented == read_and_write
    assert readme_table_names("| pylance name | S3A name | meaning |") == names("storage")
    assert readme_table_names("| other format's option | why refused |") == names("foreign")


def test_names_differing_only_in_case_are_refused_unless_spark_is_case_sensitive(spark, tmp_path):
    df = spark.range(2).selectExpr("id as a", "id + 1 as A")
    with pytest.raises(Exception, match="'a' and 'A'.*differ only in case"):
        df.write.format("lance").save(str(tmp_path / "ci"))
    with pytest.raises(Exception, match="'s.x' and 's.X'"):
        spark.range(1).selectExpr("named_struct('x', 1, 'X', 2) as s").write.format("lance").save(
            str(tmp_path / "ci2")
        )
    s = spark.newSession()
    s.conf.set("spark.sql.caseSensitive", "true")
    s.range(2).selectExpr("id as a", "id + 1 as A").write.format("lance").save(str(tmp_path / "cs"))
    assert lance.dataset(str(tmp_path / "cs")).schema.names == ["a", "A"]


def test_an_extra_column_names_merge_schema_and_a_bad_vector_names_the_dataset(
    spark, three_versions
):
    with pytest.raises(Exception, match="mergeSchema=true"):
        spark.range(1).selectExpr("id", "1 as extra").write.format("lance").mode("append").save(
            three_versions
        )
    path = three_versions + "_vec"
    spark.createDataFrame([(1, [1.0, 2.0])], "id long, v array<float>").write.format(
        "lance"
    ).option("vector_columns", "v:2").save(path)
    with pytest.raises(Exception, match=f"Cannot write to Lance dataset {path}: column 'v'"):
        spark.createDataFrame([(2, [1.0, 2.0, 3.0])], "id long, v array<float>").write.format(
            "lance"
        ).mode("append").save(path)
