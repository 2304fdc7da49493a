"""Lance tables on S3 — a real S3 server on localhost (moto, behind the counting, fault-injecting
proxy of tests/s3server.py), pylance and Spark on the same bucket: reads as pylance reads,
writes pylance keeps going on, SQL changes as pylance's, concurrent writers from both sides
with nothing lost, faults survived, unsafe stores refused."""

from __future__ import annotations

import collections
import threading

import lance
import pyarrow as pa
import pytest

import spark_lance
from s3server import S3Server
from support import (
    first_difference,
    lance_catalog,
    rows_from_arrow,
    rows_from_spark,
    scan_metrics,
    short_error,
    write_metrics,
)

# The object-store client is in the Spark-free core.
pytestmark = pytest.mark.default_line_only


@pytest.fixture(scope="module")
def s3():
    server = S3Server()
    yield server
    server.stop()


@pytest.fixture
def bucket(s3):
    s3.faults.reset()
    yield s3.new_bucket()
    s3.faults.reset()


@pytest.fixture
def hadoop_s3(spark, s3):
    """The S3 settings as a Spark user puts them in the Hadoop configuration
    (spark.hadoop.fs.s3a.*), for SQL that takes no options."""
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    so = s3.storage_options()
    keys = {
        "fs.s3a.access.key": so["aws_access_key_id"],
        "fs.s3a.secret.key": so["aws_secret_access_key"],
        "fs.s3a.endpoint": so["aws_endpoint"],
        "fs.s3a.endpoint.region": so["aws_region"],
        "allow_http": "true",
    }
    for k, v in keys.items():
        conf.set(k, v)
    yield
    for k in keys:
        conf.unset(k)


def data(start, n, tag="p"):
    ids = list(range(start, start + n))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "s": [None if i % 7 == 0 else f"{tag}{i}" for i in ids],
            "f": pa.array([i / 4 if i % 5 else None for i in ids], pa.float64()),
            "l": [[i, i + 1] if i % 3 else [] for i in ids],
            "st": [{"a": i % 11, "b": f"b{i}"} for i in ids],
        }
    )


SCHEMA = "id bigint, s string, f double, l array<bigint>, st struct<a: bigint, b: string>"


def frame(spark, table):
    """The rows of `table` (made by `data`) as a DataFrame."""
    return spark.createDataFrame([tuple(r.values()) for r in table.to_pylist()], SCHEMA)


def pylance_uri(uri):
    """pylance knows s3:// only; s3a:// names the same objects for Spark users."""
    return uri.replace("s3a://", "s3://", 1)


def assert_reads_as_pylance(spark, uri, so, **read):
    ds = lance.dataset(pylance_uri(uri), storage_options=so)
    ds.validate()
    want = ds.to_table().sort_by("id")
    df = spark.read.format("lance").options(**so).options(**read).load(uri)
    got = sorted(df.collect(), key=lambda r: r["id"])
    diff = first_difference(
        rows_from_arrow(want), rows_from_spark(got, df.schema), want.column_names
    )
    assert diff is None, diff


@pytest.mark.parametrize("version", ["2.0", "2.1", "2.2"])
def test_pylance_datasets_on_s3_read_as_pylance_reads_them(spark, s3, bucket, version):
    so = s3.storage_options()
    uri = f"s3://{bucket}/t.lance"
    lance.write_dataset(
        data(0, 300), uri, storage_options=so, data_storage_version=version, max_rows_per_file=100
    )
    lance.write_dataset(data(300, 50), uri, mode="append", storage_options=so)
    lance.dataset(uri, storage_options=so).delete("id % 10 = 3")
    assert_reads_as_pylance(spark, uri, so)
    # s3a:// names the same objects.
    assert_reads_as_pylance(spark, uri.replace("s3://", "s3a://"), so)
    df = spark.read.format("lance").options(**so).load(uri)
    got = sorted(r["id"] for r in df.where("id > 250 and s is not null").select("id").collect())
    want = sorted(
        lance.dataset(uri, storage_options=so)
        .to_table(columns=["id"], filter="id > 250 and s is not null")["id"]
        .to_pylist()
    )
    assert got == want
    old = spark.read.format("lance").options(**so).option("version", 2).load(uri)
    assert old.count() == lance.dataset(uri, version=2, storage_options=so).count_rows()


def test_spark_writes_on_s3_pylance_reads_and_keeps_going(spark, s3, bucket):
    so = s3.storage_options()
    uri = f"s3://{bucket}/w.lance"
    spark_lance.write_lance(frame(spark, data(0, 200)), uri, **so)
    frame(spark, data(200, 100)).write.format("lance").options(**so).mode("append").save(uri)
    ds = lance.dataset(uri, storage_options=so)
    assert ds.version == 2 and ds.count_rows() == 300
    assert_reads_as_pylance(spark, uri, so)
    # pylance keeps going on what we wrote: append, delete, index; we read what it made.
    lance.write_dataset(data(300, 20, "q"), uri, mode="append", storage_options=so)
    lance.dataset(uri, storage_options=so).delete("id < 10")
    lance.dataset(uri, storage_options=so).create_scalar_index("id", "BTREE")
    assert_reads_as_pylance(spark, uri, so)
    frame(spark, data(0, 5, "o")).write.format("lance").options(**so).mode("overwrite").save(uri)
    assert lance.dataset(uri, storage_options=so).to_table()["id"].to_pylist() == [0, 1, 2, 3, 4]
    assert_reads_as_pylance(spark, uri, so)


