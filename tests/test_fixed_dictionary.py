"""Low-cardinality fixed-width columns that pylance dictionary-encodes, read through Spark.

pylance's 2.1 and 2.2 writers dictionary-encode fixed-width pages with few distinct values:
128-bit decimals (TPC-H's `l_discount`, `l_quantity`), and in 2.2 64-bit integers too. The
reader gathers the entries by id into the batch, with a loop per value width. These tests
check first (with pylance's `LanceFileReader.metadata()`) that the columns really are
dictionary pages, then compare Spark's rows with pylance's, at batch sizes that cross pages,
with and without a pushed filter on the decimal column (evaluated on the gathered values).
"""

from __future__ import annotations

import decimal

import lance
import pyarrow as pa
import pytest

from support import page_kinds

N = 30_000
FILE_ROWS = 12_000


def make_table() -> pa.Table:
    k = range(N)
    d = [None if j % 23 == 0 else decimal.Decimal((j * 37) % 11 - 5) / 100 for j in k]
    # Values beyond 64 bits: both words of each 16-byte entry matter.
    w = [decimal.Decimal(((j * 7) % 5 - 2) * 10**30 + j % 3) for j in k]
    return pa.table(
        {
            "i": pa.array(list(k), pa.int32()),
            "d": pa.array(d, pa.decimal128(15, 2)),
            "w": pa.array(w, pa.decimal128(38, 0)),
            "l": pa.array([(j * 7) % 5 - 2 for j in k], pa.int64()),
        }
    )


def dictionary_columns(path: str) -> set[str]:
    """The columns whose pages are dictionary pages in every data file (pylance's metadata)."""
    return {
        name
        for name, files in page_kinds(path).items()
        if files and all(kinds and "P" not in kinds for kinds in files)
    }


@pytest.fixture(scope="module", params=["2.1", "2.2"])
def dataset(request, tmp_path_factory):
    version = request.param
    path = str(tmp_path_factory.mktemp("fixeddict") / f"d_{version}.lance")
    lance.write_dataset(
        make_table(), path, data_storage_version=version, max_rows_per_file=FILE_ROWS
    )
    dicts = dictionary_columns(path)
    assert {"d", "w"} <= dicts, (version, dicts)
    if version == "2.2":
        assert "l" in dicts, dicts
    return path, lance.dataset(path)


def read(spark, path, batch_size):
    return spark.read.format("lance").option("batch_size", batch_size).load(path)


def rows(table_rows):
    return {r["i"]: (r["d"], r["w"], r["l"]) for r in table_rows}


@pytest.mark.parametrize("batch_size", [5, 1000, 8192])
def test_values_equal_pylance(spark, dataset, batch_size):
    path, ds = dataset
    got = read(spark, path, batch_size).collect()
    assert len(got) == N
    assert rows(r.asDict() for r in got) == rows(ds.to_table().to_pylist())


@pytest.mark.parametrize("batch_size", [5, 8192])
def test_filtered_values_equal_pylance(spark, dataset, batch_size):
    path, ds = dataset
    got = read(spark, path, batch_size).where("d >= -0.02 AND d < 0.03 AND l <> 0").collect()
    want = ds.to_table(
        filter="d >= CAST(-0.02 AS DECIMAL(15, 2)) AND d < CAST(0.03 AS DECIMAL(15, 2)) AND l <> 0"
    ).to_pylist()
    assert len(want) > 0 and len(want) < N // 2
    assert rows(r.asDict() for r in got) == rows(want)
