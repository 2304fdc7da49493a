"""pylance side of the suites of the table operations that are not row changes: Restore,
UpdateConfig, Project (drop/rename columns, nullability) and Merge (new columns). Datasets of
(id int64 not null, n int64, v string, s struct<a int32, b string>); pylance's own operation
on a twin copy; and what pylance reads back. Called through server.py."""
import os
import uuid

import lance
import lance.file
import pyarrow as pa

SCHEMA = pa.schema([
    pa.field("id", pa.int64(), nullable=False),
    pa.field("n", pa.int64()),
    pa.field("v", pa.string(), metadata={"note": "kept"}),
    pa.field("s", pa.struct([pa.field("a", pa.int32()), pa.field("b", pa.string())])),
], metadata={"owner": "tests"})


def table(start, count, n=0):
    ids = list(range(start, start + count))
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "n": pa.array([n] * count, pa.int64()),
        "v": pa.array([f"r{i}" for i in ids]),
        "s": pa.array([{"a": i % 7, "b": f"b{i}"} for i in ids]),
    }, schema=SCHEMA)


def make(path, version, stable):
    """Versions 1-3: two fragments of 20 rows, then a delete of id 3."""
    lance.write_dataset(table(0, 20), path, data_storage_version=version,
                        enable_stable_row_ids=stable)
    lance.write_dataset(table(20, 20), path, mode="append")
    lance.dataset(path).delete("id = 3")
    return lance.dataset(path).version


def index(path):
    lance.dataset(path).create_scalar_index("n", "BTREE")
    lance.dataset(path).create_scalar_index("id", "BTREE")


def restore(path, version):
    lance.dataset(path, version=version).restore()


def update_config(path, upserts, deletes):
    ds = lance.dataset(path)
    if upserts:
        ds.update_config(upserts)
    if deletes:
        lance.dataset(path).delete_config_keys(deletes)


def update_metadata(path, table_md, schema_md, field, field_md):
    ds = lance.dataset(path)
    if table_md:
        ds.update_metadata(table_md)
    if schema_md:
        lance.dataset(path).update_schema_metadata(schema_md)
    if field_md:
        lance.dataset(path).update_field_metadata({field: field_md})


def drop_columns(path, names):
    lance.dataset(path).drop_columns(names)


def rename_column(path, column, new_name):
    lance.dataset(path).alter_columns({"path": column, "name": new_name})


def set_nullable(path, column):
    lance.dataset(path).alter_columns({"path": column, "nullable": True})


def add_null_columns(path, fields):
    """fields: [[name, arrow type name]]"""
    types = {"int32": pa.int32(), "int64": pa.int64(), "string": pa.string(),
             "double": pa.float64(), "bool": pa.bool_()}
    lance.dataset(path).add_columns([pa.field(n, types[t]) for n, t in fields])


def cast_column(path, column, type_name):
    """alter_columns with a data_type: the column rewritten with a new field id."""
    types = {"int32": pa.int32(), "int64": pa.int64(), "double": pa.float64()}
    lance.dataset(path).alter_columns({"path": column, "data_type": types[type_name]})


def describe(path):
    ds = lance.dataset(path)
    valid = True
    try:
        ds.validate()
    except Exception as e:  # noqa: BLE001 - reported, the suite fails on it
        valid = str(e)

    def field(f):
        return {"id": f.id(), "name": f.name(), "children": [field(c) for c in f.children()]}

    t = ds.to_table(with_row_id=True).sort_by("_rowid")
    frags = []
    for f in ds.get_fragments():
        m = f.metadata
        d = m.deletion_file
        frags.append({"id": m.id, "physical_rows": m.physical_rows,
                      "files": [sorted(x.fields) for x in m.files],
                      "deletion": None if d is None else [d.file_type, d.num_deleted_rows]})
    try:
        operation = type(ds.read_transaction(ds.version).operation).__name__
    except TypeError as e:  # pylance 14 cannot build a Rewrite with rewritten_indices
        if "RewrittenIndex" not in str(e):
            raise
        operation = "Rewrite"
    return {
        "version": ds.version,
        "schema": str(pa.schema([f.remove_metadata() for f in ds.schema])),
        "field_metadata": {f.name: {k.decode(): v.decode() for k, v in f.metadata.items()}
                           for f in ds.schema if f.metadata},
        "schema_metadata": {k.decode(): v.decode() for k, v in (ds.schema.metadata or {}).items()},
        "fields": [field(f) for f in ds.lance_schema.fields()],
        "rows": [{k: (str(v) if isinstance(v, dict) else v) for k, v in r.items()}
                 for r in t.to_pylist()],
        "fragments": frags,
        "config": dict(ds.config()),
        "metadata": dict(ds.metadata()) if callable(ds.metadata) else dict(ds.metadata),
        "indices": sorted([i["name"], sorted(i["fragment_ids"])] for i in ds.list_indices()),
        "operation": operation,
        "valid": valid,
    }


