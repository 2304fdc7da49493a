"""No query the connector plans stops making progress (issue 67: TPC-H q7 hung once in three
full runs, a lock cycle between a shuffle exchange and a pruning subquery the connector adds).

The 22 TPC-H queries over pylance's Lance copies of a small TPC-H database run in a random
order with random pauses, under a watchdog (bench/tpch_stress.py): a query that takes longer
than the watchdog allows fails the test with the JVM's thread stacks, as does a failed query
or an answer that differs between runs. Two JVMs, one pass each: two cores with adaptive
execution on (the hang's setting, Spark's 200 shuffle partitions), four cores with it off (16
shuffle partitions: without adaptive execution, 200 tiny tasks per exchange only cost time),
both with the test JVM's JIT settings (support.TEST_JVM_OPTS). A bounded version of the long hunt
(`bench/tpch_stress.py --sf 1 --loops 20`), so that the class of hang is watched on every CI
run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from support import TEST_JVM_OPTS

# A hang hunt over TPC-H queries; nothing in it differs per line.
pytestmark = pytest.mark.default_line_only

STRESS = Path(__file__).resolve().parents[1] / "bench" / "tpch_stress.py"


@pytest.fixture(scope="module")
def tpch_data(tmp_path_factory):
    """Where the stress script makes (once) its TPC-H data and pylance's copies."""
    return tmp_path_factory.mktemp("tpch-progress")


@pytest.mark.parametrize(
    "master,aqe,partitions", [("local[2]", "on", None), ("local[4]", "off", 16)]
)
def test_tpch_queries_keep_making_progress(tpch_data, tmp_path, master, aqe, partitions):
    dump = tmp_path / "threads.txt"
    run = subprocess.run(
        [
            sys.executable,
            str(STRESS),
            "--data",
            str(tpch_data),
            "--sf",
            "0.01",
            "--loops",
            "1",
            "--master",
            master,
            "--aqe",
            aqe,
            "--timeout",
            "240",
            "--jitter",
            "0.05",
            "--dump",
            str(dump),
            f"--jvm-opts={TEST_JVM_OPTS}",
            *([f"--shuffle-partitions={partitions}"] if partitions else []),
        ],
        capture_output=True,
        text=True,
        timeout=2400,
    )
    threads = dump.read_text()[:30000] if dump.exists() else ""
    assert run.returncode == 0, (
        f"{master}, AQE {aqe}:\n{run.stdout[-4000:]}\n{run.stderr[-4000:]}\n{threads}"
    )
    assert "no hang, answers equal" in run.stdout, run.stdout[-4000:]
