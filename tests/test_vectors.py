"""Vector columns from Spark as LanceDB and pylance index and search them, and exact
nearest-neighbour search in Spark equal to pylance's exact search."""

from __future__ import annotations

import lance
import numpy as np
import pyarrow as pa
import pytest
from pyspark.sql.types import ArrayType, FloatType, LongType, StructField, StructType

import spark_lance

DIM = 16


def vectors(n, seed=0, dim=DIM):
    return np.random.default_rng(seed).standard_normal((n, dim)).astype("float32")


def frame(spark, v, start=0):
    return spark.createDataFrame(
        [(start + i, [float(x) for x in row]) for i, row in enumerate(v)],
        "id bigint, emb array<double>",
    )


def vector_field(path, column="emb"):
    return lance.dataset(path).schema.field(column).type


def test_as_vector_writes_what_pylance_indexes_and_searches(spark, tmp_path):
    path = str(tmp_path / "v.lance")
    v = vectors(600)
    spark_lance.as_vector(frame(spark, v), "emb", DIM).repartition(3).write.format("lance").save(
        path
    )
    assert vector_field(path) == pa.list_(pa.float32(), DIM)
    ds = lance.dataset(path)
    ds.validate()
    got = ds.to_table().sort_by("id")
    assert np.array_equal(np.stack(got["emb"].to_numpy(zero_copy_only=False)), v)
    ds.create_index("emb", "IVF_PQ", num_partitions=4, num_sub_vectors=4)
    hits = lance.dataset(path).to_table(
        nearest={"column": "emb", "q": v[7], "k": 5, "nprobes": 4, "refine_factor": 10}
    )
    assert hits["id"].to_pylist()[0] == 7
    # Spark reads the indexed table back as the same numbers.
    back = sorted(spark.read.format("lance").load(path).collect(), key=lambda r: r["id"])
    assert np.array_equal(np.array([r["emb"] for r in back], dtype="float32"), v)


def test_lancedb_opens_and_searches_spark_vectors(spark, tmp_path):
    lancedb = pytest.importorskip("lancedb")
    v = vectors(300, seed=1)
    schema = StructType(
        [
            StructField("id", LongType()),
            StructField(
                "emb", ArrayType(FloatType()), metadata={"arrow.fixed-size-list.size": DIM}
            ),
        ]
    )
    df = spark.createDataFrame([(i, [float(x) for x in row]) for i, row in enumerate(v)], schema)
    df.write.format("lance").save(str(tmp_path / "items.lance"))
    table = lancedb.connect(str(tmp_path)).open_table("items")
    hits = table.search(v[42].tolist(), vector_column_name="emb").limit(3).to_list()
    assert hits[0]["id"] == 42


@pytest.mark.line_smoke
def test_vector_columns_option_and_pyspark_ml_vectors(spark, tmp_path):
    from pyspark.ml.linalg import Vectors

    v = vectors(50, seed=2, dim=4)
    path = str(tmp_path / "o.lance")
    frame(spark, v).write.format("lance").option("vector_columns", "emb:4").save(path)
    assert vector_field(path) == pa.list_(pa.float64(), 4)
    ml = spark.createDataFrame(
        [(i, Vectors.dense([float(x) for x in row])) for i, row in enumerate(v)], ["id", "features"]
    )
    path2 = str(tmp_path / "ml.lance")
    spark_lance.as_vector(ml, "features", 4).write.format("lance").save(path2)
    assert vector_field(path2, "features") == pa.list_(pa.float32(), 4)
    got = lance.dataset(path2).to_table().sort_by("id")
    assert np.array_equal(np.stack(got["features"].to_numpy(zero_copy_only=False)), v)