def keep_going(path):
    """pylance continues: append (the current columns), delete, update, add a column, index."""
    ds = lance.dataset(path)
    names = [f.name for f in ds.schema]
    t = table(500, 4, 9)
    t = pa.table({n: (t.column(n) if n in t.column_names
                      else pa.array([2] * 4, ds.schema.field(n).type) if n == "extra"
                      else pa.nulls(4, ds.schema.field(n).type)) for n in names},
                 schema=ds.schema)
    lance.write_dataset(t, path, mode="append")
    ds = lance.dataset(path)
    ds.delete("id % 7 = 0" if "id" in names else "true = false")
    if "n" in names:
        lance.dataset(path).update({"n": "n + 50"}, where="n < 5")
    if "extra" not in names:
        lance.dataset(path).add_columns({"extra": "1 + 1"})
    return describe(path)


def stale_restore(path, version, read_version):
    """pylance alone: a restore read at `read_version` committed after others."""
    lance.LanceDataset.commit(path, lance.LanceOperation.Restore(version),
                              read_version=read_version)


def stale_update_config(path, read_version, upserts, deletes):
    """pylance alone: a handle opened at `read_version` changes config after others did."""
    ds = lance.dataset(path, version=read_version)
    return _outcome(lambda: ds.update_config(upserts) if upserts
                    else ds.delete_config_keys(deletes))


def stale(path, read_version, fn, *args):
    """pylance alone: a handle opened at `read_version` does `fn` after others committed."""
    ds = lance.dataset(path, version=read_version)

    def run():
        if fn == "drop_columns":
            ds.drop_columns(*args)
        elif fn == "add_null_columns":
            ds.add_columns([pa.field(n, getattr(pa, t)()) for n, t in args[0]])
        else:
            raise ValueError(fn)
    return _outcome(run)


def appends(path, count, rows):
    """`count` more fragments of `rows` rows each, ids from 1000."""
    for i in range(count):
        lance.write_dataset(table(1000 + i * rows, rows, i), path, mode="append")


def delete(path, pred):
    lance.dataset(path).delete(pred)


def compact(path, options):
    m = lance.dataset(path).optimize.compact_files(**options)
    return {"fragments_removed": m.fragments_removed, "fragments_added": m.fragments_added,
            "files_removed": m.files_removed, "files_added": m.files_added}


def indexed(path, pred):
    """`pred` answered with the scalar index and by a flat scan: they must agree."""
    ds = lance.dataset(path)
    a = ds.to_table(columns=["id", "n"], filter=pred).sort_by("id").to_pylist()
    b = ds.to_table(columns=["id", "n"], filter=pred, use_scalar_index=False).sort_by("id")
    return {"indexed": a, "flat": b.to_pylist()}


def stale_compact(path, read_version, options):
    """pylance alone: a handle opened at `read_version` compacts after others committed."""
    ds = lance.dataset(path, version=read_version)
    return _outcome(lambda: ds.optimize.compact_files(**options))


def data_files(path):
    import os
    return sorted(os.listdir(os.path.join(path, "data")))


def _outcome(fn):
    """Runs `fn` (pylance committing from a stale handle): "ok", "retryable", "incompatible"
    or the unexpected error."""
    try:
        fn()
        return "ok"
    except Exception as e:  # noqa: BLE001 - the outcome is what we report
        msg = str(e)
        return ("incompatible" if "ncompatible" in msg
                else "retryable" if ("etryable" in msg or "Conflict" in type(e).__name__)
                else f"error: {type(e).__name__}: {msg[:200]}")