def test_sql_changes_on_s3_equal_pylance_on_a_twin(spark, s3, bucket, hadoop_s3):
    so = s3.storage_options()
    ours, theirs = f"s3a://{bucket}/ours.lance", f"s3://{bucket}/theirs.lance"
    for uri in (ours, theirs):
        lance.write_dataset(
            data(0, 100), pylance_uri(uri), storage_options=so, max_rows_per_file=40
        )
    spark.conf.set("spark.sql.catalog.lance_s3", "io.sparklance.spark.LanceCatalog")
    t = f"lance_s3.`{ours}`"
    spark.sql(f"delete from {t} where id % 9 = 0")
    spark.sql(f"update {t} set s = 'changed' where id between 20 and 30")
    frame(spark, data(95, 10, "m")).createOrReplaceTempView("src")
    spark.sql(
        f"merge into {t} d using src on d.id = src.id "
        "when matched then update set * when not matched then insert *"
    )
    ds = lance.dataset(theirs, storage_options=so)
    ds.delete("id % 9 = 0")
    ds.update({"s": "'changed'"}, where="id between 20 and 30")
    ds.merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(
        data(95, 10, "m")
    )
    a = lance.dataset(pylance_uri(ours), storage_options=so)
    b = lance.dataset(theirs, storage_options=so)
    a.validate()
    assert a.to_table().sort_by("id").to_pylist() == b.to_table().sort_by("id").to_pylist()
    assert [type(a.read_transaction(v).operation).__name__ for v in (2, 3, 4)] == [
        type(b.read_transaction(v).operation).__name__ for v in (2, 3, 4)
    ]


def test_a_catalog_rooted_on_s3(spark, s3, bucket):
    so = s3.storage_options()
    spark.conf.set("spark.sql.catalog.s3cat", "io.sparklance.spark.LanceCatalog")
    spark.conf.set("spark.sql.catalog.s3cat.root", f"s3://{bucket}/warehouse")
    for k, v in so.items():
        spark.conf.set(f"spark.sql.catalog.s3cat.{k}", v)
    spark.sql("create table s3cat.events (id bigint, kind string) using lance")
    spark.sql("insert into s3cat.events values (1, 'a'), (2, 'b')")
    assert [r[1] for r in spark.sql("show tables in s3cat").collect()] == ["events"]
    uri = f"s3://{bucket}/warehouse/events.lance"
    assert lance.dataset(uri, storage_options=so).to_table().sort_by("id").to_pylist() == [
        {"id": 1, "kind": "a"},
        {"id": 2, "kind": "b"},
    ]
    lance.write_dataset(
        pa.table({"id": [3], "kind": ["c"]}), uri, mode="append", storage_options=so
    )
    assert spark.sql("select count(*) from s3cat.events").collect()[0][0] == 3
    spark.sql("drop table s3cat.events purge")
    assert spark.sql("show tables in s3cat").collect() == []


def test_session_catalog_table_at_an_s3_location(spark, s3, bucket, hadoop_s3):
    """Spark's own catalog (LanceSessionCatalog) with a table at an S3 LOCATION over a
    pylance dataset: read, appended to, kept on DROP."""
    so = s3.storage_options()
    uri = f"s3://{bucket}/ext.lance"
    lance.write_dataset(pa.table({"id": pa.array([5, 6], pa.int64())}), uri, storage_options=so)
    session = spark.newSession()
    session.conf.set("spark.sql.catalog.spark_catalog", "io.sparklance.spark.LanceSessionCatalog")
    session.sql(f"create table ext_s3 using lance location '{uri}'")
    assert [r[0] for r in session.sql("select id from ext_s3 order by id").collect()] == [5, 6]
    session.sql("insert into ext_s3 values (7)")
    session.sql("drop table ext_s3")
    ds = lance.dataset(uri, storage_options=so)
    ds.validate()
    assert sorted(ds.to_table()["id"].to_pylist()) == [5, 6, 7]


