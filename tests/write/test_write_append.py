"""Spark appends to datasets pylance created (2.0/2.1/2.2); pylance then reads, appends, deletes and indexes."""

import lance
import pyarrow as pa
import pytest

from helpers import data_files, lance_rows


def pylance_table(start, n):
    return pa.table(
        {
            "id": pa.array(range(start, start + n), pa.int64()),
            "name": pa.array(
                [None if i % 5 == 0 else f"n{i}" for i in range(start, start + n)], pa.string()
            ),
            "score": pa.array([i / 4 for i in range(start, start + n)], pa.float64()),
            "tags": pa.array(
                [[f"t{i % 3}"] * (i % 3) for i in range(start, start + n)], pa.list_(pa.string())
            ),
            "u": pa.array([i % 200 for i in range(start, start + n)], pa.uint8()),
        }
    )


@pytest.mark.parametrize("version", ["2.0", "2.1", "2.2"])
def test_append_to_pylance_dataset_then_pylance_continues(spark, tmp_path, version):
    path = str(tmp_path / "ds")
    lance.write_dataset(pylance_table(0, 1000), path, data_storage_version=version)
    lance.dataset(path).create_scalar_index("id", "BTREE")
    assert lance.dataset(path).version == 2

    # Spark appends rows built from its own read of the dataset (so types come back as Lance types).
    src = spark.read.format("lance").load(path)
    extra = src.selectExpr("id + 1000 as id", "name", "score", "tags", "u")
    extra.write.format("lance").mode("append").save(path)

    ds = lance.dataset(path)
    ds.validate()
    assert ds.version == 3
    assert ds.data_storage_version == version
    assert ds.count_rows() == 2000
    # The index pylance built survives our append (index section carried over).
    assert [i["name"] for i in ds.list_indices()] == ["id_idx"]
    assert ds.to_table(filter="id = 1500").num_rows == 1
    first = lance_rows(pylance_table(0, 1000))
    expected = first + [dict(r, id=r["id"] + 1000) for r in first]
    assert lance_rows(ds.to_table()) == sorted(expected, key=lambda r: r["id"])

    # pylance keeps going: append, delete, index.
    lance.write_dataset(pylance_table(2000, 500), path, mode="append")
    ds = lance.dataset(path)
    ds.delete("id % 10 = 3 or id >= 2400")
    ds = lance.dataset(path)
    ds.create_scalar_index("id", "BTREE", replace=True)
    ds.create_scalar_index("name", "BITMAP")
    ds = lance.dataset(path)
    ds.validate()
    ids = sorted(ds.to_table(columns=["id"])["id"].to_pylist())
    assert ids == [i for i in range(2400) if i % 10 != 3]
    assert ds.to_table(filter="id = 1504").num_rows == 1
    assert ds.to_table(filter="id = 1503").num_rows == 0
    assert sorted(ds.to_table(filter="name = 'n501'")["id"].to_pylist()) == [501, 1501]

    # And Spark appends again on top of pylance's deletes and indices.
    spark.sql(
        "select cast(id + 5000 as bigint) as id, 'z' as name, 0.5d as score, array('x') as tags, "
        "cast(7 as smallint) as u from range(10)"
    ).write.format("lance").mode("append").save(path)
    ds = lance.dataset(path)
    ds.validate()
    assert ds.count_rows() == len(ids) + 10
    assert {i["name"] for i in ds.list_indices()} == {"id_idx", "name_idx"}
    assert spark.read.format("lance").load(path).count() == len(ids) + 10


def test_append_with_stable_row_ids(spark, tmp_path):
    path = str(tmp_path / "ds")
    lance.write_dataset(pylance_table(0, 100), path, enable_stable_row_ids=True)
    spark.read.format("lance").load(path).selectExpr(
        "id + 100 as id", "name", "score", "tags", "u"
    ).write.format("lance").mode("append").save(path)
    ds = lance.dataset(path)
    ds.validate()
    rowids = ds.to_table(columns=["id"], with_row_id=True)["_rowid"].to_pylist()
    assert sorted(rowids) == list(range(200))
    lance.write_dataset(pylance_table(200, 10), path, mode="append")
    ds = lance.dataset(path)
    assert sorted(ds.to_table(columns=["id"], with_row_id=True)["_rowid"].to_pylist()) == list(
        range(210)
    )


def test_schema_mismatch_fails_before_writing(spark, tmp_path):
    path = str(tmp_path / "ds")
    lance.write_dataset(pylance_table(0, 10), path)
    before = data_files(path)
    bad = spark.sql(
        "select 1L as id, 'a' as name, 1.0d as score, array('x') as tags, "
        "cast(1 as smallint) as u, 5 as extra"
    )
    with pytest.raises(Exception, match="extra"):
        bad.write.format("lance").mode("append").save(path)
    wrong = spark.sql(
        "select 'x' as id, 'a' as name, 1.0d as score, array('x') as tags, cast(1 as smallint) as u"
    )
    # Spark's store assignment refuses it, naming the column (as for writeTo).
    with pytest.raises(Exception, match="[`']id[`']"):
        wrong.write.format("lance").mode("append").save(path)
    assert data_files(path) == before
    assert lance.dataset(path).version == 1


@pytest.mark.parametrize(
    "select",
    [
        "cast(id as int) as id, 'n' as name, 0.5d as score, array('t') as tags, cast(id as int) as u",
        "cast(id as short) as u, array('t') as tags, 0.25f as score, 'n' as name, id",
        "'x' as id, 'n' as name, 0.5d as score, array('t') as tags, 1 as u",
        "id, 'n' as name, 0.5d as score, array('t') as tags",
    ],
)
def test_save_appends_as_write_to_appends(spark, tmp_path, select):
    """df.write.save() fits the DataFrame to the dataset as writeTo/INSERT do (by name, with
    spark.sql.storeAssignmentPolicy's casts): the same rows, or the same refusal."""
    paths = [str(tmp_path / "save"), str(tmp_path / "write_to")]
    for p in paths:
        lance.write_dataset(pylance_table(0, 5), p)
    df = spark.range(100, 103).selectExpr(*[c.strip() for c in select.split(", ")])
    outcomes = []
    for p, append in (
        (paths[0], lambda: df.write.format("lance").mode("append").save(paths[0])),
        (paths[1], lambda: df.writeTo(f"lance.`{paths[1]}`").append()),
    ):
        try:
            append()
            outcomes.append(lance_rows(lance.dataset(p).to_table()))
        except Exception as e:  # noqa: BLE001 - the class is what is compared
            outcomes.append(type(e).__name__)
    assert outcomes[0] == outcomes[1]
