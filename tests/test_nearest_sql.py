"""SQL's ``lance_nearest`` table-valued function (registered by the session extension that
``spark_lance.configure`` adds): the rows pylance's ``to_table(nearest={...},
prefilter=True)`` returns, by position and by name, on a path or a catalog table, through
the IVF index or exactly; deleted rows never come back; wrong arguments are refused naming
them."""

from __future__ import annotations

import lance
import numpy as np
import pytest
from test_vector_index_search import assert_same, pylance, table
from test_vectors import vectors

import spark_lance
from support import lance_catalog as catalog


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    """2500 rows: an IVF_PQ index over 2 fragments, some rows deleted, a fragment appended
    after the index."""
    path = str(tmp_path_factory.mktemp("sql_nearest") / "items.lance")
    lance.write_dataset(table(vectors(2000, seed=61)), path, max_rows_per_file=1000)
    ds = lance.dataset(path)
    ds.create_index("emb", "IVF_PQ", num_partitions=8, num_sub_vectors=4)
    ds.delete("id % 9 = 4")
    lance.write_dataset(table(vectors(500, seed=62), start=2000), path, mode="append")
    return path


def literal(q):
    return "array(" + ", ".join(repr(float(x)) for x in q) + ")"


def got(spark, sql):
    rows = spark.sql(sql).collect()
    return [r["id"] for r in rows], np.array([r["_distance"] for r in rows], dtype="float32")


def test_positional_call_equals_pylance_and_the_python_search(spark, indexed):
    for q in vectors(3, seed=63):
        want = pylance(indexed, q, k=7, nprobes=3)
        sql = (
            f"SELECT id, _distance FROM lance_nearest('{indexed}', 'emb', {literal(q)}, 7, 'l2', 3)"
        )
        ours = got(spark, sql)
        assert_same(ours, want)
        assert all(i >= 2000 or i % 9 != 4 for i in ours[0])
        python = spark_lance.LanceTable(spark, indexed).nearest(
            "emb", q.tolist(), k=7, nprobes=3, columns="id"
        )
        assert ours[0] == [r["id"] for r in python.collect()]


def test_named_arguments_refine_filter_and_exact_search(spark, indexed):
    q = vectors(1, seed=64)[0]
    call = f"lance_nearest(table => '{indexed}', column => 'emb', q => {literal(q)}"
    assert_same(
        got(spark, f"SELECT * FROM {call}, k => 5, nprobes => 2, refine_factor => 4)"),
        pylance(indexed, q, k=5, nprobes=2, refine_factor=4),
    )
    assert_same(
        got(spark, f"SELECT * FROM {call}, filter => 'g = 2 and id > 300', nprobes => 4)"),
        pylance(indexed, q, filter="g = 2 and id > 300", nprobes=4),
    )
    assert_same(
        got(spark, f"SELECT * FROM {call}, use_index => false, metric => 'cosine')"),
        pylance(indexed, q, use_index=False, metric="cosine"),
    )
    # k defaults to 10, as pylance's.
    assert len(spark.sql(f"SELECT * FROM {call})").collect()) == 10


def test_columns_and_use_in_a_larger_query(spark, indexed):
    # Every partition probed (the connector's default): without nprobes pylance probes a
    # budget of its own (6 of the 8 partitions for k up to 10, in pylance 14.0.2), so which
    # rows its default returns depends on the index each run's k-means trains.
    q = vectors(1, seed=65)[0]
    df = spark.sql(
        f"SELECT * FROM lance_nearest('{indexed}', 'emb', {literal(q)}, 4, nprobes => 8)"
    )
    assert df.columns == ["id", "emb", "g", "_distance"]
    want = lance.dataset(indexed).to_table(nearest={"column": "emb", "q": q, "k": 4, "nprobes": 8})
    rows = df.collect()
    assert [r["g"] for r in rows] == want["g"].to_pylist()
    assert np.allclose(
        np.array([r["emb"] for r in rows], dtype="float32"),
        np.stack(want["emb"].to_numpy(zero_copy_only=False)),
    )
    # Joined and aggregated like any relation.
    counted = spark.sql(
        f"SELECT n.g, count(*) AS c FROM lance_nearest('{indexed}', 'emb', {literal(q)}, 20, "
        "nprobes => 8) n "
        f"JOIN (SELECT id FROM lance.`{indexed}` WHERE id % 2 = 0) e ON n.id = e.id "
        "GROUP BY n.g"
    ).collect()
    want = lance.dataset(indexed).to_table(
        nearest={"column": "emb", "q": q, "k": 20, "nprobes": 8}, columns=["id", "g"]
    )
    by_g = {}
    for i, g in zip(want["id"].to_pylist(), want["g"].to_pylist()):
        if i % 2 == 0:
            by_g[g] = by_g.get(g, 0) + 1
    assert by_g and {r["g"]: r["c"] for r in counted} == by_g