def low_cardinality(path, version):
    """A dataset whose string column pylance dictionary-encodes: 6 fragments of 300 rows."""
    import pyarrow as pa
    for i in range(6):
        ids = list(range(i * 300, (i + 1) * 300))
        t = pa.table({"id": pa.array(ids, pa.int64()),
                      "cat": pa.array([f"category_{x % 5}" for x in ids]),
                      "tag": pa.array([None if x % 7 == 0 else f"t{x % 3}" for x in ids])})
        lance.write_dataset(t, path, mode="append" if i else "create",
                            data_storage_version=version)
    lance.dataset(path).delete("id % 10 = 0")
    return lance.dataset(path).version


def btree_rows(path, column, version=None):
    """The rows a BTREE index of `column` holds, as pylance reads them at `version`: values
    sorted nulls first, ties by row address (pylance 14 indexes row addresses, also with
    stable row ids)."""
    ds = lance.dataset(path, version=version)
    t = ds.to_table(columns=[column], with_row_address=True)
    ids = t["_rowaddr"]
    rows = sorted(zip(t[column].to_pylist(), ids.to_pylist()),
                  key=lambda r: (r[0] is not None, r[0] if r[0] is not None else 0, r[1]))
    return {"values": [r[0] for r in rows], "ids": [r[1] for r in rows]}


def index_files(path, name):
    """An index's two files as pylance reads them: the data (ties of equal values in id
    order: pylance's own sort leaves them in any order) and the page lookup."""
    import glob
    import os
    from lance.file import LanceFileReader
    ds = lance.dataset(path)
    ix = [i for i in ds.list_indices() if i["name"] == name][0]
    out = {}
    for f in sorted(glob.glob(os.path.join(path, "_indices", ix["uuid"], "*"))):
        t = LanceFileReader(f).read_all().to_table()
        d = t.to_pydict()
        if "ids" in d:
            rows = sorted(zip(d["values"], d["ids"]),
                          key=lambda r: (r[0] is not None, r[0] if r[0] is not None else 0,
                                         r[1]))
            d = {"values": [r[0] for r in rows], "ids": [r[1] for r in rows]}
        # Binary columns (a BITMAP index's bitmaps) as hex, for JSON.
        d = {k: [v.hex() if isinstance(v, bytes) else v for v in vs] for k, vs in d.items()}
        meta = {k.decode(): v.decode() for k, v in (t.schema.metadata or {}).items()}
        out[os.path.basename(f)] = {"schema": str(t.schema.remove_metadata()), "meta": meta,
                                    "data": d}
    desc = [d for d in ds.describe_indices() if d.name == name][0]
    out["description"] = [desc.type_url, desc.num_rows_indexed, desc.fields]
    return out


def create_index(path, column, name):
    lance.dataset(path).create_scalar_index(column, "BTREE", name=name)


def drop_index(path, name):
    lance.dataset(path).drop_index(name)


def stale_create_index(path, read_version, column, name):
    """pylance alone: a handle opened at `read_version` indexes `column` after others
    committed."""
    ds = lance.dataset(path, version=read_version)
    return _outcome(lambda: ds.create_scalar_index(column, "BTREE", name=name))


def bitmap_index(path, column):
    lance.dataset(path).create_scalar_index(column, "BITMAP")


def z_values(path):
    """[row address, z] of every row whose z is not null (DataReplacementSuite)."""
    t = lance.dataset(path).to_table(columns=["z"], with_row_address=True, filter="z IS NOT NULL")
    return [[a, z] for a, z in zip(t["_rowaddr"].to_pylist(), t["z"].to_pylist())]


def append_current(path, count):
    """`count` rows appended with the dataset's current columns (copies of its first rows)."""
    ds = lance.dataset(path)
    lance.write_dataset(ds.to_table().slice(0, count), path, mode="append")


def stale_replace_z(path, read_version, base):
    """pylance alone: a handle opened at `read_version` gives every fragment a new file of
    column z (int32: offset + base + 1000 * fragment id, as DataReplacementSuite writes it)
    and commits the DataReplacement after others committed."""
    ds = lance.dataset(path, version=read_version)
    groups = []
    for f in ds.get_fragments():
        rows = f.metadata.physical_rows
        z = pa.table({"z": pa.array([i + base + 1000 * f.fragment_id for i in range(rows)],
                                    pa.int32())})
        name = f"{uuid.uuid4().hex}.lance"
        w = lance.file.LanceFileWriter(os.path.join(path, "data", name), z.schema,
                                       version=ds.data_storage_version)
        w.write_batch(z)
        w.close()
        major, minor = (int(x) for x in ds.data_storage_version.split("."))
        new = lance.fragment.DataFile(name, [ds.lance_schema.field("z").id()], [0], major, minor,
                                      os.path.getsize(os.path.join(path, "data", name)))
        groups.append(lance.LanceOperation.DataReplacementGroup(f.fragment_id, new))
    op = lance.LanceOperation.DataReplacement(groups)
    return _outcome(lambda: lance.LanceDataset.commit(path, op, read_version=read_version))


