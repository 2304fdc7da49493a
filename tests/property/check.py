"""Comparison helpers for the property test: pylance's Arrow table vs a Spark DataFrame, column
by column, reporting every column that differs (not just the first), with the row's id."""

from __future__ import annotations

from typing import Optional

import pyarrow as pa

import support


def pylance_table(ds, columns: Optional[list[str]] = None) -> pa.Table:
    """``ds.to_table(columns=...)``. pylance 14.0.2 cannot read a fixed-size list of structs
    together with a column of another length per row ("cannot read columns of differing
    lengths together", its reader counts the list's items as rows); each column read alone is
    right, so such reads go column by column."""
    try:
        return ds.to_table(columns=columns)
    except Exception as e:  # noqa: BLE001
        if "differing lengths" not in str(e):
            raise
    names = columns if columns is not None else ds.schema.names
    cols = [ds.to_table(columns=[n]).column(n) for n in names]
    return pa.table(cols, schema=pa.schema([ds.schema.field(n) for n in names]))


def nested_child(table: pa.Table, path: str) -> pa.ChunkedArray:
    """``s.a.b`` of a pylance table as Spark's ``select("s.a.b")`` presents it: a null parent
    struct makes the child null (StructArray.flatten merges the parent's validity)."""
    parts = path.split(".")
    col = table.column(parts[0])
    for name in parts[1:]:
        chunks = []
        for chunk in col.chunks:
            idx = chunk.type.get_field_index(name)
            chunks.append(chunk.flatten()[idx])
        col = pa.chunked_array(chunks, type=col.type.field(name).type)
    return col


def blob_columns(schema: pa.Schema) -> list[str]:
    """Top-level blob columns of a pylance schema: ``lance-encoding:blob`` (v1) or the
    ``lance.blob.v2`` extension."""
    out = []
    for f in schema:
        v2 = isinstance(f.type, pa.BaseExtensionType) and f.type.extension_name == "lance.blob.v2"
        if v2 or b"lance-encoding:blob" in (f.metadata or {}):
            out.append(f.name)
    return out


def blob_bytes(ds, columns: list[str], n: int) -> dict[str, list]:
    """Per blob column, the bytes pylance's ``take_blobs`` returns for dataset rows 0..n-1 (the
    order of ``to_table()``); None for null blobs."""
    if n == 0:
        return {c: [] for c in columns}
    return {
        c: [None if f is None else f.read() for f in ds.take_blobs(c, indices=list(range(n)))]
        for c in columns
    }


def with_blob_bytes(table: pa.Table, blobs: dict[str, list]) -> pa.Table:
    """``table`` (a pylance read, rows in dataset order) with its blob descriptor columns replaced
    by the blobs' bytes."""
    for name, values in blobs.items():
        if name in table.column_names:
            i = table.column_names.index(name)
            table = table.set_column(
                i, pa.field(name, pa.large_binary()), pa.array(values, pa.large_binary())
            )
    return table


def compare(
    expected: pa.Table, rows, schema, names: list[str], id_index: Optional[int] = None
) -> list[str]:
    """Every difference between pylance's ``expected`` and Spark's collected ``rows`` (with the
    DataFrame's ``schema``): the row count, then for each column its first differing row. If
    the values are right but the order is not, says so."""
    exp = support.rows_from_arrow(expected)
    act = support.rows_from_spark(rows, schema)
    if len(exp) != len(act):
        out = [f"row count differs: pylance {len(exp)}, Spark {len(act)}"]
        if id_index is not None:
            exp_ids = {e[id_index] for e in exp}
            act_ids = {a[id_index] for a in act}
            out.append(
                f"ids only in pylance: {sorted(exp_ids - act_ids)[:20]}; "
                f"only in Spark: {sorted(act_ids - exp_ids)[:20]}"
            )
        return out
    problems = []
    for c, name in enumerate(names):
        for r, (e, a) in enumerate(zip(exp, act)):
            if not support.values_equal(e[c], a[c]):
                where = f"row {r}"
                if id_index is not None:
                    where += f" (pylance id={e[id_index]!r}, Spark id={a[id_index]!r})"
                nbad = sum(1 for e2, a2 in zip(exp, act) if not support.values_equal(e2[c], a2[c]))
                problems.append(
                    f"column {name!r}, {where}, {nbad} of {len(exp)} rows differ:\n"
                    f"      pylance {e[c]!r:.600}\n"
                    f"      Spark   {a[c]!r:.600}"
                )
                break
    if problems and sorted(map(repr, exp)) == sorted(map(repr, act)):
        return ["same rows in a different order; first: " + problems[0]]
    return problems
