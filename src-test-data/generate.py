#!/usr/bin/env python3
"""Generate the Lance test fixtures for spark-lance with pylance (the reference implementation).

Run from the repository root:

    .venv/bin/python src-test-data/generate.py

It deletes and regenerates ``src-test-data/datasets/`` and ``src-test-data/expected/``.

* ``datasets/<name>.lance``: small Lance datasets written by pylance, one per (scenario, file format).
* ``expected/<name>.json``: what pylance reports about every version of that dataset.
* ``expected/<name>/v<N>.jsonl``: the rows pylance's ``ds.to_table()`` returns at version N, in that order.
* ``expected/<name>/v<N>.rowids.jsonl``: ``{"_rowid":..,"_rowaddr":..}`` per row, same order.
  Files over 32 KiB are written gzip-compressed as ``*.jsonl.gz``; versions whose content is identical
  share one file. Always use the ``rows_file`` / ``rowids_file`` named in ``expected/<name>.json``.
* ``expected/external/<name>.json`` (+ rows): the same for the read-only datasets in
  ``src-test-data/external/lance-spark-example-db/`` (copied from lance-spark's test data).
* ``expected/_skipped.json``: every (dataset, format, column/step) pylance refused, with its error.

Everything in ``expected/`` is computed from what pylance returns; nothing is hand-typed. Data
values are deterministic (fixed numpy seeds); file names, UUIDs and manifest timestamps are not,
and pylance's FSST training samples randomly (so 2.1/2.2 files with FSST columns differ by a few
bytes between runs). Regenerating therefore changes ``datasets/`` bytes and the timestamps, paths,
ids and ``summary.total_files_size`` in ``expected/``; rows, schemas and counts stay identical.

Canonical JSON value encoding (function ``encode_array``), one JSON object per row keyed by
top-level column name in schema order:

  null                               -> null (at any nesting level)
  bool                               -> true / false
  int8..int64, uint8..uint64         -> JSON integer (uint64 may exceed a signed long)
  float16 / float32 / float64        -> JSON number: the exact double value of the stored float
                                        (float16/float32 widened to double, printed with Python's
                                        shortest round-trip repr); NaN -> "NaN",
                                        +inf -> "Infinity", -inf -> "-Infinity"; -0.0 stays -0.0
  decimal128 / decimal256            -> string, Python str(Decimal) (same text as Java
                                        BigDecimal.toString, e.g. "0E-10", "-12.50")
  string / large_string              -> JSON string
  binary / large_binary / fixed_size_binary -> standard base64 string (with padding)
  date32                             -> int, days since 1970-01-01;  date64 -> int, ms
  time32 / time64 / duration         -> int in its own unit
  timestamp (any unit, any tz)       -> int, the raw int64 in its own unit since the UTC epoch
  list / large_list / fixed_size_list-> JSON array
  struct                             -> JSON object keyed by child name, in child order
  map                                -> JSON array of [key, value] pairs, in stored order
  dictionary                         -> the decoded value
  extension                          -> the storage value
"""

from __future__ import annotations

import base64
import datetime as dt
import gzip
import hashlib
import json
import math
import os
import re
import shutil
import sys
import tempfile
import zlib
from decimal import Context, Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import lance

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DATASETS = HERE / "datasets"
EXPECTED = HERE / "expected"
EXTERNAL_DIR_REL = "src-test-data/external/lance-spark-example-db"  # relative to the repo root
EXTERNAL_NAMES = [f"test_dataset{i}" for i in range(1, 6)]

FORMATS = ["legacy", "2.0", "2.1", "2.2"]
PATTERNS = ["none", "some", "most", "all", "constant"]
N_TYPES_ROWS = 500
GZIP_ABOVE = 32 * 1024  # rows files larger than this are stored as .jsonl.gz

SKIPPED: list[dict] = []
NOTES: list[dict] = []


def skip(dataset: str, fmt: str, what: str, err: BaseException | str, **extra):
    msg = err if isinstance(err, str) else f"{type(err).__name__}: {err}"
    SKIPPED.append({"dataset": dataset, "data_storage_version": fmt, "what": what, "error": msg.strip(), **extra})


# ---------------------------------------------------------------------------------------------
# Canonical value encoding
# ---------------------------------------------------------------------------------------------

def _float(x):
    if x is None:
        return None
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x


def encode_array(arr: pa.Array) -> list:
    """Encode every element of a pyarrow Array (respecting slicing) in the canonical JSON form."""
    if isinstance(arr, pa.ChunkedArray):
        out = []
        for c in arr.chunks:
            out.extend(encode_array(c))
        return out
    t = arr.type
    n = len(arr)
    if pa.types.is_null(t):
        return [None] * n
    if isinstance(t, pa.ExtensionType) or isinstance(arr, pa.ExtensionArray):
        return encode_array(arr.storage)
    if pa.types.is_dictionary(t):
        return encode_array(arr.dictionary_decode())
    valid = arr.is_valid().to_pylist()
    if pa.types.is_boolean(t) or pa.types.is_integer(t):
        return arr.to_pylist()
    if pa.types.is_floating(t):
        return [_float(v) for v in arr.to_pylist()]
    if pa.types.is_decimal(t):
        return [None if v is None else str(v) for v in arr.to_pylist()]
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return arr.to_pylist()
    if (pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t)
            or pa.types.is_binary_view(t)):
        return [None if v is None else base64.b64encode(v).decode("ascii") for v in arr.to_pylist()]
    if pa.types.is_date32(t) or pa.types.is_time32(t):
        return arr.view(pa.int32()).to_pylist()
    if pa.types.is_date64(t) or pa.types.is_time64(t) or pa.types.is_timestamp(t) or pa.types.is_duration(t):
        return arr.view(pa.int64()).to_pylist()
    if pa.types.is_map(t):
        offs = arr.offsets.to_pylist()
        entries = arr.values  # unsliced StructArray of (key, value)
        keys = encode_array(entries.field(0))
        items = encode_array(entries.field(1))
        return [[[keys[j], items[j]] for j in range(offs[i], offs[i + 1])] if valid[i] else None
                for i in range(n)]
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        offs = arr.offsets.to_pylist()
        child = encode_array(arr.values)  # .values ignores the slice; offsets index into it
        return [child[offs[i]:offs[i + 1]] if valid[i] else None for i in range(n)]
    if pa.types.is_fixed_size_list(t):
        size = t.list_size
        child = encode_array(arr.values)
        base = arr.offset
        return [child[(base + i) * size:(base + i + 1) * size] if valid[i] else None for i in range(n)]
    if pa.types.is_struct(t):
        names = [t.field(k).name for k in range(t.num_fields)]
        cols = [encode_array(arr.field(k)) for k in range(t.num_fields)]  # field() honours the slice
        return [{names[k]: cols[k][i] for k in range(len(names))} if valid[i] else None for i in range(n)]
    raise TypeError(f"no canonical encoding for {t}")


