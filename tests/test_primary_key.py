"""The unenforced primary key from Spark (issue 15 item 5): declared at creation
(TBLPROPERTIES 'lance.primary_key', the write option primary_key) or once later (ALTER TABLE,
LanceTable.set_unenforced_primary_key), stored as pylance stores it; and MERGE on a keyed
table recording the keys it inserts as pylance's merge_insert does, so that a concurrent
pylance merge inserting the same key conflicts and one inserting another key does not."""

from __future__ import annotations

import lance
import pyarrow as pa
import pytest

from spark_lance import LanceTable
from support import lance_catalog as catalog

MARK = "lance-schema:unenforced-primary-key"
POS = MARK + ":position"


def arrow_schema(key):
    def field(name, t, nullable):
        md = None
        if name in key:
            md = {MARK: "true"} if len(key) == 1 else {MARK: "true", POS: str(key.index(name) + 1)}
        return pa.field(name, t, nullable=nullable and name not in key, metadata=md)

    return pa.schema(
        [field("id", pa.int64(), True), field("k", pa.string(), True), field("n", pa.int64(), True)]
    )


def rows(ids, key=(), n=0):
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "k": [f"k{i}" for i in ids],
            "n": pa.array([n] * len(ids), pa.int64()),
        },
        schema=arrow_schema(key),
    )


def keys(path):
    """pylance's view of the key: (name, nullable, key metadata) of each field."""
    ds = lance.dataset(path)
    ds.validate()
    return [
        (
            f.name,
            f.nullable,
            {
                k.decode(): v.decode()
                for k, v in (f.metadata or {}).items()
                if k.decode().startswith(MARK)
            },
        )
        for f in ds.schema
    ]


@pytest.mark.parametrize("key", [["id"], ["id", "k"]])
def test_write_option_declares_the_key_as_pylance_stores_it(spark, tmp_path, key):
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    df = spark.createDataFrame([(i, f"k{i}", 0) for i in range(10)], "id long, k string, n long")
    df.write.format("lance").option("primary_key", ",".join(key)).save(ours)
    lance.write_dataset(rows(range(10), key), theirs)
    assert keys(ours) == keys(theirs)
    assert LanceTable(spark, ours).primary_key == key


def test_create_table_properties_and_show_them(spark, tmp_path):
    c = catalog(spark, str(tmp_path))
    spark.sql(
        f"CREATE TABLE {c}.t (id bigint, k string, n bigint) USING lance "
        "TBLPROPERTIES ('lance.primary_key' = 'k')"
    )
    path = str(tmp_path / "t.lance")
    assert keys(path) == [("id", True, {}), ("k", False, {MARK: "true"}), ("n", True, {})]
    props = dict(spark.sql(f"SHOW TBLPROPERTIES {c}.t").collect())
    assert props["lance.primary_key"] == "k"
    spark.sql(
        f"CREATE TABLE {c}.u USING lance TBLPROPERTIES ('lance.primary_key' = 'id') "
        "AS SELECT id, 'x' AS k FROM range(5)"
    )
    assert keys(str(tmp_path / "u.lance"))[0] == ("id", False, {MARK: "true"})
    with pytest.raises(Exception, match="'zz' the primary key: no such column"):
        spark.sql(
            f"CREATE TABLE {c}.v (id bigint) USING lance TBLPROPERTIES ('lance.primary_key' = 'zz')"
        )


def test_set_once_as_pylance_sets_it(spark, tmp_path):
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    for p in (ours, theirs):
        lance.write_dataset(
            rows(range(10)).cast(
                pa.schema(
                    [
                        pa.field("id", pa.int64(), False),
                        pa.field("k", pa.string(), False),
                        pa.field("n", pa.int64()),
                    ]
                )
            ),
            p,
        )
    t = LanceTable(spark, ours)
    assert t.primary_key == []
    t.set_unenforced_primary_key("id")
    lance.dataset(theirs).update_field_metadata({"id": {MARK: "true"}})
    assert keys(ours) == keys(theirs)
    assert t.primary_key == ["id"]
    with pytest.raises(Exception, match="cannot change"):
        t.set_unenforced_primary_key("k")
    with pytest.raises(Exception, match="stays"):
        spark.sql(f"ALTER TABLE {t._name} UNSET TBLPROPERTIES ('lance.primary_key')")
    assert lance.dataset(ours).version == 2
    plain = str(tmp_path / "plain")
    lance.write_dataset(rows(range(3)), plain)
    with pytest.raises(Exception, match="'n' is nullable"):
        LanceTable(spark, plain).set_unenforced_primary_key("n")
    with pytest.raises(Exception, match="no such column"):
        LanceTable(spark, plain).set_unenforced_primary_key("zz")


def test_an_append_naming_another_key_fails(spark, tmp_path):
    path = str(tmp_path / "t")
    lance.write_dataset(rows(range(5), ["id"]), path)
    df = spark.createDataFrame([(7, "k7", 0)], "id long, k string, n long")
    with pytest.raises(Exception, match="primary key is id"):
        df.write.format("lance").mode("append").option("primary_key", "k").save(path)
    df.write.format("lance").mode("append").option("primary_key", "id").save(path)
    assert lance.dataset(path).count_rows() == 6


def stale_upsert(path, version, ids):
    """pylance's merge_insert on the key from a handle at `version`, not re-run on a
    conflict: what its resolver decided about the transactions committed since."""
    ds = lance.dataset(path, version=version)
    try:
        ds.merge_insert(
            "id"
        ).when_matched_update_all().when_not_matched_insert_all().conflict_retries(0).execute(
            rows(ids, ["id"], 2)
        )
        return "ok"
    except OSError as e:
        return "conflict" if "concurrent writers" in str(e) else str(e)


@pytest.mark.parametrize("other,expected", [(500, "conflict"), (501, "ok")])
def test_merge_records_inserted_keys_pylance_checks(spark, tmp_path, other, expected):
    path = str(tmp_path / "t")
    lance.write_dataset(rows(range(10), ["id"]), path)
    before = lance.dataset(path).version
    t = LanceTable(spark, path)
    src = spark.createDataFrame([(3, "k3", 1), (500, "k500", 1)], "id long, k string, n long")
    t.merge_insert().when_matched_update_all().when_not_matched_insert_all().execute(src)
    # Our Update records key 500 (3 was updated): pylance's merge inserting 500 from the
    # older version conflicts; one inserting 501 does not (with no record it would, too).
    assert stale_upsert(path, before, [other]) == expected
    got = lance.dataset(path).to_table().to_pylist()
    assert sum(r["id"] == 500 for r in got) == 1


def test_merge_insert_without_on_needs_a_key(spark, tmp_path):
    path = str(tmp_path / "t")
    lance.write_dataset(rows(range(3)), path)
    with pytest.raises(ValueError, match="no primary key"):
        LanceTable(spark, path).merge_insert()