def test_ddl_time_travel_and_indices_on_s3(spark, s3, bucket):
    """CTAS, ALTER TABLE, CREATE OR REPLACE (history kept), VERSION AS OF and CREATE INDEX on
    a catalog rooted on S3, each as pylance's own operation on a twin there."""
    so = s3.storage_options()
    spark.conf.set("spark.sql.catalog.s3ddl", "io.sparklance.spark.LanceCatalog")
    spark.conf.set("spark.sql.catalog.s3ddl.root", f"s3://{bucket}/wh")
    for k, v in so.items():
        spark.conf.set(f"spark.sql.catalog.s3ddl.{k}", v)
    uri, twin = f"s3://{bucket}/wh/t.lance", f"s3://{bucket}/twin.lance"
    spark.sql(
        "create table s3ddl.t using lance as "
        "select id, cast(id % 13 as string) as s from range(300)"
    )
    spark.sql("alter table s3ddl.t add columns (extra int)")
    spark.sql("alter table s3ddl.t rename column s to label")
    spark.sql("alter table s3ddl.t set tblproperties ('team' = 'ml')")
    first = spark.sql("select id, s from s3ddl.t version as of 1").collect()
    spark.sql("create index id_idx on s3ddl.t (id)")
    ours = lance.dataset(uri, storage_options=so)
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("s", pa.string())])
    lance.write_dataset(
        pa.table({"id": range(300), "s": [str(i % 13) for i in range(300)]}, schema),
        twin,
        storage_options=so,
    )
    theirs = lance.dataset(twin, storage_options=so)
    theirs.add_columns(pa.field("extra", pa.int32()))
    theirs.alter_columns({"path": "s", "name": "label"})
    theirs.update_config({"team": "ml"})
    theirs.create_scalar_index("id", "BTREE")
    theirs = lance.dataset(twin, storage_options=so)
    ours.validate()
    assert ours.schema.remove_metadata() == theirs.schema.remove_metadata()
    assert ours.config() == theirs.config()
    assert [type(ours.read_transaction(v).operation).__name__ for v in range(1, 6)] == [
        type(theirs.read_transaction(v).operation).__name__ for v in range(1, 6)
    ]
    assert sorted(tuple(r) for r in first) == sorted(
        (r["id"], r["s"])
        for r in lance.dataset(twin, version=1, storage_options=so).to_table().to_pylist()
    )
    assert "ScalarIndexQuery" in ours.scanner(filter="id = 77").explain_plan()
    assert (
        ours.describe_indices()[0].num_rows_indexed == theirs.describe_indices()[0].num_rows_indexed
    )
    assert (
        ours.to_table(filter="id = 77").to_pylist() == theirs.to_table(filter="id = 77").to_pylist()
    )
    spark.sql("create or replace table s3ddl.t using lance as select 1L as id")
    ours = lance.dataset(uri, storage_options=so)
    assert [v["version"] for v in ours.versions()] == list(range(1, 7))
    assert ours.to_table().to_pylist() == [{"id": 1}]
    spark.sql("drop table s3ddl.t")


def test_compaction_and_cleanup_on_s3(spark, s3, bucket):
    so = s3.storage_options()
    uri = f"s3://{bucket}/c.lance"
    lance.write_dataset(data(0, 20), uri, storage_options=so)
    for i in range(5):
        lance.write_dataset(data(100 + 10 * i, 5), uri, mode="append", storage_options=so)
    before = lance.dataset(uri, storage_options=so).to_table().sort_by("id").to_pylist()
    metrics = spark_lance.compact_files(spark, uri, options=so)
    assert metrics["fragments_removed"] == 6 and metrics["fragments_added"] == 1
    ds = lance.dataset(uri, storage_options=so)
    ds.validate()
    assert len(ds.get_fragments()) == 1
    assert ds.to_table().sort_by("id").to_pylist() == before
    import datetime as dt

    spark_lance.cleanup_old_versions(spark, uri, older_than=dt.timedelta(0), options=so)
    assert [v["version"] for v in lance.dataset(uri, storage_options=so).versions()] == [ds.version]
    assert_reads_as_pylance(spark, uri, so)


def test_column_changes_tags_branches_and_restore_on_s3(spark, s3, bucket):
    """The Python table API's other changes on S3, each beside pylance's own on a twin there:
    an update written as columns, a column backfill, tags, a branch and a restore."""
    so = s3.storage_options()
    ours, twin = f"s3://{bucket}/ops.lance", f"s3://{bucket}/ops_twin.lance"
    for uri in (ours, twin):
        lance.write_dataset(data(0, 60), uri, storage_options=so, max_rows_per_file=25)
    t = spark_lance.LanceTable(spark, ours, **so)
    t.update({"f": "f * 2"}, where="id >= 10", mode="columns")
    t.add_columns(
        spark.createDataFrame([(i, i * 3) for i in range(0, 60, 2)], "id bigint, x bigint"), on="id"
    )
    t.tags.create("v3", 3)
    branch = t.create_branch("exp", "v3")
    frame(spark, data(500, 4)).selectExpr("*", "id * 3 as x").write.format("lance").options(
        **so, branch="exp"
    ).mode("append").save(ours)
    t.restore(1)
    theirs = lance.dataset(twin, storage_options=so)
    theirs.update({"f": "f * 2"}, where="id >= 10")
    theirs.merge(
        pa.table(
            {
                "id": pa.array(range(0, 60, 2), pa.int64()),
                "x": pa.array([i * 3 for i in range(0, 60, 2)], pa.int64()),
            }
        ),
        "id",
    )
    theirs.tags.create("v3", 3)
    theirs.create_branch("exp", "v3")
    a = lance.dataset(ours, storage_options=so)
    a.validate()
    v3 = lance.dataset(ours, version="v3", storage_options=so)
    v3t = lance.dataset(twin, version="v3", storage_options=so)
    assert v3.to_table().sort_by("id").to_pylist() == v3t.to_table().sort_by("id").to_pylist()
    assert a.tags.list()["v3"]["version"] == 3
    assert (
        a.version == 4
        and a.to_table().sort_by("id").to_pylist()
        == lance.dataset(twin, version=1, storage_options=so).to_table().sort_by("id").to_pylist()
    )
    assert type(a.read_transaction(4).operation).__name__ == "Restore"
    got = sorted(r["id"] for r in branch.to_df().select("id").collect())
    assert got == sorted([r["id"] for r in v3t.to_table().to_pylist()] + list(range(500, 504)))
    assert_reads_as_pylance(spark, ours, so)
    want = v3.to_table().sort_by("id")
    df = spark.read.format("lance").options(**so).option("tag", "v3").load(ours)
    diff = first_difference(
        rows_from_arrow(want),
        rows_from_spark(sorted(df.collect(), key=lambda r: r["id"]), df.schema),
        want.column_names,
    )
    assert diff is None, diff


