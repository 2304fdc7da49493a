"""Seeded random Lance datasets for the property test of scans (tests/test_property_scan.py).

Everything here is a pure function of the seed: ``make_case(seed)`` draws a file format, an
Arrow schema (with field metadata that forces 2.1/2.2 encodings), the tables to write (an
initial write and appends), the dataset operations (deletes, stable row ids, fragment sizes,
page sizes) and the read (Spark options, a column projection, nested field selections).
``write_case(case, path)`` writes it with pylance. What pylance then reads back is the truth;
the generator only avoids what pylance refuses to *write* for a format:

- 2.0 has no struct validity (a null struct anywhere is a write error) and no maps;
- 2.1 and legacy have no maps;
- legacy reads nulls of fixed-width columns back as defaults (that is fine: it is what
  pylance reads, so it is what Spark must read).

Blob columns are generated at the top level (2.0, 2.1, 2.2; pylance cannot read back the blobs
it writes to legacy files): ``lance-encoding:blob`` on large_binary (blob v1; 2.2 promotes it to
v2) or, in 2.2, ``lance.blob.blob_field`` with random size thresholds, so values land inline,
in packed or dedicated sidecar files. pylance's ``to_table()`` returns their *descriptors*; the
bytes to compare Spark's binary column with come from ``take_blobs`` (``check.blob_bytes``).
They are drawn from their own RNG and appended after every other column, so adding them left
the cases of older seeds (and their values) unchanged.
Known pylance 14.0.2 write failures the generator does not avoid (the case is skipped, a few in
a hundred): nested structs whose batches ``max_rows_per_file`` cuts ("null_bit_buffer size too
small", lance-encoding struct.rs), and mini-block chunks over 32 KiB of levels ("Mini-block
chunk size ... exceeds the 32768 byte metadata limit").

Packed structs (``lance-encoding:packed``, 2.1/2.2), generated as a shape of their own and
sometimes by marking a random struct: pylance 14.0.2 packs only non-null leaves (null children
or halffloat: "Per-value compression not yet supported for block type Nullable"; a list child
panics its writer; a bool child is written but not read back), and variable-width children
only in 2.2 (VariablePackedStruct, full-zip; 2.1: "Variable packed struct encoding is not
enabled by the selected file format").

Fixed-size lists (``fsl``): of float32, often with every item null in a page or table (pylance
then writes the items as ``Constant(None)``); and, in 2.2 only, of structs (``fsl_struct``).
pylance 14.0.2 limits on fixed-size lists of structs, which the generator stays inside:

- 2.0, 2.1 and legacy cannot write them ("FixedSizeList<Struct> is not enabled by the selected
  file format" / a panic); FSL of lists, maps or FSLs of structs are refused in every format
  ("Unsupported data type");
- a list (or map) around one panics the writer (``Option::unwrap()`` on None), so they are
  generated only at the top level and as the only child of a top-level struct;
- a struct holding one next to a sibling is written but not read back ("its children have
  differing lengths");
- it is read back only when its struct's first leaf has no list above it: pylance takes the
  list's validity from that leaf and otherwise panics ("not yet implemented: Not yet supported
  FSL<...List<...>>", ``RepDefUnraveler::decimate`` with repetition levels), so the struct's
  first child is always a leaf (lists may follow);
- a non-nullable field inside one fails pylance's read as soon as a row (or an enclosing
  struct) is null ("Found unmasked nulls for non-nullable StructArray field"), so everything
  inside is nullable;
- ``to_table()`` of one together with any column of another length per row fails ("cannot read
  columns of differing lengths together"): the test reads pylance's truth column by column then
  (``check.pylance_table``), each column alone being right.

Every table has a unique, non-null ``id`` int64 column first (deletes use it, and it is the
sort key when order is compared separately).
"""

from __future__ import annotations

import decimal
import random
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np
import pyarrow as pa

FORMATS = ("legacy", "2.0", "2.1", "2.2")

# Field metadata keys (shared/docs/lance-format-notes.md §7).
COMPRESSION = "lance-encoding:compression"
COMPRESSION_LEVEL = "lance-encoding:compression-level"
STRUCTURAL = "lance-encoding:structural-encoding"
PACKED = "lance-encoding:packed"
BLOB = "lance-encoding:blob"

TS_UNITS = ("s", "ms", "us", "ns")
TZS = (None, "UTC", "+05:30", "America/New_York", "-08:00")


# ---------------------------------------------------------------------------------------------
# Type specs: a small tree the value generator walks. Built into pa.DataType / pa.Field.
# ---------------------------------------------------------------------------------------------


