"""Batch k-NN, ``LanceTable.knn_join``: for every query row, the rows (and ``_distance``) that
``LanceTable.nearest`` — and so pylance's ``to_table(nearest=...)`` — returns for its vector,
through the IVF index (IVF_FLAT, IVF_SQ, IVF_PQ; l2, cosine, dot) or exactly; with deleted
rows, a fragment the index does not cover, a filter, and k larger than the table."""

from __future__ import annotations

import shutil

import lance
import numpy as np
import pyarrow as pa
import pytest
from test_vector_index_search import assert_same, pylance, table
from test_vectors import vectors

import spark_lance

#: (kind, metric) pairs indexed: every kind, every metric.
INDEXES = [
    ("IVF_FLAT", "l2"),
    ("IVF_SQ", "cosine"),
    ("IVF_PQ", "dot"),
    ("IVF_HNSW_SQ", "l2"),
    ("IVF_HNSW_PQ", "cosine"),
]
NQ = 8


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """1200 rows in 3 fragments, no index."""
    path = str(tmp_path_factory.mktemp("knn") / "base.lance")
    lance.write_dataset(table(vectors(1200, seed=81)), path, max_rows_per_file=400)
    return path


@pytest.fixture(scope="module")
def indexed(base, tmp_path_factory):
    """Each (kind, metric) index, then deletions the index still holds and an appended
    fragment it does not cover."""
    out = {}
    for kind, metric in INDEXES:
        path = str(tmp_path_factory.mktemp("knn") / f"{kind}_{metric}.lance")
        shutil.copytree(base, path)
        params = {"num_sub_vectors": 4} if kind.endswith("_PQ") else {}
        lance.dataset(path).create_index("emb", kind, metric=metric, num_partitions=6, **params)
        lance.dataset(path).delete("id % 7 = 3")
        lance.write_dataset(table(vectors(200, seed=82), start=1200), path, mode="append")
        out[(kind, metric)] = path
    return out


def query_frame(spark, q, name="emb"):
    return spark.createDataFrame(
        [(i, [float(x) for x in v]) for i, v in enumerate(q)], f"qid int, {name} array<float>"
    )


def by_query(df, n):
    """knn_join's rows as (ids, distances) per query row, in the order returned."""
    out = {i: ([], []) for i in range(n)}
    for r in df.collect():
        out[r["qid"]][0].append(r["id"])
        out[r["qid"]][1].append(r["_distance"])
    return {i: (ids, np.array(d, dtype="float32")) for i, (ids, d) in out.items()}


def nearest(t, q, **kwargs):
    rows = t.nearest("emb", q.tolist(), columns=["id"], **kwargs).collect()
    return pa.table(
        {
            "id": pa.array([r["id"] for r in rows], pa.int64()),
            "_distance": pa.array([r["_distance"] for r in rows], pa.float32()),
        }
    )


@pytest.mark.parametrize("kind,metric", INDEXES)
def test_indexed_equals_nearest_per_query(spark, indexed, kind, metric):
    path = indexed[(kind, metric)]
    t = spark_lance.LanceTable(spark, path)
    q = vectors(NQ, seed=83)
    # An HNSW index's partitions are scored in full: pylance's answer with an ef that large.
    ef = 2000 if "HNSW" in kind else None
    for nprobes, refine in [(2, None), (None, 2)]:
        got = by_query(
            t.knn_join(
                query_frame(spark, q),
                "emb",
                k=10,
                nprobes=nprobes,
                refine_factor=refine,
                columns=["id"],
            ),
            NQ,
        )
        for i in range(NQ):
            assert_same(got[i], pylance(path, q[i], nprobes=nprobes, refine_factor=refine, ef=ef))
            assert all((x >= 1200 or x % 7 != 3) for x in got[i][0])
        if refine:  # a sample against the single-query search
            for i in (0, NQ - 1):
                assert_same(got[i], nearest(t, q[i], k=10, nprobes=nprobes, refine_factor=refine))


def test_exact_equals_pylance_exact(spark, indexed, base):
    """use_index=False on an indexed table, and a table without an index: every metric."""
    q = vectors(NQ, seed=84)
    for path, use_index, metric in [
        (indexed[("IVF_PQ", "dot")], False, "l2"),
        (base, True, "cosine"),
        (base, True, "dot"),
    ]:
        t = spark_lance.LanceTable(spark, path)
        got = by_query(
            t.knn_join(
                query_frame(spark, q), "emb", k=7, metric=metric, use_index=use_index, columns="id"
            ),
            NQ,
        )
        for i in range(NQ):
            assert_same(got[i], pylance(path, q[i], k=7, metric=metric, use_index=False))
        assert_same(got[2], nearest(t, q[2], k=7, metric=metric, use_index=use_index))


def test_other_metric_than_the_index_searches_exactly(spark, indexed):
    path = indexed[("IVF_FLAT", "l2")]
    q = vectors(3, seed=85)
    got = by_query(
        spark_lance.LanceTable(spark, path).knn_join(
            query_frame(spark, q), "emb", k=5, metric="cosine", nprobes=1, columns=["id"]
        ),
        3,
    )
    for i in range(3):
        assert_same(got[i], pylance(path, q[i], k=5, metric="cosine", nprobes=1))


