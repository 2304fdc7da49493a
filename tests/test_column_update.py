"""Updates written as columns (issue 15: "when an UPDATE changes few columns of many rows,
write only those columns"): ``LanceTable.update(..., mode="columns")`` gives every fragment
with a matched row one new data file of the updated columns, as pylance's
``LanceFragment.update_columns`` committed as ``Update(update_mode="rewrite_columns")`` does
on a twin — the same rows with row ids and version columns, files per fragment (tombstoned
fields), deletion files and index coverage; pylance keeps appending, deleting, updating,
compacting and indexing the result as its own. ``mode="auto"`` picks columns or rows by the
bytes each would write."""

from __future__ import annotations

import lance
import pyarrow as pa
import pytest

from spark_lance import LanceTable
from support import TWIN_PARAMS, make_twins, twin_id

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("n", pa.int64()),
        pa.field("f", pa.float64()),
        pa.field("v", pa.string()),
        pa.field("st", pa.struct([pa.field("a", pa.int32())])),
    ]
)


def data(start, count):
    ids = list(range(start, start + count))
    return pa.table(
        {
            "id": ids,
            "n": [i % 10 for i in ids],
            "f": [i / 4 for i in ids],
            "v": [f"row-{i}-" + "x" * (i % 50) for i in ids],
            "st": [{"a": i % 3} for i in ids],
        },
        schema=SCHEMA,
    )


def make(path, version, stable):
    """Three fragments (one appended), deleted rows in two, a BTREE index on n."""
    lance.write_dataset(
        data(0, 250),
        path,
        max_rows_per_file=100,
        data_storage_version=version,
        enable_stable_row_ids=stable,
    )
    lance.write_dataset(data(250, 50), path, mode="append")
    lance.dataset(path).delete("id % 37 = 5 or id = 120")
    lance.dataset(path).create_scalar_index("n", "BTREE")


@pytest.fixture(params=TWIN_PARAMS, ids=twin_id)
def twins(request, tmp_path):
    return make_twins(tmp_path, make, *request.param)


def pylance_update_columns(path, values, where):
    """pylance's own column rewrite: `values` ({column: pyarrow compute of the table}) for
    the rows `where` matches, through update_columns per fragment, one Update committed."""
    ds = lance.dataset(path)
    key = "_rowid" if ds.has_stable_row_ids else "_rowaddr"
    hit = ds.to_table(filter=where, with_row_id=True, with_row_address=True)
    if hit.num_rows == 0:
        return
    cols = {key: hit[key]}
    for name, fn in values.items():
        cols[name] = fn(hit)
    src = pa.table(cols)
    frags, offsets, fields = [], {}, None
    for fid in sorted(set(a >> 32 for a in hit["_rowaddr"].to_pylist())):
        mine = [i for i, a in enumerate(hit["_rowaddr"].to_pylist()) if a >> 32 == fid]
        meta, fields, offs = ds.get_fragment(fid).update_columns(
            src.take(mine), left_on=key, with_offsets=True
        )
        frags.append(meta)
        offsets[fid] = offs
    op = lance.LanceOperation.Update(
        updated_fragments=frags,
        fields_modified=fields,
        update_mode="rewrite_columns",
        updated_fragment_offsets=offsets,
    )
    lance.LanceDataset.commit(path, op, read_version=ds.version)


def view(path):
    """What pylance reads of a dataset; validate() must pass."""
    ds = lance.dataset(path)
    ds.validate()
    t = ds.to_table(
        with_row_id=True,
        columns=ds.schema.names + ["_row_created_at_version", "_row_last_updated_at_version"],
    )
    op = ds.read_transaction(ds.version).operation
    return {
        "schema": str(ds.schema),
        "rows": sorted(t.to_pylist(), key=lambda r: r["id"]),
        "fragments": [
            (
                f.metadata.id,
                f.metadata.physical_rows,
                [
                    (list(x.fields), x.file_major_version, x.file_minor_version)
                    for x in f.metadata.files
                ],
                None
                if f.metadata.deletion_file is None
                else f.metadata.deletion_file.num_deleted_rows,
            )
            for f in ds.get_fragments()
        ],
        "indices": sorted((i["name"], sorted(i["fragment_ids"])) for i in ds.list_indices()),
        "operation": (
            type(op).__name__,
            getattr(op, "update_mode", None),
            sorted(getattr(op, "fields_modified", None) or []),
        ),
        "version": ds.version,
    }


def keep_going(path):
    """pylance appends, deletes, updates, compacts and indexes the result."""
    lance.write_dataset(lance.dataset(path).to_table(filter="id < 30"), path, mode="append")
    lance.dataset(path).delete("id = 7")
    lance.dataset(path).update({"n": "n + 100"}, where="id % 11 = 0")
    lance.dataset(path).optimize.compact_files()
    lance.dataset(path).create_scalar_index("id", "BTREE", replace=True)
    return view(path)


