"""Writes on a real Spark standalone cluster (master + two workers from pyspark's spark-class,
executors in their own JVMs, ``spark.speculation`` on), checked by pylance.

The driver (tests/cluster/write_driver.py, its own interpreter) reads a Parquet file the test
made with pyarrow and writes it as Lance in several tasks: creates in 2.0, 2.1 and 2.2, an
append, an overwrite, and a write whose partition 0 is slow on its first attempt so that
speculation runs a second attempt of it. pylance must then read exactly the source rows
(each once), ``validate()`` must pass, and no data file may lie outside the manifest (a
losing attempt's file is removed). Marked ``cluster`` like test_cluster.py."""

from __future__ import annotations

import datetime
import os
from pathlib import Path

import lance
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cluster.standalone import StandaloneCluster, run_driver

# A cluster start costs ~40 s; nothing in it differs per line.
pytestmark = [pytest.mark.cluster, pytest.mark.default_line_only]

DRIVER = Path(__file__).resolve().parent / "cluster" / "write_driver.py"
DRIVER_TIMEOUT = 300
ROWS = 6000


def _source(first: int) -> pa.Table:
    ids = list(range(first, first + ROWS))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "name": pa.array([None if i % 7 == 0 else f"name-{i % 50}" for i in ids]),
            "score": pa.array([i / 8 for i in ids], pa.float64()),
            "tags": pa.array(
                [None if i % 11 == 0 else [f"t{j}" for j in range(i % 4)] for i in ids],
                pa.list_(pa.string()),
            ),
            "point": pa.array(
                [{"x": i, "y": None if i % 3 == 0 else -i} for i in ids],
                pa.struct([("x", pa.int32()), ("y", pa.int32())]),
            ),
            "at": pa.array(
                [
                    datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)
                    + datetime.timedelta(seconds=i)
                    for i in ids
                ],
                pa.timestamp("us", tz="UTC"),
            ),
        }
    )


def _writes(tmp: Path) -> list[dict]:
    src_a, src_b = tmp / "a.parquet", tmp / "b.parquet"
    pq.write_table(_source(0), src_a)
    pq.write_table(_source(ROWS), src_b)
    w = []
    for fmt in ("2.0", "2.1", "2.2"):
        w.append(
            {
                "name": f"create {fmt}",
                "source": str(src_a),
                "dest": str(tmp / f"create_{fmt}"),
                "mode": "errorifexists",
                "options": {"data_storage_version": fmt, "max_rows_per_file": "1500"},
                "partitions": 4,
                "expect": [src_a],
            }
        )
    d = str(tmp / "appended")
    w.append(
        {
            "name": "append: create",
            "source": str(src_a),
            "dest": d,
            "mode": "errorifexists",
            "partitions": 3,
            "expect": [src_a],
        }
    )
    w.append(
        {
            "name": "append: append",
            "source": str(src_b),
            "dest": d,
            "mode": "append",
            "partitions": 5,
            "expect": [src_a, src_b],
        }
    )
    d = str(tmp / "overwritten")
    w.append(
        {
            "name": "overwrite: create",
            "source": str(src_a),
            "dest": d,
            "mode": "errorifexists",
            "partitions": 2,
            "expect": [src_a],
        }
    )
    w.append(
        {
            "name": "overwrite: overwrite",
            "source": str(src_b),
            "dest": d,
            "mode": "overwrite",
            "partitions": 4,
            "expect": [src_b],
        }
    )
    w.append(
        {
            "name": "speculative",
            "source": str(src_a),
            "dest": str(tmp / "speculative"),
            "mode": "errorifexists",
            "partitions": 4,
            "slow_first_attempt": True,
            "expect": [src_a],
        }
    )
    return w


@pytest.fixture(scope="module")
def cluster_writes(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cluster_write")
    writes = _writes(tmp)
    spec = {
        "speculation": True,
        "writes": [{k: v for k, v in w.items() if k != "expect"} for w in writes],
    }
    with StandaloneCluster(
        tmp, workers=2, worker_cores=1, worker_memory="1g", distinct_hosts=True
    ) as cluster:
        results = run_driver(cluster, DRIVER, spec, tmp, DRIVER_TIMEOUT)
    return {"writes": writes, "results": results}


def _by_name(cluster_writes, name):
    w = next(w for w in cluster_writes["writes"] if w["name"] == name)
    res = cluster_writes["results"]["writes"][name]
    assert "error" not in res, f"{name}: Spark raised {res['error']}"
    return w, res


def _check_dataset(w):
    ds = lance.dataset(w["dest"])
    want = pa.concat_tables([pq.read_table(p) for p in w["expect"]]).sort_by("id")
    got = ds.to_table().sort_by("id")
    assert got.num_rows == want.num_rows, f"{got.num_rows} rows, want {want.num_rows}"
    assert got.column("id").to_pylist() == want.column("id").to_pylist()
    for name in want.column_names:
        assert got.column(name).to_pylist() == want.column(name).to_pylist(), (
            f"column {name} differs"
        )
    ds.validate()
    # every version's files: an overwrite keeps the older version's files for time travel
    referenced = {
        f.path
        for v in ds.versions()
        for frag in lance.dataset(w["dest"], version=v["version"]).get_fragments()
        for f in frag.data_files()
    }
    on_disk = set(os.listdir(os.path.join(w["dest"], "data")))
    assert on_disk == referenced, f"data files outside the manifest: {sorted(on_disk - referenced)}"
    return ds


@pytest.mark.parametrize(
    "name",
    [
        "create 2.0",
        "create 2.1",
        "create 2.2",
        "append: append",
        "overwrite: overwrite",
        "speculative",
    ],
)
def test_cluster_write_read_by_pylance(cluster_writes, name):
    w, res = _by_name(cluster_writes, name)
    ds = _check_dataset(w)
    executors = {t[4] for t in res["tasks"] if t[3] == "SUCCESS"}
    assert "driver" not in executors and executors, f"tasks ran on {executors}"
    if name.startswith("create "):
        assert ds.data_storage_version == name.split()[1]
        assert len(ds.get_fragments()) >= 4, (
            "4 tasks x max_rows_per_file=1500 must give >= 4 fragments"
        )


def test_writes_used_both_executors(cluster_writes):
    execs = {
        t[4]
        for r in cluster_writes["results"]["writes"].values()
        for t in r["tasks"]
        if t[3] == "SUCCESS"
    }
    assert len(execs) == 2, f"successful tasks ran on {execs}"


def test_history_of_append_and_overwrite(cluster_writes):
    assert [
        v["version"]
        for v in lance.dataset(_by_name(cluster_writes, "append: append")[0]["dest"]).versions()
    ] == [1, 2]
    assert [
        v["version"]
        for v in lance.dataset(
            _by_name(cluster_writes, "overwrite: overwrite")[0]["dest"]
        ).versions()
    ] == [1, 2]


def test_speculative_attempt_ran_and_rows_are_not_duplicated(cluster_writes):
    w, res = _by_name(cluster_writes, "speculative")
    attempts = [t for t in res["tasks"] if t[0] == 0]
    assert any(t[2] for t in attempts), (
        f"speculation never started a second attempt of partition 0: {res['tasks']}"
    )
    assert len(attempts) >= 2, attempts
    assert not any(t[3] == "RUNNING" for t in res["tasks"]), (
        f"attempts still running after 90 s: {res['tasks']}"
    )
    _check_dataset(w)  # every row exactly once, no file of the losing attempt left behind
