"""pylance side of DirectoryNamespaceSuite: lance.namespace.DirectoryNamespace at a root."""
import io

import lance
import lance.namespace as ln
import pyarrow as pa
from lance_namespace import (CreateNamespaceRequest, CreateTableRequest, DescribeTableRequest,
                             DropTableRequest, ListNamespacesRequest, ListTablesRequest)


def _ns(root):
    return ln.DirectoryNamespace(root=root)


def create_namespace(root, ident):
    _ns(root).create_namespace(CreateNamespaceRequest(id=ident))


def create_table(root, ident, start):
    t = pa.table({"id": pa.array(range(start, start + 3), pa.int64())})
    buf = io.BytesIO()
    with pa.ipc.new_stream(buf, t.schema) as w:
        w.write_table(t)
    return _ns(root).create_table(CreateTableRequest(id=ident), buf.getvalue()).location


def drop_table(root, ident):
    _ns(root).drop_table(DropTableRequest(id=ident))


def view(root):
    """Every namespace and table pylance sees, with each table's location and row count."""
    ns = _ns(root)
    out = {}

    def walk(parent):
        tables = ns.list_tables(ListTablesRequest(id=parent)).tables
        for t in sorted(tables):
            loc = ns.describe_table(DescribeTableRequest(id=parent + [t])).location
            out["$".join(parent + [t])] = {
                "location": loc.replace("file://", ""),
                "rows": lance.dataset(loc).count_rows()}
        for c in sorted(ns.list_namespaces(ListNamespacesRequest(id=parent)).namespaces):
            out["$".join(parent + [c])] = "namespace"
            walk(parent + [c])
    walk([])
    return out


def manifest_rows(root):
    return sorted(lance.dataset(root + "/__manifest").to_table().to_pylist(),
                  key=lambda r: r["object_id"])