def update(path, pred):
    lance.dataset(path).update({"n": "n + 1"}, where=pred)


# ---- Index kinds under compaction (CompactionSuite): one index of a kind on ten fragments ----

KIND_COLUMNS = {"BITMAP": "k", "LABEL_LIST": "tags", "INVERTED": "s", "NGRAM": "s",
                "INVERTED_TAGS": "tags",
                "ZONEMAP": "id", "BLOOMFILTER": "id", "IVF_FLAT": "v", "IVF_PQ": "v",
                "IVF_SQ": "v", "IVF_RQ": "v", "IVF_HNSW_SQ": "v", "IVF_HNSW_PQ": "v",
                "IVF_HNSW_FLAT": "v"}
KIND_FILTERS = {"k": "k = 3", "tags": "array_has_any(tags, ['t1']) or tags is null",
                "s": "contains(s, 'w17')",
                "id": "id = 1234"}


def _kind_table(start, count, dim=8, u8=False, dtype="float32"):
    import numpy as np
    ids = list(range(start, start + count))
    rng = np.random.default_rng(start + 7)
    vecs = rng.integers(0, 256, count * dim).astype(np.uint8) if u8 else \
        rng.standard_normal(count * dim).astype(dtype)
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "k": pa.array([i % 20 for i in ids], pa.int64()),
        # Words of 1 to 3 occurrences (y*) and documents of 2 to 5 tokens, for full-text
        # scores and impacts that tell documents apart.
        "s": pa.array([f"w{i % 50} x{i % 7}" + f" y{i % 3}" * (i % 4) for i in ids]),
        "tags": pa.array([None if i % 11 == 0 else [f"t{i % 5}", f"u{i % 3}"] for i in ids]),
        "v": pa.FixedSizeListArray.from_arrays(pa.array(vecs), dim),
    })


def kinds_make(path, stable, kind):
    """Ten fragments of 300 rows, an index `x_idx` of `kind`, then every tenth row deleted.
    A vector index's kind may name its metric after a colon ("IVF_HNSW_PQ:dot"; else L2),
    then the vectors' dimension ("IVF_HNSW_FLAT:cosine:16"; else 8), then the bits of an
    IVF_RQ index per dimension ("IVF_RQ:l2:40:3"; else 1) or of a PQ code per sub-vector
    (else 8), then the PQ sub-vectors (else 2). The vectors of a "hamming" index are u8, others
    f32 unless the dimension says f16 or f64 ("IVF_HNSW_FLAT:l2:8f16")."""
    kind, _, metric = kind.partition(":")
    metric, _, dim = metric.partition(":")
    dim, _, bits = dim.partition(":")
    bits, _, subs = bits.partition(":")
    dtype = {"f16": "float16", "f64": "float64"}.get(dim[-3:], "float32")
    dim = dim[:-3] if dtype != "float32" else dim
    lance.write_dataset(_kind_table(0, 3000, int(dim or 8), metric == "hamming", dtype), path,
                        max_rows_per_file=300, enable_stable_row_ids=stable)
    ds = lance.dataset(path)
    column = KIND_COLUMNS[kind]
    if kind.startswith("IVF"):
        kw = {"num_partitions": 2}
        if metric:
            kw["metric"] = metric
        if "PQ" in kind:
            kw["num_sub_vectors"] = int(subs or 2)
        if bits:
            kw["num_bits"] = int(bits)
        ds.create_index(column, kind, name="x_idx", **kw)
    else:
        # INVERTED_TAGS: a full-text index of a list of strings.
        ds.create_scalar_index(column, kind.replace("_TAGS", ""), name="x_idx")
    lance.dataset(path).delete("id % 10 = 3")
    return lance.dataset(path).version