def encode_table_rows(table: pa.Table) -> list[dict]:
    cols = [encode_array(table.column(k)) for k in range(table.num_columns)]
    names = table.column_names
    return [{names[k]: cols[k][i] for k in range(len(names))} for i in range(table.num_rows)]


def dumps(obj, **kw) -> str:
    return json.dumps(obj, ensure_ascii=False, allow_nan=False, **kw)


# ---------------------------------------------------------------------------------------------
# Schema description
# ---------------------------------------------------------------------------------------------

def typeinfo(t: pa.DataType) -> dict:
    """Machine-readable type id: {"kind": ..., params...}. Children are described by "children"."""
    T = pa.types
    if T.is_null(t):
        return {"kind": "null"}
    if T.is_boolean(t):
        return {"kind": "bool"}
    if T.is_integer(t):
        return {"kind": "int", "bit_width": t.bit_width, "signed": T.is_signed_integer(t)}
    if T.is_floating(t):
        return {"kind": "float", "bit_width": t.bit_width}
    if T.is_decimal(t):
        return {"kind": "decimal", "bit_width": t.bit_width, "precision": t.precision, "scale": t.scale}
    if T.is_string(t):
        return {"kind": "string"}
    if T.is_large_string(t):
        return {"kind": "large_string"}
    if T.is_string_view(t):
        return {"kind": "string_view"}
    if T.is_binary(t):
        return {"kind": "binary"}
    if T.is_large_binary(t):
        return {"kind": "large_binary"}
    if T.is_binary_view(t):
        return {"kind": "binary_view"}
    if T.is_fixed_size_binary(t):
        return {"kind": "fixed_size_binary", "byte_width": t.byte_width}
    if T.is_date32(t):
        return {"kind": "date", "unit": "day", "bit_width": 32}
    if T.is_date64(t):
        return {"kind": "date", "unit": "ms", "bit_width": 64}
    if T.is_time32(t) or T.is_time64(t):
        return {"kind": "time", "unit": t.unit, "bit_width": t.bit_width}
    if T.is_timestamp(t):
        return {"kind": "timestamp", "unit": t.unit, "tz": t.tz}
    if T.is_duration(t):
        return {"kind": "duration", "unit": t.unit}
    if T.is_map(t):
        return {"kind": "map", "keys_sorted": t.keys_sorted}
    if T.is_list(t):
        return {"kind": "list"}
    if T.is_large_list(t):
        return {"kind": "large_list"}
    if T.is_fixed_size_list(t):
        return {"kind": "fixed_size_list", "list_size": t.list_size}
    if T.is_struct(t):
        return {"kind": "struct"}
    if T.is_dictionary(t):
        return {"kind": "dictionary", "index": typeinfo(t.index_type), "value": typeinfo(t.value_type),
                "ordered": t.ordered}
    if isinstance(t, pa.ExtensionType):
        return {"kind": "extension", "extension_name": t.extension_name, "storage": typeinfo(t.storage_type)}
    return {"kind": "unknown", "arrow": str(t)}


def _child_fields(t: pa.DataType) -> list[pa.Field]:
    if isinstance(t, pa.ExtensionType):
        t = t.storage_type
    if pa.types.is_map(t):
        # Arrow layout: map -> entries: struct<key, value>
        return [pa.field("entries", pa.struct([t.key_field, t.item_field]), nullable=False)]
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return [t.value_field]
    if pa.types.is_struct(t):
        return [t.field(k) for k in range(t.num_fields)]
    return []


def _meta(m) -> dict:
    if not m:
        return {}
    return {(k.decode("utf-8", "replace") if isinstance(k, bytes) else k):
            (v.decode("utf-8", "replace") if isinstance(v, bytes) else v) for k, v in m.items()}


def field_json(f: pa.Field, lance_field=None) -> dict:
    lance_children = {}
    if lance_field is not None:
        for c in lance_field.children():
            lance_children[c.name()] = c
    return {
        "name": f.name,
        "type": str(f.type),
        "typeinfo": typeinfo(f.type),
        "nullable": f.nullable,
        "metadata": _meta(f.metadata),
        "lance_field_id": None if lance_field is None else lance_field.id(),
        "children": [field_json(c, lance_children.get(c.name)) for c in _child_fields(f.type)],
    }


def schema_json(ds) -> list[dict]:
    lance_fields = {}
    try:
        for lf in ds.lance_schema.fields():
            lance_fields[lf.name()] = lf
    except Exception:  # pragma: no cover - very old datasets
        pass
    return [field_json(f, lance_fields.get(f.name)) for f in ds.schema]


# ---------------------------------------------------------------------------------------------
# Expected-output writer (shared by generated and external datasets)
# ---------------------------------------------------------------------------------------------

def _iso_from_ns(ns: int) -> str:
    secs, rem = divmod(ns, 10**9)
    base = dt.datetime.fromtimestamp(secs, tz=dt.timezone.utc)
    return base.strftime("%Y-%m-%dT%H:%M:%S") + f".{rem // 1000:06d}Z"


def manifest_naming(uri: Path) -> str:
    names = [p.name for p in (uri / "_versions").iterdir() if p.name.endswith(".manifest")]
    if names and all(re.fullmatch(r"\d{20}\.manifest", n) for n in names):
        return "v2"
    if names and all(re.fullmatch(r"d?\d{1,19}\.manifest", n) for n in names):
        return "v1"
    return "mixed:" + ",".join(sorted(names))


