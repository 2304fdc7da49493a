"""Scans on a real Spark standalone cluster: a master and two workers started with pyspark's own
``spark-class`` on 127.0.0.1, a driver in a separate interpreter attached to the master with the
connector jar shipped through ``spark.jars``, executors in their own JVMs. Every read is compared
with pylance, value by value and in order.

Reads: one fixture per file format (types_*), one with bitmap deletions, a multi-fragment one
with a tiny split_size (many partitions; tasks must run on both executors), count(), a tag read
and column pruning.

Marked ``cluster``; runs by default (deselect with ``-m "not cluster"``). Bounded everywhere:
cluster start 90 s, the driver 240 s, teardown 20 s + SIGKILL."""

from __future__ import annotations

import time
from pathlib import Path

import lance
import pytest
from cluster.standalone import StandaloneCluster, run_driver

import support

# A cluster start costs ~40 s; nothing in it differs per line.
pytestmark = [pytest.mark.cluster, pytest.mark.default_line_only]

DRIVER = Path(__file__).resolve().parent / "cluster" / "driver.py"
DRIVER_TIMEOUT = 240


def _fixture_path(name: str) -> str:
    return str(support.find_fixture(name).path)


def _reads() -> list[dict]:
    reads = []
    for fmt in ("legacy", "2.0", "2.1", "2.2"):
        reads.append(
            {"name": f"types_{fmt}", "path": _fixture_path(f"types_{fmt}"), "op": "collect"}
        )
    reads += [
        {
            "name": "deletions_bitmap_2.2",
            "path": _fixture_path("deletions_bitmap_2.2"),
            "op": "collect",
        },
        {
            "name": "deletions_arrow_legacy",
            "path": _fixture_path("deletions_arrow_legacy"),
            "op": "collect",
        },
        {
            "name": "multifrag_2.2 split_size=1",
            "path": _fixture_path("multifrag_2.2"),
            "options": {"split_size": "1"},
            "op": "collect",
        },
        {
            "name": "multifrag_2.0 split_size=1 count",
            "path": _fixture_path("multifrag_2.0"),
            "options": {"split_size": "1"},
            "op": "count",
        },
        {
            "name": "deletions_bitmap_2.1 count",
            "path": _fixture_path("deletions_bitmap_2.1"),
            "op": "count",
        },
        {
            "name": "multifrag_2.2 tag v1tag",
            "path": _fixture_path("multifrag_2.2"),
            "options": {"tag": "v1tag"},
            "op": "collect",
        },
        {
            "name": "multifrag_legacy version v2tag",
            "path": _fixture_path("multifrag_legacy"),
            "options": {"version": "v2tag"},
            "op": "collect",
        },
    ]
    # column pruning: the last and first columns (reversed) of types_2.2 and multifrag_2.1
    for name in ("types_2.2", "multifrag_2.1"):
        ds = lance.dataset(_fixture_path(name))
        cols = [ds.schema.names[-1], ds.schema.names[0]]
        reads.append(
            {
                "name": f"{name} select {cols}",
                "path": _fixture_path(name),
                "select": cols,
                "op": "collect",
                "options": {"split_size": "1"},
            }
        )
    return reads


def _expected(read: dict):
    """pylance's answer for one read."""
    opts = read.get("options") or {}
    version = opts.get("tag") or opts.get("version")
    ds = lance.dataset(read["path"], version=version) if version else lance.dataset(read["path"])
    if read["op"] == "count":
        return ds.count_rows()
    return support.rows_from_arrow(ds.to_table(columns=read.get("select")))


@pytest.fixture(scope="module")
def cluster_results(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cluster")
    reads = _reads()
    t0 = time.monotonic()
    with StandaloneCluster(tmp, workers=2, worker_cores=1, worker_memory="1g") as cluster:
        t_started = time.monotonic()
        results = run_driver(cluster, DRIVER, {"reads": reads}, tmp, DRIVER_TIMEOUT)
        state = cluster.state()
        t_driver = time.monotonic()
    print(
        f"\ncluster start {t_started - t0:.1f}s, driver {t_driver - t_started:.1f}s "
        f"(its Spark startup {results.get('startup_s')}s), stop {time.monotonic() - t_driver:.1f}s; "
        f"reads: {results.get('timings_s')}"
    )
    results["master_state"] = state
    return {"reads": reads, "results": results}


def test_two_executors_ran(cluster_results):
    res = cluster_results["results"]
    assert len(res["executors"]) == 2, f"executors: {res['executors']}"
    assert all(hp.startswith("127.0.0.1:") for _, hp in res["executors"]), res["executors"]
    workers = StandaloneCluster.alive_workers(res["master_state"])
    assert len(workers) == 2 and all(w["host"] == "127.0.0.1" for w in workers), workers


def _cases():
    return [pytest.param(r, id=r["name"]) for r in _reads()]


@pytest.mark.parametrize("read", _cases())
def test_cluster_read_equals_pylance(cluster_results, read):
    got = cluster_results["results"]["reads"][read["name"]]
    assert "error" not in got, f"{read['name']}: Spark raised {got['error']}"
    assert got["executors"], "no task ran"
    assert all(e != "driver" for e in got["executors"]), (
        f"tasks ran on the driver: {got['executors']}"
    )
    want = _expected(read)
    if read["op"] == "count":
        assert got["count"] == want, f"count(): Spark {got['count']}, pylance {want}"
        return
    diff = support.first_difference(want, got["rows"], got["columns"])
    assert diff is None, f"{read['name']}: {diff}"


def test_partitions_spread_over_both_executors(cluster_results):
    got = cluster_results["results"]["reads"]["multifrag_2.2 split_size=1"]
    frags = len(lance.dataset(_fixture_path("multifrag_2.2")).get_fragments())
    assert got["partitions"] >= frags, (
        f"{got['partitions']} partitions for {frags} fragments with split_size=1"
    )
    assert len(set(got["executors"])) == 2, (
        f"tasks ran on executors {got['executors']}; expected both"
    )
