"""Random Arrow schemas for the property test: type specs, how they become Arrow fields, and the
field metadata that forces Lance encodings. See gen.py for what pylance can and cannot write."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Optional

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
    children: list = field(
        default_factory=list
    )  # [(name, Spec)] for struct; [Spec] for list/fsl; [key, value] for map
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
            return pa.map_(
                self.children[0].arrow_field("key"), self.children[1].arrow_field("value")
            )
        return self.arrow

    def arrow_field(self, name: str) -> pa.Field:
        if self.kind == "blob_v2":
            from lance.blob import blob_field

            return blob_field(name, nullable=self.nullable, **self.thresholds)
        return pa.field(
            name, self.arrow_type(), nullable=self.nullable, metadata=self.metadata or None
        )

    def describe(self) -> str:
        if self.kind == "blob_v2":
            return f"lance.blob.v2{'' if self.nullable else ' not null'} {self.thresholds}"
        t = str(self.arrow_type())
        return (
            t
            + ("" if self.nullable else " not null")
            + (f" {self.metadata}" if self.metadata else "")
        )


LEAF_TYPES: list[tuple[str, Any]] = [
    ("bool", pa.bool_()),
    ("int", pa.int8()),
    ("int", pa.int16()),
    ("int", pa.int32()),
    ("int", pa.int64()),
    ("int", pa.uint8()),
    ("int", pa.uint16()),
    ("int", pa.uint32()),
    ("int", pa.uint64()),
    ("float", pa.float16()),
    ("float", pa.float32()),
    ("float", pa.float64()),
    ("decimal", None),
    ("string", pa.string()),
    ("string", pa.large_string()),
    ("binary", pa.binary()),
    ("binary", pa.large_binary()),
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
    shapes = [
        "list",
        "large_list",
        "fsl_small",
        "fsl_large",
        "struct",
        "list_struct_list",
        "struct_struct",
    ]
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
        kids = [("f0", random_leaf(r))] + [
            (f"f{i}", random_spec(r, fmt, depth + 1, top=False)) for i in range(1, r.randint(1, 3))
        ]
        fsl = Spec(
            "fsl", nullable, children=[Spec("struct", True, children=kids)], size=r.randint(1, 5)
        )
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
        inner = Spec(
            "struct",
            r.random() < 0.7,
            children=[(f"g{i}", random_leaf(r)) for i in range(r.randint(1, 3))],
        )
        return Spec("struct", nullable, children=[("a", random_leaf(r)), ("inner", inner)])
    if shape == "list_struct_list":
        inner_list = Spec(
            r.choice(["list", "large_list"]), r.random() < 0.7, children=[random_leaf(r)]
        )
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
    for c in [c for _, c in spec.children] if spec.kind == "struct" else spec.children:
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
        if (
            pack_ok
            and r.random() < 0.3
            and all(c.kind in fixed and not pa.types.is_float16(c.arrow) for c in leaves)
        ):
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