@pytest.mark.parametrize("name", ["blob_v1_2.1", "blob_v2_2.2", "blob_managed_2.2"])
def test_blob_datasets_on_s3_read_as_take_blobs(spark, s3, bucket, name):
    """Blob columns (inline, packed, dedicated and managed blobs) on S3: each row's bytes are
    what pylance's take_blobs returns there."""
    from test_blobs import BLOBS, blob_paths, spark_column, take_blobs

    so = s3.storage_options()
    src = BLOBS / f"{name}.lance"
    client = s3.client()
    for f in src.rglob("*"):
        if f.is_file():
            client.upload_file(str(f), bucket, f"{name}.lance/{f.relative_to(src)}")
    uri = f"s3://{bucket}/{name}.lance"
    ds = lance.dataset(uri, storage_options=so)
    rows = spark.read.format("lance").options(**so).load(uri).collect()
    paths = blob_paths(ds.schema)
    assert paths
    for p in paths:
        want, got = take_blobs(ds, p), spark_column(rows, p)
        assert want == got, p


def test_requests_per_commit_against_pylance(spark, s3, bucket):
    """What an append costs in requests, ours beside pylance's (printed for the record): one
    listing, the manifest, the data file, the transaction and the conditional PUT of the
    manifest — and no version hint, which pylance writes only on local files."""
    so = s3.storage_options()
    uri = f"s3://{bucket}/commits.lance"
    lance.write_dataset(data(0, 100), uri, storage_options=so)
    df = frame(spark, data(200, 50)).coalesce(1)
    s3.faults.reset()
    lance.write_dataset(data(100, 50), uri, mode="append", storage_options=so)
    theirs = s3.faults.counts("commits.lance")
    s3.faults.reset()
    df.write.format("lance").options(**so).mode("append").save(uri)
    ours = s3.faults.counts("commits.lance")
    print(f"requests for an append: ours {ours}, pylance {theirs}")
    assert ours.get("PUT", 0) == theirs.get("PUT", 0), (ours, theirs)
    assert ours.get("LIST", 0) <= theirs.get("LIST", 0), (ours, theirs)
    assert sum(ours.values()) <= sum(theirs.values()) + 1, (ours, theirs)
    keys = set(manifest_keys(s3, bucket, "commits.lance"))
    assert all(k.endswith(".manifest") for k in keys) and len(keys) == 3, keys


def test_write_metrics_count_storage_requests(spark, s3, bucket, hadoop_s3):
    """A write reports the requests its tasks sent (the data files') and, on Spark 4, those
    its driver sent to plan and commit it, as the server counted them."""
    so = s3.storage_options()
    uri = f"s3://{bucket}/wm.lance"
    lance.write_dataset(data(0, 10), uri, storage_options=so)
    c = lance_catalog(spark)
    frame(spark, data(100, 5)).coalesce(1).createOrReplaceTempView("wm_src")
    s3.faults.reset()
    metrics = write_metrics(spark.sql(f"insert into {c}.`{uri}` select * from wm_src"))
    counts = s3.faults.counts("wm.lance")
    data_requests = sum(s3.faults.counts("wm.lance/data/").values())
    if int(spark.version.split(".")[0]) >= 4:  # Spark 4 shows a write's driver metrics
        assert metrics["storageRequests"] == data_requests > 0
        commit_puts = sum(
            s3.faults.counts(f"wm.lance/{d}/").get("PUT", 0) for d in ("_versions", "_transactions")
        )
        assert (
            commit_puts <= metrics["driverStorageRequests"] <= sum(counts.values()) - data_requests
        ), (metrics, counts)


def test_wide_scans_read_nearby_pages_together(spark, s3, bucket):
    """50 small columns: their pages are read with a few requests (coalesced, as pylance
    reads them), not one each; the values are pylance's."""
    so = s3.storage_options()
    uri = f"s3://{bucket}/wide.lance"
    n = 20000
    cols = {
        f"c{j}": pa.array([(i * (j + 7)) % 1009 for i in range(n)], pa.int32()) for j in range(50)
    }
    cols["id"] = pa.array(range(n), pa.int64())
    lance.write_dataset(pa.table(cols), uri, storage_options=so, data_storage_version="2.1")
    s3.faults.reset()
    want = lance.dataset(uri, storage_options=so).to_table()
    theirs = s3.faults.counts("wide.lance/data/")
    s3.faults.reset()
    df = spark.read.format("lance").options(**so).load(uri)
    got = df.collect()
    ours = s3.faults.counts("wide.lance/data/")
    print(f"requests for the data of a 51-column scan: ours {ours}, pylance {theirs}")
    assert sum(ours.values()) <= sum(theirs.values()) + 2, (ours, theirs)
    want = want.sort_by("id")
    diff = first_difference(
        rows_from_arrow(want),
        rows_from_spark(sorted(got, key=lambda r: r["id"]), df.schema),
        want.column_names,
    )
    assert diff is None, diff