def fragment_json(frag) -> dict:
    md = frag.metadata
    dfile = md.deletion_file
    physical = frag.physical_rows  # pylance falls back to the data file when the manifest lacks it
    ndel = 0 if dfile is None else dfile.num_deleted_rows
    if ndel is None:  # very old manifests do not record it
        ndel = physical - frag.count_rows()
    return {
        "id": md.id,
        "physical_rows": physical,
        "physical_rows_in_manifest": md.physical_rows,
        "num_deleted_rows": ndel,
        "deletion_file": None if dfile is None else {
            "file_type": dfile.file_type,
            "read_version": dfile.read_version,
            "id": dfile.id,
            "num_deleted_rows_in_manifest": dfile.num_deleted_rows,
            "path": dfile.path(md.id),
        },
        "data_files": [{
            "path": "data/" + f.path,
            "fields": list(f.field_ids()),
            "column_indices": list(f.column_indices),
            "file_major_version": f.file_major_version,
            "file_minor_version": f.file_minor_version,
        } for f in md.files],
        "has_row_id_meta": md.row_id_meta is not None,
    }


def write_lines(rows_dir: Path, rows_rel: str, stem: str, text: str, seen: dict) -> str:
    """Write a jsonl file (gzip-compressed above GZIP_ABOVE bytes) unless an identical one was already
    written for an earlier version of the same dataset; return its path relative to src-test-data."""
    data = text.encode("utf-8")
    digest = hashlib.sha256(data).hexdigest()
    if digest in seen:
        return seen[digest]
    if len(data) > GZIP_ABOVE:
        fname = f"{stem}.jsonl.gz"
        with open(rows_dir / fname, "wb") as raw:
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz:
                gz.write(data)
    else:
        fname = f"{stem}.jsonl"
        (rows_dir / fname).write_bytes(data)
    seen[digest] = f"{rows_rel}/{fname}"
    return seen[digest]


def describe(uri: Path, name: str, path_field: str, out_json: Path, rows_dir: Path, rows_rel: str,
             fmt_given, extra: dict | None = None) -> dict:
    """Write expected/<name>.json and its rows files; return the JSON object."""
    rows_dir.mkdir(parents=True, exist_ok=True)
    latest = lance.dataset(str(uri))
    raw_versions = latest._ds.versions()  # timestamps as raw int nanoseconds since the UTC epoch
    try:
        tags = {k: v["version"] for k, v in sorted(latest.tags.list().items())}
    except Exception as e:  # noqa: BLE001
        tags = {"_error": f"{type(e).__name__}: {e}"}
    out = {
        "name": name,
        "path": path_field,
        "data_storage_version": fmt_given,
        "manifest_naming": manifest_naming(uri),
        "latest_version": latest.latest_version,
        "tags": tags,
    }
    if extra:
        out.update(extra)
    versions = []
    seen: dict = {}  # content hash -> file, so identical versions share one file
    seen_ids: dict = {}
    for rv in sorted(raw_versions, key=lambda v: v["version"]):
        v = rv["version"]
        ns = int(rv["timestamp"])
        entry = {
            "version": v,
            "timestamp": _iso_from_ns(ns),
            "timestamp_epoch_us": ns // 1000,
            "timestamp_epoch_ns": ns,
            "summary": dict(rv.get("metadata") or {}),
        }
        try:
            ds = lance.dataset(str(uri), version=v)
            frags = ds.get_fragments()
            fj = [fragment_json(f) for f in frags]
            entry.update({
                "count_rows": ds.count_rows(),
                "num_fragments": len(frags),
                "physical_rows": sum(f["physical_rows"] for f in fj),
                "num_deleted_rows": sum(f["num_deleted_rows"] for f in fj),
                "data_storage_version": ds.data_storage_version,
                "has_stable_row_ids": ds.has_stable_row_ids,
                "schema": schema_json(ds),
                "fragments": fj,
            })
        except Exception as e:  # noqa: BLE001
            entry["error"] = f"{type(e).__name__}: {e}"
            entry["rows_file"] = None
            versions.append(entry)
            continue
        try:
            table = ds.to_table()
            rows = encode_table_rows(table)
            text = "".join(dumps(r, separators=(",", ":")) + "\n" for r in rows)
            entry["rows_file"] = write_lines(rows_dir, rows_rel, f"v{v}", text, seen)
            assert len(rows) == entry["count_rows"], (name, v, len(rows), entry["count_rows"])
        except Exception as e:  # noqa: BLE001
            entry["error"] = f"{type(e).__name__}: {e}"
            entry["rows_file"] = None
        try:
            ids = ds.to_table(columns=[], with_row_id=True, with_row_address=True)
            rid = ids.column("_rowid").to_pylist()
            addr = ids.column("_rowaddr").to_pylist()
            text = "".join(f'{{"_rowid":{a},"_rowaddr":{b}}}\n' for a, b in zip(rid, addr))
            entry["rowids_file"] = write_lines(rows_dir, rows_rel, f"v{v}.rowids", text, seen_ids)
        except Exception as e:  # noqa: BLE001
            entry["rowids_error"] = f"{type(e).__name__}: {e}"
            entry["rowids_file"] = None
        versions.append(entry)
    out["versions"] = versions
    with open(out_json, "w", encoding="utf-8") as fh:
        fh.write(dumps(out, indent=1) + "\n")
    return out


def describe_generated(name: str, fmt: str, extra: dict | None = None) -> dict:
    return describe(DATASETS / f"{name}.lance", name, f"datasets/{name}.lance", EXPECTED / f"{name}.json",
                    EXPECTED / name, f"expected/{name}", fmt, extra)


# ---------------------------------------------------------------------------------------------
# Type catalogue for types_<fmt>
# ---------------------------------------------------------------------------------------------

