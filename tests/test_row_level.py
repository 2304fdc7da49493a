"""UPDATE, MERGE INTO and DELETE (row-level) from Spark SQL on Lance tables, against pylance's
own update, merge_insert and delete on a twin: same rows and values, same stable row ids and
row versions where the table has them, an Update (or Delete) transaction as pylance commits,
`validate()` passes and pylance keeps changing the result."""

from __future__ import annotations

import lance
import pyarrow as pa
import pytest

from support import lance_catalog as catalog


def table(start, n, k=0):
    ids = list(range(start, start + n))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "n": pa.array([k + i for i in ids], pa.int64()),
            "s": [f"r{i}" for i in ids],
        }
    )


@pytest.fixture(params=[False, True], ids=["addresses", "stable"])
def twins(tmp_path, request):
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    for p in (ours, theirs):
        lance.write_dataset(table(0, 20), p, enable_stable_row_ids=request.param)
        lance.write_dataset(table(20, 20), p, mode="append")
        lance.dataset(p).delete("id = 7")
    return ours, theirs


def state(path):
    """What must match: rows with values, and with stable row ids the ids and versions."""
    ds = lance.dataset(path)
    stable = ds.has_stable_row_ids
    cols = ["id", "n", "s"] + (
        ["_row_created_at_version", "_row_last_updated_at_version"] if stable else []
    )
    t = ds.to_table(columns=cols, with_row_id=stable).sort_by("id")
    return {
        "rows": t.to_pylist(),
        "version": ds.version,
        "operation": type(ds.read_transaction(ds.version).operation).__name__,
    }


def check(ours, theirs):
    lance.dataset(ours).validate()
    assert state(ours) == state(theirs)
    for p in (ours, theirs):  # pylance keeps changing both the same way
        ds = lance.dataset(p)
        ds.update({"n": "n + 1000"}, where="id % 5 = 0")
        ds.delete("id = 11")
        lance.write_dataset(table(500, 3), p, mode="append")
    assert state(ours) == state(theirs)


@pytest.mark.parametrize(
    "where", ["id = 3", "id % 4 = 1", "s = 'r25' or id < 2", "id < 20", "s like 'r%1%'"]
)
def test_update_as_pylance_update(spark, twins, where):
    ours, theirs = twins
    c = catalog(spark)
    spark.sql(f"update {c}.`{ours}` set n = n + 100 where {where}")
    lance.dataset(theirs).update({"n": "n + 100"}, where=where)
    check(ours, theirs)


def test_update_of_a_string_column_from_an_expression(spark, twins):
    ours, theirs = twins
    c = catalog(spark)
    spark.sql(f"update {c}.`{ours}` set s = concat(s, '!') where id > 30")
    lance.dataset(theirs).update({"s": "concat(s, '!')"}, where="id > 30")
    check(ours, theirs)


def test_merge_upserts_as_pylance_merge_insert(spark, twins):
    ours, theirs = twins
    c = catalog(spark)
    src = table(35, 10, 500)  # 35..39 exist, 40..44 are new
    spark.createDataFrame(
        [tuple(r.values()) for r in src.to_pylist()], "id long, n long, s string"
    ).createOrReplaceTempView("src")
    spark.sql(f"""merge into {c}.`{ours}` t using src on t.id = src.id
                  when matched then update set *
                  when not matched then insert *""")
    (
        lance.dataset(theirs)
        .merge_insert("id")
        .when_matched_update_all()
        .when_not_matched_insert_all()
        .execute(src)
    )
    check(ours, theirs)


def test_merge_with_delete_and_by_source_clauses(spark, twins):
    ours, theirs = twins
    c = catalog(spark)
    src = table(10, 6, 900)
    spark.createDataFrame(
        [tuple(r.values()) for r in src.to_pylist()], "id long, n long, s string"
    ).createOrReplaceTempView("src2")
    spark.sql(f"""merge into {c}.`{ours}` t using src2 on t.id = src2.id
                  when matched and src2.id % 2 = 0 then delete
                  when matched then update set n = src2.n
                  when not matched by source and t.id >= 30 then delete""")
    ds = lance.dataset(theirs)
    ds.delete("(id >= 10 and id < 16 and id % 2 = 0) or id >= 30")
    lance.dataset(theirs).update({"n": "id + 900"}, where="id >= 10 and id < 16")

    # pylance needs two commits here, so only the last-updated versions differ.
    def rows(path):
        return [
            {k: v for k, v in r.items() if k != "_row_last_updated_at_version"}
            for r in state(path)["rows"]
        ]

    assert rows(ours) == rows(theirs)
    lance.dataset(ours).validate()


def test_delete_with_a_subquery_runs_as_a_row_level_delete(spark, twins):
    ours, theirs = twins
    c = catalog(spark)
    spark.sql(
        f"delete from {c}.`{ours}` where id in (select id + 1 from {c}.`{ours}` where id % 6 = 0)"
    )
    lance.dataset(theirs).delete("id % 6 = 1")
    check(ours, theirs)


def test_delete_where_a_like_the_reader_evaluates(spark, twins):
    """Spark cannot hand the delete this LIKE; the row-level delete's scan evaluates it."""
    ours, theirs = twins
    c = catalog(spark)
    for where in ["s like 'r%3%' and id > 5", "s not like 'r%1%'"]:
        spark.sql(f"delete from {c}.`{ours}` where {where}")
        lance.dataset(theirs).delete(where)
    check(ours, theirs)


def test_merge_where_a_target_row_matches_two_source_rows_fails(spark, twins):
    ours, _ = twins
    c = catalog(spark)
    before = lance.dataset(ours).version
    spark.createDataFrame(
        [(3, 1, "a"), (3, 2, "b")], "id long, n long, s string"
    ).createOrReplaceTempView("dup")
    with pytest.raises(Exception, match="MERGE_CARDINALITY_VIOLATION|multiple source rows"):
        spark.sql(f"""merge into {c}.`{ours}` t using dup on t.id = dup.id
                      when matched then update set *""")
    assert lance.dataset(ours).version == before