def kinds_index(path):
    ds = lance.dataset(path)
    ix = [i for i in ds.list_indices() if i["name"] == "x_idx"][0]
    return {"uuid": ix["uuid"], "type": ix["type"], "fragments": sorted(ix["fragment_ids"])}


def kinds_queries(path, kind):
    """What pylance answers through the index: ids of the 20 nearest rows to a fixed vector
    (all partitions probed), the rows a full-text query finds, or a filter's rows with the
    index and by a flat scan."""
    ds = lance.dataset(path)
    kind = kind.partition(":")[0]
    column = KIND_COLUMNS[kind]
    if kind.startswith("IVF"):
        q = _sized(ds, [0.5, -0.25, 1.0, 0.0, -1.0, 0.75, 0.1, -0.5])
        t = ds.to_table(columns=["id"], nearest={"column": "v", "q": q, "k": 20, "nprobes": 2},
                        disable_scoring_autoprojection=True)
        return {"nearest": t["id"].to_pylist()}
    if kind == "INVERTED":
        # Rows and BM25 scores (rounded) of single and several terms, and the ten best.
        out = {}
        for q in ["w17", "y1", "x3 y2", "w3", "y0 x1 w40"]:
            t = ds.to_table(columns=["id", "_score"], full_text_query=q)
            out[q] = sorted(zip(t["id"].to_pylist(),
                                [round(x, 4) for x in t["_score"].to_pylist()]))
        t = ds.to_table(columns=["id", "_score"], full_text_query="y2 x5", limit=10)
        out["top"] = sorted(round(x, 4) for x in t["_score"].to_pylist())
        return out
    if kind == "INVERTED_TAGS":
        out = {}
        for q in ["t1", "u2", "t3 u0"]:
            t = ds.to_table(columns=["id", "_score"], full_text_query=q)
            out[q] = sorted(zip(t["id"].to_pylist(),
                                [round(x, 4) for x in t["_score"].to_pylist()]))
        return out
    pred = KIND_FILTERS[column]
    a = ds.to_table(columns=["id"], filter=pred)["id"].to_pylist()
    b = ds.to_table(columns=["id"], filter=pred, use_scalar_index=False)["id"].to_pylist()
    return {"indexed": sorted(a), "flat": sorted(b)}


def fts_make(path, partitions=False, positions=False):
    """Ten fragments of 2,000 rows like kinds_make's, `s` drawn from 3,000 random words (some
    not ASCII, first letters enough for more than 32 transitions), a word in every row 1 to 5
    times and documents of 2 to 40 tokens; an INVERTED index `x_idx` (with `partitions`, in
    several partitions: built by a pylance whose workers may hold 1 MiB; with `positions`,
    keeping positions); then rows deleted, among them every row of 300 words."""
    import numpy as np
    rng = np.random.default_rng(11)
    letters = list("abcdefghijklmnopqrstuvwxyz0123456789") + ["\u00e9", "\u00fc", "\u00df"]
    vocab = sorted({"".join(rng.choice(letters, size=int(rng.integers(2, 10))))
                    for _ in range(3000)})
    n = 20000
    docs = []
    for i in range(n):
        words = ["common"] * (1 + i % 5)
        words += list(rng.choice(vocab, size=int(rng.integers(0, 35))))
        if i < 300:
            words.append(f"gone{i}")
        docs.append(" ".join(words))
    t = _kind_table(0, n)
    t = t.set_column(t.schema.get_field_index("s"), "s", pa.array(docs))
    lance.write_dataset(t, path, max_rows_per_file=2000)
    if partitions:
        import os
        import subprocess
        import sys
        code = ("import lance, sys; lance.dataset(sys.argv[1]).create_scalar_index("
                "'s', 'INVERTED', name='x_idx', with_position=sys.argv[2] == 'True')")
        subprocess.run([sys.executable, "-c", code, path, str(positions)], check=True,
                       env=dict(os.environ, LANCE_FTS_PARTITION_SIZE="1"))
    else:
        lance.dataset(path).create_scalar_index("s", "INVERTED", name="x_idx",
                                                with_position=positions)
    lance.dataset(path).delete("id < 300 or id % 7 = 2")
    return {"words": vocab[::150]}


