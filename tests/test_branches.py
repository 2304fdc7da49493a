"""Branches (issue 16 item 3) as pylance 14 has them: create_branch from a version of the main
branch or of another branch (a shallow clone under tree/<name> sharing the parent's files),
reading and writing a branch (option "branch", or the branch's own path), tags of branches,
deleting a branch, and cleanup of the main branch keeping the versions branches were made
from — each compared with pylance's own on a twin."""

from __future__ import annotations

import datetime
import os
import shutil

import lance
import pyarrow as pa
import pytest

from spark_lance import LanceTable


def rows(ids):
    return pa.table({"id": pa.array(ids, pa.int64()), "v": [f"r{i}" for i in ids]})


@pytest.fixture
def twins(tmp_path):
    """Versions 1-3 by pylance: 30 rows, 10 more, a delete; a BTREE index on id (4)."""
    ours = str(tmp_path / "ours")
    lance.write_dataset(rows(range(30)), ours)
    lance.write_dataset(rows(range(30, 40)), ours, mode="append")
    lance.dataset(ours).delete("id % 7 = 1")
    lance.dataset(ours).create_scalar_index("id", "BTREE")
    theirs = str(tmp_path / "theirs")
    shutil.copytree(ours, theirs)
    return ours, theirs


def branch_view(path):
    """What pylance reads of a branch dataset (validated): rows, versions, indices, files."""
    ds = lance.dataset(path)
    ds.validate()
    return {
        "rows": sorted(ds.to_table().to_pylist(), key=lambda r: r["id"]),
        "version": ds.version,
        "versions": [v["version"] for v in ds.versions()],
        "indices": sorted(
            (i["name"], i["fields"], sorted(i["fragment_ids"])) for i in ds.list_indices()
        ),
        "indexed": ds.to_table(filter="id = 12").to_pylist(),
        "fragments": [(f.fragment_id, f.count_rows()) for f in ds.get_fragments()],
        "operation": type(ds.read_transaction(ds.version).operation).__name__,
    }


def refs(path):
    return {
        k: (v["parent_branch"], v["parent_version"])
        for k, v in lance.dataset(path).branches.list().items()
    }


def files(path):
    return sorted(
        os.path.relpath(os.path.join(d, f), path)
        for d, _, fs in os.walk(path)
        for f in fs
        if "_transactions" not in d
        and not f.endswith(".manifest")
        and f != "latest_version_hint.json"
        and "_refs" not in d
    )


def shape(path):
    """How many files each directory holds (names differ between writers)."""
    from collections import Counter

    return sorted(Counter(os.path.dirname(f) for f in files(path)).items())


@pytest.mark.parametrize("version", [2, 4])
def test_create_branch_as_pylance(spark, twins, version):
    ours, theirs = twins
    b = LanceTable(spark, ours).create_branch("dev", version)
    lance.dataset(theirs).create_branch("dev", version)
    assert branch_view(b.path) == branch_view(theirs + "/tree/dev")
    assert refs(ours) == refs(theirs) == {"dev": (None, version)}
    assert LanceTable(spark, ours).branches.list()["dev"]["parent_version"] == version
    # pylance keeps going on both branches and on both mains alike.
    for p in (ours, theirs):
        lance.write_dataset(rows([100, 101]), p + "/tree/dev", mode="append")
        lance.dataset(p + "/tree/dev").delete("id = 12")
        lance.write_dataset(rows([200]), p, mode="append")
    assert branch_view(ours + "/tree/dev") == branch_view(theirs + "/tree/dev")
    assert branch_view(ours) == branch_view(theirs)
    with pytest.raises(Exception, match="already exists"):
        LanceTable(spark, ours).create_branch("dev", 1)


