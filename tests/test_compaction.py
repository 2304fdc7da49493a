"""spark_lance.compact_files against pylance's optimize.compact_files with the same options
on twin datasets: the same metrics, rows, row ids and fragments, and pylance keeps going."""

from __future__ import annotations

import lance
import pyarrow as pa
import pytest

import spark_lance


def table(start, n):
    ids = list(range(start, start + n))
    return pa.table({"id": pa.array(ids, pa.int64()), "v": [f"r{i}" for i in ids]})


def make(path, stable):
    lance.write_dataset(table(0, 20), path, enable_stable_row_ids=stable)
    for i in range(6):
        lance.write_dataset(table(100 + 10 * i, 3), path, mode="append")
    lance.dataset(path).delete("id = 101 or id = 5")


def view(path):
    ds = lance.dataset(path)
    ds.validate()
    t = ds.to_table(with_row_id=True).sort_by("id")
    return {
        "rows": t.to_pylist() if ds.has_stable_row_ids else t.drop(["_rowid"]).to_pylist(),
        "fragments": [
            (f.metadata.id, f.metadata.physical_rows, f.metadata.deletion_file is not None)
            for f in ds.get_fragments()
        ],
        "version": ds.version,
    }


PYLANCE_KEYS = ["fragments_removed", "fragments_added", "files_removed", "files_added"]


@pytest.mark.parametrize("stable", [False, True])
@pytest.mark.parametrize(
    "options", [{}, {"target_rows_per_fragment": 7}, {"materialize_deletions_threshold": 0.02}]
)
def test_compact_files_as_pylance(spark, tmp_path, stable, options):
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    for p in (ours, theirs):
        make(p, stable)
    got = spark_lance.compact_files(spark, ours, **options)
    want = lance.dataset(theirs).optimize.compact_files(**options)
    assert {k: got[k] for k in PYLANCE_KEYS} == {k: getattr(want, k) for k in PYLANCE_KEYS}
    assert got["indexed_fragments_skipped"] == 0
    assert view(ours) == view(theirs)
    assert sorted(
        r[0] for r in spark.read.format("lance").load(ours).select("id").collect()
    ) == sorted(lance.dataset(theirs).to_table()["id"].to_pylist())
    for p in (ours, theirs):
        lance.write_dataset(table(500, 2), p, mode="append")
        lance.dataset(p).delete("id % 4 = 0")
    assert view(ours) == view(theirs)


def test_compact_files_refuses_bad_options(spark, tmp_path):
    p = str(tmp_path / "t")
    make(p, False)
    with pytest.raises(TypeError):
        spark_lance.compact_files(spark, p, target_rows_per_fragment="10")
    with pytest.raises(Exception, match="target_rows_per_fragment"):
        spark_lance.compact_files(spark, p, target_rows_per_fragment=0)
    with pytest.raises(Exception, match="defer_index_remap"):
        spark_lance.compact_files(spark, p, defer_index_remap=True)
    assert lance.dataset(p).version == 8


def test_compaction_racing_writers_loses_and_duplicates_nothing(spark, tmp_path):
    """Spark appends and pylance deletes while compactions run: every appended row is there
    once, every deleted row stays deleted, and pylance validates the table. A compaction that
    loses to a delete of its fragments fails as pylance's does (retryable) and leaves no
    files behind in the table."""
    import threading

    path = str(tmp_path / "race")
    make(path, False)
    expected = set(lance.dataset(path).to_table()["id"].to_pylist())
    errors = []

    def spark_appends():
        try:
            for i in range(6):
                ids = list(range(1000 + 10 * i, 1000 + 10 * i + 3))
                spark.createDataFrame(
                    [(x, f"r{x}") for x in ids], "id long, v string"
                ).write.format("lance").mode("append").save(path)
                expected.update(ids)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    def pylance_deletes():
        try:
            for x in (0, 2, 4):
                lance.dataset(path).delete(f"id = {x}")
                expected.discard(x)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=spark_appends), threading.Thread(target=pylance_deletes)]
    for t in threads:
        t.start()
    conflicts = 0
    for _ in range(4):
        try:
            spark_lance.compact_files(spark, path, target_rows_per_fragment=8)
        except Exception as e:  # noqa: BLE001 - only a conflict may end a compaction
            assert "onflict" in str(e) or "oncurrent" in str(e), str(e)
            conflicts += 1
    for t in threads:
        t.join()
    assert not errors, errors
    ds = lance.dataset(path)
    ds.validate()
    ids = ds.to_table()["id"].to_pylist()
    assert len(ids) == len(set(ids)) and set(ids) == expected
    assert sorted(
        r[0] for r in spark.read.format("lance").load(path).select("id").collect()
    ) == sorted(expected)


@pytest.mark.parametrize("kind", ["IVF_PQ", "IVF_FLAT"])
@pytest.mark.parametrize("stable", [False, True], ids=["addresses", "stable_row_ids"])
def test_vector_indexed_fragments_compact_as_pylance(spark, tmp_path, kind, stable):
    """A table a vector index covers: Spark's compaction rewrites its fragments and remaps
    (or, with stable row ids, keeps) the index as pylance's compaction of a byte-for-byte copy
    does; pylance's nearest-neighbour answers through the index are the same."""
    import shutil

    import numpy as np

    ours, copy = str(tmp_path / "ours"), str(tmp_path / "copy")
    n, d = 2000, 8
    vecs = np.random.default_rng(3).standard_normal(n * d).astype(np.float32)
    t = pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "v": pa.FixedSizeListArray.from_arrays(pa.array(vecs), d),
        }
    )
    lance.write_dataset(t, ours, max_rows_per_file=200, enable_stable_row_ids=stable)
    kw = {"num_partitions": 2, **({"num_sub_vectors": 2} if kind == "IVF_PQ" else {})}
    lance.dataset(ours).create_index("v", kind, **kw)
    lance.dataset(ours).delete("id % 7 = 2")
    shutil.copytree(ours, copy)
    got = spark_lance.compact_files(spark, ours)
    want = lance.dataset(copy).optimize.compact_files()
    assert got["indexed_fragments_skipped"] == 0
    assert (got["fragments_removed"], got["fragments_added"]) == (
        want.fragments_removed,
        want.fragments_added,
    )
    a, b = lance.dataset(ours), lance.dataset(copy)
    a.validate()
    assert [sorted(i["fragment_ids"]) for i in a.list_indices()] == [
        sorted(i["fragment_ids"]) for i in b.list_indices()
    ]
    q = [0.3, -0.2, 0.9, 0.0, -1.1, 0.4, 0.2, -0.6]
    for nprobes in (1, 2):
        near = {"column": "v", "q": q, "k": 15, "nprobes": nprobes}
        assert a.to_table(
            columns=["id"], nearest=near, disable_scoring_autoprojection=True
        ) == b.to_table(columns=["id"], nearest=near, disable_scoring_autoprojection=True)