def fts_drop_partition(path, part):
    """Deletes every row of partition `part` of index x_idx (its documents' rows)."""
    import os
    from lance.file import LanceFileReader
    ds = lance.dataset(path)
    ix = [i for i in ds.list_indices() if i["name"] == "x_idx"][0]
    f = os.path.join(path, "_indices", ix["uuid"], f"part_{part}_docs.lance")
    rows = LanceFileReader(f).read_all().to_table()["_rowid"].to_pylist()
    ds.delete("_rowaddr in (" + ",".join(map(str, rows)) + ")")
    return len(rows)


def fts_token_fsts(path):
    """The token set (fst bytes, hex) of each partition of index x_idx, as pylance wrote it."""
    import os
    from lance.file import LanceFileReader
    ds = lance.dataset(path)
    ix = [i for i in ds.list_indices() if i["name"] == "x_idx"][0]
    d = os.path.join(path, "_indices", ix["uuid"])
    return [LanceFileReader(os.path.join(d, f)).read_all().to_table()["_token_fst_bytes"][0]
            .as_py().hex() for f in sorted(os.listdir(d)) if f.endswith("_tokens.lance")]


def fts_queries(path, words, positions=False):
    """Rows and BM25 scores (rounded) pylance finds for each of `words`, for `common` and for
    all of them at once; with `positions`, for phrases too."""
    from lance.query import PhraseQuery
    ds = lance.dataset(path)
    out = {}
    queries = [(q, q) for q in list(words) + ["common", "gone7", " ".join(words)]]
    if positions:
        queries += [("phrase common common", PhraseQuery("common common", "s")),
                    ("phrase common w", PhraseQuery(f"common {words[3]}", "s")),
                    ("phrase common w ~3", PhraseQuery(f"common {words[5]}", "s", slop=3))]
    for key, q in queries:
        t = ds.to_table(columns=["id", "_score"], full_text_query=q)
        out[key] = sorted(zip(t["id"].to_pylist(),
                              [round(x, 4) for x in t["_score"].to_pylist()]))
    return out


def kinds_keep_going(path):
    """pylance goes on: validates, appends, deletes, optimizes the index, compacts; the rows
    it then reads."""
    ds = lance.dataset(path)
    ds.validate()
    lance.write_dataset(_kind_table(5000, 40, ds.schema.field("v").type.list_size,
                                    _u8(ds), _dtype(ds)), path, mode="append")
    lance.dataset(path).delete("id % 10 = 5")
    # pylance 14 cannot optimize an IVF_HNSW_FLAT index of the hamming metric (it panics:
    # "unsupported index type: HNSW, FLATBIN"), its own as ours.
    if not (_u8(ds) and any(i["type"].startswith("IVF_HNSW") for i in ds.list_indices())):
        lance.dataset(path).optimize.optimize_indices()
    lance.dataset(path).optimize.compact_files()
    ds = lance.dataset(path)
    ds.validate()
    return {"count": ds.count_rows(), "ids": sorted(ds.to_table(columns=["id"])["id"].to_pylist())}


def copy_dataset(src, dst):
    """A byte-for-byte copy of the dataset at `src` (same index files, same row ids)."""
    import shutil
    shutil.copytree(src, dst)


def kinds_aux(path):
    """The rows of index x_idx's auxiliary.idx (row ids and stored codes or vectors, grouped
    by partition) and pylance's statistics of the index (partition sizes)."""
    import json
    import os
    from lance.file import LanceFileReader
    ds = lance.dataset(path)
    ix = [i for i in ds.list_indices() if i["name"] == "x_idx"][0]
    t = LanceFileReader(os.path.join(path, "_indices", ix["uuid"], "auxiliary.idx")) \
        .read_all().to_table()
    stats = ds.stats.index_stats("x_idx")
    parts = [[p["size"] for p in i.get("partitions", [])] for i in stats.get("indices", [])]
    return {"columns": t.column_names, "rows": [list(map(str, r.values())) for r in t.to_pylist()],
            "partitions": parts, "indexed": stats.get("num_indexed_rows")}


def _u8(ds):
    """Whether column `v` holds u8 vectors (of a "hamming" index)."""
    return ds.schema.field("v").type.value_type == pa.uint8()


def _dtype(ds):
    """The numpy type of column `v`'s items."""
    return ds.schema.field("v").type.value_type.to_pandas_dtype()


def _sized(ds, q):
    """`q` repeated to the dimension of column `v` (as bytes for u8 vectors)."""
    dim = ds.schema.field("v").type.list_size
    q = (q * dim)[:dim]
    if _u8(ds):
        import numpy as np
        return np.array([int(abs(x) * 200) % 256 for x in q], dtype=np.uint8)
    return q


