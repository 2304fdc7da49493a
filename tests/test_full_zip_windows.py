"""Full-zip pages larger than the reader's window (FullZipPage reads a page's opened rows in
windows of about 4 MiB, cut at row starts, rather than in one read).

pylance writes each column below as one full-zip page of 5-8 MB, so every scan crosses window
boundaries; the four columns cover the four ways a full-zip page is walked: fixed width without
control words (``vec``), fixed width with a 1-byte control word (``nvec``, null vectors), variable
width with a repetition index (``big``) and a list with a repetition index (``lbig``). Spark must
read them as pylance reads them, whole, in small batches, and through filter push-down, whose
batches with no passing row skip these columns without reading them.
"""

from __future__ import annotations

import re

import lance
import numpy as np
import pyarrow as pa
import pytest
from lance.file import LanceFileReader
from property import check

from support import remainder_reaches_sources, to_arrow

ROWS = 12_000
WINDOW_BYTES = 4 << 20  # FullZipPage.WindowBytes
COLUMNS = ["vec", "nvec", "big", "lbig"]


def _table() -> pa.Table:
    rng = np.random.default_rng(7)
    vec = pa.FixedSizeListArray.from_arrays(
        pa.array(rng.standard_normal(ROWS * 128).astype(np.float32)), 128
    )
    nvec = pa.FixedSizeListArray.from_arrays(
        pa.array(rng.standard_normal(ROWS * 128).astype(np.float32)),
        128,
        mask=pa.array(rng.random(ROWS) < 0.1),
    )
    big = pa.array(
        [None if i % 11 == 5 else f"x{i:05d}" * int(rng.integers(100, 200)) for i in range(ROWS)]
    )
    lbig = pa.array(
        [
            None if i % 5 == 4 else [f"y{i:04d}" * int(rng.integers(60, 120)) for _ in range(i % 5)]
            for i in range(ROWS)
        ],
        pa.list_(pa.string()),
    )
    return pa.table(
        {
            "id": pa.array(range(ROWS), pa.int64()),
            "vec": vec,
            "nvec": nvec,
            "big": big,
            "lbig": lbig,
        }
    )


@pytest.fixture(scope="module", params=["2.1", "2.2"])
def dataset(request, tmp_path_factory):
    path = tmp_path_factory.mktemp("fullzip") / f"t{request.param}.lance"
    ds = lance.write_dataset(_table(), str(path), data_storage_version=request.param)
    # The test is only worth something if the pages really are full-zip and span several windows.
    (frag,) = ds.get_fragments()
    (data_file,) = frag.data_files()
    meta = LanceFileReader(str(path / "data" / data_file.path)).metadata()
    names = [f.name for f in ds.schema]
    for name in COLUMNS:
        (page,) = meta.columns[names.index(name)].pages
        assert re.search(r"FullZipLayout", str(page.encoding)), f"{name}: not a full-zip page"
        assert page.buffers[0].size > WINDOW_BYTES, (
            f"{name}: page of {page.buffers[0].size} bytes fits one window"
        )
    return ds


def _differences(expected: pa.Table, df) -> list[str]:
    """Column by column, where Spark's rows (through Arrow: these columns hold ~25 MB, which
    Row-by-Row comparison takes minutes over) differ from pylance's. The data has no NaN, so
    Arrow's equality is value equality."""
    got = to_arrow(df)
    if got.num_rows != expected.num_rows:
        return [f"row count differs: pylance {expected.num_rows}, Spark {got.num_rows}"]
    exp = pa.table(
        [expected.column(n).cast(got.schema.field(n).type) for n in got.column_names],
        schema=got.schema,
    )
    problems = []
    for name in got.column_names:
        e, a = exp.column(name).combine_chunks(), got.column(name).combine_chunks()
        if not e.equals(a):
            bad = [i for i in range(len(e)) if e[i] != a[i]]
            problems.append(
                f"column {name!r}: {len(bad)} rows differ, first row {bad[0] if bad else '?'}: "
                f"pylance {e[bad[0]] if bad else ''!s:.300} Spark {a[bad[0]] if bad else ''!s:.300}"
            )
    return problems


def _read(spark, ds, **options):
    reader = spark.read.format("lance")
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load(ds.uri)


@pytest.mark.parametrize(
    "options", [{}, {"batch_size": 37}, {"split_size": 1, "batch_size": 1000}], ids=str
)
def test_whole_columns_equal_pylance(spark, dataset, options):
    expected = check.pylance_table(dataset)
    df = _read(spark, dataset, **options)
    problems = _differences(expected, df)
    for col in COLUMNS:
        problems += [
            f"{col} alone: {p}"
            for p in _differences(expected, _read(spark, dataset, **options).select(col))
        ]
    assert not problems, "\n".join(problems)


@pytest.mark.line_smoke
@pytest.mark.parametrize(
    "predicate", ["id % 997 = 3", "id >= 5000 AND id < 5003", "id = 11999", "id < 2"]
)
def test_filtered_rows_skip_windows(spark, dataset, predicate):
    # batch_size 100: nearly every batch has no passing row, so the full-zip columns are skipped
    # there (whole windows never read) and read again where a row passes.
    df = _read(spark, dataset, batch_size=100).where(predicate)
    plan = df._jdf.queryExecution().executedPlan().toString()
    if "%" in predicate and not remainder_reaches_sources(spark):
        assert "Filter " in plan, plan  # Spark 3.5 keeps `%` (see support.py)
    else:
        assert "PushedFilters" in plan and "Filter " not in plan, plan
    expected = dataset.to_table(filter=predicate)
    assert 0 < len(expected) < ROWS
    problems = _differences(expected, df)
    assert not problems, f"{predicate}: " + "\n".join(problems)
