"""pylance side of PrimaryKeySuite (key positions count from 1: pylance takes 0 for none): tables of (id int64 not null, k string not null,
n int64, v string, m int32 not null) with or without an unenforced primary key, pylance's
merge_insert (which records the keys it inserts in `inserted_rows`), and what it reads back.
Called through server.py."""
import lance
import pyarrow as pa

MARK = "lance-schema:unenforced-primary-key"
POS = "lance-schema:unenforced-primary-key:position"


def schema(key):
    def field(name, t, nullable):
        md = None
        if name in key:
            md = {MARK: "true"} if len(key) == 1 else {MARK: "true",
                                                      POS: str(key.index(name) + 1)}
        return pa.field(name, t, nullable=nullable, metadata=md)
    return pa.schema([field("id", pa.int64(), False), field("k", pa.string(), False),
                      field("n", pa.int64(), True), field("v", pa.string(), True),
                      field("m", pa.int32(), False)])


def rows(key, ids, n=0):
    return pa.table({"id": pa.array(ids, pa.int64()), "k": [f"k{i}" for i in ids],
                     "n": pa.array([n] * len(ids), pa.int64()), "v": [f"r{i}" for i in ids],
                     "m": pa.array([i * 3 for i in ids], pa.int32())}, schema=schema(key))


def make(path, version, stable, key=()):
    key = list(key)
    """Versions 1-2: ids 0-19, then 20-39, with `key` (a list of columns, maybe empty)."""
    lance.write_dataset(rows(key, range(20)), path, data_storage_version=version,
                        enable_stable_row_ids=stable)
    lance.write_dataset(rows(key, range(20, 40)), path, mode="append")
    return lance.dataset(path).version


def set_key(path, key):
    """pylance's way to set the key on an existing table: field metadata."""
    ds = lance.dataset(path)
    ds.update_field_metadata({c: ({MARK: "true"} if len(key) == 1 else
                                  {MARK: "true", POS: str(i + 1)}) for i, c in enumerate(key)})


def upsert(path, key, on, ids, n, read_version=None, retries=None):
    """merge_insert on `on`: matched rows get n, new ids are inserted. From a handle at
    `read_version` (stale) when given; `retries` None keeps pylance's default re-runs.
    Returns "ok", "retryable" or the error."""
    ds = lance.dataset(path, version=read_version) if read_version else lance.dataset(path)
    b = ds.merge_insert(on).when_matched_update_all().when_not_matched_insert_all()
    if retries is not None:
        b = b.conflict_retries(retries)
    try:
        b.execute(rows(key, ids, n))
        return "ok"
    except Exception as e:  # noqa: BLE001 - the outcome is what we report
        msg = str(e)
        return ("incompatible" if "ncompatible" in msg
                else "retryable" if any(w in msg for w in ("etryable", "ontention", "onflict",
                                                           "oncurrent writers"))
                else f"error: {type(e).__name__}: {msg[:300]}")


def append(path, key, ids):
    lance.write_dataset(rows(key, ids), path, mode="append")


def update(path, pred):
    lance.dataset(path).update({"n": "n + 1"}, where=pred)


def table(path):
    ds = lance.dataset(path)
    ds.validate()
    return sorted(ds.to_table().to_pylist(), key=lambda r: (r["id"], r["n"]))


def describe(path):
    ds = lance.dataset(path)
    ds.validate()
    return {"valid": True, "rows": table(path),
            "schema": [(f.name, f.nullable, {k.decode(): v.decode()
                                              for k, v in (f.metadata or {}).items()})
                       for f in ds.schema],
            "version": ds.version}


def keep_going(path):
    """pylance merges, appends and deletes on the table."""
    ds = lance.dataset(path)
    key = [f.name for f in ds.schema if f.metadata and MARK.encode() in f.metadata]
    upsert(path, key, key or "id", [5, 77], 9)
    append(path, key, [90, 91])
    lance.dataset(path).delete("id = 6")
    return describe(path)


def delete(path, pred):
    lance.dataset(path).delete(pred)
