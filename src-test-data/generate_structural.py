#!/usr/bin/env python3
"""Extra 2.1 / 2.2 fixtures for the structural reader, with encodings forced through field metadata.

Run from the repository root:

    .venv/bin/python src-test-data/generate_structural.py              # every dataset (rewrites all)
    .venv/bin/python src-test-data/generate_structural.py NAME [NAME..]  # just these, others untouched

Regenerating a dataset changes its bytes (file names, UUIDs, timestamps), so add new datasets by
name and leave the existing ones alone.

Writes src-test-data/structural/<name>_<fmt>.lance (one fragment each) and
src-test-data/structural/<name>_<fmt>.jsonl.gz: the rows pylance's to_table() returns, in the canonical
JSON encoding of generate.py (its encode_table_rows is reused). Nothing is hand-typed. Datasets pylance
refuses for a format are skipped and listed in structural/_skipped.json.
"""
from __future__ import annotations

import gzip
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import lance

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from generate import encode_table_rows, dumps  # noqa: E402

OUT = HERE / "structural"
FORMATS = ["2.1", "2.2"]


def meta(**kw):
    return {f"lance-encoding:{k.replace('_', '-')}": v for k, v in kw.items()}


def strings(rng, n, lo, hi, null_every=0, alphabet="abcdefghij klmnop"):
    out = []
    for i in range(n):
        if null_every and i % null_every == 3:
            out.append(None)
        else:
            k = int(rng.integers(lo, hi + 1))
            out.append("".join(rng.choice(list(alphabet), k)))
    return out


def datasets():
    rng = np.random.default_rng(7)
    n = 3000
    ints = rng.integers(-1000, 1000, n).astype(np.int64)
    ints_null = pa.array([None if i % 7 == 0 else int(v) for i, v in enumerate(ints)], pa.int64())
    floats = pa.array(rng.normal(size=n).astype(np.float32))
    short = strings(rng, n, 0, 30, null_every=11)
    long = strings(rng, 120, 200, 1500, null_every=9)
    yield "compression", pa.table({
        "i_zstd": ints_null, "i_lz4": ints_null, "i_none": ints_null,
        "s_zstd": pa.array(short), "s_lz4": pa.array(short), "s_fsst": pa.array(short), "s_none": pa.array(short),
        "f_bss": floats,
    }), {
        "i_zstd": meta(compression="zstd"), "i_lz4": meta(compression="lz4"), "i_none": meta(compression="none"),
        "s_zstd": meta(compression="zstd"), "s_lz4": meta(compression="lz4"), "s_fsst": meta(compression="fsst"),
        "s_none": meta(compression="none"), "f_bss": {**meta(compression="zstd"), "lance-encoding:bss": "on"},
    }
    yield "fullzip_forced", pa.table({
        "i": ints_null,
        "s": pa.array(short),
        "li": pa.array([None if i % 13 == 5 else ([] if i % 17 == 2 else list(range(i % 9))) for i in range(n)],
                       pa.list_(pa.int32())),
        "st": pa.array([None if i % 19 == 1 else {"a": i, "b": None if i % 5 == 0 else str(i)} for i in range(n)],
                       pa.struct([("a", pa.int32()), ("b", pa.string())])),
    }), {k: meta(structural_encoding="fullzip") for k in ["i", "s", "li", "st"]}
    yield "long_values", pa.table({
        "text": pa.array(long),
        "text_zstd": pa.array(long),
        "big_list": pa.array([None if i % 10 == 4 else [None if j % 31 == 0 else "x" * (j % 300) for j in range(i % 40)]
                              for i in range(120)], pa.list_(pa.string())),
        "vec": pa.array([None if i % 8 == 3 else [float(i + j) for j in range(96)] for i in range(120)],
                        pa.list_(pa.float32(), 96)),
    }), {"text_zstd": meta(compression="zstd")}
    packed = pa.struct([("a", pa.int32()), ("b", pa.float64()), ("c", pa.int16())])
    vpacked = pa.struct([("a", pa.int32()), ("s", pa.string())])
    yield "packed", pa.table({
        "id": pa.array(range(2000), pa.int64()),
        "ps": pa.array([None if i % 9 == 2 else {"a": i, "b": i / 4, "c": i % 300} for i in range(2000)], packed),
        "vps": pa.array([{"a": i, "s": "v" * (i % 13)} for i in range(2000)], vpacked),
    }), {"ps": meta(packed="true"), "vps": meta(packed="true")}
    # Lists long enough to span mini-block chunks, and pages small enough to split columns.
    yield "long_lists", pa.table({
        "li": pa.array([None if i % 50 == 7 else list(range(i * 37 % 1300)) for i in range(200)], pa.list_(pa.int64())),
        "nested": pa.array([None if i % 23 == 1 else [None if j % 5 == 4 else [f"{i}.{j}.{k}" for k in range(j % 4)]
                                                         for j in range(i % 30)] for i in range(200)],
                           pa.list_(pa.list_(pa.string()))),
        "m": pa.array([None if i % 29 == 3 else [(f"k{j}", None if j % 3 == 1 else j * i) for j in range(i % 12)]
                       for i in range(200)], pa.map_(pa.string(), pa.int64())),
    }), {}
    yield "misc_types", pa.table({
        "fsb": pa.array([None if i % 6 == 1 else bytes([i % 256, (i * 7) % 256, 3]) for i in range(3000)], pa.binary(3)),
        "ffsl": pa.array([None if i % 10 == 5 else [[i, None if i % 4 == 0 else i + 1], [i + 2, i + 3], [0, 1]]
                          for i in range(3000)], pa.list_(pa.list_(pa.int32(), 2), 3)),
        "bools": pa.array([None if i % 5 == 0 else (i % 3 == 0) for i in range(3000)]),
        "runs": pa.array(np.repeat(np.arange(30, dtype=np.int32), 100)),
        "lowcard": pa.array([None if i % 17 == 0 else f"category-{i % 6}" for i in range(3000)]),
        "dec": pa.array([None if i % 8 == 0 else i * 1000003 for i in range(3000)], pa.decimal128(20, 3)),
        "small": pa.array((np.arange(3000) % 100).astype(np.uint16)),
    }), {}
    yield from more_datasets()