def hnsw_nearest(path, ef):
    """Ids and distances of the 30 rows nearest to a few vectors through index x_idx (every
    partition probed, beam width `ef`)."""
    ds = lance.dataset(path)
    out = []
    for q in ([0.5, -0.25, 1.0, 0.0, -1.0, 0.75, 0.1, -0.5], [0.0] * 8,
              [-1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0]):
        t = ds.to_table(columns=["id", "_distance"],
                        nearest={"column": "v", "q": _sized(ds, q), "k": 30, "nprobes": 2,
                                 "ef": ef},
                        disable_scoring_autoprojection=True)
        # A cosine distance to the zero vector is NaN (as text: JSON has no NaN).
        out.append([t["id"].to_pylist(), [round(float(d), 4) if d.as_py() == d.as_py()
                                          else "nan" for d in t["_distance"]]])
    return out


def hnsw_drop_partition(path):
    """Deletes every row of the last IVF partition of index x_idx."""
    import json
    import os
    from lance.file import LanceFileReader
    ds = lance.dataset(path)
    ix = [i for i in ds.list_indices() if i["name"] == "x_idx"][0]
    d = os.path.join(path, "_indices", ix["uuid"])
    t = LanceFileReader(os.path.join(d, "index.idx")).read_all().to_table()
    first = json.loads(json.loads(t.schema.metadata[b"lance:hnsw"])[0])["level_offsets"][1]
    aux = LanceFileReader(os.path.join(d, "auxiliary.idx")).read_all().to_table()
    ids = [(r >> 32) * 300 + (r & 0xffffffff) for r in aux["_rowid"].to_pylist()[first:]]
    lance.dataset(path).delete("id in (%s)" % ",".join(map(str, ids)))
    return len(ids)


def kinds_append(path):
    """Three small fragments the index does not cover."""
    for k in range(3):
        ds = lance.dataset(path)
        dim = ds.schema.field("v").type.list_size
        lance.write_dataset(_kind_table(4000 + 100 * k, 50, dim, _u8(ds), _dtype(ds)), path,
                            mode="append")
    return lance.dataset(path).version


def kinds_files(path):
    """Every file of index x_idx as pylance reads it: rows (as text), schema metadata and
    global buffers."""
    import json
    import os
    from lance.file import LanceFileReader
    ds = lance.dataset(path)
    ix = [i for i in ds.list_indices() if i["name"] == "x_idx"][0]
    d = os.path.join(path, "_indices", ix["uuid"])
    out = {}
    for f in sorted(os.listdir(d)):
        r = LanceFileReader(os.path.join(d, f))
        t = r.read_all().to_table()
        meta = {k.decode(): v.decode() for k, v in (t.schema.metadata or {}).items()}
        if "storage_metadata" in meta:
            meta["storage_metadata"] = _rounded_storage(meta["storage_metadata"])
        if "partitions" in meta:
            # An INVERTED index's partition ids: pylance's remap lists them in the order its
            # loads of them finish (compacting one dataset five times gave [0,1,2], [1,0,2]
            # and [2,0,1]), so their order says nothing.
            meta["partitions"] = sorted(json.loads(meta["partitions"]))
        raw = open(os.path.join(d, f), "rb").read()
        # Global buffers after the file descriptor: an index's models and tree maps.
        gbs = [raw[g.position:g.position + g.size].hex()
               for g in r.metadata().global_buffers[1:]]
        out[f] = {"columns": t.column_names, "meta": meta, "buffers": gbs,
                  "rows": [list(map(str, r.values())) for r in t.to_pylist()]}
    return out


def _rounded_storage(text):
    """An index's storage_metadata with its numbers to 12 significant digits: pylance's remap
    writes an IVF_SQ index's bounds again one ulp off (-3.6610817909240723 becomes
    -3.661081790924072), which changes no answer."""
    import json

    def r(v):
        if isinstance(v, float):
            return float(f"{v:.12g}")
        if isinstance(v, dict):
            return {k: r(x) for k, x in v.items()}
        if isinstance(v, list):
            return [r(x) for x in v]
        return v
    return [r(json.loads(e)) if isinstance(e, str) else r(e) for e in json.loads(text)]