def test_one_column_of_some_rows_as_pylance(spark, twins):
    ours, theirs = twins
    LanceTable(spark, ours).update({"n": "n + 1"}, where="id % 3 = 0 and id < 180", mode="columns")
    pylance_update_columns(
        theirs, {"n": lambda t: pa.compute.add(t["n"], 1)}, "id % 3 = 0 and id < 180"
    )
    assert view(ours) == view(theirs)
    assert view(ours)["operation"][1] == "rewrite_columns"
    assert keep_going(ours) == keep_going(theirs)


def test_two_columns_twice_and_every_row_as_pylance(spark, twins):
    ours, theirs = twins
    table = LanceTable(spark, ours)
    table.update({"v": "concat(v, '!')", "f": "f * 2"}, where="n = 4", mode="columns")
    pylance_update_columns(
        theirs,
        {
            "f": lambda t: pa.compute.multiply(t["f"], 2.0),
            "v": lambda t: pa.compute.binary_join_element_wise(t["v"], "!", ""),
        },
        "n = 4",
    )
    assert view(ours) == view(theirs)
    # The same columns again, every row (no condition): the first update's files go.
    table.update({"f": "-f", "v": "upper(v)"}, mode="columns")
    pylance_update_columns(
        theirs,
        {"f": lambda t: pa.compute.negate(t["f"]), "v": lambda t: pa.compute.utf8_upper(t["v"])},
        None,
    )
    assert view(ours) == view(theirs)
    assert keep_going(ours) == keep_going(theirs)


def test_values_computed_from_other_columns_as_pylance(spark, twins):
    ours, theirs = twins
    LanceTable(spark, ours).update({"f": "n * 2 + id"}, where="id < 120", mode="columns")
    pylance_update_columns(
        theirs,
        {
            "f": lambda t: pa.compute.cast(
                pa.compute.add(pa.compute.multiply(t["n"], 2), t["id"]), pa.float64()
            )
        },
        "id < 120",
    )
    assert view(ours) == view(theirs)


def test_a_column_name_with_a_space(spark, tmp_path):
    path = str(tmp_path / "t")
    lance.write_dataset(pa.table({"id": [1, 2, 3], "a b": [10, 20, 30]}), path)
    LanceTable(spark, path).update({"a b": "`a b` + id"}, where="id >= 2", mode="columns")
    got = lance.dataset(path).to_table().sort_by("id").to_pylist()
    assert got == [{"id": 1, "a b": 10}, {"id": 2, "a b": 22}, {"id": 3, "a b": 33}]
    assert view(path)["operation"][1] == "rewrite_columns"


def test_spark_reads_the_update_as_pylance(spark, twins):
    ours, _ = twins
    LanceTable(spark, ours).update({"n": "n * 10", "v": "null"}, where="id >= 240", mode="columns")
    got = sorted(
        (r.asDict(recursive=True) for r in spark.read.format("lance").load(ours).collect()),
        key=lambda r: r["id"],
    )
    assert got == sorted(lance.dataset(ours).to_table().to_pylist(), key=lambda r: r["id"])
    assert any(r["v"] is None for r in got) and any(r["n"] == 90 for r in got)


def test_auto_writes_columns_for_many_rows_and_rows_for_few(spark, tmp_path):
    path, twin = str(tmp_path / "t"), str(tmp_path / "twin")
    for p in (path, twin):
        make(p, "2.2", False)
    table = LanceTable(spark, path)
    table.update({"n": "n + 1"}, where="id % 2 = 0")  # half the rows, one narrow column
    assert view(path)["operation"][:2] == ("Update", "rewrite_columns")
    table.update({"n": "n + 1"}, where="id = 3")  # one row
    op = view(path)["operation"]
    assert op[0] == "Update" and op[1] != "rewrite_columns"
    theirs = lance.dataset(twin)
    theirs.update({"n": "n + 1"}, where="id % 2 = 0")
    lance.dataset(twin).update({"n": "n + 1"}, where="id = 3")
    assert lance.dataset(path).to_table().sort_by("id") == lance.dataset(twin).to_table().sort_by(
        "id"
    )


def test_nothing_matched_commits_nothing(spark, tmp_path):
    path = str(tmp_path / "t")
    make(path, "2.2", False)
    before = lance.dataset(path).version
    LanceTable(spark, path).update({"n": "0"}, where="id < 0", mode="columns")
    assert lance.dataset(path).version == before


def test_errors_name_the_column(spark, tmp_path):
    path = str(tmp_path / "t")
    make(path, "2.2", False)
    table = LanceTable(spark, path)
    with pytest.raises(Exception, match="no top-level column 'nope'"):
        table.update({"nope": "1"}, mode="columns")
    with pytest.raises(Exception, match="NOT NULL column 'id'"):
        table.update({"id": "null"}, where="id = 4", mode="columns")
    with pytest.raises(Exception, match="'st' is nested"):
        table.update({"st": "named_struct('a', 1)"}, mode="columns")
    with pytest.raises(ValueError, match="mode must be"):
        table.update({"n": "1"}, mode="cols")
    assert lance.dataset(path).version == 4
    # auto takes the row path for a struct column
    table.update({"st": "named_struct('a', 7)"}, where="id = 4")
    assert lance.dataset(path).to_table(filter="id = 4")["st"].to_pylist() == [{"a": 7}]
