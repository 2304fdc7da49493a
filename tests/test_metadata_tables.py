"""The connector's metadata tables (versions, tags, fragments, indices; by option and in SQL), against
pylance's own view of every fixture and external dataset; and time travel exactly at a commit
time as the versions table reports it."""

from __future__ import annotations

import datetime as dt

import lance
import pytest

import support

FIXTURES = support.all_fixtures()
DATASET_CASES = [pytest.param(f, id=f.name) for f in FIXTURES]
EPOCH = dt.datetime(1970, 1, 1)

#: Columns (name, Spark simpleString type) the versions table must have, in this order
#: (the connector may add more).
VERSIONS_COLUMNS = [
    ("version", "bigint"),
    ("timestamp", "timestamp"),
    ("num_rows", "bigint"),
    ("num_fragments", "bigint"),
    ("num_deleted_rows", "bigint"),
    ("tags", "array<string>"),
]


def metadata(spark, path, table):
    return spark.read.format("lance").option("metadata_table", table).load(str(path))


def commit_micros(ds) -> dict[int, int]:
    """version -> commit time in microseconds since the epoch, from the manifests' own
    nanoseconds (pylance's raw versions(); the public one rounds through float seconds)."""
    return {int(v["version"]): int(v["timestamp"]) // 1000 for v in ds._ds.versions()}


def micros_of(naive_utc: dt.datetime) -> int:
    # Spark hands back `timestamp` values as naive datetimes in the process zone (UTC here).
    return (naive_utc - EPOCH) // dt.timedelta(microseconds=1)


@pytest.mark.parametrize("fx", DATASET_CASES)
def test_versions_table(spark, fx):
    df = metadata(spark, fx.path, "versions")
    types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    names = [f.name for f in df.schema.fields]
    for col, typ in VERSIONS_COLUMNS:
        assert types.get(col) == typ, (
            f"versions table column {col!r}: expected {typ}, got {types.get(col)}"
        )
    assert [n for n in names if n in dict(VERSIONS_COLUMNS)] == [c for c, _ in VERSIONS_COLUMNS]

    latest = lance.dataset(str(fx.path))
    micros = commit_micros(latest)
    tags = {k: v["version"] for k, v in latest.tags.list().items()}
    rows = {r["version"]: r for r in df.collect()}
    assert sorted(rows) == sorted(micros), "versions differ from pylance's"
    for v, r in sorted(rows.items()):
        ds = lance.dataset(str(fx.path), version=v)
        frags = ds.get_fragments()
        physical = sum(f.physical_rows for f in frags)
        want = {
            "timestamp_us": micros[v],
            "num_rows": ds.count_rows(),
            "num_fragments": len(frags),
            "num_deleted_rows": physical - ds.count_rows(),
            "tags": sorted(t for t, tv in tags.items() if tv == v),
        }
        got = {
            "timestamp_us": micros_of(r["timestamp"]),
            "num_rows": r["num_rows"],
            "num_fragments": r["num_fragments"],
            "num_deleted_rows": r["num_deleted_rows"],
            "tags": sorted(r["tags"]),
        }
        if "data_storage_version" in r.asDict():
            want["data_storage_version"] = ds.data_storage_version
            got["data_storage_version"] = r["data_storage_version"]
        assert got == want, f"{fx.name} v{v}"


@pytest.mark.parametrize("fx", DATASET_CASES)
def test_tags_table(spark, fx):
    df = metadata(spark, fx.path, "tags")
    assert [(f.name, f.dataType.simpleString()) for f in df.schema.fields] == [
        ("tag", "string"),
        ("version", "bigint"),
    ]
    got = sorted((r["tag"], r["version"]) for r in df.collect())
    want = sorted((k, v["version"]) for k, v in lance.dataset(str(fx.path)).tags.list().items())
    assert got == want


@pytest.mark.parametrize("fx", [p for p in DATASET_CASES if len(p.values[0].versions) > 1])
def test_timestamp_at_a_commit_time_reads_that_version(spark, fx):
    """Feeding a version's commit time, as the versions table shows it, back as the timestamp
    option reads that version: the option selects the newest version committed at or before
    the given time. (pylance's asof is strictly-before on float-rounded times, so there is no
    pylance answer to copy at this exact point; counts are checked against pylance per version.)"""
    path = str(fx.path)
    rows = metadata(spark, path, "versions").orderBy("version").collect()
    for r in rows:
        v = r["version"]
        iso = r["timestamp"].isoformat(timespec="microseconds") + "Z"
        df = spark.read.format("lance").option("timestamp", iso).load(path)
        want = lance.dataset(path, version=v)
        assert (df.columns, df.count()) == (want.schema.names, want.count_rows()), (
            f"timestamp {iso} (commit of v{v})"
        )
    # One microsecond before the first commit there is nothing to read.
    first = rows[0]["timestamp"] - dt.timedelta(microseconds=1)
    with pytest.raises(Exception) as e:
        spark.read.format("lance").option(
            "timestamp", first.isoformat(timespec="microseconds") + "Z"
        ).load(path).count()
    assert path in str(e.value)


@pytest.mark.parametrize("fx", DATASET_CASES)
def test_fragments_table(spark, fx):
    ds = lance.dataset(str(fx.path))
    got = {r.fragment_id: r for r in metadata(spark, fx.path, "fragments").collect()}
    assert sorted(got) == sorted(f.fragment_id for f in ds.get_fragments())
    for f in ds.get_fragments():
        r = got[f.fragment_id]
        assert r.num_rows == f.count_rows()
        assert r.physical_rows == f.physical_rows  # read from the file by old datasets
        assert r.num_deleted_rows == r.physical_rows - r.num_rows
        assert r.data_files == [d.path for d in f.metadata.files]
        assert r.deletion_file == f.deletion_file()


def test_indices_table_and_metadata_tables_in_sql(spark, tmp_path):
    import warnings

    import pyarrow as pa

    path = tmp_path / "ix"

    def rows(ids):
        return pa.table(
            {"id": ids, "s": [f"r{i}" for i in ids], "st": [{"a": i % 4, "b": "x"} for i in ids]}
        )

    lance.write_dataset(rows(list(range(20))), str(path), max_rows_per_file=10)
    ds = lance.dataset(str(path))
    ds.create_scalar_index("id", "BTREE")
    ds.create_scalar_index("s", "BITMAP", name="s_bits")
    ds.create_scalar_index("st.a", "BTREE", name="nested")  # listed by its path, "st.a"
    lance.write_dataset(rows([99]), str(path), mode="append")
    lance.dataset(str(path)).delete("id = 3")
    ds = lance.dataset(str(path))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = sorted(
            (i["name"], i["type"], i["uuid"], i["fields"], i["version"], sorted(i["fragment_ids"]))
            for i in ds.list_indices()
        )
    got = sorted(
        (r.name, r.type, r.uuid, r.columns, r.dataset_version, sorted(r.fragment_ids))
        for r in metadata(spark, path, "indices").collect()
    )
    assert got == want and len(got) == 3

    # The same tables in SQL, for a path table and a catalog table.
    c = support.lance_catalog(spark, tmp_path)
    for kind in ["versions", "tags", "fragments", "indices"]:
        sql = spark.sql(f"select * from {c}.`{path}`.{kind}").collect()
        assert sql == metadata(spark, path, kind).collect(), kind
    spark.sql(f"create table {c}.t using lance as select id from range(3)")
    spark.sql(f"insert into {c}.t values (7)")
    assert [r.version for r in spark.sql(f"select version from {c}.t.versions").collect()] == [
        v["version"] for v in lance.dataset(str(tmp_path / "t.lance")).versions()
    ]
    with pytest.raises(Exception, match="TABLE_OR_VIEW_NOT_FOUND|cannot be found"):
        spark.sql(f"select * from {c}.nope.versions").collect()