@dataclass
class Spec:
    kind: str  # leaf kind, or "list", "large_list", "fsl", "struct", "map"
    nullable: bool = True
    arrow: Optional[pa.DataType] = None  # for leaves
    children: list = field(default_factory=list)  # [(name, Spec)] for struct; [Spec] for list/fsl; [key, value] for map
    size: int = 0  # fsl size
    metadata: dict = field(default_factory=dict)
    thresholds: dict = field(default_factory=dict)  # blob_v2: blob_field size thresholds
    all_null_share: float = 0.0  # leaves: chance that a table's values are all null (FSL items)

    def arrow_type(self) -> pa.DataType:
        k = self.kind
        if k == "list":
            return pa.list_(self.children[0].arrow_field("item"))
        if k == "large_list":
            return pa.large_list(self.children[0].arrow_field("item"))
        if k == "fsl":
            return pa.list_(self.children[0].arrow_field("item"), self.size)
        if k == "struct":
            return pa.struct([s.arrow_field(n) for n, s in self.children])
        if k == "map":
            return pa.map_(self.children[0].arrow_field("key"), self.children[1].arrow_field("value"))
        return self.arrow

    def arrow_field(self, name: str) -> pa.Field:
        if self.kind == "blob_v2":
            from lance.blob import blob_field

            return blob_field(name, nullable=self.nullable, **self.thresholds)
        return pa.field(name, self.arrow_type(), nullable=self.nullable, metadata=self.metadata or None)

    def describe(self) -> str:
        if self.kind == "blob_v2":
            return f"lance.blob.v2{'' if self.nullable else ' not null'} {self.thresholds}"
        t = str(self.arrow_type())
        return t + ("" if self.nullable else " not null") + (f" {self.metadata}" if self.metadata else "")


LEAF_TYPES: list[tuple[str, Any]] = [
    ("bool", pa.bool_()),
    ("int", pa.int8()), ("int", pa.int16()), ("int", pa.int32()), ("int", pa.int64()),
    ("int", pa.uint8()), ("int", pa.uint16()), ("int", pa.uint32()), ("int", pa.uint64()),
    ("float", pa.float16()), ("float", pa.float32()), ("float", pa.float64()),
    ("decimal", None),
    ("string", pa.string()), ("string", pa.large_string()),
    ("binary", pa.binary()), ("binary", pa.large_binary()),
    ("date", pa.date32()),
    ("timestamp", None),
]


def random_leaf(r: random.Random) -> Spec:
    kind, t = r.choice(LEAF_TYPES)
    if kind == "decimal":
        p = r.randint(1, 38)
        t = pa.decimal128(p, r.randint(0, min(p, 12)))
    elif kind == "timestamp":
        t = pa.timestamp(r.choice(TS_UNITS), tz=r.choice(TZS))
    return Spec(kind, nullable=r.random() < 0.8, arrow=t)