ALPHABET = list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-.,")
UNICODE_BITS = ["ä", "ö", "ü", "ß", "é", "ñ", "漢", "字", "Ω", "🦀", "🚀", "\u0301"]
UNICODE_EXTREMES = ["", "héllo wörld", "漢字かな交じり文", "🦀🚀 emoji", "a\u0000b (NUL inside)",
                    "مرحبا (RTL)", "e\u0301 (combining)", " leading and trailing spaces "]


def rand_str(rng, lo=0, hi=40):
    n = int(rng.integers(lo, hi + 1))
    idx = rng.integers(0, len(ALPHABET), n)
    s = [ALPHABET[k] for k in idx]
    if n and rng.random() < 0.15:
        s[int(rng.integers(0, n))] = UNICODE_BITS[int(rng.integers(0, len(UNICODE_BITS)))]
    return "".join(s)


def rand_bytes(rng, lo=0, hi=40):
    return rng.integers(0, 256, int(rng.integers(lo, hi + 1)), dtype=np.uint8).tobytes()


def maybe(rng, p, v):
    return None if rng.random() < p else v


class TypeSpec:
    def __init__(self, name, typ, gen, const, extremes=(), patterns=PATTERNS, builder=None):
        self.name, self.type, self.gen, self.const = name, typ, gen, const
        self.extremes, self.patterns, self.builder = list(extremes), list(patterns), builder


def _int_spec(name, typ, lo, hi, const):
    dtype = np.uint64 if hi > 2**63 - 1 else np.int64
    return TypeSpec(name, typ, lambda r, i: int(r.integers(lo, hi, endpoint=True, dtype=dtype)), const,
                    [lo, hi, 0, 1, hi - 1, lo + 1] + ([-1] if lo < 0 else []))


def _float_builder(np_dtype, typ):
    def build(vals):
        mask = np.array([v is None for v in vals])
        data = np.array([0.0 if v is None else v for v in vals], dtype=np_dtype)
        return pa.array(data, type=typ, mask=mask)
    return build


def _float_spec(name, typ, np_dtype):
    fi = np.finfo(np_dtype)
    ext = [float("nan"), float("inf"), float("-inf"), -0.0, 0.0, float(fi.max), float(fi.min),
           float(fi.tiny), float(fi.eps), float(fi.smallest_subnormal), 1.0, -1.5]
    return TypeSpec(name, typ, lambda r, i: float(np_dtype(r.normal(0, 1000))), 3.25, ext,
                    builder=_float_builder(np_dtype, typ))


DEC_CTX = Context(prec=100)  # exact scaling (the default context rounds to 28 digits)


def _dec(unscaled: int, scale: int) -> Decimal:
    return Decimal(unscaled).scaleb(-scale, DEC_CTX)


def _dec_gen(precision, scale):
    def g(r, i):
        nd = int(r.integers(1, precision + 1))  # vary magnitudes
        mag = int("".join(str(d) for d in r.integers(0, 10, nd)))
        sign = -1 if r.random() < 0.3 else 1
        return _dec(sign * mag, scale)
    return g


def _dec_spec(name, precision, scale, const):
    mx = _dec(10 ** precision - 1, scale)
    ext = [mx, mx.copy_negate(), _dec(0, scale), _dec(1, scale), _dec(-1, scale), _dec(10 ** scale, scale),
           _dec(-(10 ** (precision - 1)), scale)]
    return TypeSpec(name, pa.decimal128(precision, scale), _dec_gen(precision, scale), Decimal(const), ext)


TS_EXTREMES_SECONDS = [0, -1, 1, 1_700_000_000, -2_208_988_800,  # 1900-01-01
                       951_782_400,  # 2000-02-29
                       -12_219_292_800,  # 1582-10-15 (Gregorian cut-over)
                       -30_610_224_000,  # 1000-01-01
                       253_402_300_799]  # 9999-12-31T23:59:59
TS_NS_EXTREMES = [0, -1, 1, 1_700_000_000_123_456_789, -2_208_988_800_000_000_000,
                  9_223_372_036_854_775_807, -9_223_372_036_854_775_807]