def more_datasets():
    """Datasets added after the first batch (2.1/2.2 reader fixes): packed structs, fixed-size
    lists whose items are all null, fixed-size lists of structs."""
    n = 3000
    rng = np.random.default_rng(11)
    nn = lambda name, t: pa.field(name, t, nullable=False)  # noqa: E731
    # Packed structs with fixed-width children: PackedStruct in mini-block chunks (2.1 and 2.2).
    # pylance 14.0.2 writes packed children only without nulls (2.2 refuses null children,
    # 2.1 has no variable-width packing), and no bool children (it cannot read them back).
    ab = pa.struct([nn("a", pa.int32()), nn("b", pa.int64())])
    mixed = pa.struct([nn("u16", pa.uint16()), nn("u64", pa.uint64()), nn("i16", pa.int16()), nn("i8", pa.int8())])
    kinds = pa.struct([nn("d", pa.date32()), nn("ts", pa.timestamp("us", tz="UTC")), nn("dec", pa.decimal128(20, 3)),
                       nn("f", pa.float32()), nn("g", pa.float64())])
    u64 = rng.integers(0, 2 ** 63, n, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    yield "packed_fixed", pa.table({
        "id": pa.array(range(n), pa.int64()),
        "ab": pa.array([{"a": i - 1500, "b": i * 1_000_000_007} for i in range(n)], ab),
        "mixed": pa.array([None if i % 11 == 4 else {"u16": i % 65536, "u64": int(u64[i]), "i16": -i, "i8": i % 256 - 128}
                           for i in range(n)], mixed),
        "kinds": pa.array([None if i % 7 == 0 else {"d": i * 37 - 50000, "ts": i * 86_400_000_123, "dec": (i * 1000003) - 7,
                                                   "f": i / 8, "g": -i / 3}
                           for i in range(n)], kinds),
    }), {k: meta(packed="true") for k in ["ab", "mixed", "kinds"]}, {}
    # Packed structs with variable-width children: VariablePackedStruct in full-zip pages (2.2 only).
    vs = pa.struct([nn("a", pa.int32()), nn("s", pa.string())])
    multi = pa.struct([nn("s1", pa.string()), nn("b", pa.binary()), nn("i", pa.int64()), nn("ls", pa.large_string()),
                       nn("lb", pa.large_binary()), nn("f", pa.float64())])
    only = pa.struct([nn("s", pa.string())])
    yield "packed_var", pa.table({
        "id": pa.array(range(n), pa.int64()),
        "vs": pa.array([None if i % 9 == 2 else {"a": i, "s": "x" * (i % 17)} for i in range(n)], vs),
        "multi": pa.array([{"s1": f"row{i}", "b": bytes([i % 256]) * (i % 5), "i": -i * 3, "ls": "é" * (i % 4),
                            "lb": b"", "f": i * 0.25} for i in range(n)], multi),
        "only": pa.array([None if i % 5 == 0 else {"s": strings(rng, 1, 0, 40)[0]} for i in range(n)], only),
        "long": pa.array([{"a": i, "s": "long text " * (40 if i % 10 == 0 else i % 3)} for i in range(n)], vs),
    }), {k: meta(packed="true") for k in ["vs", "multi", "only", "long"]}, {}
    # Fixed-size lists whose items are all null in a page: items encoded as Constant(None),
    # each row keeping only its validity bytes (full-zip). The writer cuts "mixed" into
    # pages of which the first ones are all-null and the later ones hold values (the table goes
    # in as 250-row batches and a tiny column cache flushes a page per batch).
    m = 2000
    yield "fsl_all_null", pa.table({
        "v4": pa.FixedSizeListArray.from_arrays(pa.array([None] * (m * 4), pa.float32()), 4),
        "v4_rows": pa.FixedSizeListArray.from_arrays(pa.array([None] * (m * 4), pa.float32()), 4,
                                                     mask=pa.array([i % 3 == 1 for i in range(m)])),
        "v128": pa.FixedSizeListArray.from_arrays(pa.array([None] * (m * 128), pa.float32()), 128,
                                                  mask=pa.array([i % 10 == 3 for i in range(m)])),
        "mixed": pa.FixedSizeListArray.from_arrays(
            pa.array([None if i < 8000 or i % 3 == 0 else i / 2 for i in range(m * 8)], pa.float32()), 8,
            mask=pa.array([i % 7 == 5 for i in range(m)])),
    }), {}, {"data_cache_bytes": 4096, "chunk_rows": 250}
    # Fixed-size lists of structs (2.2 only): the fixed-size list is a layer of the leaves'
    # rep/def levels (an item layer repeating each row `dimension` times), not a column.
    k = 3000
    st = pa.struct([("a", pa.int32()), ("b", pa.string())])
    def items(count, null_every):
        return [None if i % null_every == 4 else {"a": None if i % 5 == 1 else i, "b": None if i % 7 == 2 else f"s{i}"}
                for i in range(count)]
    fs = pa.FixedSizeListArray.from_arrays(pa.array(items(3 * k, 6), st), 3, mask=pa.array([i % 8 == 6 for i in range(k)]))
    inner = pa.struct([("x", pa.int64()), ("y", pa.float64())])
    fs_nested = pa.FixedSizeListArray.from_arrays(
        pa.array([{"in": None if i % 4 == 3 else {"x": i, "y": None if i % 3 == 0 else i / 2}} for i in range(2 * k)],
                 pa.struct([("in", inner)])), 2)
    sl = pa.struct([("a", pa.int32()), ("l", pa.list_(pa.int32()))])
    fs_list = pa.FixedSizeListArray.from_arrays(
        pa.array([None if i % 10 == 9 else {"a": i, "l": None if i % 6 == 1 else [i + j for j in range(i % 4)]}
                  for i in range(3 * k)], sl), 3, mask=pa.array([i % 9 == 2 for i in range(k)]))
    fs_fsl = pa.FixedSizeListArray.from_arrays(
        pa.array([{"v": None if i % 5 == 2 else [float(i), -float(i)]} for i in range(3 * k)],
                 pa.struct([("v", pa.list_(pa.float32(), 2))])), 3)
    # (a struct holding a fixed-size list of structs next to another child is written by
    # pylance 14.0.2 but not read back: "its children have differing lengths")
    s_fs = pa.StructArray.from_arrays(
        [pa.FixedSizeListArray.from_arrays(pa.array(items(2 * k, 5), st), 2)],
        names=["f"], mask=pa.array([i % 13 == 0 for i in range(k)]))
    yield "fsl_struct", pa.table({"fs": fs, "fs_nested": fs_nested, "fs_list": fs_list, "fs_fsl": fs_fsl, "s_fs": s_fs}), {}, {}


def read_back(ds):
    """``to_table()``; column by column where pylance 14.0.2 cannot read the columns together
    (a fixed-size list of structs next to any column of another length per row: "cannot read
    columns of differing lengths together"), each column read alone being correct."""
    try:
        return ds.to_table()
    except Exception as e:  # noqa: BLE001
        if "differing lengths" not in str(e):
            raise
        return pa.table({name: ds.to_table(columns=[name]).column(name) for name in ds.schema.names}, schema=ds.schema)


def with_meta(tbl, md):
    fields = [pa.field(f.name, f.type, nullable=True, metadata=md.get(f.name)) for f in tbl.schema]
    return pa.Table.from_arrays(tbl.columns, schema=pa.schema(fields))


def main(only: list[str]):
    index, skipped = [], []
    if only:
        # Keep every other dataset as it is; replace the entries of the named ones.
        known = {d[0] for d in datasets_with_options()}
        unknown = sorted(set(only) - known)
        if unknown:
            sys.exit(f"unknown dataset(s) {unknown}; known: {sorted(known)}")
        mine = lambda ds_name: any(ds_name == f"{o}_{fmt}" for o in only for fmt in FORMATS)  # noqa: E731
        index = [d for d in json.loads((OUT / "_index.json").read_text())["datasets"] if not mine(d["name"])]
        skipped = [d for d in json.loads((OUT / "_skipped.json").read_text())["skipped"] if not mine(d["dataset"])]
    else:
        shutil.rmtree(OUT, ignore_errors=True)
        OUT.mkdir(parents=True)
    for name, tbl, md, extra in datasets_with_options():
        if only and name not in only:
            continue
        tbl = with_meta(tbl, md)
        for fmt in FORMATS:
            ds_name = f"{name}_{fmt}"
            path = OUT / f"{ds_name}.lance"
            shutil.rmtree(path, ignore_errors=True)
            (OUT / f"{ds_name}.jsonl.gz").unlink(missing_ok=True)
            kwargs = {"data_storage_version": fmt, **extra}
            chunk_rows = kwargs.pop("chunk_rows", None)
            data = pa.Table.from_batches(tbl.to_batches(max_chunksize=chunk_rows)) if chunk_rows else tbl
            if name == "long_lists":
                kwargs["max_bytes_per_file"] = 1 << 30
            try:
                lance.write_dataset(data, str(path), **kwargs)
                got = read_back(lance.dataset(str(path)))
            except Exception as e:  # noqa: BLE001
                shutil.rmtree(path, ignore_errors=True)
                skipped.append({"dataset": ds_name, "error": f"{type(e).__name__}: {e}"})
                continue
            rows = encode_table_rows(got)
            text = "".join(dumps(r) + "\n" for r in rows).encode("utf-8")
            with open(OUT / f"{ds_name}.jsonl.gz", "wb") as raw, \
                    gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as f:
                f.write(text)
            index.append({"name": ds_name, "rows": len(rows)})
    (OUT / "_skipped.json").write_text(json.dumps({"pylance": lance.__version__, "skipped": skipped}, indent=1))
    (OUT / "_index.json").write_text(json.dumps({"pylance": lance.__version__, "datasets": index}, indent=1))


def datasets_with_options():
    """(name, table, field metadata, extra write_dataset kwargs) for every dataset."""
    for d in datasets():
        yield d if len(d) == 4 else (*d, {})


if __name__ == "__main__":
    main(sys.argv[1:])
