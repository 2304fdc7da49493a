"""Deterministic bench data: a mixed-schema table and a 20-column wide table, generated with
numpy/pyarrow into Arrow IPC files (a row's values depend only on its index, not on --rows),
and the paths of every data set made from them."""

from __future__ import annotations

import time
from pathlib import Path

# The default scale. The whole suite fits in well under 30 min on the 2-core box
# because the scan data is written by pylance and pyarrow, not by Spark (see prep.py, README).
DEFAULT_ROWS = 10_000_000
# Timed writes use fewer rows: Spark's Parquet writer needs ~30-60 s per million rows of this
# table, and every writer runs four times (warm-up + 3) per format. See README.
DEFAULT_WRITE_ROWS = 500_000
BATCH_ROWS = 262_144  # generation batch; data of row i does not depend on --rows
VEC_DIM = 128
WIDE_COLS = 20
SEED = 20240611


def mixed_batches(rows: int):
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    names = pa.array([f"category_{i:02d}" for i in range(12)])
    base_ts = 1_704_067_200_000_000  # 2024-01-01T00:00:00Z in microseconds
    pool = np.random.default_rng([SEED, 2**31]).standard_normal((4096, VEC_DIM), dtype=np.float32)
    for start in range(0, rows, BATCH_ROWS):
        n = min(BATCH_ROWS, rows - start)
        rng = np.random.default_rng([SEED, start // BATCH_ROWS])
        ids = np.arange(start, start + n, dtype=np.int64)
        i32 = rng.integers(-(2**31), 2**31 - 1, n, dtype=np.int32)
        i64 = rng.integers(-(2**39), 2**39, n, dtype=np.int64)  # 10M rows sum without overflow
        f64 = rng.standard_normal(n)
        low_idx = rng.integers(0, len(names), n, dtype=np.int32)
        s_low = names.take(pa.array(low_idx))
        digits = rng.integers(1, 19, n)
        high_vals = rng.integers(0, 2**62, n, dtype=np.int64) % (10**digits)
        s_high = pc.cast(pa.array(high_vals), pa.string())
        ts = pa.array(
            base_ts + ids * 1_000_000 + rng.integers(0, 1_000_000, n), pa.timestamp("us", tz="UTC")
        )
        # Rows pick from a fixed pool of random vectors (drawing 128 fresh normals per row
        # would dominate generation time); element 0 is fresh per row, so rows differ.
        vecs = pool[rng.integers(0, len(pool), n)]
        vecs[:, 0] = rng.standard_normal(n, dtype=np.float32)
        vec = pa.FixedSizeListArray.from_arrays(pa.array(vecs.reshape(-1)), VEC_DIM)
        opt = pa.array(
            rng.integers(-1_000_000, 1_000_000, n, dtype=np.int64), mask=rng.random(n) < 0.25
        )
        yield pa.RecordBatch.from_arrays(
            [
                pa.array(ids),
                pa.array(i32),
                pa.array(i64),
                pa.array(f64),
                s_low,
                s_high,
                ts,
                vec,
                opt,
            ],
            names=["id", "i32", "i64", "f64", "s_low", "s_high", "ts", "vec", "opt_i64"],
        )


def wide_batches(rows: int):
    import numpy as np
    import pyarrow as pa

    for start in range(0, rows, BATCH_ROWS):
        n = min(BATCH_ROWS, rows - start)
        rng = np.random.default_rng([SEED + 1, start // BATCH_ROWS])
        cols = [pa.array(np.arange(start, start + n, dtype=np.int64))]
        cols += [pa.array(rng.standard_normal(n)) for _ in range(WIDE_COLS - 1)]
        yield pa.RecordBatch.from_arrays(
            cols, names=["id"] + [f"c{i:02d}" for i in range(1, WIDE_COLS)]
        )


class Paths:
    """Where every data set of a run lives: bench/data/rows_<N>/..."""

    def __init__(self, data: Path, rows: int):
        self.root = data / f"rows_{rows}"
        self.src = {t: self.root / f"source_{t}.arrow" for t in ("mixed", "wide")}
        self.lance = {
            (t, v): self.root / f"{t}_lance{v.replace('.', '')}"
            for t in ("mixed", "wide")
            for v in ("2.2", "2.0")
        }
        self.parquet = {t: self.root / f"{t}_parquet" for t in ("mixed", "wide")}
        self.scratch = self.root / "scratch"

    def write_source(self, write_rows: int) -> Path:
        """Lance 2.2 (pylance) of the first `write_rows` mixed rows: what the Spark writes read."""
        return self.root / f"write_source_{write_rows}_lance22"

    def write_head(self, write_rows: int) -> Path:
        """Arrow IPC of the first `write_rows` mixed rows: what the timed pylance writes read."""
        return self.root / f"write_source_{write_rows}.arrow"


def gen_sources(paths: Paths, rows: int, log, tables=("mixed", "wide")) -> dict:
    import pyarrow as pa

    out = {}
    paths.root.mkdir(parents=True, exist_ok=True)
    for t, gen in (("mixed", mixed_batches), ("wide", wide_batches)):
        p = paths.src[t]
        if p.exists() or t not in tables:
            continue
        log(f"generating {t} source ({rows:,} rows) -> {p}")
        t0 = time.perf_counter()
        it = gen(rows)
        first = next(it)
        tmp = p.with_suffix(".tmp")
        with pa.OSFile(str(tmp), "wb") as f, pa.ipc.new_file(f, first.schema) as w:
            w.write_batch(first)
            for b in it:
                w.write_batch(b)
        tmp.rename(p)
        out[t] = dict(seconds=time.perf_counter() - t0, bytes=p.stat().st_size)
    return out


def open_source(paths: Paths, t: str):
    import pyarrow as pa

    return pa.ipc.open_file(pa.memory_map(str(paths.src[t]), "r"))


def source_reader(paths: Paths, t: str):
    import pyarrow as pa

    f = open_source(paths, t)
    return pa.RecordBatchReader.from_batches(
        f.schema, (f.get_batch(i) for i in range(f.num_record_batches))
    )


def head_reader(paths: Paths, t: str, rows: int):
    """A reader of the first `rows` rows of a source table."""
    import pyarrow as pa

    f = open_source(paths, t)

    def batches():
        left = rows
        for i in range(f.num_record_batches):
            if left <= 0:
                return
            b = f.get_batch(i)
            b = b.slice(0, min(left, b.num_rows))
            left -= b.num_rows
            yield b

    return pa.RecordBatchReader.from_batches(f.schema, batches())


def du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def stats(times: list[float], rows: int) -> dict:
    import statistics

    med = statistics.median(times)
    return dict(
        times_s=[round(x, 4) for x in times],
        median_s=med,
        min_s=min(times),
        max_s=max(times),
        rows_per_s=rows / med if med > 0 else None,
    )