def _ts_spec(unit, tz, tzname):
    mult = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[unit]
    if unit == "ns":
        ext = TS_NS_EXTREMES
    else:
        ext = [s * mult for s in TS_EXTREMES_SECONDS] + [1_700_000_000 * mult + mult // 2 + 1 if mult > 1 else 7]

    def g(r, i):
        # between 1950 and 2050, with sub-unit digits
        return int(r.integers(-631_152_000, 2_524_608_000)) * mult + int(r.integers(0, mult))
    name = f"ts_{unit}" + ("" if tz is None else f"_{tzname}")
    return TypeSpec(name, pa.timestamp(unit, tz=tz), g, 1_600_000_000 * mult, ext)


NESTED_T = pa.list_(pa.struct([("x", pa.int64()), ("y", pa.list_(pa.string()))]))
STRUCT_LS_T = pa.struct([("tags", pa.list_(pa.string())),
                         ("inner", pa.struct([("p", pa.float64()), ("q", pa.string())]))])


def gen_nested(r, i):
    out = []
    for _ in range(int(r.integers(0, 4))):
        y = None if r.random() < 0.1 else [maybe(r, 0.1, rand_str(r, 0, 8)) for _ in range(int(r.integers(0, 3)))]
        out.append({"x": maybe(r, 0.1, int(r.integers(-2**63, 2**63 - 1))), "y": y})
    return out


def gen_struct_ls(r, i):
    tags = None if r.random() < 0.1 else [maybe(r, 0.1, rand_str(r, 0, 10)) for _ in range(int(r.integers(0, 4)))]
    return {"tags": tags, "inner": {"p": maybe(r, 0.1, float(r.normal())), "q": maybe(r, 0.1, rand_str(r, 0, 12))}}


def _vec_builder(dim):
    t = pa.list_(pa.float32(), dim)

    def build(vals):
        return pa.array(vals, type=t)
    return t, build


def build_catalogue() -> list[TypeSpec]:
    I = np.iinfo
    specs = [
        TypeSpec("bool", pa.bool_(), lambda r, i: bool(r.random() < 0.5), True, [True, False]),
        _int_spec("int8", pa.int8(), I(np.int8).min, I(np.int8).max, 42),
        _int_spec("int16", pa.int16(), I(np.int16).min, I(np.int16).max, 4242),
        _int_spec("int32", pa.int32(), I(np.int32).min, I(np.int32).max, 424242),
        _int_spec("int64", pa.int64(), I(np.int64).min, I(np.int64).max, 42424242424242),
        _int_spec("uint8", pa.uint8(), 0, I(np.uint8).max, 200),
        _int_spec("uint16", pa.uint16(), 0, I(np.uint16).max, 60000),
        _int_spec("uint32", pa.uint32(), 0, I(np.uint32).max, 4_000_000_000),
        _int_spec("uint64", pa.uint64(), 0, I(np.uint64).max, 18_000_000_000_000_000_000),
        _float_spec("float16", pa.float16(), np.float16),
        _float_spec("float32", pa.float32(), np.float32),
        _float_spec("float64", pa.float64(), np.float64),
        _dec_spec("decimal128_38_10", 38, 10, "12345678.9012345678"),
        _dec_spec("decimal128_9_2", 9, 2, "-12.50"),
        TypeSpec("string", pa.string(), lambda r, i: rand_str(r, 0, 60), "constant string ✓", UNICODE_EXTREMES),
        TypeSpec("large_string", pa.large_string(), lambda r, i: rand_str(r, 0, 60), "constant large ✓",
                 UNICODE_EXTREMES),
        TypeSpec("binary", pa.binary(), lambda r, i: rand_bytes(r, 0, 40), b"\x00\x01const\xff",
                 [b"", b"\x00", b"\xff" * 10, "héllo".encode()]),
        TypeSpec("large_binary", pa.large_binary(), lambda r, i: rand_bytes(r, 0, 40), b"\xde\xad\xbe\xef",
                 [b"", b"\x00", b"\xff" * 10, "héllo".encode()]),
        TypeSpec("date32", pa.date32(), lambda r, i: int(r.integers(-25_000, 40_000)), 19_000,
                 [0, -1, 1, -719_162, 2_932_896, -141_427, 11_016]),
    ]
    for unit in ["s", "ms", "us", "ns"]:
        for tz, tzname in [(None, None), ("UTC", "utc"), ("America/New_York", "ny")]:
            specs.append(_ts_spec(unit, tz, tzname))
    v4t, v4b = _vec_builder(4)
    specs.append(TypeSpec("fsl_f32_4", v4t, lambda r, i: [float(np.float32(x)) for x in r.normal(0, 1, 4)],
                          [1.0, 2.0, 3.0, 4.0],
                          [[float("nan"), float("inf"), float("-inf"), -0.0],
                           [float(np.finfo(np.float32).max), float(np.finfo(np.float32).min), 0.0, 1.0]],
                          builder=v4b))
    v128t, v128b = _vec_builder(128)
    # values are multiples of 1/4 so the JSON stays short
    specs.append(TypeSpec("fsl_f32_128", v128t,
                          lambda r, i: [float(x) / 4 for x in r.integers(-40, 40, 128)],
                          [float(j) for j in range(128)],
                          [[float("nan")] * 64 + [float("inf")] * 32 + [-0.0] * 32],
                          builder=v128b))
    specs += [
        TypeSpec("list_i32", pa.list_(pa.int32()),
                 lambda r, i: [maybe(r, 0.1, int(r.integers(-1000, 1000))) for _ in range(int(r.integers(0, 7)))],
                 [1, 2, 3], [[], [None], [-2**31, 2**31 - 1], [0] * 20]),
        TypeSpec("large_list_str", pa.large_list(pa.string()),
                 lambda r, i: [maybe(r, 0.1, rand_str(r, 0, 12)) for _ in range(int(r.integers(0, 5)))],
                 ["a", "bb", ""], [[], [None], [""], UNICODE_EXTREMES]),
        TypeSpec("struct_ab", pa.struct([("a", pa.int32()), ("b", pa.string())]),
                 lambda r, i: {"a": maybe(r, 0.1, int(r.integers(-2**31, 2**31))), "b": maybe(r, 0.1, rand_str(r, 0, 20))},
                 {"a": 7, "b": "seven"}, [{"a": None, "b": None}, {"a": -2**31, "b": ""}, {"a": 2**31 - 1, "b": "🦀"}]),
        TypeSpec("list_struct_nested", NESTED_T, gen_nested,
                 [{"x": 1, "y": ["a"]}, {"x": None, "y": []}],
                 [[], [{"x": None, "y": None}], [{"x": -2**63, "y": [None, ""]}, {"x": 2**63 - 1, "y": []}]]),
        TypeSpec("struct_list_struct", STRUCT_LS_T, gen_struct_ls,
                 {"tags": ["t1", "t2"], "inner": {"p": 0.5, "q": "q"}},
                 [{"tags": [], "inner": {"p": None, "q": None}}, {"tags": None, "inner": {"p": float("nan"), "q": ""}}]),
        TypeSpec("map_str_i32", pa.map_(pa.string(), pa.int32()),
                 lambda r, i: [(f"k{j}_{rand_str(r, 0, 4)}", maybe(r, 0.1, int(r.integers(-1000, 1000))))
                               for j in range(int(r.integers(0, 4)))],
                 [("a", 1), ("b", 2)], [[], [("", None)], [("k", -2**31), ("🦀", 2**31 - 1)]]),
    ]
    # Extras with a reduced set of null patterns: encodings that need particular data shapes.
    two = ["none", "some"]
    specs += [
        TypeSpec("fsl_f32_4_itemnulls", v4t,
                 lambda r, i: [maybe(r, 0.1, float(np.float32(x))) for x in r.normal(0, 1, 4)],
                 [1.0, None, 3.0, None], [[None, None, None, None]], patterns=two, builder=v4b),
        TypeSpec("dict_arrow_str", pa.dictionary(pa.int8(), pa.string()),
                 lambda r, i: ["red", "green", "blue", "", "ünïcode"][int(r.integers(0, 5))], "red",
                 patterns=two, builder=lambda vals: pa.array(vals, pa.string()).dictionary_encode()),
        TypeSpec("medium_text", pa.string(), lambda r, i: rand_text(r, 60, 200), "medium constant text",
                 patterns=two),  # > 32 KiB per page and < 256 B per value: miniblock FSST in 2.1/2.2
        TypeSpec("lowcard_string", pa.string(),
                 lambda r, i: f"category-{int(r.integers(0, 6))}", "category-0", patterns=two),
        TypeSpec("lowcard_int64", pa.int64(),
                 lambda r, i: [10**15, -7, 3, 2**62][int(r.integers(0, 4))], 3, patterns=two),
        TypeSpec("runs_int32", pa.int32(), lambda r, i: i // 97, 0, patterns=two),
        TypeSpec("small_uint16", pa.uint16(), lambda r, i: int(r.integers(0, 16)), 1, patterns=two),
        TypeSpec("sorted_ts_us_utc", pa.timestamp("us", tz="UTC"),
                 lambda r, i: 1_700_000_000_000_000 + i * 1_000_003, 0, patterns=two),
    ]
    return specs


def seed_for(*parts) -> int:
    return zlib.crc32("|".join(parts).encode())


def make_column(spec: TypeSpec, pattern: str, n: int) -> pa.Array:
    if pattern == "all":
        return pa.nulls(n, spec.type)
    rng = np.random.default_rng(seed_for(spec.name, pattern))
    if pattern == "constant":
        vals = [spec.const] * n
    else:
        vals = [spec.gen(rng, i) for i in range(n)]
        for k, e in enumerate(spec.extremes):
            vals[1 + k] = e
        p = {"none": 0.0, "some": 0.1, "most": 0.9}[pattern]
        if p:
            mask = rng.random(n) < p
            mask[0] = False  # row 0 always valid
            mask[-1] = True  # last row always null
            vals = [None if m else v for v, m in zip(vals, mask)]
    if spec.builder:
        return spec.builder(vals)
    return pa.array(vals, type=spec.type)


WORDS = ("lance spark arrow column fragment manifest version schema vector page chunk buffer "
         "encoding bitmap deletion dataset reader writer table stable row id field struct list map "
         "würfel naïve 漢字 🦀").split()


def rand_text(rng, lo, hi):
    """Random words (compressible, so the fixtures stay small) cut to a length in [lo, hi] characters."""
    target = int(rng.integers(lo, hi + 1))
    out = []
    size = 0
    while size < target:
        w = WORDS[int(rng.integers(0, len(WORDS)))]
        out.append(w)
        size += len(w) + 1
    return " ".join(out)[:target]


def long_string_column(n):
    """Mixed lengths: ~60% short, ~35% longer than 256 bytes (2.1/2.2 switch to full-zip), some nulls."""
    rng = np.random.default_rng(seed_for("long_string"))
    vals = []
    for i in range(n):
        u = rng.random()
        if u < 0.05:
            vals.append(None)
        elif u < 0.65:
            vals.append(rand_text(rng, 0, 40))
        else:
            vals.append(rand_text(rng, 257, 1200))
    vals[1] = ""
    vals[2] = "x" * 256
    vals[3] = "ü" * 300  # 600 bytes of 2-byte chars
    return pa.array(vals, pa.string())


def huge_string_column(n):
    """Mostly null; a few > 32 KiB values (2.2 writes these with per-value ZSTD)."""
    rng = np.random.default_rng(seed_for("huge_string"))
    vals = [None] * n
    for k, i in enumerate([0, 17, n // 2 + 7, n - 1]):
        chunk = rand_str(rng, 50, 50)
        vals[i] = (f"[{k}]" + chunk * 800)[: 33_000 + 1000 * k]
    vals[n // 3] = ""
    vals[n // 3 + 1] = "short"
    return pa.array(vals, pa.string())


# ---------------------------------------------------------------------------------------------
# Dataset builders
# ---------------------------------------------------------------------------------------------

def write(data, name, fmt, **kw):
    return lance.write_dataset(data, str(DATASETS / f"{name}.lance"), data_storage_version=fmt, **kw)


def _short(v, limit=160):
    text = dumps(v)
    return text if len(text) <= limit else text[:limit] + "..."


def probe_column(table: pa.Table, fmt: str, tmp: Path):
    """Write id+column with pylance and read it back. Returns None if accepted, else an error string."""
    uri = tmp / f"probe_{len(os.listdir(tmp))}.lance"
    try:
        lance.write_dataset(table, str(uri), data_storage_version=fmt)
    except BaseException as e:  # noqa: BLE001  (pyo3 panics are BaseException)
        if isinstance(e, KeyboardInterrupt):
            raise
        return f"write: {type(e).__name__}: {e}"
    try:
        back = lance.dataset(str(uri)).to_table()
    except BaseException as e:  # noqa: BLE001
        if isinstance(e, KeyboardInterrupt):
            raise
        return f"read: {type(e).__name__}: {e}"
    want = encode_table_rows(table)
    got = encode_table_rows(back)
    if want != got:
        bad = next(i for i, (a, b) in enumerate(zip(want, got)) if a != b) if len(want) == len(got) else -1
        NOTES.append({"data_storage_version": fmt, "column": table.column_names[-1],
                      "note": "read-back differs from what was written; column kept, expected/ holds what pylance reads",
                      "first_differing_row": bad,
                      "written": _short(want[bad]) if bad >= 0 else None,
                      "read": _short(got[bad]) if bad >= 0 else None})
    cname = table.column_names[-1]
    if back.schema.field(cname).type != table.schema.field(cname).type:
        NOTES.append({"data_storage_version": fmt, "column": cname,
                      "note": f"type changed on read: wrote {table.schema.field(cname).type}, "
                              f"read {back.schema.field(cname).type}"})
    return None


def build_types(fmt: str, tmp: Path):
    name = f"types_{fmt}"
    n = N_TYPES_ROWS
    cols = {"id": pa.array(np.arange(n, dtype=np.int64))}
    cols["long_string"] = long_string_column(n)
    cols["huge_string"] = huge_string_column(n)
    for spec in build_catalogue():
        for pattern in spec.patterns:
            cols[f"{spec.name}_{pattern}"] = make_column(spec, pattern, n)
    id_field = pa.field("id", pa.int64(), nullable=False)
    accepted = {}
    for cname, arr in cols.items():
        if cname == "id":
            continue
        t = pa.Table.from_arrays([cols["id"], arr], schema=pa.schema([id_field, pa.field(cname, arr.type)]))
        err = probe_column(t, fmt, tmp)
        if err is None:
            accepted[cname] = arr
        else:
            skip(name, fmt, f"column {cname} ({arr.type})", err)
    schema = pa.schema([id_field] + [pa.field(k, v.type) for k, v in accepted.items()])
    table = pa.Table.from_arrays([cols["id"]] + list(accepted.values()), schema=schema)
    write(table, name, fmt)
    return describe_generated(name, fmt, {"description": "one column per (Arrow type, null pattern)",
                                          "num_rows_written": n})


def small_table(start, n, seed):
    rng = np.random.default_rng(seed)
    ids = np.arange(start, start + n, dtype=np.int64)
    x = [None if rng.random() < 0.1 else int(v) for v in rng.integers(-10**6, 10**6, n)]
    s = [None if rng.random() < 0.05 else rand_str(rng, 0, 24) for _ in range(n)]
    li = [None if rng.random() < 0.05 else [int(v) for v in rng.integers(0, 100, int(rng.integers(0, 4)))]
          for _ in range(n)]
    return pa.table({"id": pa.array(ids), "x": pa.array(x, pa.int32()), "s": pa.array(s, pa.string()),
                     "li": pa.array(li, pa.list_(pa.int32()))},
                    schema=pa.schema([pa.field("id", pa.int64(), False), pa.field("x", pa.int32()),
                                      pa.field("s", pa.string()), pa.field("li", pa.list_(pa.int32()))]))


def build_multifrag(fmt):
    name = f"multifrag_{fmt}"
    write(small_table(0, 1000, 1), name, fmt, max_rows_per_file=300)
    ds = write(small_table(1000, 400, 2), name, fmt, mode="append", max_rows_per_file=300)
    ds = write(small_table(1400, 250, 3), name, fmt, mode="append", max_rows_per_file=300)
    ds.tags.create("v2tag", 2)
    ds.tags.create("v1tag", 1)
    assert ds.latest_version == 3
    return describe_generated(name, fmt, {"description": "max_rows_per_file=300, two appends, tags on v1/v2"})


def deletion_kinds(uri: Path) -> set:
    d = uri / "_deletions"
    return {p.suffix for p in d.iterdir()} if d.exists() else set()


def build_deletions_arrow(fmt):
    name = f"deletions_arrow_{fmt}"
    write(small_table(0, 1000, 11), name, fmt, max_rows_per_file=600)
    ds = lance.dataset(str(DATASETS / f"{name}.lance"))
    ds.delete("id % 50 = 7")
    ds.delete("(id >= 100 AND id < 110) OR id = 999")
    kinds = deletion_kinds(DATASETS / f"{name}.lance")
    assert kinds == {".arrow"}, kinds
    return describe_generated(name, fmt, {"description": "two deletes of a few rows (Arrow IPC deletion files)"})


def build_deletions_bitmap(fmt):
    name = f"deletions_bitmap_{fmt}"
    n0, n1 = 8192, 100
    n = n0 + n1
    rng = np.random.default_rng(21)
    t = pa.table({"id": pa.array(np.arange(n, dtype=np.int64)),
                  "v": pa.array(rng.integers(0, 1000, n).astype(np.int32)),
                  "s": pa.array([None if rng.random() < 0.05 else rand_str(rng, 0, 6) for _ in range(n)])},
                 schema=pa.schema([pa.field("id", pa.int64(), False), pa.field("v", pa.int32()),
                                   pa.field("s", pa.string())]))
    write(t, name, fmt, max_rows_per_file=n0)
    ds = lance.dataset(str(DATASETS / f"{name}.lance"))
    assert [f.physical_rows for f in ds.get_fragments()] == [n0, n1]
    ds.delete(f"id < {n0} AND id % 8 <> 3")  # 7168 rows of fragment 0 -> roaring bitmap
    ds.delete(f"id >= {n0}")  # the whole of fragment 1
    kinds = deletion_kinds(DATASETS / f"{name}.lance")
    assert ".bin" in kinds, kinds
    return describe_generated(name, fmt, {"description": f"fragment of {n0} rows with 7168 deleted (bitmap), "
                                                          f"then fragment of {n1} rows fully deleted"})


def build_schema_evolution(fmt):
    name = f"schema_evolution_{fmt}"
    uri = DATASETS / f"{name}.lance"
    rng = np.random.default_rng(31)
    n = 300
    t = pa.table({
        "id": pa.array(np.arange(n, dtype=np.int64)),
        "a": pa.array([None if rng.random() < 0.1 else int(v) for v in rng.integers(-1000, 1000, n)], pa.int32()),
        "b": pa.array([rand_str(rng, 0, 16) for _ in range(n)], pa.string()),
        "c": pa.array([{"x": int(rng.integers(0, 100)), "y": rand_str(rng, 0, 6)} for _ in range(n)],
                      pa.struct([("x", pa.int32()), ("y", pa.string())])),
    }, schema=pa.schema([pa.field("id", pa.int64(), False), pa.field("a", pa.int32()), pa.field("b", pa.string()),
                         pa.field("c", pa.struct([("x", pa.int32()), ("y", pa.string())]))]))
    write(t, name, fmt)
    steps = []

    def step(label, fn):
        ds = lance.dataset(str(uri))
        before = ds.latest_version
        try:
            fn(ds)
        except BaseException as e:  # noqa: BLE001
            if isinstance(e, KeyboardInterrupt):
                raise
            skip(name, fmt, f"step {label}", e)
            return
        after = lance.dataset(str(uri)).latest_version
        steps.append({"label": label, "version": after})
        assert after == before + 1, (label, before, after)

    step("add_columns SQL {a_plus_one: a + 1, b_upper: upper(b)}",
         lambda ds: ds.add_columns({"a_plus_one": "a + 1", "b_upper": "upper(b)"}))
    step("add_columns all-null pyarrow field empty_f64: float64",
         lambda ds: ds.add_columns(pa.field("empty_f64", pa.float64())))

    @lance.batch_udf(output_schema=pa.schema([pa.field("udf_sq", pa.int64())]))
    def sq(batch):
        a = batch.column("a").cast(pa.int64())
        return pa.record_batch([pa.compute.multiply(a, a)], names=["udf_sq"])

    step("add_columns batch_udf udf_sq = a*a (int64)", lambda ds: ds.add_columns(sq, read_columns=["a"]))
    step("drop_columns [b]", lambda ds: ds.drop_columns(["b"]))
    step("drop_columns [c.y] (nested)", lambda ds: ds.drop_columns(["c.y"]))
    step("alter_columns rename a -> a_renamed and nested c.x -> c.x_renamed",
         lambda ds: ds.alter_columns({"path": "a", "name": "a_renamed"}, {"path": "c.x", "name": "x_renamed"}))
    step("alter_columns cast a_plus_one int32 -> int64",
         lambda ds: ds.alter_columns({"path": "a_plus_one", "data_type": pa.int64()}))

    def append(ds):
        cur = ds.to_table().slice(0, 50)
        ids = pa.array(np.arange(10_000, 10_050, dtype=np.int64))
        cur = cur.set_column(cur.schema.get_field_index("id"), cur.schema.field("id"), ids)
        lance.write_dataset(cur, str(uri), mode="append")
    step("append 50 rows with the evolved schema", append)
    return describe_generated(name, fmt, {"description": "add/drop/rename/cast columns then append",
                                          "steps": steps})


def build_stable_row_ids(fmt):
    name = f"stable_row_ids_{fmt}"
    try:
        write(small_table(0, 500, 41), name, fmt, max_rows_per_file=200, enable_stable_row_ids=True)
    except BaseException as e:  # noqa: BLE001
        if isinstance(e, KeyboardInterrupt):
            raise
        skip(name, fmt, "create with enable_stable_row_ids=True", e)
        shutil.rmtree(DATASETS / f"{name}.lance", ignore_errors=True)
        return None
    ds = write(small_table(500, 300, 42), name, fmt, mode="append", max_rows_per_file=200)
    ds.delete("id % 10 = 0")
    ds = lance.dataset(str(DATASETS / f"{name}.lance"))
    ds.update({"x": "x * 10"}, where="id < 50")
    ds = lance.dataset(str(DATASETS / f"{name}.lance"))
    assert ds.has_stable_row_ids
    return describe_generated(name, fmt, {"description": "enable_stable_row_ids=True; append, delete, update"})


def build_v1_naming(fmt):
    name = f"v1_naming_{fmt}"
    write(small_table(0, 200, 51), name, fmt, enable_v2_manifest_paths=False)
    write(small_table(200, 100, 52), name, fmt, mode="append")
    uri = DATASETS / f"{name}.lance"
    assert (uri / "_versions" / "1.manifest").exists()
    assert (uri / "_versions" / "2.manifest").exists()
    assert manifest_naming(uri) == "v1"
    return describe_generated(name, fmt, {"description": "enable_v2_manifest_paths=False, two versions"})


def build_external():
    out_dir = EXPECTED / "external"
    out_dir.mkdir(parents=True, exist_ok=True)
    base = (REPO / EXTERNAL_DIR_REL).resolve()
    done = []
    for n in EXTERNAL_NAMES:
        uri = base / f"{n}.lance"
        if not uri.exists():
            print(f"  external {uri} missing, skipped", file=sys.stderr)
            continue
        try:
            fmt = lance.dataset(str(uri)).data_storage_version
        except Exception as e:  # noqa: BLE001
            fmt = None
            print(f"  external {n}: {e}", file=sys.stderr)
        describe(uri, n, f"{EXTERNAL_DIR_REL}/{n}.lance", out_dir / f"{n}.json", out_dir / n,
                 f"expected/external/{n}", None,
                 {"path_relative_to": "repo root", "data_storage_version_read": fmt})
        done.append(n)
    return done


# ---------------------------------------------------------------------------------------------

def check_generated_layout(name: str):
    uri = DATASETS / f"{name}.lance"
    naming = manifest_naming(uri)
    if name.startswith("v1_naming_"):
        assert naming == "v1", (name, naming)
    else:
        assert naming == "v2", (name, naming)
        assert (uri / "_versions" / f"{2**64 - 2:020d}.manifest").exists()


def main():
    print(f"pylance {lance.__version__}, pyarrow {pa.__version__}, numpy {np.__version__}")
    for d in (DATASETS, EXPECTED):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
    index = []
    with tempfile.TemporaryDirectory(prefix="lance-probe-") as tmp:
        for fmt in FORMATS:
            builders = [lambda f: build_types(f, Path(tmp)), build_multifrag, build_deletions_arrow,
                        build_deletions_bitmap, build_schema_evolution, build_stable_row_ids, build_v1_naming]
            for b in builders:
                res = b(fmt)
                if res is None:
                    continue
                check_generated_layout(res["name"])
                index.append({"name": res["name"], "data_storage_version": fmt,
                              "expected": f"expected/{res['name']}.json",
                              "versions": len(res["versions"])})
                print(f"  {res['name']}: {len(res['versions'])} versions")
    external = build_external()
    with open(EXPECTED / "_skipped.json", "w", encoding="utf-8") as fh:
        fh.write(dumps({"pylance": lance.__version__, "pyarrow": pa.__version__,
                        "skipped": SKIPPED, "notes": NOTES}, indent=1) + "\n")
    with open(EXPECTED / "_index.json", "w", encoding="utf-8") as fh:
        fh.write(dumps({"pylance": lance.__version__, "pyarrow": pa.__version__, "numpy": np.__version__,
                        "datasets": index,
                        "external": [{"name": n, "expected": f"expected/external/{n}.json"} for n in external]},
                       indent=1) + "\n")
    print(f"{len(index)} datasets, {len(external)} external, {len(SKIPPED)} skips, {len(NOTES)} notes")


if __name__ == "__main__":
    main()
