"""The vector benchmark (issue 19): nearest-neighbour search over a table of ROWS vectors of
DIM float32 (clustered, as embeddings are) with an IVF_PQ index pylance built, by this
connector (`LanceTable.nearest`, `LanceTable.knn_join`; Spark tasks) and by pylance
(`to_table(nearest=...)`, its own threads, all cores):
- exact top-10 (`use_index=False`): seconds per query;
- indexed top-10 (NPROBES partitions probed; without refine, and with REFINE): seconds per
  query, and recall@10 of both against the exact answer (numpy, independent of either);
- batch k-NN: the top-10 of BATCH_QUERIES queries — one `knn_join` job here, a loop of
  indexed queries in pylance (it has no batch search) — total seconds, recall on a sample.
lance-spark (the JNI connector, where its release with vector search runs: Spark 3.5) gives
the single-query lines too (see lance_spark_vectors)."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

from .data import Paths

DEFAULT_ROWS = 1_000_000
DIM = 128
PARTITIONS = 256
SUB_VECTORS = 16
NPROBES = 20
REFINE = 10
K = 10
EXACT_QUERIES = 3
INDEXED_QUERIES = 50
BATCH_QUERIES = 10_000
CLUSTERS = 1000


def source(paths: Paths, rows: int) -> Path:
    return paths.root / f"vectors_{rows}x{DIM}"


def _queries_file(paths: Paths, rows: int) -> Path:
    return paths.root / f"vectors_{rows}x{DIM}_queries.npy"


def _truth_file(paths: Paths, rows: int) -> Path:
    return paths.root / f"vectors_{rows}x{DIM}_truth.npy"


def _vectors(rng, centers, n):
    import numpy as np

    labels = rng.integers(0, len(centers), n)
    return (centers[labels] + 0.35 * rng.standard_normal((n, DIM))).astype(np.float32)


def prepare(paths: Paths, rows: int, log) -> Path:
    """The table (id, v: fixed_size_list<float>[DIM]) written by pylance (Lance 2.2, eight
    fragments) with an IVF_PQ index on v; BATCH_QUERIES queries from the same distribution;
    the exact top-10 ids of the first ones (the recall's ground truth)."""
    import lance
    import numpy as np
    import pyarrow as pa

    src, qf, tf = source(paths, rows), _queries_file(paths, rows), _truth_file(paths, rows)
    if (src / "_indices").exists() and qf.exists() and tf.exists():
        return src
    log(f"vector table: {rows:,} x {DIM} -> {src}")
    shutil.rmtree(src, ignore_errors=True)
    rng = np.random.default_rng(19)
    centers = rng.standard_normal((CLUSTERS, DIM)).astype(np.float32)
    step = 100_000

    def batches():
        for lo in range(0, rows, step):
            n = min(step, rows - lo)
            v = _vectors(rng, centers, n)
            yield pa.RecordBatch.from_arrays(
                [
                    pa.array(np.arange(lo, lo + n, dtype=np.int64)),
                    pa.FixedSizeListArray.from_arrays(pa.array(v.ravel()), DIM),
                ],
                ["id", "v"],
            )

    schema = pa.schema([("id", pa.int64()), ("v", pa.list_(pa.float32(), DIM))])
    lance.write_dataset(
        pa.RecordBatchReader.from_batches(schema, batches()),
        str(src),
        data_storage_version="2.2",
        max_rows_per_file=max(1, rows // 8),
    )
    t0 = time.perf_counter()
    lance.dataset(str(src)).create_index(
        "v", "IVF_PQ", num_partitions=PARTITIONS, num_sub_vectors=SUB_VECTORS
    )
    log(f"  pylance IVF_PQ index built in {time.perf_counter() - t0:.0f}s")
    queries = _vectors(np.random.default_rng(20), centers, BATCH_QUERIES)
    np.save(qf, queries)
    # Exact top-10 ids of the first INDEXED_QUERIES queries, by numpy over every row.
    t = lance.dataset(str(src)).to_table(columns=["id", "v"])
    ids = t["id"].to_numpy()
    data = t["v"].combine_chunks().flatten().to_numpy().reshape(-1, DIM)
    q = queries[:INDEXED_QUERIES].astype(np.float64)
    d2 = np.zeros((len(q), len(data)))
    for lo in range(0, len(data), step):
        x = data[lo : lo + step].astype(np.float64)
        d2[:, lo : lo + step] = (q * q).sum(1)[:, None] - 2 * q @ x.T + (x * x).sum(1)[None, :]
    np.save(tf, ids[np.argsort(d2, axis=1)[:, :K]])
    return src


def recall(found: list[list[int]], truth) -> float:
    return sum(len(set(f) & set(t.tolist())) for f, t in zip(found, truth)) / (K * len(found))


def _per_query(times: list[float], n: int) -> dict:
    import statistics

    return dict(times_s=[round(x, 4) for x in times], median_s=statistics.median(times), queries=n)


def _single_queries(search, queries, truth, engine: str, extra: dict) -> list[dict]:
    """The exact and the indexed line of one engine; `search(q, **kw)` gives the ids found."""
    out = []
    for query, n, kw in (
        ("exact_top10", EXACT_QUERIES, dict(use_index=False)),
        ("indexed_top10", INDEXED_QUERIES, dict(nprobes=NPROBES)),
        ("refined_top10", INDEXED_QUERIES, dict(nprobes=NPROBES, refine_factor=REFINE)),
    ):
        search(queries[0], **kw)  # warm-up
        times, found = [], []
        for i in range(n):
            t0 = time.perf_counter()
            found.append(search(queries[i], **kw))
            times.append(time.perf_counter() - t0)
        rec = None if query == "exact_top10" else recall(found, truth)
        out.append(
            dict(
                section="vectors",
                engine=engine,
                query=query,
                recall=rec,
                **extra,
                **_per_query(times, n),
            )
        )
    return out


def pylance_vectors(paths: Paths, rows: int, runs: int, log) -> list[dict]:
    import lance
    import numpy as np

    ds = lance.dataset(str(source(paths, rows)))
    queries, truth = np.load(_queries_file(paths, rows)), np.load(_truth_file(paths, rows))

    def search(q, **kw):
        return ds.to_table(
            columns=["id"],
            nearest=dict(column="v", q=q, k=K, **kw),
            disable_scoring_autoprojection=True,
        )["id"].to_pylist()

    out = _single_queries(search, queries, truth, "pylance", dict(threads=os.cpu_count()))
    t0 = time.perf_counter()
    found = [search(q, nprobes=NPROBES) for q in queries]
    total = time.perf_counter() - t0
    out.append(
        dict(
            section="vectors",
            engine="pylance",
            query="batch_knn",
            threads=os.cpu_count(),
            recall=recall(found[:INDEXED_QUERIES], truth),
            median_s=total,
            queries=len(queries),
        )
    )
    for r in out:
        log(f"  pylance {r['query']}: {r['median_s']:.4f}s recall {r.get('recall')}")
    return out


def spark_vectors(spark, paths: Paths, rows: int, master: str, log) -> list[dict]:
    import numpy as np

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
    from spark_lance import LanceTable

    t = LanceTable.for_path(spark, str(source(paths, rows)))
    queries, truth = np.load(_queries_file(paths, rows)), np.load(_truth_file(paths, rows))

    def search(q, **kw):
        return [r["id"] for r in t.nearest("v", q.tolist(), K, columns=["id"], **kw).collect()]

    out = _single_queries(search, queries, truth, "ours", dict(master=master))
    if hasattr(t, "knn_join"):
        qdf = spark.createDataFrame(
            [(i, q.tolist()) for i, q in enumerate(queries)], "qid long, qv array<float>"
        )
        qdf.cache().count()
        t0 = time.perf_counter()
        got = (
            t.knn_join(
                qdf.select("qid", "qv"), "v", K, query_column="qv", nprobes=NPROBES, columns=["id"]
            )
            .select("qid", "id", "_distance")
            .collect()
        )
        total = time.perf_counter() - t0
        by_q: dict = {}
        for r in sorted(got, key=lambda r: (r["qid"], r["_distance"])):
            by_q.setdefault(r["qid"], []).append(r["id"])
        out.append(
            dict(
                section="vectors",
                engine="ours",
                query="batch_knn",
                master=master,
                recall=recall([by_q.get(i, []) for i in range(INDEXED_QUERIES)], truth),
                median_s=total,
                queries=len(queries),
            )
        )
    for r in out:
        log(f"  ours {r['query']}: {r['median_s']:.4f}s recall {r.get('recall')}")
    return out


def lance_spark_vectors(spark, paths: Paths, rows: int, master: str, log) -> list[dict]:
    """lance-spark's single-query lines (it has no batch search): its `nearest` read option
    (a Lance query as JSON, made by its own QueryUtils) gives each fragment's k nearest rows
    without their distances, so — as a lance-spark user must — the k nearest of those are
    taken in Spark by the exact distance."""
    import numpy as np

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
    from pyspark.sql import functions as F

    from spark_lance import distance

    jvm = spark.sparkContext._jvm
    path = str(source(paths, rows))
    queries, truth = np.load(_queries_file(paths, rows)), np.load(_truth_file(paths, rows))

    def search(q, use_index=True, nprobes=None, refine_factor=None):
        key = spark.sparkContext._gateway.new_array(jvm.float, len(q))
        for i, x in enumerate(q):
            key[i] = float(x)
        b = (
            jvm.org.lance.ipc.Query.Builder()
            .setColumn("v")
            .setKey(key)
            .setK(K)
            .setUseIndex(use_index)
        )
        if nprobes:
            b = b.setNprobes(nprobes)
        if refine_factor:
            b = b.setRefineFactor(refine_factor)
        query = jvm.org.lance.spark.utils.QueryUtils.queryToString(b.build())
        found = spark.read.format("lance").option("nearest", query).load(path)
        top = (
            found.select("id", distance("v", q.tolist()).alias("d"))
            .orderBy(F.col("d").asc_nulls_last())
            .limit(K)
        )
        return [r["id"] for r in top.collect()]

    out = _single_queries(search, queries, truth, "lance-spark", dict(master=master))
    for r in out:
        log(f"  lance-spark {r['query']}: {r['median_s']:.4f}s recall {r.get('recall')}")
    return out


LINES = (
    ("exact_top10", f"exact top-{K} (use_index=False), s per query"),
    ("indexed_top10", f"IVF_PQ top-{K}, nprobes={NPROBES}, s per query"),
    ("refined_top10", f"IVF_PQ top-{K}, nprobes={NPROBES}, refine_factor={REFINE}, s per query"),
    ("batch_knn", f"batch k-NN of {BATCH_QUERIES:,} queries (IVF_PQ, nprobes={NPROBES}), s in all"),
)


def table(res: list[dict], rows) -> list[str]:
    got = {
        (r.get("engine"), r.get("query")): r
        for r in res
        if r.get("section") == "vectors" and not r.get("error")
    }
    if not got:
        return []
    master = next((r.get("master") for (e, _), r in got.items() if e == "ours"), "")
    coords = next((r.get("coordinates") for (e, _), r in got.items() if e == "lance-spark"), "")
    threads = next((r.get("threads") for (e, _), r in got.items() if e == "pylance"), "")
    lines = [
        "",
        f"## Vector search ({rows or DEFAULT_ROWS:,} x {DIM} float32, IVF_PQ of "
        f"{PARTITIONS} partitions x {SUB_VECTORS} sub-vectors; lower is better)",
        "",
        "pylance has no batch search: its batch line is a loop of indexed queries. "
        f"lance-spark (`{coords or 'not run'}`, its `nearest` read option, on pyspark "
        "3.5) returns each fragment's k nearest "
        "without distances: its top k are then taken in Spark by exact distance; it has "
        "no batch search. Recall@10 against numpy's exact answer.",
        "",
        f"| search | ours ({master}) | pylance ({threads} threads) | lance-spark | "
        "pylance ÷ ours | lance-spark ÷ ours | recall@10 ours | recall@10 pylance | "
        "recall@10 lance-spark |",
        "|---|---|---|---|---|---|---|---|---|",
    ]

    def cell(r, f="{:.4f}"):
        return f.format(r["median_s"]) if r else "—"

    def ratio(r, o):
        return f"{r['median_s'] / o['median_s']:.3g}" if r and o else ""

    def rec(r):
        return f"{r['recall']:.3f}" if r and r.get("recall") is not None else "—"

    for key, what in LINES:
        o, p, s = (got.get((e, key)) for e in ("ours", "pylance", "lance-spark"))
        if not o and not p:
            continue
        lines.append(
            f"| {what} | {cell(o)} | {cell(p)} | {cell(s)} | {ratio(p, o)} | "
            f"{ratio(s, o)} | {rec(o)} | {rec(p)} | {rec(s)} |"
        )
    failed = [r for r in res if r.get("section") == "vectors" and r.get("error")]
    lines += [f"- {r.get('engine')}: {r['error'][:300]}" for r in failed]
    return lines