@pytest.mark.line_smoke
def test_ml_vectors_written_directly_and_read_back_as_vectors(spark, tmp_path):
    """A VectorUDT column with vector_columns: fixed_size_list<double>[dim] (sparse vectors
    expanded, null vectors null); to_ml_vector reads it back as the same vectors."""
    from pyspark.ml.linalg import DenseVector, Vectors

    rows = [
        (0, Vectors.dense([1.5, -2.0, 3.25])),
        (1, Vectors.sparse(3, [1], [5.0])),
        (2, None),
        (3, Vectors.sparse(3, [], [])),
    ]
    df = spark.createDataFrame(rows, ["id", "features"])
    path = str(tmp_path / "ml.lance")
    with pytest.raises(Exception) as e:
        df.write.format("lance").save(path)
    assert "vector_columns=features:<dim>" in str(e.value)
    df.write.format("lance").option("vector_columns", "features:3").save(path)
    ds = lance.dataset(path)
    assert vector_field(path, "features") == pa.list_(pa.float64(), 3)
    want = [None if v is None else list(v.toArray()) for _, v in rows]
    assert ds.to_table().sort_by("id")["features"].to_pylist() == want
    back = spark_lance.to_ml_vector(spark.read.format("lance").load(path), "features")
    got = {r["id"]: r["features"] for r in back.collect()}
    assert got[2] is None
    for i, v in rows:
        if v is not None:
            assert isinstance(got[i], DenseVector) and got[i] == DenseVector(v.toArray())
    with pytest.raises(Exception) as e:
        df.write.format("lance").option("vector_columns", "features:4").mode("overwrite").save(path)
    assert "features" in str(e.value) and "vector of 3 values" in str(e.value)


def test_vector_mistakes_are_refused_naming_the_column(spark, tmp_path):
    bad = spark.createDataFrame(
        [(0, [1.0, 2.0]), (1, [1.0, 2.0, 3.0])], "id bigint, emb array<double>"
    )
    with pytest.raises(Exception) as e:
        spark_lance.as_vector(bad, "emb", 2).write.format("lance").save(str(tmp_path / "a"))
    assert "emb" in str(e.value) and "3 items" in str(e.value)
    with pytest.raises(Exception) as e:
        bad.write.format("lance").option("vector_columns", "nope:2").save(str(tmp_path / "b"))
    assert "vector_columns" in str(e.value) and "nope" in str(e.value)
    with pytest.raises(Exception) as e:
        bad.write.format("lance").option("vector_columns", "emb").save(str(tmp_path / "c"))
    assert "name:dim" in str(e.value)
    strings = spark.createDataFrame([(["a"],)], "s array<string>")
    with pytest.raises(Exception) as e:
        strings.write.format("lance").option("vector_columns", "s:1").save(str(tmp_path / "d"))
    assert "'s'" in str(e.value) and "vector of numbers" in str(e.value)
    with pytest.raises(ValueError):
        spark_lance.as_vector(bad, "emb", 0)


@pytest.fixture(scope="module")
def searched(tmp_path_factory):
    """A pylance table of 3 fragments with deletions, and its vectors."""
    path = str(tmp_path_factory.mktemp("knn") / "t.lance")
    v = vectors(3000, seed=3)
    ids = pa.array(range(len(v)), pa.int64())
    emb = pa.FixedSizeListArray.from_arrays(pa.array(v.ravel()), DIM)
    lance.write_dataset(
        pa.table({"id": ids, "emb": emb, "g": pa.array([i % 5 for i in range(len(v))])}),
        path,
        max_rows_per_file=1000,
    )
    lance.dataset(path).delete("id % 17 = 0")
    return path, v


@pytest.mark.parametrize("metric", ["l2", "cosine", "dot"])
@pytest.mark.parametrize("where", [None, "g = 2 and id > 100"])
def test_exact_search_equals_pylance(spark, searched, metric, where):
    path, v = searched
    q = vectors(1, seed=11)[0]
    want = lance.dataset(path).to_table(
        nearest={"column": "emb", "q": q, "k": 10, "metric": metric, "use_index": False},
        filter=where,
        prefilter=True,
    )
    table = spark_lance.LanceTable(spark, path)
    got = table.nearest(
        "emb", q.tolist(), k=10, metric=metric, filter=where, columns=["id", "g"]
    ).collect()
    assert [r["id"] for r in got] == want["id"].to_pylist()
    assert np.allclose(
        [r["_distance"] for r in got], want["_distance"].to_pylist(), rtol=1e-5, atol=1e-6
    )
    assert all(r["id"] % 17 != 0 for r in got)


def test_exact_search_over_many_tasks_and_a_wrong_query(spark, searched):
    path, v = searched
    df = spark.read.format("lance").option("split_size", 64 * 1024).load(path)
    assert df.rdd.getNumPartitions() >= 3  # one task per fragment at least
    got = spark_lance.nearest(df, "emb", v[123].tolist(), k=3).collect()
    assert got[0]["id"] == 123 and got[0]["_distance"] == 0.0
    with pytest.raises(Exception) as e:
        spark_lance.nearest(df, "emb", [1.0, 2.0], k=3).collect()
    assert "emb" in str(e.value) and "the query has 2" in str(e.value)
    with pytest.raises(ValueError):
        spark_lance.nearest(df, "emb", v[0].tolist(), metric="hamming")