def random_spec(r: random.Random, fmt: str, depth: int = 0, top: bool = True) -> Spec:
    """A random column type that ``fmt`` can hold. ``top``: not inside a list, map or
    fixed-size list (where a fixed-size list of structs may go, see the module notes)."""
    roll = r.random()
    if depth >= 3 or roll < 0.55:
        return random_leaf(r)
    shapes = ["list", "large_list", "fsl_small", "fsl_large", "struct", "list_struct_list", "struct_struct"]
    if fmt in ("2.1", "2.2"):
        shapes.append("packed_struct")
    if fmt == "2.2":
        shapes.append("map")
        if top and depth == 0:
            shapes += ["fsl_struct", "fsl_struct", "struct_fsl_struct"]
    shape = r.choice(shapes)
    nullable = r.random() < 0.75
    if shape in ("list", "large_list"):
        return Spec(shape, nullable, children=[random_spec(r, fmt, depth + 1, top=False)])
    if shape in ("fsl_small", "fsl_large"):
        size = r.randint(4, 8) if shape == "fsl_small" else r.randint(64, 300)
        item = Spec("float", nullable=r.random() < 0.5, arrow=pa.float32())
        if item.nullable and r.random() < 0.6:
            item.all_null_share = 0.6
        return Spec("fsl", nullable, children=[item], size=size)
    if shape in ("fsl_struct", "struct_fsl_struct"):
        # the first child is a leaf: pylance reads the list's validity from its first leaf and
        # panics when that one has repetition levels (see the module notes)
        kids = [("f0", random_leaf(r))] + [(f"f{i}", random_spec(r, fmt, depth + 1, top=False))
                                           for i in range(1, r.randint(1, 3))]
        fsl = Spec("fsl", nullable, children=[Spec("struct", True, children=kids)], size=r.randint(1, 5))
        nullable_children(fsl)  # and so no packed structs inside (their fields cannot be null)
        unpack(fsl)
        if shape == "fsl_struct":
            return fsl
        return Spec("struct", r.random() < 0.7, children=[("l", fsl)])
    if shape == "packed_struct":
        # leaves pylance packs (see add_encoding_metadata): fixed-width, and in 2.2 also
        # variable-width (VariablePackedStruct); never null, no bool, no halffloat
        kids, want = [], r.randint(1, 5)
        while len(kids) < want:
            c = random_leaf(r)
            if c.kind in PACKABLE[fmt] and not pa.types.is_float16(c.arrow):
                c.nullable = False
                kids.append((f"p{len(kids)}", c))
        return Spec("struct", nullable, children=kids, metadata={PACKED: "true"})
    if shape == "struct":
        kids = [(f"f{i}", random_spec(r, fmt, depth + 1, top=top)) for i in range(r.randint(1, 4))]
        return Spec("struct", nullable, children=kids)
    if shape == "struct_struct":
        inner = Spec("struct", r.random() < 0.7, children=[(f"g{i}", random_leaf(r)) for i in range(r.randint(1, 3))])
        return Spec("struct", nullable, children=[("a", random_leaf(r)), ("inner", inner)])
    if shape == "list_struct_list":
        inner_list = Spec(r.choice(["list", "large_list"]), r.random() < 0.7, children=[random_leaf(r)])
        st = Spec("struct", r.random() < 0.7, children=[("x", random_leaf(r)), ("ys", inner_list)])
        return Spec(r.choice(["list", "large_list"]), nullable, children=[st])
    if shape == "map":
        key = random_leaf(r)
        # keep keys comparable and mostly distinct; no binary keys: pyspark's collect() builds a
        # dict with bytearray keys and fails ("unhashable type: 'bytearray'") before any value
        # reaches the test
        while key.kind in ("float", "bool", "binary"):
            key = random_leaf(r)
        key.nullable = False
        value = random_spec(r, fmt, depth + 1, top=False)
        return Spec("map", nullable, children=[key, value])
    raise AssertionError(shape)


def strip_struct_nulls(spec: Spec) -> None:
    """2.0 cannot write a null struct: make every struct in the tree non-nullable."""
    if spec.kind == "struct":
        spec.nullable = False
        for _, c in spec.children:
            strip_struct_nulls(c)
    else:
        for c in spec.children:
            strip_struct_nulls(c)


def unpack(spec: Spec) -> None:
    """Removes the packed-struct metadata from every struct in the tree."""
    spec.metadata.pop(PACKED, None)
    for c in ([c for _, c in spec.children] if spec.kind == "struct" else spec.children):
        unpack(c)


def nullable_children(spec: Spec) -> None:
    """legacy: pylance's v1 writer rejects non-nullable items nested in lists ("column types
    must match schema types, expected LargeList(List(non-null Int8)) but found
    LargeList(List(Int8))"): make every nested field nullable (but map keys, which never are)."""
    kids = [c for _, c in spec.children] if spec.kind == "struct" else spec.children
    if spec.kind == "map":
        kids = kids[1:]
    for c in kids:
        c.nullable = True
        nullable_children(c)


# Leaf kinds pylance 14.0.2 packs into a packed struct: fixed-width ones, and in 2.2 also
# variable-width ones (VariablePackedStruct). No bool: pylance writes a packed struct with a
# bool child that it cannot read back ("PackedStruct field widths must be positive byte widths").
PACKABLE = {
    "2.1": ("int", "float", "decimal", "date", "timestamp"),
    "2.2": ("int", "float", "decimal", "date", "timestamp", "string", "binary"),
}


