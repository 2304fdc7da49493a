"""pylance side of the transaction matrix (TransactionMatrixSuite).

Every operation exists twice: `run(path, op, role)` commits it on the latest version, and
`run_stale(path, op, role, version)` commits it from a handle opened at `version` after other
writers committed (pylance alone: the reference outcome of a pair). `role` ("first" or
"second") picks the rows the operation touches, so that the two sides of a pair touch
different rows of the same fragment. Outcomes are "ok", "retryable" or "incompatible".
"""
import lance
import pyarrow as pa

from update_ops import table

PRED = {"first": {"delete": "id = 1", "update": "id = 3"},
        "second": {"delete": "id = 2", "update": "id = 4"}}


def make(path, version, stable):
    lance.write_dataset(table(0, 20), path, data_storage_version=version,
                        enable_stable_row_ids=stable)
    lance.write_dataset(table(20, 20), path, mode="append")
    return lance.dataset(path).version


def delete(path, pred):
    lance.dataset(path).delete(pred)


def _commit(path, operation, version):
    lance.LanceDataset.commit(path, operation, read_version=version)


_PREPARED = {}


def prepare(path, op, role):
    """Writes the data files of an append or overwrite while the read version is the latest,
    as a writer does before it commits (`write_fragments` checks the current schema)."""
    if op == "append":
        start = 100 if role == "first" else 200
        _PREPARED[(path, role)] = lance.fragment.write_fragments(table(start, 5, 1), path)
    elif op == "overwrite":
        t = table(300 if role == "first" else 400, 3)
        _PREPARED[(path, role)] = (t.schema, lance.fragment.write_fragments(t, path))
    elif op == "data_replacement":
        # Fragment 0's rows again, n = 100 (first) or 200 (second), in one new data file.
        n = 100 if role == "first" else 200
        frag = lance.fragment.write_fragments(table(0, 20, n), path)[0]
        _PREPARED[(path, role)] = frag.files[0]


def _apply(ds, path, op, role, version):
    if op in ("append", "overwrite", "data_replacement") and (path, role) not in _PREPARED:
        prepare(path, op, role)
    if op == "append":
        _commit(path, lance.LanceOperation.Append(_PREPARED.pop((path, role))), version)
    elif op == "data_replacement":
        group = lance.LanceOperation.DataReplacementGroup(0, _PREPARED.pop((path, role)))
        _commit(path, lance.LanceOperation.DataReplacement([group]), version)
    elif op == "update_columns":
        _update_columns(ds, path, PRED[role]["update"], version)
    elif op == "delete":
        ds.delete(PRED[role]["delete"])
    elif op == "update":
        ds.update({"n": "n + 1"}, where=PRED[role]["update"])
    elif op == "overwrite":
        schema, frags = _PREPARED.pop((path, role))
        _commit(path, lance.LanceOperation.Overwrite(schema, frags), version)
    elif op == "create_index":
        ds.create_scalar_index("id", "BTREE")
    elif op == "compact":
        ds.optimize.compact_files()
    elif op == "restore":
        _commit(path, lance.LanceOperation.Restore(1), version)
    elif op == "update_config":
        ds.update_config({"k": role})
    elif op == "add_columns":
        ds.add_columns({"w": "id * 2"})
    elif op == "drop_columns":
        ds.drop_columns(["v"])
    elif op == "add_null_column":
        ds.add_columns(pa.field("z", pa.int32()))
    else:
        raise ValueError(op)


def _update_columns(ds, path, pred, version):
    """pylance's column rewrite of `n = n + 1 where pred` in fragment 0: update_columns on the
    matched rows' addresses, committed as an Update in rewrite_columns mode."""
    hit = ds.to_table(columns=["n"], filter=pred, with_row_address=True)
    src = pa.table({"_rowaddr": hit["_rowaddr"],
                    "n": pa.array([n + 1 for n in hit["n"].to_pylist()], pa.int64())})
    meta, fields, offsets = ds.get_fragment(0).update_columns(src, left_on="_rowaddr",
                                                              with_offsets=True)
    op = lance.LanceOperation.Update(updated_fragments=[meta], fields_modified=fields,
                                     update_mode="rewrite_columns",
                                     updated_fragment_offsets={0: offsets})
    _commit(path, op, version)


def update_columns(path, pred):
    """pylance's column rewrite of `n = n + 1 where pred` on the latest version."""
    ds = lance.dataset(path)
    _update_columns(ds, path, pred, ds.version)


def run(path, op, role):
    ds = lance.dataset(path)
    _apply(ds, path, op, role, ds.version)
    return lance.dataset(path).version


def run_stale(path, op, role, version):
    ds = lance.dataset(path, version=version)
    try:
        _apply(ds, path, op, role, version)
        return {"outcome": "ok"}
    except Exception as e:  # noqa: BLE001 - the outcome is what we report
        msg = str(e)
        kind = ("incompatible" if "ncompatible" in msg
                else "retryable" if ("etryable" in msg or "CommitConflict" in type(e).__name__)
                else "error")
        return {"outcome": kind, "message": f"{type(e).__name__}: {msg[:300]}"}


def describe(path):
    ds = lance.dataset(path)
    valid = True
    try:
        ds.validate()
    except Exception as e:  # noqa: BLE001
        valid = str(e)
    frags = []
    for f in ds.get_fragments():
        m = f.metadata
        d = m.deletion_file
        frags.append({"id": m.id, "physical_rows": m.physical_rows,
                      "files": [sorted(x.fields) for x in m.files],
                      "deletion": None if d is None else [d.file_type, d.num_deleted_rows]})
    # Every row with its row id and its created and last-updated versions (the fragments'
    # row id sequences and version metadata).
    names = [f.name for f in ds.schema] + ["_row_created_at_version",
                                            "_row_last_updated_at_version"]
    t = ds.to_table(columns=names, with_row_id=True).sort_by("id")
    return {
        "version": ds.version,
        "schema": [[f.name, str(f.type)] for f in ds.schema],
        "rows": t.to_pylist(),
        "fragments": frags,
        "config": dict(ds.config()),
        "indices": sorted([i["name"], sorted(i["fragment_ids"])] for i in ds.list_indices()),
        "operation": type(ds.read_transaction(ds.version).operation).__name__,
        "valid": valid,
    }


def keep_going(path):
    """pylance continues on the result: append, delete, update; then describe it."""
    ds = lance.dataset(path)
    names = [f.name for f in ds.schema]
    t = table(500, 4, 9)
    if "w" in names:
        t = t.append_column("w", pa.array([2 * i for i in range(500, 504)], pa.int64()))
    if "z" in names:
        t = t.append_column("z", pa.nulls(4, pa.int32()))
    lance.write_dataset(t.select(names), path, mode="append")
    ds = lance.dataset(path)
    ds.delete("id % 7 = 0")
    ds.update({"n": "n + 50"}, where="id % 5 = 1")
    return describe(path)
