"""pylance side of CleanupOldVersionsSuite: a dataset with history, twins with the same file
times, pylance's own cleanup_old_versions, and what is left."""
import datetime as dt
import os
import shutil
import time

import lance
import pyarrow as pa


def table(start, n):
    ids = list(range(start, start + n))
    return pa.table({"id": pa.array(ids, pa.int64()), "v": [f"r{i}" for i in ids]})


def make_history(path, stable):
    lance.write_dataset(table(0, 40), path, max_rows_per_file=20, enable_stable_row_ids=stable)
    lance.write_dataset(table(40, 10), path, mode="append")
    ds = lance.dataset(path)
    ds.create_scalar_index("id", "BTREE")
    lance.dataset(path).delete("id % 5 = 0")
    lance.dataset(path).update({"v": "'u'"}, where="id = 41")
    lance.dataset(path).tags.create("keep", 2)
    lance.write_dataset(table(100, 5), path, mode="overwrite")
    lance.write_dataset(table(200, 5), path, mode="append")
    lance.dataset(path).delete("id = 201")
    # Stray files as a failed writer leaves them, some old enough to be unverified garbage.
    now = time.time()
    for name, days in [("data/stray-new.lance", 0), ("data/stray-3d.lance", 3),
                       ("data/stray-9d.lance", 9), ("_transactions/9-stray.txn", 9),
                       ("_deletions/0-9-1.arrow", 3)]:
        p = os.path.join(path, name)
        with open(p, "wb") as f:
            f.write(b"x" * 10)
        t = now - days * 86400 - 60 if days else now - 30
        os.utime(p, (t, t))
    return lance.dataset(path).version


def twin(src, dst):
    shutil.copytree(src, dst)  # copy2: file times kept


def files(path):
    out = []
    for d, _, fs in os.walk(path):
        out += [os.path.relpath(os.path.join(d, f), path) for f in fs]
    return sorted(out)


def cleanup(path, older_than_s, retain, delete_unverified, error_if_tagged):
    ds = lance.dataset(path)
    try:
        s = ds.cleanup_old_versions(
            older_than=None if older_than_s is None else dt.timedelta(seconds=older_than_s),
            retain_versions=retain, delete_unverified=delete_unverified,
            error_if_tagged_old_versions=error_if_tagged)
    except Exception as e:  # noqa: BLE001 - reported
        return {"error": str(e)}
    return {k: getattr(s, k) for k in ["bytes_removed", "old_versions", "data_files_removed",
                                        "transaction_files_removed", "index_files_removed",
                                        "deletion_files_removed"] if hasattr(s, k)}


def readable(path):
    """Every version and tag pylance can still open, with its rows; then pylance continues."""
    ds = lance.dataset(path)
    ds.validate()
    out = {}
    for v in ds.versions():
        t = lance.dataset(path, version=v["version"]).to_table().sort_by("id")
        out[str(v["version"])] = t["id"].to_pylist()
    for name in ds.tags.list():
        out["tag:" + name] = lance.dataset(path, version=name).to_table()["id"].to_pylist()
    return out


def keep_going(path):
    lance.write_dataset(table(300, 3), path, mode="append")
    lance.dataset(path).delete("id = 300")
    return sorted(lance.dataset(path).to_table()["id"].to_pylist())
