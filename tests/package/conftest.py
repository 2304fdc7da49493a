"""Fixtures of the package tests."""

from __future__ import annotations

import lance
import pyarrow as pa
import pytest
from sample import SCHEMA, sample_rows


@pytest.fixture(scope="session")
def pylance_dataset(tmp_path_factory) -> str:
    """A Lance 2.2 dataset written by pylance (the reference): two fragments."""
    path = str(tmp_path_factory.mktemp("pylance") / "sample_2.2.lance")
    table = pa.Table.from_pylist(sample_rows(300, seed=5), schema=SCHEMA)
    lance.write_dataset(table, path, data_storage_version="2.2", max_rows_per_file=200)
    ds = lance.dataset(path)
    assert ds.data_storage_version == "2.2" and len(ds.get_fragments()) == 2
    return path
