"""pylance side of TagsSuite."""
import json
import os

import lance


def tags(path):
    """pylance's tags.list() without the times, plus each tag file's keys and rows by tag."""
    ds = lance.dataset(path)
    out = {}
    for name, t in ds.tags.list().items():
        with open(os.path.join(path, "_refs", "tags", name + ".json")) as f:
            raw = json.load(f)
        out[name] = {"version": t["version"], "branch": t["branch"],
                     "manifest_size": t["manifest_size"], "metadata": t["metadata"],
                     "keys": list(raw.keys()),
                     "rows": lance.dataset(path, version=name).count_rows()}
    return out


def create(path, name, version):
    try:
        lance.dataset(path).tags.create(name, version)
        return "ok"
    except Exception as e:  # noqa: BLE001
        return "error: " + str(e)


def update(path, name, version):
    lance.dataset(path).tags.update(name, version)


def delete(path, name):
    lance.dataset(path).tags.delete(name)
