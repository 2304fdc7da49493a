"""pylance side of UpdateSuite and the transaction matrix: datasets of (id int64, n int64,
v string), pylance's own update, and what pylance reads back. Called through server.py."""
import lance
import pyarrow as pa


def table(start, count, n=0):
    ids = list(range(start, start + count))
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "n": pa.array([n] * count, pa.int64()),
        "v": pa.array([f"r{i}" for i in ids]),
    })


def make(path, version, stable):
    """Two fragments of 20 rows (versions 1 and 2), stable row ids or not."""
    lance.write_dataset(table(0, 20), path, data_storage_version=version,
                        enable_stable_row_ids=stable)
    lance.write_dataset(table(20, 20), path, mode="append")
    return lance.dataset(path).version


def matched(path, version, pred):
    """The rows `pred` matches at `version`, in scan order: fragment, offset, row id and the
    values of every column."""
    ds = lance.dataset(path, version=version)
    names = [f.name for f in ds.schema]
    t = ds.to_table(columns=names, filter=pred, with_row_address=True, with_row_id=True)
    out = []
    for r in t.to_pylist():
        a = r.pop("_rowaddr")
        out.append({"fragment": a >> 32, "offset": a & 0xFFFFFFFF, "rowid": r.pop("_rowid"),
                    "values": r})
    return out


def update(path, pred, add):
    lance.dataset(path).update({"n": f"n + {add}"}, where=pred)


def stale_update(path, version, pred, add):
    """pylance alone: a handle opened at `version` updates after others committed."""
    lance.dataset(path, version=version).update({"n": f"n + {add}"}, where=pred)


def describe(path):
    ds = lance.dataset(path)
    valid = True
    try:
        ds.validate()
    except Exception as e:  # noqa: BLE001 - reported, the suite fails on it
        valid = str(e)
    stable = ds.has_stable_row_ids
    cols = ["id", "n", "v"]
    if stable:
        cols += ["_row_created_at_version", "_row_last_updated_at_version"]
    t = ds.to_table(columns=cols, with_row_id=stable).sort_by("id")
    frags = []
    for f in ds.get_fragments():
        m = f.metadata
        d = m.deletion_file
        frags.append({"id": m.id, "physical_rows": m.physical_rows,
                      "deletion": None if d is None else [d.file_type, d.num_deleted_rows]})
    txn = ds.read_transaction(ds.version)
    op = txn.operation
    info = {"operation": type(op).__name__}
    if type(op).__name__ == "Update":
        info.update({
            "removed": sorted(op.removed_fragment_ids),
            "updated": sorted(f.id for f in op.updated_fragments),
            "new": [f.physical_rows for f in op.new_fragments],
            "fields_modified": list(op.fields_modified),
            "preserving": list(op.fields_for_preserving_frag_bitmap),
            "mode": str(op.update_mode),
        })
    return {
        "version": ds.version,
        "rows": t.to_pylist(),
        "fragments": frags,
        "valid": valid,
        "txn": info,
        "indices": sorted([i["name"], sorted(i["fragment_ids"])] for i in ds.list_indices()),
    }


def keep_going(path):
    """pylance continues on the dataset: append, delete, update, index; then describe."""
    lance.write_dataset(table(100, 5, 7), path, mode="append")
    ds = lance.dataset(path)
    ds.delete("id % 9 = 0")
    ds.update({"n": "n + 100"}, where="id % 4 = 1")
    return describe(path)


def index(path):
    lance.dataset(path).create_scalar_index("id", "BTREE")


def indexed(path, pred):
    """`pred` answered with the scalar index and by a flat scan: they must agree."""
    ds = lance.dataset(path)
    a = ds.to_table(columns=["id", "n"], filter=pred).sort_by("id").to_pylist()
    b = ds.to_table(columns=["id", "n"], filter=pred, use_scalar_index=False).sort_by("id")
    return {"indexed": a, "flat": b.to_pylist()}


def column_values(path, version, column):
    """Fragment id (a string) -> `column` of every physical row (0 for deleted ones)."""
    ds = lance.dataset(path, version=version)
    out = {}
    for f in ds.get_fragments():
        vals = [0] * f.metadata.physical_rows
        t = f.to_table(columns=[column], with_row_address=True)
        for a, v in zip(t["_rowaddr"].to_pylist(), t[column].to_pylist()):
            vals[a & 0xFFFFFFFF] = v
        out[str(f.fragment_id)] = vals
    return out
