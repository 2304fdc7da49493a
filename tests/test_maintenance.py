"""spark_lance.cleanup_old_versions and the tag helpers, against pylance's own cleanup and
tags on a twin of the same history."""

from __future__ import annotations

import datetime as dt
import os
import shutil

import lance
import pyarrow as pa
import pytest

import spark_lance


def table(start, n):
    return pa.table({"id": pa.array(range(start, start + n), pa.int64())})


def files(path):
    out = []
    for d, _, fs in os.walk(path):
        out += [os.path.relpath(os.path.join(d, f), path) for f in fs]
    return sorted(out)


@pytest.fixture
def twins(tmp_path):
    ours = str(tmp_path / "ours")
    lance.write_dataset(table(0, 10), ours)
    lance.write_dataset(table(10, 10), ours, mode="append")
    lance.dataset(ours).delete("id < 5")
    lance.write_dataset(table(50, 5), ours, mode="overwrite")
    lance.dataset(ours).tags.create("old", 2)
    theirs = str(tmp_path / "theirs")
    shutil.copytree(ours, theirs)
    return ours, theirs


def test_cleanup_as_pylance(spark, twins):
    ours, theirs = twins
    dry = spark_lance.cleanup_old_versions(
        spark, ours, dt.timedelta(0), dry_run=True, error_if_tagged_old_versions=False
    )
    before = files(ours)
    got = spark_lance.cleanup_old_versions(
        spark, ours, dt.timedelta(0), error_if_tagged_old_versions=False
    )
    want = lance.dataset(theirs).cleanup_old_versions(
        dt.timedelta(0), error_if_tagged_old_versions=False
    )
    assert files(ours) == files(theirs)
    assert got["old_versions"] == want.old_versions == dry["old_versions"]
    assert got["bytes_removed"] == want.bytes_removed
    # One path form: under the path as given (no "file:" for some and not others).
    assert all(f.startswith(ours + "/") for f in dry["files"]), dry["files"]
    assert sorted(os.path.relpath(f, ours) for f in dry["files"]) == sorted(
        set(before) - set(files(ours))
    )
    assert (
        lance.dataset(ours, version="old").to_table()
        == lance.dataset(theirs, version="old").to_table()
    )


def _spark_rows(spark, path, **opts):
    reader = spark.read.format("lance")
    for k, v in opts.items():
        reader = reader.option(k, str(v))
    return sorted(tuple(r) for r in reader.load(path).collect())


def _pylance_rows(path, version):
    t = lance.dataset(path, version=version).to_table()
    return sorted(tuple(r.values()) for r in t.to_pylist())


@pytest.mark.parametrize("policy", [dict(older_than=dt.timedelta(0)), dict(retain_versions=3)])
def test_every_kept_version_and_tag_reads_the_same_after_cleanup(spark, tmp_path, policy):
    """Spark reads every version and tag cleanup keeps exactly as before it (and as pylance
    does), over a history of appends, deletions, an update, an index, a compaction and an
    overwrite; tags hold versions the policy would otherwise remove."""
    path = str(tmp_path / "t")
    lance.write_dataset(
        pa.table({"id": pa.array(range(40), pa.int64()), "s": [f"s{i}" for i in range(40)]}),
        path,
        max_rows_per_file=10,
    )
    lance.write_dataset(
        pa.table(
            {"id": pa.array(range(40, 50), pa.int64()), "s": [f"s{i}" for i in range(40, 50)]}
        ),
        path,
        mode="append",
    )
    lance.dataset(path).create_scalar_index("id", "BTREE")
    lance.dataset(path).delete("id % 7 = 0")
    lance.dataset(path).tags.create("after_delete", lance.dataset(path).version)
    lance.dataset(path).update({"s": "'u'"}, where="id < 12")
    spark_lance.compact_files(spark, path, target_rows_per_fragment=25)
    lance.dataset(path).tags.create("compacted", lance.dataset(path).version)
    lance.write_dataset(
        pa.table({"id": pa.array([100, 101], pa.int64()), "s": ["a", "b"]}), path, mode="overwrite"
    )
    lance.write_dataset(
        pa.table({"id": pa.array([102], pa.int64()), "s": ["c"]}), path, mode="append"
    )
    versions = [v["version"] for v in lance.dataset(path).versions()]
    tags = {k: v["version"] for k, v in lance.dataset(path).tags.list().items()}
    before = {v: _spark_rows(spark, path, version=v) for v in versions}
    before_tags = {t: _spark_rows(spark, path, tag=t) for t in tags}
    spark_lance.cleanup_old_versions(spark, path, error_if_tagged_old_versions=False, **policy)
    kept = [v["version"] for v in lance.dataset(path).versions()]
    assert len(kept) < len(versions) and set(tags.values()) <= set(kept)
    for v in kept:
        got = _spark_rows(spark, path, version=v)
        assert got == before[v] == _pylance_rows(path, v), v
    for t in tags:
        assert _spark_rows(spark, path, tag=t) == before_tags[t] == _pylance_rows(path, t), t
    lance.dataset(path).validate()