def add_encoding_metadata(r: random.Random, spec: Spec, fmt: str, pack_ok: bool = True) -> None:
    """2.1/2.2: sometimes set field metadata that forces an encoding. ``pack_ok``: structs may be
    packed (not inside a fixed-size list of structs, whose fields must stay nullable)."""
    if fmt not in ("2.1", "2.2"):
        return
    if spec.kind == "fsl":
        pack_ok = False
    if spec.kind == "struct":
        # packed structs: leaves only (a packed struct with a list child panics pylance's
        # writer); variable-width leaves only in 2.2 (VariablePackedStruct)
        fixed = PACKABLE[fmt]
        leaves = [c for _, c in spec.children]
        if pack_ok and r.random() < 0.3 and all(c.kind in fixed and not pa.types.is_float16(c.arrow) for c in leaves):
            # nullable children or halffloat make pylance 14.0.2 refuse to write packed structs
            # ("Variable packed struct encoding is not enabled" in 2.1, "Per-value compression
            # not yet supported for block type Nullable" in 2.2)
            for c in leaves:
                c.nullable = False
            spec.metadata[PACKED] = "true"
        for _, c in spec.children:
            add_encoding_metadata(r, c, fmt, pack_ok)
        return
    for c in spec.children:
        add_encoding_metadata(r, c, fmt, pack_ok)
    if spec.children:
        return
    if r.random() < 0.3:
        comp = r.choice(["zstd", "lz4", "fsst", "none"])
        spec.metadata[COMPRESSION] = comp
        if comp == "zstd" and r.random() < 0.6:
            spec.metadata[COMPRESSION_LEVEL] = str(r.choice([1, 3, 9, 19]))
    if r.random() < 0.25:
        spec.metadata[STRUCTURAL] = r.choice(["miniblock", "fullzip"])


# ---------------------------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------------------------

NULL_PATTERNS = ("none", "none", "some", "most", "all", "runs", "alternate")
ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-"
UNICODE = "äöüßéñ€漢字🙂Ωж"


@dataclass
class Shape:
    """How the values of one column look (drawn once per column)."""

    nulls: str
    values: str
    str_len: str


def draw_shape(r: random.Random) -> Shape:
    return Shape(
        nulls=r.choice(NULL_PATTERNS),
        values=r.choice(["random", "random", "small_range", "runs", "low_card", "constant", "extremes", "sequential"]),
        str_len=r.choice(["short", "short", "empty_mix", "medium", "long", "huge"]),
    )


def null_mask(rng: np.random.Generator, pattern: str, n: int) -> Optional[np.ndarray]:
    """True = null."""
    if n == 0 or pattern == "none":
        return None
    if pattern == "some":
        return rng.random(n) < 0.1
    if pattern == "most":
        return rng.random(n) < 0.9
    if pattern == "all":
        return np.ones(n, dtype=bool)
    if pattern == "alternate":
        return (np.arange(n) % 2) == 1
    # runs of nulls and values
    out = np.zeros(n, dtype=bool)
    i, state = 0, bool(rng.integers(0, 2))
    while i < n:
        ln = int(rng.integers(1, 2000))
        out[i:i + ln] = state
        state = not state
        i += ln
    return out


def int_bounds(t: pa.DataType) -> tuple[int, int]:
    bits = t.bit_width
    if pa.types.is_signed_integer(t):
        return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    return 0, 2 ** bits - 1


