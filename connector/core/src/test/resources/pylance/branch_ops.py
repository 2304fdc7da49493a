"""pylance side of BranchesSuite: branches made by pylance's create_branch, and what pylance
reads of a branch (its rows, versions, indices and ref)."""
import lance


def create(path, name, version, parent=None):
    """pylance's create_branch from `version` of the main branch, or of branch `parent`."""
    try:
        if parent is None:
            lance.dataset(path).create_branch(name, version)
        else:
            lance.dataset(path + "/tree/" + parent).create_branch(name, version)
        return "ok"
    except Exception as e:  # noqa: BLE001
        return "error: " + str(e)


def describe(path, name):
    """The branch as pylance reads it (validated), and its ref without times and ids."""
    b = lance.dataset(path + "/tree/" + name)
    b.validate()
    ref = lance.dataset(path).branches.list()[name]
    return {"rows": sorted(b.to_table().to_pylist(), key=lambda r: str(r)),
            "version": b.version, "versions": [v["version"] for v in b.versions()],
            "indices": sorted((i["name"], i["fields"]) for i in b.list_indices()),
            "ref": [ref["parent_branch"], ref["parent_version"],
                    [v for v, _ in ref["branch_identifier"]]],
            "operation": type(b.read_transaction(b.version).operation).__name__,
            "bases": sorted([v.name or "", v.path.replace(path, "<root>"), v.is_dataset_root]
                            for v in b.base_paths().values())}


def append(path, name, count):
    ds = lance.dataset(path + "/tree/" + name)
    lance.write_dataset(ds.to_table().slice(0, count), ds.uri, mode="append")


def delete(path, name):
    try:
        lance.dataset(path).branches.delete(name)
        return "ok"
    except Exception as e:  # noqa: BLE001
        return "error: " + str(e)