def test_branch_of_a_branch_as_pylance(spark, twins):
    """create_branch(name, (parent, version)): a branch of a branch, as pylance makes it from
    the parent branch's dataset; pylance keeps going on it alike."""
    ours, theirs = twins
    LanceTable(spark, ours).create_branch("dev", 3)
    lance.dataset(theirs).create_branch("dev", 3)
    for p in (ours, theirs):
        lance.write_dataset(rows([300, 301]), p + "/tree/dev", mode="append")
    b = LanceTable(spark, ours).create_branch("fix", ("dev", 4))
    lance.dataset(theirs + "/tree/dev").create_branch("fix", 4)
    assert branch_view(b.path) == branch_view(theirs + "/tree/fix")
    assert refs(ours) == refs(theirs) == {"dev": (None, 3), "fix": ("dev", 4)}
    for p in (ours, theirs):
        lance.write_dataset(rows([400]), p + "/tree/fix", mode="append")
    assert branch_view(ours + "/tree/fix") == branch_view(theirs + "/tree/fix")
    got = sorted(
        r.id for r in spark.read.format("lance").option("branch", "fix").load(ours).collect()
    )
    assert got == sorted(lance.dataset(theirs + "/tree/fix").to_table()["id"].to_pylist())
    with pytest.raises(Exception, match="nope"):
        LanceTable(spark, ours).create_branch("x", ("nope", 1))


def test_read_and_write_a_branch_by_option(spark, twins):
    ours, _ = twins
    LanceTable(spark, ours).create_branch("dev", 3)
    main_before = lance.dataset(ours).to_table().num_rows
    df = spark.createDataFrame([(500, "x")], "id long, v string")
    df.write.format("lance").mode("append").option("branch", "dev").save(ours)
    got = sorted(
        r.id for r in spark.read.format("lance").option("branch", "dev").load(ours).collect()
    )
    assert got == sorted(lance.dataset(ours + "/tree/dev").to_table()["id"].to_pylist())
    assert 500 in got
    assert lance.dataset(ours).to_table().num_rows == main_before
    with pytest.raises(Exception, match="no branch 'nope'"):
        df.write.format("lance").mode("append").option("branch", "nope").save(ours)
    # A tag of a branch version reads the branch.
    lance.dataset(ours).tags.create("dev_tip", ("dev", 4))
    tagged = spark.read.format("lance").option("tag", "dev_tip").load(ours)
    assert sorted(r.id for r in tagged.collect()) == got
    with pytest.raises(Exception, match="referenced by tags"):
        LanceTable(spark, ours).branches.delete("dev")


def test_delete_branch_as_pylance(spark, twins):
    ours, theirs = twins
    for p in (ours, theirs):
        lance.dataset(p).create_branch("dev", 2)
        lance.write_dataset(rows([100]), p + "/tree/dev", mode="append")
    LanceTable(spark, ours).branches.delete("dev")
    lance.dataset(theirs).branches.delete("dev")
    assert refs(ours) == refs(theirs) == {}
    assert files(ours) == files(theirs)
    assert branch_view(ours) == branch_view(theirs)


def test_cleanup_keeps_what_branches_read_as_pylance(spark, twins):
    ours, theirs = twins
    for p in (ours, theirs):
        lance.dataset(p).create_branch("dev", 2)
        lance.write_dataset(rows([7]), p, mode="overwrite")
        lance.write_dataset(rows([8]), p, mode="append")
    old = datetime.timedelta(0)
    got = LanceTable(spark, ours).cleanup_old_versions(older_than=old, delete_unverified=True)
    want = lance.dataset(theirs).cleanup_old_versions(older_than=old, delete_unverified=True)
    assert (got["old_versions"], got["data_files_removed"]) == (
        want.old_versions,
        want.data_files_removed,
    )
    assert [v["version"] for v in lance.dataset(ours).versions()] == [
        v["version"] for v in lance.dataset(theirs).versions()
    ]
    assert shape(ours) == shape(theirs)
    assert branch_view(ours + "/tree/dev") == branch_view(theirs + "/tree/dev")