def _ints(rng: np.random.Generator, r: random.Random, lo: int, hi: int, n: int, shape: str) -> np.ndarray:
    """n Python-int-valued object array (safe for uint64 and int64 extremes) in [lo, hi]."""
    def uniform(a: int, b: int, k: int) -> np.ndarray:
        # numpy cannot draw across the full uint64/int64 range in one go; shift into int64/uint64.
        if b - a < 2 ** 63:
            return (rng.integers(0, b - a + 1, size=k, dtype=np.uint64).astype(object) + a)
        return rng.integers(0, 2 ** 64, size=k, dtype=np.uint64).astype(object) % (b - a + 1) + a

    if n == 0:
        return np.zeros(0, dtype=object)
    if shape == "small_range":
        width = r.choice([1, 2, 3, 5, 7, 12])
        base = r.choice([lo, 0 if lo <= 0 <= hi else lo, max(lo, hi - 2 ** width)])
        return uniform(base, min(hi, base + 2 ** width - 1), n)
    if shape == "runs":
        vals = uniform(lo, hi, max(1, n // 50 + 1))
        lens = rng.integers(1, 300, size=len(vals))
        return np.repeat(vals, lens)[:n] if lens.sum() >= n else np.resize(np.repeat(vals, lens), n)
    if shape == "low_card":
        vals = uniform(lo, hi, r.randint(1, 20))
        return vals[rng.integers(0, len(vals), size=n)]
    if shape == "constant":
        return np.full(n, uniform(lo, hi, 1)[0], dtype=object)
    if shape == "extremes":
        pool = np.array([lo, hi, lo + 1, hi - 1, 0 if lo <= 0 else lo, 1 if hi >= 1 else hi, -1 if lo < 0 else hi], dtype=object)
        return pool[rng.integers(0, len(pool), size=n)]
    if shape == "sequential":
        start = int(uniform(lo, hi, 1)[0])
        return np.array([lo + (start - lo + i) % (hi - lo + 1) for i in range(n)], dtype=object)
    return uniform(lo, hi, n)


def _floats(rng: np.random.Generator, r: random.Random, dtype, n: int, shape: str) -> np.ndarray:
    if shape == "constant":
        v = r.choice([0.0, -0.0, 1.5, float("nan"), float("inf"), 3.25e3])
        return np.full(n, v, dtype=dtype)
    if shape in ("small_range", "low_card", "runs"):
        pool = rng.integers(-20, 20, size=r.randint(1, 16)).astype(dtype) / dtype(4)
        if shape == "runs":
            return np.resize(np.repeat(pool, rng.integers(1, 300, size=len(pool))), n).astype(dtype)
        return pool[rng.integers(0, len(pool), size=n)].astype(dtype)
    if shape == "extremes":
        fi = np.finfo(dtype)
        pool = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, fi.max, fi.min, fi.tiny, -fi.tiny, fi.eps, 1.0], dtype=dtype)
        return pool[rng.integers(0, len(pool), size=n)]
    if shape == "sequential":
        return (np.arange(n) * 0.5).astype(dtype)
    v = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, size=n)).astype(dtype)
    if n and r.random() < 0.5:  # sprinkle NaN / inf / -0.0
        k = max(1, n // 50)
        idx = rng.integers(0, n, size=k)
        v[idx] = np.array([np.nan, np.inf, -np.inf, -0.0], dtype=dtype)[rng.integers(0, 4, size=k)]
    return v


def _str_lengths(rng: np.random.Generator, shape: Shape, n: int) -> np.ndarray:
    if shape.str_len == "empty_mix":
        return rng.integers(0, 4, size=n)
    if shape.str_len == "medium":
        return rng.integers(20, 200, size=n)
    if shape.str_len == "long":  # around and above the 256-byte full-zip threshold
        return rng.integers(200, 1500, size=n)
    if shape.str_len == "huge":  # a few values above 32 KiB (zstd per value in full-zip)
        lens = rng.integers(0, 64, size=n)
        k = min(n, max(1, n // 100), 12)
        lens[rng.choice(n, size=k, replace=False)] = rng.integers(32 * 1024 + 1, 40 * 1024, size=k)
        return lens
    return rng.integers(0, 24, size=n)


def _random_text(rng: np.random.Generator, length: int, binary: bool) -> Any:
    if binary:
        return rng.integers(0, 256, size=length, dtype=np.uint8).tobytes()
    if length > 256:  # cheap long strings: repeat a random chunk (compressible, like real text)
        chunk = "".join(ALPHABET[i] for i in rng.integers(0, len(ALPHABET), size=97))
        s = (chunk * (length // 97 + 1))[:length]
    else:
        s = "".join(ALPHABET[i] for i in rng.integers(0, len(ALPHABET), size=length))
    if length and rng.random() < 0.1:
        s = UNICODE[int(rng.integers(0, len(UNICODE)))] + s[1:]
    return s


def _texts(rng: np.random.Generator, r: random.Random, n: int, shape: Shape, binary: bool) -> list:
    if shape.values in ("low_card", "runs", "constant", "small_range"):
        k = 1 if shape.values == "constant" else r.randint(2, 30)
        pool = [_random_text(rng, int(x), binary) for x in _str_lengths(rng, shape, k)]
        if shape.values == "runs":
            idx = np.resize(np.repeat(np.arange(k), rng.integers(1, 300, size=k)), n)
        else:
            idx = rng.integers(0, k, size=n)
        return [pool[i] for i in idx]
    return [_random_text(rng, int(x), binary) for x in _str_lengths(rng, shape, n)]


def leaf_values(rng: np.random.Generator, r: random.Random, spec: Spec, n: int, shape: Shape) -> pa.Array:
    t = spec.arrow
    mask = null_mask(rng, shape.nulls, n) if spec.nullable else None
    if spec.nullable and spec.all_null_share and n and r.random() < spec.all_null_share:
        mask = np.ones(n, dtype=bool)
    if spec.kind == "bool":
        if shape.values == "constant":
            v = np.full(n, r.random() < 0.5)
        else:
            v = rng.random(n) < r.choice([0.5, 0.05, 0.95])
        return pa.array(v, type=t, mask=mask)
    if spec.kind == "int":
        lo, hi = int_bounds(t)
        return pa.array(_ints(rng, r, lo, hi, n, shape.values).tolist(), type=t, mask=mask)
    if spec.kind == "float":
        dtype = {16: np.float16, 32: np.float32, 64: np.float64}[t.bit_width]
        return pa.array(_floats(rng, r, dtype, n, shape.values), type=t, mask=mask)
    if spec.kind == "decimal":
        lim = 10 ** t.precision - 1
        ints = _ints(rng, r, -lim, lim, n, shape.values)
        ctx = decimal.Context(prec=80)
        return pa.array([decimal.Decimal(int(i)).scaleb(-t.scale, ctx) for i in ints], type=t, mask=mask)
    if spec.kind in ("string", "binary"):
        return pa.array(_texts(rng, r, n, shape, spec.kind == "binary"), type=t, mask=mask)
    if spec.kind == "date":  # 0001-01-01 .. 9999-12-31 (what Python's date holds)
        days = _ints(rng, r, -719162, 2932896, n, shape.values)
        return pa.array(days.tolist(), type=pa.int32(), mask=mask).cast(t)
    if spec.kind == "timestamp":
        per_s = {"s": 1, "ms": 10 ** 3, "us": 10 ** 6, "ns": 10 ** 9}[t.unit]
        if t.unit == "ns":
            lo, hi = -(2 ** 63) + 1, 2 ** 63 - 1  # read by Spark as raw longs: any int64
        else:  # years 2..9998: pyspark's collect() cannot turn year-1 instants into datetimes
            lo, hi = -62104060800 * per_s, 253370764799 * per_s
        raw = _ints(rng, r, lo, hi, n, shape.values)
        return pa.array(raw.tolist(), type=pa.int64(), mask=mask).cast(t)
    raise AssertionError(spec.kind)


def _lengths(rng: np.random.Generator, r: random.Random, n: int, max_total: int) -> np.ndarray:
    style = r.choice(["small", "small", "empty_mix", "wide", "single"])
    if style == "empty_mix":
        lens = rng.integers(0, 3, size=n)
    elif style == "wide":
        lens = rng.integers(0, 40, size=n)
    elif style == "single":
        lens = np.ones(n, dtype=np.int64)
    else:
        lens = rng.integers(0, 6, size=n)
    if lens.sum() > max_total:  # keep the flattened child within the row budget
        lens = np.minimum(lens, max(0, max_total // max(n, 1)))
    return lens.astype(np.int64)


def blob_values(rng: np.random.Generator, r: random.Random, spec: Spec, n: int) -> pa.Array:
    """n blob values: nulls, empty values, small ones and (rarely) some over 64 KiB, which go to
    packed sidecars by default."""
    mask = null_mask(rng, r.choice(NULL_PATTERNS), n) if spec.nullable else None
    style = r.choice(["small", "small", "mixed", "empty_mix"])
    if style == "empty_mix":
        lens = rng.integers(0, 3, size=n)
    elif style == "mixed":
        lens = rng.integers(0, 6000, size=n)
    else:
        lens = rng.integers(0, 300, size=n)
    cap = 4 << 20  # keep a column's blobs within a few MiB, whatever the row count
    if lens.sum() > cap:
        lens = (lens * (cap / lens.sum())).astype(np.int64)
    if n and r.random() < 0.3:  # a few big values
        k = min(n, r.randint(1, 3))
        lens[rng.choice(n, size=k, replace=False)] = rng.integers(64 * 1024, 300 * 1024, size=k)
    vals = [None if mask is not None and mask[i] else
            (rng.integers(0, 256, size=min(int(lens[i]), 512), dtype=np.uint8).tobytes() * (int(lens[i]) // 512 + 1))[:int(lens[i])]
            for i in range(n)]
    if spec.kind == "blob_v2":
        from lance.blob import blob_array

        return blob_array(vals)
    return pa.array(vals, pa.large_binary())


def column_values(rng: np.random.Generator, r: random.Random, spec: Spec, n: int, budget: int) -> pa.Array:
    """An Arrow array of n values of ``spec``. ``budget`` caps the number of leaf values."""
    if spec.kind in ("blob", "blob_v2"):
        return blob_values(rng, r, spec, n)
    if not spec.children:
        return leaf_values(rng, r, spec, n, draw_shape(r))
    mask = null_mask(rng, r.choice(NULL_PATTERNS), n) if spec.nullable else None
    if spec.kind == "struct":
        kids = [column_values(rng, r, c, n, budget) for _, c in spec.children]
        fields = [c.arrow_field(name) for name, c in spec.children]
        if mask is not None:
            return pa.StructArray.from_arrays(kids, fields=fields, mask=pa.array(mask, pa.bool_()))
        return pa.StructArray.from_arrays(kids, fields=fields)
    if spec.kind == "fsl":
        items = column_values(rng, r, spec.children[0], n * spec.size, budget * 400)
        arr = pa.FixedSizeListArray.from_arrays(items, type=spec.arrow_type())
        if mask is not None:
            arr = pa.FixedSizeListArray.from_arrays(items, type=spec.arrow_type(), mask=pa.array(mask, pa.bool_()))
        return arr
    lens = _lengths(rng, r, n, budget)
    if mask is not None:
        lens = np.where(mask, 0, lens)
    offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    total = int(offsets[-1])
    moff = pa.array(offsets, pa.int64() if spec.kind == "large_list" else pa.int32())
    pmask = pa.array(mask, pa.bool_()) if mask is not None else None
    if spec.kind == "map":
        key_spec, val_spec = spec.children
        keys = column_values(rng, r, key_spec, total, budget)
        vals = column_values(rng, r, val_spec, total, budget)
        return pa.MapArray.from_arrays(moff, keys, vals, type=spec.arrow_type(), mask=pmask)
    child = column_values(rng, r, spec.children[0], total, budget)
    cls = pa.LargeListArray if spec.kind == "large_list" else pa.ListArray
    return cls.from_arrays(moff, child, type=spec.arrow_type(), mask=pmask)


# ---------------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------------


@dataclass
class Case:
    seed: int
    fmt: str
    specs: list  # [(name, Spec)] excluding id
    rows: list  # rows per write: [initial, append1, ...]
    max_rows_per_file: Optional[int]
    max_rows_per_group: Optional[int]
    max_page_bytes: Optional[int]
    stable_row_ids: bool
    deletes: list  # SQL predicates, applied after all writes
    split_size: Optional[int]
    batch_size: Optional[int]
    projection: list  # top-level column names in the order to select
    nested: list  # dotted paths of struct children to select
    rng_state: int = 0

    def schema(self) -> pa.Schema:
        return pa.schema([pa.field("id", pa.int64(), nullable=False)] + [s.arrow_field(n) for n, s in self.specs])

    def describe(self) -> str:
        lines = [
            f"seed={self.seed} format={self.fmt} rows={self.rows} max_rows_per_file={self.max_rows_per_file} "
            f"max_rows_per_group={self.max_rows_per_group} max_page_bytes={self.max_page_bytes} "
            f"stable_row_ids={self.stable_row_ids} deletes={self.deletes} split_size={self.split_size} "
            f"batch_size={self.batch_size}",
            f"projection={self.projection} nested={self.nested}",
        ]
        lines += [f"  {n}: {s.describe()}" for n, s in self.specs]
        return "\n".join(lines)


def _weight(spec: Spec) -> int:
    """Rough bytes per row, to size tables."""
    if spec.kind in ("blob", "blob_v2"):
        return 1000
    if spec.kind == "fsl":
        item = spec.children[0]
        return spec.size * (4 if item.kind == "float" else _weight(item))
    if spec.kind in ("string", "binary"):
        return 200
    if spec.children:
        kids = [c for _, c in spec.children] if spec.kind == "struct" else spec.children
        mult = 1 if spec.kind == "struct" else 4
        return mult * sum(_weight(c) for c in kids) + 4
    return 8


def _struct_paths(prefix: str, spec: Spec) -> list[str]:
    if spec.kind != "struct":
        return []
    out = []
    for name, c in spec.children:
        out.append(f"{prefix}.{name}")
        out += _struct_paths(f"{prefix}.{name}", c)
    return out


def make_case(seed: int) -> Case:
    r = random.Random(seed)
    fmt = FORMATS[seed % len(FORMATS)]
    ncols = r.choice([1, 1, 2, 3, 4, 5, 6, 8, 12])
    specs = []
    for i in range(ncols):
        s = random_spec(r, fmt)
        if fmt == "2.0":
            strip_struct_nulls(s)
        if fmt == "legacy":
            nullable_children(s)
        add_encoding_metadata(r, s, fmt)
        specs.append((f"c{i}", s))
    weight = sum(_weight(s) for _, s in specs) + 8
    size_class = r.choices(["zero", "one", "small", "medium", "large"], weights=[4, 4, 30, 37, 25])[0]
    max_rows = max(50, min(50_000, 1_500_000 // weight))
    n = {
        "zero": 0,
        "one": 1,
        "small": r.randint(2, 200),
        "medium": r.randint(200, 5000),
        "large": r.randint(5000, 50_000),
    }[size_class]
    n = min(n, max_rows) if size_class not in ("zero", "one") else n
    rows = [n]
    for _ in range(r.choice([0, 0, 0, 1, 2])):
        rows.append(r.choice([0, 1, r.randint(2, 100), r.randint(100, max(101, min(4000, max_rows // 2)))]))
    total = sum(rows)
    deletes = []
    if total and r.random() < 0.4:
        deletes.append(r.choice(["id % 7 = 0", "id % 2 = 1", "id % 1000 = 3", f"id < {r.randint(0, total)}"]))
        if total > 6000 and r.random() < 0.5:
            start = r.randint(0, total - 5500)
            deletes.append(f"id >= {start} AND id < {start + r.randint(5000, 5500)}")  # bitmap deletion file
    all_cols = [name for name, _ in specs]
    projection = ["id"] + all_cols
    r.shuffle(projection)
    projection = projection[: r.randint(1, len(projection))]
    nested = []
    for name, s in specs:
        paths = _struct_paths(name, s)
        if paths:
            nested.append(r.choice(paths))
    # Blob columns last, from their own RNG: the draws above stay what they were before blobs.
    rb = random.Random(seed * 7919 + 0xB10B)
    if fmt != "legacy" and rb.random() < 0.35:
        for i in range(rb.choice([1, 1, 2])):
            name = f"blob{i}"
            if fmt == "2.2" and rb.random() < 0.6:
                thresholds = rb.choice([{}, {"inline_size_threshold": 64, "dedicated_size_threshold": 4096},
                                        {"inline_size_threshold": 0}, {"dedicated_size_threshold": 200_000}])
                specs.append((name, Spec("blob_v2", nullable=rb.random() < 0.8, thresholds=thresholds)))
            else:
                specs.append((name, Spec("blob", nullable=rb.random() < 0.8, arrow=pa.large_binary(),
                                         metadata={BLOB: "true"})))
            if rb.random() < 0.6:
                projection.insert(rb.randint(0, len(projection)), name)
    return Case(
        seed=seed,
        fmt=fmt,
        specs=specs,
        rows=rows,
        max_rows_per_file=r.choice([None, None, max(1, n // 3 + 1), r.randint(1000, 20_000)]) if n else None,
        max_rows_per_group=(r.choice([None, 1, 7, 100, 1000, 4096] if n <= 2000 else [None, 100, 1000, 4096])
                            if fmt == "legacy" else None),
        max_page_bytes=r.choice([None, None, 4096, 64 * 1024, 1024 * 1024]) if fmt != "legacy" else None,
        stable_row_ids=r.random() < 0.25,
        deletes=deletes,
        split_size=r.choice([None, None, 1, 64 * 1024, 1024 * 1024]),
        batch_size=r.choice([None, None, 1000, 100, 13]) if total <= 20_000 else r.choice([None, 1000]),
        projection=projection,
        nested=nested,
        rng_state=r.getrandbits(63),
    )


def make_tables(case: Case) -> list[pa.Table]:
    """The tables to write (initial, then appends), drawn from the case's own RNG state."""
    r = random.Random(case.rng_state)
    rng = np.random.default_rng(case.rng_state)
    schema = case.schema()
    out = []
    next_id = 0
    for n in case.rows:
        cols = [pa.array(np.arange(next_id, next_id + n, dtype=np.int64))]
        next_id += n
        for _, spec in case.specs:
            cols.append(column_values(rng, r, spec, n, budget=max(4 * n, 64)))
        out.append(pa.Table.from_arrays(cols, schema=schema))
    return out


def write_case(case: Case, path: str):
    """Write the case with pylance; returns the LanceDataset at its latest version."""
    import lance

    tables = make_tables(case)
    kw: dict = {"data_storage_version": case.fmt}
    if case.max_rows_per_file:
        kw["max_rows_per_file"] = case.max_rows_per_file
    if case.max_rows_per_group:
        kw["max_rows_per_group"] = case.max_rows_per_group
    if case.max_page_bytes:
        kw["max_page_bytes"] = case.max_page_bytes
    ds = lance.write_dataset(tables[0], path, enable_stable_row_ids=case.stable_row_ids, **kw)
    for t in tables[1:]:
        kw.pop("data_storage_version", None)
        ds = lance.write_dataset(t, path, mode="append", **kw)
    for pred in case.deletes:
        ds.delete(pred)
    return lance.dataset(path)