def test_filter_is_a_prefilter(spark, indexed, base):
    """A filter selects the rows searched, as pylance's prefilter=True: through each index,
    exactly on an indexed table, and on a table without an index."""
    q = vectors(4, seed=86)
    where = "g = 2 and id > 300"
    runs = [(indexed[i], True, 2, None) for i in INDEXES] + [
        (indexed[("IVF_SQ", "cosine")], False, None, "dot"),
        (base, True, None, None),
    ]
    for p, use_index, nprobes, m in runs:
        got = by_query(
            spark_lance.LanceTable(spark, p).knn_join(
                query_frame(spark, q),
                "emb",
                k=10,
                metric=m,
                nprobes=nprobes,
                use_index=use_index,
                filter=where,
                columns=["id"],
            ),
            4,
        )
        for i in range(4):
            assert_same(
                got[i],
                pylance(p, q[i], metric=m, nprobes=nprobes, use_index=use_index, filter=where),
            )
            assert all(x % 5 == 2 and x > 300 for x in got[i][0])


def test_k_larger_than_the_table(spark, indexed, tmp_path):
    small = str(tmp_path / "small.lance")
    lance.write_dataset(table(vectors(12, seed=87)), small, max_rows_per_file=5)
    lance.dataset(small).delete("id = 4")
    q = vectors(3, seed=88)
    got = by_query(
        spark_lance.LanceTable(spark, small).knn_join(
            query_frame(spark, q), "emb", k=50, columns=["id"]
        ),
        3,
    )
    for i in range(3):
        assert len(got[i][0]) == 11
        assert_same(got[i], pylance(small, q[i], k=50, use_index=False))
    # Through an index, with a filter leaving fewer rows than k.
    path = indexed[("IVF_SQ", "cosine")]
    got = by_query(
        spark_lance.LanceTable(spark, path).knn_join(
            query_frame(spark, q), "emb", k=50, filter="id < 40 and g = 1", columns=["id"]
        ),
        3,
    )
    for i in range(3):
        want = pylance(path, q[i], k=50, filter="id < 40 and g = 1")
        assert 0 < len(want) < 50
        assert_same(got[i], want)


def test_columns_clashes_nulls_and_errors(spark, indexed):
    path = indexed[("IVF_FLAT", "l2")]
    t = spark_lance.LanceTable(spark, path)
    q = vectors(3, seed=89)
    df = t.knn_join(query_frame(spark, q), "emb", k=4, nprobes=2)
    assert df.columns == ["qid", "emb", "id", "match_emb", "g", "_distance"]
    rows = df.collect()
    assert len(rows) == 12 and [r["qid"] for r in rows] == [0] * 4 + [1] * 4 + [2] * 4
    want = pylance(path, q[1], k=4, nprobes=2)
    assert [r["id"] for r in rows[4:8]] == want["id"].to_pylist()
    stored = {r["id"]: r for r in lance.dataset(path).to_table().to_pylist()}
    for r in rows:
        assert np.allclose(r["emb"], q[r["qid"]])
        assert np.allclose(r["match_emb"], stored[r["id"]]["emb"])
        assert r["g"] == stored[r["id"]]["g"]
    # Another query column name: no clash; a null vector gets no rows.
    other = spark.createDataFrame(
        [(0, [float(x) for x in q[0]]), (1, None)], "qid int, v array<float>"
    )
    df = t.knn_join(other, "emb", k=3, query_column="v", columns=["id", "emb"], nprobes=2)
    assert df.columns == ["qid", "v", "id", "emb", "_distance"]
    assert [r["qid"] for r in df.collect()] == [0, 0, 0]
    # An empty query DataFrame: no rows.
    assert t.knn_join(query_frame(spark, q).limit(0), "emb", k=3).count() == 0
    bad = spark.createDataFrame(
        [(0, [float(x) for x in q[0]]), (1, [1.0, 2.0])], "qid int, emb array<float>"
    )
    with pytest.raises(Exception, match="query row 1.*emb.*2 values|emb.*query row 1"):
        t.knn_join(bad, "emb", k=3).collect()
    with pytest.raises(ValueError, match="query_column.*nope"):
        t.knn_join(query_frame(spark, q), "emb", query_column="nope")
    with pytest.raises(ValueError, match="k must"):
        t.knn_join(query_frame(spark, q), "emb", k=0)
    with pytest.raises(ValueError, match="nprobes"):
        t.knn_join(query_frame(spark, q), "emb", nprobes=0)
    with pytest.raises(ValueError, match="_distance"):
        t.knn_join(query_frame(spark, q).selectExpr("*", "0.0 AS _distance"), "emb")


def test_ml_vector_queries(spark, indexed):
    from pyspark.ml.linalg import Vectors

    path = indexed[("IVF_PQ", "dot")]
    q = vectors(2, seed=90)
    df = spark.createDataFrame(
        [(i, Vectors.dense([float(x) for x in v])) for i, v in enumerate(q)], ["qid", "vec"]
    )
    got = by_query(
        spark_lance.LanceTable(spark, path).knn_join(
            queries_df=df,
            column="emb",
            k=5,
            query_column="vec",
            nprobes=3,
            refine_factor=2,
            columns=["id"],
        ),
        2,
    )
    for i in range(2):
        assert_same(got[i], pylance(path, q[i], k=5, nprobes=3, refine_factor=2))
