"""CREATE INDEX / DROP INDEX on Lance tables (Spark's SupportsIndex) and the helper's
create_scalar_index / drop_index / list_indices: a BTREE index equal to pylance's
create_scalar_index on a twin (the same index files, up to the order of equal values, which
pylance's own sort leaves free), used by pylance's queries, kept up by pylance's
optimize_indices, compaction and deletes; drop_index as pylance's."""

from __future__ import annotations

import datetime as dt
import glob
import os

import lance
import pyarrow as pa
import pytest
from lance.file import LanceFileReader

import spark_lance
from support import lance_catalog as catalog


def data(n=5000):
    """Nulls, duplicates, strings, dates and timestamps, across two fragments with deletes."""
    base = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    return pa.table(
        {
            "id": pa.array([(i * 7919) % n if i % 500 else None for i in range(n)], pa.int32()),
            "big": pa.array([i // 3 for i in range(n)], pa.int64()),
            "s": [f"k{(i * 31) % 977}" if i % 3 else None for i in range(n)],
            "d": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=i % 400) for i in range(n)]),
            "t": pa.array(
                [base + dt.timedelta(seconds=i * 37 % 9000) for i in range(n)],
                pa.timestamp("us", tz="UTC"),
            ),
            "f": pa.array([i / 7 for i in range(n)], pa.float64()),
        }
    )


@pytest.fixture
def twins(tmp_path):
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    for p in (ours, theirs):
        lance.write_dataset(data(), p, max_rows_per_file=3000)
        lance.dataset(p).delete("id < 10")
    return ours, theirs


def index_files(path, name):
    """pylance's view of an index: its listing and both files (equal values' ids sorted)."""
    ds = lance.dataset(path)
    ix = [i for i in ds.list_indices() if i["name"] == name][0]
    out = {"type": ix["type"], "fields": ix["fields"], "fragments": sorted(ix["fragment_ids"])}
    for f in sorted(glob.glob(os.path.join(path, "_indices", ix["uuid"], "*"))):
        t = LanceFileReader(f).read_all().to_table()
        d = t.to_pydict()
        if "ids" in d:
            d = sorted(zip(d["values"], d["ids"]), key=lambda r: (r[0] is not None, r))
        out[os.path.basename(f)] = (str(t.schema.remove_metadata()), t.schema.metadata, d)
    return out


def plan(path, flt):
    return lance.dataset(path).scanner(filter=flt).explain_plan()


@pytest.mark.parametrize(
    "column,flt",
    [
        ("id", "id = 4104"),
        ("big", "big between 10 and 20"),
        ("s", "s = 'k741'"),
        ("d", "d < date '2024-01-05'"),
        ("t", "t > timestamp '2024-01-01 02:00:00'"),
    ],
)
def test_create_index_is_pylance_create_scalar_index(spark, twins, column, flt):
    ours, theirs = twins
    c = catalog(spark)
    spark.sql(f"create index {column}_idx on {c}.`{ours}` using btree ({column})")
    lance.dataset(theirs).create_scalar_index(column, "BTREE")
    assert index_files(ours, f"{column}_idx") == index_files(theirs, f"{column}_idx")
    o, t = lance.dataset(ours), lance.dataset(theirs)
    assert type(o.read_transaction(o.version).operation).__name__ == "CreateIndex"
    o.validate()
    assert "ScalarIndexQuery" in plan(ours, flt)
    assert o.to_table(filter=flt).sort_by("big") == t.to_table(filter=flt).sort_by("big")
    assert o.describe_indices()[0].num_rows_indexed == t.describe_indices()[0].num_rows_indexed


def test_pylance_keeps_our_index_up(spark, twins):
    """pylance appends, indexes the new rows into our index, deletes and compacts (which
    remaps our index) as on its own."""
    ours, theirs = twins
    spark.sql(f"create index id_idx on {catalog(spark)}.`{ours}` (id)")
    lance.dataset(theirs).create_scalar_index("id", "BTREE")
    more = data(300)
    for p in (ours, theirs):
        lance.write_dataset(more, p, mode="append")
        lance.dataset(p).optimize.optimize_indices()
        lance.dataset(p).delete("id % 11 = 0")
        lance.dataset(p).optimize.compact_files()
    for flt in ("id = 4104", "id < 100", "id is null"):
        assert "ScalarIndexQuery" in plan(ours, flt)
        a = (
            lance.dataset(ours)
            .to_table(filter=flt)
            .sort_by([("id", "ascending"), ("big", "ascending")])
        )
        b = (
            lance.dataset(theirs)
            .to_table(filter=flt)
            .sort_by([("id", "ascending"), ("big", "ascending")])
        )
        assert a == b
    lance.dataset(ours).validate()
    assert [i["fragment_ids"] for i in lance.dataset(ours).list_indices()] == [
        i["fragment_ids"] for i in lance.dataset(theirs).list_indices()
    ]


