"""pylance 14 side of the table-transaction suites (io.sparklance.table.txn).

Every value the Scala suites assert comes from here: pylance makes the datasets, performs
the reference operations and reports what it reads. Called through server.py:
  make(path, version)        3 fragments: 50, 6000 and 20 rows of id (int64) and v (string)
  offsets(path, pred)        {fragment_id: [row offsets]} of the rows pred matches
  op(path, kind)             one operation: append | delete1 | overwrite
  op_delete(path, pred)      ds.delete(pred)
  pair(path, kind, pred)     pylance alone: a stale handle deletes pred after kind committed
  describe(path)             rows, fragments, deletion files, validate(), last operation
  keep_going(path)           append 10 rows and delete id % 11 = 0, then describe
"""
import lance
import pyarrow as pa


def table(start, n):
    ids = list(range(start, start + n))
    return pa.table({"id": pa.array(ids, pa.int64()), "v": pa.array([f"r{i}" for i in ids])})


def make(path, version):
    lance.write_dataset(table(0, 50), path, data_storage_version=version)
    lance.write_dataset(table(50, 6000), path, mode="append")
    lance.write_dataset(table(6050, 20), path, mode="append")


def offsets(path, pred):
    t = lance.dataset(path).to_table(columns=["id"], with_row_address=True, filter=pred)
    out = {}
    for a in t.column("_rowaddr").to_pylist():
        out.setdefault(str(a >> 32), []).append(a & 0xFFFFFFFF)
    return out


def op(path, kind):
    ds = lance.dataset(path)
    if kind == "append":
        lance.write_dataset(table(9000, 5), path, mode="append")
    elif kind == "delete1":
        ds.delete("id = 1")
    elif kind == "overwrite":
        lance.write_dataset(table(7000, 3), path, mode="overwrite")
    else:
        raise ValueError(kind)


def pair(path, kind, pred):
    stale = lance.dataset(path)
    op(path, kind)
    try:
        stale.delete(pred)
        return {"outcome": "ok"}
    except Exception as e:  # noqa: BLE001 - the outcome is what we report
        msg = str(e)
        kind = "incompatible" if "Incompatible" in msg else "retryable" if "etryable" in msg else "other"
        return {"outcome": kind, "message": msg.split(",")[0]}


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
        frags.append({
            "id": m.id,
            "physical_rows": m.physical_rows,
            "deletion": None if d is None else {"kind": d.file_type, "num_deleted_rows": d.num_deleted_rows},
        })
    t = ds.to_table().sort_by("id")
    txn = ds.read_transaction(ds.version) if hasattr(ds, "read_transaction") else None
    return {
        "rows": t.column("id").to_pylist(),
        "values": t.column("v").to_pylist(),
        "count": ds.count_rows(),
        "fragments": frags,
        "valid": valid,
        "operation": None if txn is None else type(txn.operation).__name__,
    }


def op_delete(path, pred):
    lance.dataset(path).delete(pred)


def keep_going(path):
    lance.write_dataset(table(8000, 10), path, mode="append")
    lance.dataset(path).delete("id % 11 = 0")
    return describe(path)