def test_cleanup_refuses_tagged_versions_like_pylance(spark, twins):
    ours, _ = twins
    with pytest.raises(Exception, match="tagged version"):
        spark_lance.cleanup_old_versions(spark, ours, dt.timedelta(0))
    with pytest.raises(ValueError):
        spark_lance.cleanup_old_versions(spark, ours, retain_versions=0)


def test_tags(spark, twins):
    ours, _ = twins
    spark_lance.create_tag(spark, ours, "v3", 3)
    spark_lance.update_tag(spark, ours, "old", 1)
    assert spark_lance.list_tags(spark, ours) == {"old": 1, "v3": 3}
    assert {k: v["version"] for k, v in lance.dataset(ours).tags.list().items()} == {
        "old": 1,
        "v3": 3,
    }
    spark_lance.delete_tag(spark, ours, "old")
    assert list(lance.dataset(ours).tags.list()) == ["v3"]
    n = spark.read.format("lance").option("tag", "v3").load(ours).count()
    assert n == lance.dataset(ours, version="v3").count_rows()


@pytest.mark.parametrize("version", [2, "old", 3])
def test_restore_as_pylance(spark, twins, version):
    ours, theirs = twins
    got = spark_lance.restore(spark, ours, version)
    lance.dataset(theirs, version=version).restore()
    a, b = lance.dataset(ours), lance.dataset(theirs)
    a.validate()
    assert got == a.version == b.version
    assert a.to_table() == b.to_table()
    assert [f.metadata.id for f in a.get_fragments()] == [f.metadata.id for f in b.get_fragments()]
    assert type(a.read_transaction(a.version).operation).__name__ == "Restore"
    # pylance keeps going alike: new fragment ids continue past every id used.
    for p in twins:
        lance.write_dataset(table(100, 3), p, mode="append")
    assert [f.metadata.id for f in lance.dataset(ours).get_fragments()] == [
        f.metadata.id for f in lance.dataset(theirs).get_fragments()
    ]
    with pytest.raises(Exception, match="99"):
        spark_lance.restore(spark, ours, 99)


def test_register_catalog(spark, tmp_path):
    name = spark_lance.register_catalog(spark, "reg_lance", root=str(tmp_path))
    spark.sql(f"create table {name}.made (id bigint) using lance")
    spark.sql(f"insert into {name}.made values (1), (2)")
    assert lance.dataset(str(tmp_path / "made.lance")).count_rows() == 2
    assert (
        spark.sql(f"select count(*) from {name}.`{tmp_path / 'made.lance'}`").collect()[0][0] == 2
    )


def blob_table(vals, start=0, managed=False):
    from lance.blob import blob_array, blob_field

    meta = {"lance.blob.managed": "true"} if managed else None
    return pa.Table.from_arrays(
        [pa.array(range(start, start + len(vals)), pa.int64()), blob_array(vals)],
        schema=pa.schema(
            [
                pa.field("id", pa.int64()),
                blob_field("b", inline_size_threshold=16, dedicated_size_threshold=1000),
            ],
            metadata=meta,
        ),
    )


@pytest.mark.parametrize("unverified", [True, False], ids=["delete_unverified", "verified_only"])
@pytest.mark.parametrize("managed", [False, True], ids=["sidecars", "managed"])
def test_cleanup_removes_blob_files_as_pylance(spark, tmp_path, managed, unverified):
    """Blob sidecars (data/<file>/…) go with their data files and unreferenced managed objects
    (_blobs/…) go too, counted as data files, as pylance's cleanup does; objects a kept version
    still references (also through a fragment an update left in place) stay."""
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    lance.write_dataset(
        blob_table([b"a" * 100, b"b" * 2000, b"c"], managed=managed),
        ours,
        data_storage_version="2.2",
    )
    lance.write_dataset(blob_table([b"d" * 100, b"e" * 2000], 3, managed), ours, mode="append")
    lance.dataset(ours).update({"id": "id + 100"}, where="id = 0")
    lance.write_dataset(blob_table([b"f" * 300], 9, managed), ours, mode="append")
    lance.dataset(ours).delete("id = 3")
    shutil.copytree(ours, theirs)
    before = files(ours)
    assert any(f.endswith(".blob") for f in before)
    got = spark_lance.cleanup_old_versions(
        spark, ours, dt.timedelta(0), delete_unverified=unverified
    )
    want = lance.dataset(theirs).cleanup_old_versions(dt.timedelta(0), delete_unverified=unverified)
    assert files(ours) == files(theirs)
    assert set(before) - set(files(ours))  # something was removed
    assert (got["data_files_removed"], got["bytes_removed"]) == (
        want.data_files_removed,
        want.bytes_removed,
    )
    for p in (ours, theirs):
        lance.dataset(p).validate()
    assert lance.dataset(ours).to_table(blob_handling="all_binary") == lance.dataset(
        theirs
    ).to_table(blob_handling="all_binary")