def test_catalog_tables_by_name(spark, indexed, tmp_path):
    q = vectors(1, seed=66)[0]
    want = pylance(indexed, q, k=6, nprobes=2)
    assert_same(
        got(
            spark,
            f"SELECT * FROM lance_nearest('lance.`{indexed}`', 'emb', "
            f"{literal(q)}, 6, nprobes => 2)",
        ),
        want,
    )
    root = tmp_path / "warehouse"
    root.mkdir()
    c = catalog(spark, root)
    lance.write_dataset(table(vectors(300, seed=67)), str(root / "items.lance"))
    named = str(root / "items.lance")
    assert_same(
        got(spark, f"SELECT * FROM lance_nearest('{c}.items', 'emb', {literal(q)}, 6)"),
        pylance(named, q, k=6),
    )


def test_the_search_sees_the_version_analysed(spark, tmp_path):
    path = str(tmp_path / "t.lance")
    lance.write_dataset(table(vectors(100, seed=68)), path)
    q = vectors(1, seed=69)[0]
    df = spark.sql(f"SELECT id FROM lance_nearest('{path}', 'emb', {literal(q)}, 3)")
    before = [r["id"] for r in df.collect()]
    lance.write_dataset(table(np.tile(q, (5, 1)), start=1000), path, mode="append")
    # The DataFrame keeps the rows its analysis found; a new query sees the append.
    assert [r["id"] for r in df.collect()] == before
    again = [
        r["id"]
        for r in spark.sql(
            f"SELECT id FROM lance_nearest('{path}', 'emb', {literal(q)}, 3)"
        ).collect()
    ]
    assert again == pylance(path, q, k=3)["id"].to_pylist()
    assert all(i >= 1000 for i in again)


@pytest.mark.parametrize(
    "args, message",
    [
        ("'emb', array(1, 2), 5", "option 'q': column emb holds vectors of 16"),
        ("'emb'", "'q'.*lance_nearest needs it"),
        ("'emb', Q, k => 5, kk => 3", "'kk'.*no such parameter"),
        ("'emb', Q, 0", "option 'k'.*must be positive"),
        ("'emb', Q, 5, 'manhattan'", "option 'metric'.*must be one of"),
        ("'emb', Q, 5, nprobes => 0", "option 'nprobes'.*must be positive"),
        ("'emb', Q, 2.5", "option 'k'.*whole number"),
        ("'emb', array(1, null)", "option 'q'.*NULL at position 1"),
        ("'emb', array(rand())", "option 'q'.*must be a constant"),
        ("'emb', Q, 'five'", "option 'k'.*is string"),
        ("'nope', Q", "nope"),
        ("'emb', Q, k => 2, k => 3", "given twice.*option 'k'"),
    ],
)
def test_wrong_arguments_are_refused_naming_them(spark, indexed, args, message):
    q = literal(vectors(1, seed=70)[0])
    with pytest.raises(Exception, match=message):
        spark.sql(f"SELECT * FROM lance_nearest('{indexed}', {args.replace('Q', q)})").collect()


def test_missing_tables_are_refused(spark, tmp_path):
    q = literal(vectors(1, seed=71)[0])
    with pytest.raises(Exception, match="does not exist"):
        spark.sql(f"SELECT * FROM lance_nearest('{tmp_path}/none', 'emb', {q})").collect()
    with pytest.raises(Exception, match="TABLE_OR_VIEW_NOT_FOUND"):
        spark.sql(f"SELECT * FROM lance_nearest('no_such_table', 'emb', {q})").collect()
    spark.range(3).createOrReplaceTempView("not_lance")
    with pytest.raises(Exception, match="not a Lance table"):
        spark.sql(f"SELECT * FROM lance_nearest('not_lance', 'emb', {q})").collect()


def test_the_test_session_has_the_extension(spark):
    """configure() (which built the session) added the extension; see test_spark_lance for
    how it keeps extensions given."""
    assert spark_lance.EXTENSIONS in spark.conf.get("spark.sql.extensions").split(",")