def race(spark, uri, so, spark_options):
    """6 Spark and 2 pylance writers append 8 times each to `uri` at once: every row lands
    once and the history is linear, as pylance sees it and as Spark reads it."""
    lance.write_dataset(
        pa.table({"w": pa.array([], pa.string()), "i": pa.array([], pa.int64())}),
        uri,
        storage_options=so,
    )
    commits = 8
    errors = []

    def spark_writer(w):
        try:
            for i in range(commits):
                # Eight writers on one table of a local S3 emulator: a larger commit budget
                # than the default 20 attempts / 30 s, so every write lands.
                spark.createDataFrame([(f"s{w}", i)], "w string, i bigint").write.format(
                    "lance"
                ).options(**spark_options).option("commit_retries", 200).option(
                    "commit_timeout_seconds", 600
                ).mode("append").save(uri)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(f"spark {w}: {short_error(e)}")

    def pylance_writer(w):
        try:
            for i in range(commits):
                lance.write_dataset(
                    pa.table({"w": [f"p{w}"], "i": pa.array([i], pa.int64())}),
                    uri,
                    mode="append",
                    storage_options=so,
                )
        except Exception as e:  # noqa: BLE001
            errors.append(f"pylance {w}: {e}")

    threads = [threading.Thread(target=spark_writer, args=(w,)) for w in range(6)] + [
        threading.Thread(target=pylance_writer, args=(w,)) for w in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    ds = lance.dataset(uri, storage_options=so)
    ds.validate()
    rows = sorted((r["w"], r["i"]) for r in ds.to_table().to_pylist())
    want = sorted(
        [(f"s{w}", i) for w in range(6) for i in range(commits)]
        + [(f"p{w}", i) for w in range(2) for i in range(commits)]
    )
    assert rows == want
    assert [v["version"] for v in ds.versions()] == list(range(1, 8 * commits + 2))
    got = sorted(
        (r["w"], r["i"])
        for r in spark.read.format("lance").options(**spark_options).load(uri).collect()
    )
    assert got == want


def test_concurrent_spark_and_pylance_writers_lose_nothing(spark, s3, bucket):
    so = s3.storage_options()
    race(spark, f"s3://{bucket}/race.lance", so, so)


def test_faults_lose_and_duplicate_nothing(spark, s3, bucket):
    so = s3.storage_options()
    uri = f"s3://{bucket}/faults.lance"
    lance.write_dataset(data(0, 50), uri, storage_options=so)
    with s3.faults.lock:
        s3.faults.every = 4  # every 4th request answers 503 SlowDown
    for k in range(3):
        with s3.faults.lock:
            s3.faults.ambiguous_puts = 2  # two PUTs land but answer 500
        frame(spark, data(100 * (k + 1), 20)).write.format("lance").options(**so).mode(
            "append"
        ).save(uri)
    with s3.faults.lock:
        s3.faults.status = 500
    got = sorted(
        r["id"] for r in spark.read.format("lance").options(**so).load(uri).select("id").collect()
    )
    s3.faults.reset()
    want = list(range(50)) + [i for k in range(3) for i in range(100 * (k + 1), 100 * (k + 1) + 20)]
    assert got == sorted(want)
    ds = lance.dataset(uri, storage_options=so)
    ds.validate()
    assert ds.version == 4 and ds.count_rows() == len(want)


def test_a_store_without_conditional_writes_is_refused(spark, s3, bucket):
    so = s3.storage_options()
    uri = f"s3://{bucket}/unsafe.lance"
    lance.write_dataset(data(0, 10), uri, storage_options=so)
    with s3.faults.lock:
        s3.faults.refuse_conditional = True
    with pytest.raises(Exception) as e:
        frame(spark, data(10, 5)).write.format("lance").options(**so).mode("append").save(uri)
    s3.faults.reset()
    assert "conditional writes" in str(e.value) and "aws_endpoint" in str(e.value)
    ds = lance.dataset(uri, storage_options=so)
    assert ds.version == 1 and ds.count_rows() == 10


def test_plain_http_needs_allow_http(spark, s3, bucket):
    so = dict(s3.storage_options())
    del so["allow_http"]
    with pytest.raises(Exception) as e:
        spark.read.format("lance").options(**so).load(f"s3://{bucket}/none.lance").count()
    assert "allow_http" in str(e.value) and so["aws_secret_access_key"] not in str(e.value)


def test_requests_per_scan_against_pylance(spark, s3, bucket):
    """What a full scan costs in requests, ours beside pylance's for the same dataset
    (printed for the record). Ours: one listing and one manifest read to plan, one request per
    data file (its tail, which holds these small files whole); pylance's likewise."""
    so = s3.storage_options()
    uri = f"s3://{bucket}/count.lance"
    lance.write_dataset(data(0, 4000), uri, storage_options=so, max_rows_per_file=1000)
    prefix = f"/{bucket}/count.lance"
    s3.faults.reset()
    lance.dataset(uri, storage_options=so).to_table()
    theirs = s3.faults.counts("count.lance")
    s3.faults.reset()
    metrics = scan_metrics(spark, spark.read.format("lance").options(**so).load(uri))
    ours = s3.faults.counts("count.lance")
    print(f"requests for a scan of 4 data files: ours {ours}, pylance {theirs} ({prefix})")
    assert sum(ours.values()) <= sum(theirs.values()) + 2, (ours, theirs)
    # The scan's own metric counts exactly the requests its tasks sent (the data files';
    # planning reads the manifest on the driver).
    assert metrics["storageRequests"] == sum(s3.faults.counts("count.lance/data/").values())
    assert metrics["fragmentsRead"] == 4


def data_file_gets(s3, prefix):
    """The GETs of data files under `prefix` since the last reset, as (file name, range):
    a suffix range (`bytes=-65536`) is the read of a file's tail that opening it makes."""
    with s3.faults.lock:
        return [
            (path.rsplit("/", 1)[-1], headers.get("range", ""))
            for method, path, _, headers in s3.faults.requests
            if method == "GET" and f"{prefix}/data/" in path
        ]


def test_data_file_metadata_is_read_once(spark, s3, bucket):
    """A data file's metadata (its tail) is read once per JVM: a later scan of the same
    version sends no request for a file its tail held whole, and no tail request for a larger
    one; a grouped aggregation's sample, read on the driver while planning, and its tasks
    share one read of each tail; a deletion file is read once. The values are pylance's
    every time."""
    so = s3.storage_options()
    uri = f"s3://{bucket}/once.lance"
    lance.write_dataset(data(0, 3000), uri, storage_options=so, max_rows_per_file=1000)
    lance.write_dataset(data(3000, 60000), uri, storage_options=so, mode="append")
    want = lance.dataset(uri, storage_options=so).to_table().sort_by("id")
    files = {
        f.path: f.file_size_bytes
        for fr in lance.dataset(uri, storage_options=so).get_fragments()
        for f in fr.metadata.files
    }
    small = {p for p, size in files.items() if size <= 65536}
    assert len(small) == 3 and len(files) == 4, files

    def scan():
        s3.faults.reset()
        df = spark.read.format("lance").options(**so).load(uri)
        got = sorted(df.collect(), key=lambda r: r["id"])
        diff = first_difference(
            rows_from_arrow(want), rows_from_spark(got, df.schema), want.column_names
        )
        assert diff is None, diff
        return data_file_gets(s3, "once.lance")

    first = scan()
    assert sorted(f for f, r in first if r.startswith("bytes=-")) == sorted(files), first
    second = scan()
    assert not [g for g in second if g[0] in small], second
    assert not [g for g in second if g[1].startswith("bytes=-")], second
    assert len(second) <= len([g for g in first if g[0] not in small]), (first, second)

    # A fresh dataset: the sample of the grouping and the scan open each file once.
    uri2 = f"s3://{bucket}/grouped.lance"
    lance.write_dataset(data(0, 60000), uri2, storage_options=so)
    s3.faults.reset()
    df = spark.read.format("lance").options(**so).load(uri2).groupBy("s").count()
    got = sorted((r["s"], r["count"]) for r in df.collect() if r["s"] is not None)
    tails = [f for f, r in data_file_gets(s3, "grouped.lance") if r.startswith("bytes=-")]
    assert len(tails) == 1, tails
    keys = lance.dataset(uri2, storage_options=so).to_table(columns=["s"])["s"].to_pylist()
    assert got == sorted(collections.Counter(k for k in keys if k is not None).items())

    # Deletion files likewise: a later scan of the version reads none of them again.
    lance.dataset(uri, storage_options=so).delete("id % 7 = 3")
    want = lance.dataset(uri, storage_options=so).to_table().sort_by("id")

    deletions = sorted(
        fr.metadata.deletion_file.path(fr.fragment_id)
        for fr in lance.dataset(uri, storage_options=so).get_fragments()
        if fr.metadata.deletion_file is not None
    )
    assert deletions, "the delete left no deletion file"

    def deletion_gets():
        with s3.faults.lock:
            return [
                p
                for m, p, _, _ in s3.faults.requests
                if m == "GET" and "once.lance/_deletions/" in p
            ]

    scan()
    got_paths = sorted(deletion_gets())
    assert [p.split("once.lance/", 1)[1] for p in got_paths] == deletions, got_paths
    scan()
    assert deletion_gets() == []


def test_indexed_point_queries_read_the_index_once(spark, s3, bucket):
    """A point query on a BTREE-indexed column plans from the index; repeated (each query a
    new load of the same version) it reads the manifest's index section with the manifest
    (one GET of its tail, not three requests) and the index files' metadata once per JVM:
    later queries read no lookup file at all and only pages of the index data. The rows are
    pylance's filtered read every time."""
    so = s3.storage_options()
    uri = f"s3://{bucket}/point.lance"
    lance.write_dataset(data(0, 40000), uri, storage_options=so, max_rows_per_file=10000)
    lance.dataset(uri, storage_options=so).create_scalar_index("id", "BTREE")

    def query(k):
        s3.faults.reset()
        df = spark.read.format("lance").options(**so).load(uri).filter(f"id = {k}")
        got = df.collect()
        with s3.faults.lock:
            seen = [
                (m, p.split("point.lance/", 1)[-1], h.get("range", ""))
                for m, p, _, h in s3.faults.requests
                if "point.lance" in p
            ]
        want = lance.dataset(uri, storage_options=so).to_table(filter=f"id = {k}")
        diff = first_difference(
            rows_from_arrow(want), rows_from_spark(got, df.schema), want.column_names
        )
        assert diff is None and len(got) == 1, diff
        return seen

    first = query(1234)
    for k in (20001, 39999):
        again = query(k)
        print(
            f"requests of an indexed point query: {len(first)} the first time, {len(again)} later"
        )
        manifests = [
            g
            for g in again
            if g[1].startswith("_versions/") and g[0] == "GET" and "list-type" not in g[1]
        ]
        assert len(manifests) == 1 and manifests[0][2].startswith("bytes=-"), again
        index = [g for g in again if g[1].startswith("_indices/")]
        assert not [g for g in index if "page_lookup" in g[1] or g[2].startswith("bytes=-")], (
            index,
            first,
        )
        assert len(index) <= len([g for g in first if g[1].startswith("_indices/")]), (index, first)


# ---- s3+ddb://: commits through pylance's DynamoDB external manifest store ----

DDB_TABLE = "lance_commits"


@pytest.fixture(scope="module")
def ddb(s3):
    """A DynamoDB table of pylance's layout on the same moto server; pylance finds the
    endpoint and credentials in the environment (DYNAMODB_ENDPOINT), Spark in its options."""
    import os

    import boto3

    from s3server import ACCESS_KEY, REGION, SECRET_KEY

    client = boto3.client(
        "dynamodb",
        endpoint_url=s3.direct_endpoint,
        region_name=REGION,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
    )
    client.create_table(
        TableName=DDB_TABLE,
        KeySchema=[
            {"AttributeName": "base_uri", "KeyType": "HASH"},
            {"AttributeName": "version", "KeyType": "RANGE"},
        ],
        AttributeDefinitions=[
            {"AttributeName": "base_uri", "AttributeType": "S"},
            {"AttributeName": "version", "AttributeType": "N"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    env = {
        "DYNAMODB_ENDPOINT": s3.endpoint,
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        "AWS_REGION": REGION,
        "AWS_DEFAULT_REGION": REGION,
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    yield client
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def ddb_options(s3):
    return dict(s3.storage_options(), dynamodb_endpoint=s3.endpoint)


def ddb_rows(ddb, base_uri):
    items = ddb.query(
        TableName=DDB_TABLE,
        KeyConditionExpression="base_uri = :b",
        ExpressionAttributeValues={":b": {"S": base_uri}},
        ConsistentRead=True,
    )["Items"]
    return {
        int(it["version"]["N"]): (it["path"]["S"], int(it["size"]["N"]), it["committer"]["S"])
        for it in items
    }


def manifest_keys(s3, bucket, prefix):
    listed = s3.client().list_objects_v2(Bucket=bucket, Prefix=f"{prefix}/_versions/")
    return {o["Key"]: o["Size"] for o in listed.get("Contents", [])}


def test_s3_ddb_commits_interleave_with_pylance(spark, s3, bucket, ddb):
    so, sso = s3.storage_options(), ddb_options(s3)
    uri = f"s3+ddb://{bucket}/d/t.lance?ddbTableName={DDB_TABLE}"
    lance.write_dataset(data(0, 50), uri, storage_options=so)
    frame(spark, data(100, 20)).write.format("lance").options(**sso).mode("append").save(uri)
    lance.write_dataset(data(200, 10), uri, mode="append", storage_options=so)
    frame(spark, data(300, 5)).write.format("lance").options(**sso).mode("append").save(uri)
    ds = lance.dataset(uri, storage_options=so)
    ds.validate()
    assert [v["version"] for v in ds.versions()] == [1, 2, 3, 4]
    want = ds.to_table().sort_by("id")
    df = spark.read.format("lance").options(**sso).load(uri)
    diff = first_difference(
        rows_from_arrow(want),
        rows_from_spark(sorted(df.collect(), key=lambda r: r["id"]), df.schema),
        want.column_names,
    )
    assert diff is None, diff
    # Every version has pylance's row: the final manifest key, its size, committer lancedb;
    # no staging manifest is left behind.
    keys = manifest_keys(s3, bucket, "d/t.lance")
    rows = ddb_rows(ddb, "d/t.lance")
    assert sorted(rows) == [1, 2, 3, 4]
    for version, (path, size, committer) in rows.items():
        assert path == f"d/t.lance/_versions/{2**64 - 1 - version:020d}.manifest"
        assert keys[path] == size and committer == "lancedb"
    assert not [k for k in keys if ".manifest-" in k]


def test_s3_ddb_maintenance_by_uri_commits_through_dynamodb(spark, s3, bucket, ddb):
    """The maintenance helpers take pylance's URI with its query, as reads and writes do: a
    compaction and a restore commit through DynamoDB as pylance's own on a twin, and a tag
    lands where pylance finds it."""
    so, sso = s3.storage_options(), ddb_options(s3)
    uri = f"s3+ddb://{bucket}/m/t.lance?ddbTableName={DDB_TABLE}"
    twin = f"s3+ddb://{bucket}/m/twin.lance?ddbTableName={DDB_TABLE}"
    for path in (uri, twin):
        for k in range(3):
            lance.write_dataset(data(10 * k, 10), path, mode="append", storage_options=so)
    ours = spark_lance.compact_files(spark, uri, options=sso)
    theirs = lance.dataset(twin, storage_options=so).optimize.compact_files()
    assert ours["fragments_removed"] == theirs.fragments_removed
    assert ours["fragments_added"] == theirs.fragments_added
    compacted = lance.dataset(twin, storage_options=so).version
    spark_lance.create_tag(spark, uri, "compacted", compacted, options=sso)
    restored = spark_lance.restore(spark, uri, 1, options=sso)
    lance.dataset(twin, storage_options=so, version=1).restore()
    ds, tw = lance.dataset(uri, storage_options=so), lance.dataset(twin, storage_options=so)
    ds.validate()
    assert restored == ds.version == tw.version
    assert [v["version"] for v in ds.versions()] == [v["version"] for v in tw.versions()]
    assert ds.tags.list()["compacted"]["version"] == compacted
    assert ds.to_table().sort_by("id") == tw.to_table().sort_by("id")
    tagged = lance.dataset(uri, version="compacted", storage_options=so)
    assert tagged.to_table().sort_by("id") == tw.checkout_version(compacted).to_table().sort_by(
        "id"
    )
    assert sorted(ddb_rows(ddb, "m/t.lance")) == sorted(ddb_rows(ddb, "m/twin.lance"))


def test_s3_ddb_finishes_a_version_a_writer_left_staged(spark, s3, bucket, ddb):
    """A writer that stopped after DynamoDB recorded its staging manifest: the next writer
    copies it into place, as pylance does, and commits after it."""
    so, sso = s3.storage_options(), ddb_options(s3)
    uri = f"s3+ddb://{bucket}/left.lance?ddbTableName={DDB_TABLE}"
    lance.write_dataset(data(0, 10), uri, storage_options=so)
    lance.write_dataset(data(10, 10), uri, mode="append", storage_options=so)
    final = f"left.lance/_versions/{2**64 - 3:020d}.manifest"
    staged = final + "-00000000-0000-4000-8000-000000000000"
    c = s3.client()
    c.copy_object(Bucket=bucket, Key=staged, CopySource={"Bucket": bucket, "Key": final})
    c.delete_object(Bucket=bucket, Key=final)
    size = c.head_object(Bucket=bucket, Key=staged)["ContentLength"]
    ddb.put_item(
        TableName=DDB_TABLE,
        Item={
            "base_uri": {"S": "left.lance"},
            "version": {"N": "2"},
            "path": {"S": staged},
            "size": {"N": str(size)},
            "committer": {"S": "lancedb"},
        },
    )
    frame(spark, data(20, 10)).write.format("lance").options(**sso).mode("append").save(uri)
    ds = lance.dataset(uri, storage_options=so)
    ds.validate()
    assert [v["version"] for v in ds.versions()] == [1, 2, 3]
    assert sorted(ds.to_table()["id"].to_pylist()) == list(range(30))
    assert ddb_rows(ddb, "left.lance")[2][0] == final
    assert staged not in manifest_keys(s3, bucket, "left.lance")


def test_s3_ddb_writers_race_on_a_store_without_conditional_writes(spark, s3, bucket, ddb):
    """Only DynamoDB decides who commits: the store refuses conditional PUTs here."""
    with s3.faults.lock:
        s3.faults.refuse_conditional = True
    uri = f"s3+ddb://{bucket}/race.lance?ddbTableName={DDB_TABLE}"
    race(spark, uri, s3.storage_options(), ddb_options(s3))
    assert sorted(ddb_rows(ddb, "race.lance")) == list(range(1, 66))


def test_s3_ddb_settings_are_checked(spark, s3, bucket, ddb):
    sso = ddb_options(s3)
    df = frame(spark, data(0, 3))
    with pytest.raises(Exception) as e:
        df.write.format("lance").options(**sso).save(f"s3+ddb://{bucket}/n.lance")
    assert "ddbTableName" in short_error(e.value)
    with pytest.raises(Exception) as e:
        df.write.format("lance").options(**sso).save(
            f"s3+ddb://{bucket}/n.lance?ddbTableName=no_such_table"
        )
    assert "no_such_table" in short_error(e.value) and "base_uri" in short_error(e.value)