def test_drop_index_and_errors(spark, twins):
    ours, theirs = twins
    c = catalog(spark)
    t = f"{c}.`{ours}`"
    spark.sql(f"create index s_idx on {t} (s)")
    with pytest.raises(Exception, match="s_idx"):
        spark.sql(f"create index s_idx on {t} (s)")
    spark.sql(f"create index if not exists s_idx on {t} (s)")
    versions = len(lance.dataset(ours).versions())
    with pytest.raises(Exception, match="Column 'f' has Lance type .*BTREE"):
        spark.sql(f"create index f_idx on {t} (f)")
    with pytest.raises(Exception, match="ivf"):
        spark.sql(f"create index x_idx on {t} using ivf (id)")
    with pytest.raises(Exception, match="one column"):
        spark.sql(f"create index x_idx on {t} (id, s)")
    assert len(lance.dataset(ours).versions()) == versions
    assert len(os.listdir(os.path.join(ours, "_indices"))) == 1
    spark.sql(f"drop index s_idx on {t}")
    lance.dataset(theirs).create_scalar_index("s", "BTREE")
    lance.dataset(theirs).drop_index("s_idx")
    o, th = lance.dataset(ours), lance.dataset(theirs)
    assert o.list_indices() == th.list_indices() == []
    assert type(o.read_transaction(o.version).operation).__name__ == "CreateIndex"
    assert o.read_transaction(o.version).operation.new_indices == []
    with pytest.raises(Exception, match="s_idx"):
        spark.sql(f"drop index s_idx on {t}")
    spark.sql(f"drop index if exists s_idx on {t}")


def test_helper_and_catalog_tables(spark, tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    c = catalog(spark, root)
    spark.sql(
        f"create table {c}.t using lance as select id, cast(id % 5 as string) as s from range(100)"
    )
    spark.sql(f"create index id_idx on {c}.t (id)")
    table = spark_lance.LanceTable.for_name(spark, f"{c}.t")
    table.create_scalar_index("s", "BTREE", name="s_btree")
    ds = lance.dataset(str(root / "t.lance"))
    assert [(i["name"], i["type"], i["fields"]) for i in table.list_indices()] == [
        (i["name"], i["type"], i["fields"]) for i in ds.list_indices()
    ]
    assert "ScalarIndexQuery" in ds.scanner(filter="s = '3'").explain_plan()
    table.drop_index("s_btree")
    assert [i["name"] for i in lance.dataset(str(root / "t.lance")).list_indices()] == ["id_idx"]
    with pytest.raises(ValueError, match="BTREE"):
        table.create_scalar_index("s", "BITMAP")


def test_compaction_remaps_the_index_as_pylance(spark, twins):
    """spark_lance.compact_files on a table with a BTREE index: the indexed fragments are
    compacted too and the index remapped in the same commit, as pylance's compact_files."""
    ours, theirs = twins
    spark.sql(f"create index id_idx on {catalog(spark)}.`{ours}` (id)")
    lance.dataset(theirs).create_scalar_index("id", "BTREE")
    for p in (ours, theirs):
        for i in range(3):
            lance.write_dataset(data(40), p, mode="append")
        lance.dataset(p).delete("big = 5")
    got = spark_lance.compact_files(spark, ours)
    want = lance.dataset(theirs).optimize.compact_files()
    assert (got["fragments_removed"], got["fragments_added"]) == (
        want.fragments_removed,
        want.fragments_added,
    )
    assert got["indexed_fragments_skipped"] == 0
    assert index_files(ours, "id_idx") == index_files(theirs, "id_idx")
    o, t = lance.dataset(ours), lance.dataset(theirs)
    o.validate()
    assert [f.metadata.physical_rows for f in o.get_fragments()] == [
        f.metadata.physical_rows for f in t.get_fragments()
    ]
    for flt in ("id = 4104", "id < 20", "id is null"):
        assert "ScalarIndexQuery" in plan(ours, flt)
        assert o.to_table(filter=flt).sort_by("big") == t.to_table(filter=flt).sort_by("big")
