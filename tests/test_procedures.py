"""CALL <lance catalog>.system.<procedure>(...) on Spark 4: compaction, cleanup, restore and
tags from SQL, each equal to pylance's own operation on a twin dataset."""

from __future__ import annotations

import os
import shutil

import lance
import pyarrow as pa
import pyspark
import pytest

from support import lance_catalog as catalog

# CALL procedures are per-line code (the shims): every line runs all of them.
pytestmark = [
    pytest.mark.skipif(
        int(pyspark.__version__.split(".")[0]) < 4, reason="CALL procedures need Spark 4"
    ),
    pytest.mark.every_line,
]


def table(start, n):
    ids = list(range(start, start + n))
    return pa.table({"id": pa.array(ids, pa.int64()), "v": [f"r{i}" for i in ids]})


def files(path):
    out = []
    for d, _, names in os.walk(path):
        out += [os.path.relpath(os.path.join(d, n), path) for n in names]
    return sorted(out)


@pytest.fixture
def twins(tmp_path):
    # One history copied: two separately written histories differ in a few manifest bytes
    # (the commit time's nanoseconds are a varint), which cleanup's bytes_removed counts.
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    lance.write_dataset(table(0, 10), ours)
    for i in range(4):
        lance.write_dataset(table(100 + 10 * i, 2), ours, mode="append")
    lance.dataset(ours).delete("id = 101")
    shutil.copytree(ours, theirs)
    return ours, theirs


def fragments(path):
    return [(f.metadata.id, f.metadata.physical_rows) for f in lance.dataset(path).get_fragments()]


def test_compact_files(spark, twins):
    ours, theirs = twins
    c = catalog(spark)
    row = (
        spark.sql(
            f"call {c}.system.compact_files(table => '{ours}', target_rows_per_fragment => 5)"
        )
        .collect()[0]
        .asDict()
    )
    want = lance.dataset(theirs).optimize.compact_files(target_rows_per_fragment=5)
    for k in ["fragments_removed", "fragments_added", "files_removed", "files_added"]:
        assert row[k] == getattr(want, k), k
    assert fragments(ours) == fragments(theirs)
    assert lance.dataset(ours).to_table().sort_by("id") == lance.dataset(theirs).to_table().sort_by(
        "id"
    )


def test_restore_and_tags_by_table_name(spark, tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    c = catalog(spark, root)
    spark.sql(f"create table {c}.t as select id from range(3)")
    spark.sql(f"insert into {c}.t values (10)")
    path = str(root / "t.lance")
    assert (
        spark.sql(
            f"call {c}.system.create_tag(table => 't', tag => 'first', version => 1)"
        ).collect()[0][0]
        == 1
    )
    assert lance.dataset(path).tags.list()["first"]["version"] == 1
    new = spark.sql(f"call {c}.system.restore(table => 't', version => 'first')").collect()[0][0]
    ds = lance.dataset(path)
    assert new == ds.version == 3 and ds.count_rows() == 3
    assert type(ds.read_transaction(3).operation).__name__ == "Restore"
    spark.sql(f"call {c}.system.update_tag(table => 't', tag => 'first', version => 2)")
    assert lance.dataset(path).tags.list()["first"]["version"] == 2
    spark.sql(f"call {c}.system.delete_tag(table => 't', tag => 'first')")
    assert lance.dataset(path).tags.list() == {}
    assert (
        spark.sql(
            f"call {c}.system.create_branch(table => 't', branch => 'dev', version => 2)"
        ).collect()[0][0]
        == 2
    )
    assert lance.dataset(path).branches.list()["dev"]["parent_version"] == 2
    assert lance.dataset(path + "/tree/dev").count_rows() == 4
    spark.sql(
        f"call {c}.system.create_branch(table => 't', branch => 'fix', version => 2, "
        "parent_branch => 'dev')"
    )
    assert lance.dataset(path).branches.list()["fix"]["parent_branch"] == "dev"
    assert lance.dataset(path + "/tree/fix").count_rows() == 4
    spark.sql(f"call {c}.system.delete_branch(table => 't', branch => 'fix')")
    spark.sql(f"call {c}.system.delete_branch(table => 't', branch => 'dev')")
    assert lance.dataset(path).branches.list() == {}


def test_cleanup_old_versions(spark, twins):
    ours, theirs = twins
    c = catalog(spark)
    row = (
        spark.sql(
            f"call {c}.system.cleanup_old_versions(table => '{ours}', "
            "older_than => INTERVAL '0' SECOND)"
        )
        .collect()[0]
        .asDict()
    )
    import datetime as dt

    want = lance.dataset(theirs).cleanup_old_versions(dt.timedelta(0))
    assert row["old_versions"] == want.old_versions
    assert row["bytes_removed"] == want.bytes_removed
    assert files(ours) == files(theirs)


def test_unknown_procedure_and_table(spark, twins, tmp_path):
    c = catalog(spark)
    # Spark's own error class; the cause lists the Lance procedures.
    with pytest.raises(Exception, match="vacuum"):
        spark.sql(f"call {c}.system.vacuum(table => '{twins[0]}')")
    with pytest.raises(Exception):
        spark.sql(f"call {c}.system.restore(table => '{tmp_path}/missing', version => '1')")
    with pytest.raises(Exception, match="table"):
        spark.sql(f"call {c}.system.restore(version => '1')")


def test_a_misspelt_argument_is_refused_naming_it(spark, tmp_path):
    from pyspark.errors import AnalysisException

    path = str(tmp_path / "ds")
    lance.write_dataset(table(0, 3), path)
    with pytest.raises(AnalysisException, match="target_rows_per_fragmnt"):
        spark.sql(
            f"CALL {catalog(spark)}.system.compact_files(table => '{path}', "
            "target_rows_per_fragmnt => 5)"
        )
    assert lance.dataset(path).version == 1
