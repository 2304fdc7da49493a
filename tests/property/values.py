"""Random column values for the property test's specs (schema.py): null patterns, integer and
float shapes, strings, nested values and blobs."""

from __future__ import annotations

import decimal
import random
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
import pyarrow as pa

from property.schema import Spec

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
        values=r.choice(
            [
                "random",
                "random",
                "small_range",
                "runs",
                "low_card",
                "constant",
                "extremes",
                "sequential",
            ]
        ),
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
        out[i : i + ln] = state
        state = not state
        i += ln
    return out


def int_bounds(t: pa.DataType) -> tuple[int, int]:
    bits = t.bit_width
    if pa.types.is_signed_integer(t):
        return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    return 0, 2**bits - 1


def _ints(
    rng: np.random.Generator, r: random.Random, lo: int, hi: int, n: int, shape: str
) -> np.ndarray:
    """n Python-int-valued object array (safe for uint64 and int64 extremes) in [lo, hi]."""

    def uniform(a: int, b: int, k: int) -> np.ndarray:
        # numpy cannot draw across the full uint64/int64 range in one go; shift into int64/uint64.
        if b - a < 2**63:
            return rng.integers(0, b - a + 1, size=k, dtype=np.uint64).astype(object) + a
        return rng.integers(0, 2**64, size=k, dtype=np.uint64).astype(object) % (b - a + 1) + a

    if n == 0:
        return np.zeros(0, dtype=object)
    if shape == "small_range":
        width = r.choice([1, 2, 3, 5, 7, 12])
        base = r.choice([lo, 0 if lo <= 0 <= hi else lo, max(lo, hi - 2**width)])
        return uniform(base, min(hi, base + 2**width - 1), n)
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
        pool = np.array(
            [
                lo,
                hi,
                lo + 1,
                hi - 1,
                0 if lo <= 0 else lo,
                1 if hi >= 1 else hi,
                -1 if lo < 0 else hi,
            ],
            dtype=object,
        )
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
        pool = np.array(
            [np.nan, np.inf, -np.inf, 0.0, -0.0, fi.max, fi.min, fi.tiny, -fi.tiny, fi.eps, 1.0],
            dtype=dtype,
        )
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


def leaf_values(
    rng: np.random.Generator, r: random.Random, spec: Spec, n: int, shape: Shape
) -> pa.Array:
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
        lim = 10**t.precision - 1
        ints = _ints(rng, r, -lim, lim, n, shape.values)
        ctx = decimal.Context(prec=80)
        return pa.array(
            [decimal.Decimal(int(i)).scaleb(-t.scale, ctx) for i in ints], type=t, mask=mask
        )
    if spec.kind in ("string", "binary"):
        return pa.array(_texts(rng, r, n, shape, spec.kind == "binary"), type=t, mask=mask)
    if spec.kind == "date":  # 0001-01-01 .. 9999-12-31 (what Python's date holds)
        days = _ints(rng, r, -719162, 2932896, n, shape.values)
        return pa.array(days.tolist(), type=pa.int32(), mask=mask).cast(t)
    if spec.kind == "timestamp":
        per_s = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[t.unit]
        if t.unit == "ns":
            lo, hi = -(2**63) + 1, 2**63 - 1  # read by Spark as raw longs: any int64
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
    vals = [
        None
        if mask is not None and mask[i]
        else (
            rng.integers(0, 256, size=min(int(lens[i]), 512), dtype=np.uint8).tobytes()
            * (int(lens[i]) // 512 + 1)
        )[: int(lens[i])]
        for i in range(n)
    ]
    if spec.kind == "blob_v2":
        from lance.blob import blob_array

        return blob_array(vals)
    return pa.array(vals, pa.large_binary())


def column_values(
    rng: np.random.Generator, r: random.Random, spec: Spec, n: int, budget: int
) -> pa.Array:
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
            arr = pa.FixedSizeListArray.from_arrays(
                items, type=spec.arrow_type(), mask=pa.array(mask, pa.bool_())
            )
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
