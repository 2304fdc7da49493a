"""A job killed during its commit leaves the dataset readable, with no extra rows.

A separate driver process appends to a dataset whose history already has two versions, and
its JVM holds the commit at one point (the Scala ``CommitPauses`` hook: before the ``.txn``
file, between ``.txn`` and manifest, right after the manifest); the test SIGKILLs the whole
process group there, the way a lost driver or ``kill -9`` ends a job. Afterwards pylance must
read the dataset exactly at the version a crash at that point implies (the previous one
before the manifest exists, the new one with every appended row after), ``validate()`` must
pass, and both pylance and Spark must still be able to append on top."""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import lance
import pyarrow as pa
import pytest

HERE = Path(__file__).resolve().parent
PAUSE_WAIT = 240  # seconds to reach the pause point: Spark startup and the write, on a loaded box


def _run_until_paused(path, point, first, rows, fmt):
    """Starts kill_writer.py, waits for the pause line on its stderr, SIGKILLs its process group."""
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "kill_writer.py"), path, point, str(first), str(rows), fmt],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    marker = f"sparklance: commit paused at {point}"
    seen = threading.Event()
    lines = []

    def pump(stream):
        for line in stream:
            lines.append(line)
            if marker in line:
                seen.set()

    threads = [
        threading.Thread(target=pump, args=(s,), daemon=True) for s in (proc.stdout, proc.stderr)
    ]
    for t in threads:
        t.start()
    try:
        deadline = time.monotonic() + PAUSE_WAIT
        while not seen.is_set() and proc.poll() is None and time.monotonic() < deadline:
            seen.wait(0.5)
        if not seen.is_set():
            pytest.fail(
                f"the writer never paused at {point} (exit {proc.poll()}):\n{''.join(lines)[-6000:]}"
            )
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the Python driver and its Spark JVM alike
        except ProcessLookupError:
            pass
        proc.wait(timeout=30)


def _ids(path, version=None):
    ds = lance.dataset(path, version=version) if version else lance.dataset(path)
    return sorted(ds.to_table(columns=["id"])["id"].to_pylist())


@pytest.mark.parametrize("point", ["before-transaction", "before-manifest", "after-manifest"])
def test_killed_during_commit(spark, tmp_path, point):
    fmt = "2.2"  # the commit does not depend on the file format; one is enough
    path = str(tmp_path / "ds")
    spark.range(0, 100).selectExpr("id", "cast(id as string) AS s").write.format("lance").option(
        "data_storage_version", fmt
    ).save(path)
    spark.range(100, 150).selectExpr("id", "cast(id as string) AS s").write.format("lance").mode(
        "append"
    ).save(path)
    assert lance.dataset(path).version == 2

    _run_until_paused(path, point, 1000, 300, fmt)

    ds = lance.dataset(path)
    before = list(range(150))
    if point == "after-manifest":
        # The manifest is the commit: once it exists the append happened, completely.
        assert ds.version == 3
        assert _ids(path) == before + list(range(1000, 1300))
    else:
        assert ds.version == 2, f"a crash at {point} must not create a version"
        assert _ids(path) == before
    ds.validate()
    committed = ds.version

    # Life goes on: pylance and then Spark append on top, and every row is there exactly once.
    lance.write_dataset(
        pa.table({"id": pa.array([5000], pa.int64()), "s": ["5000"]}), path, mode="append"
    )
    spark.range(6000, 6010).selectExpr("id", "cast(id as string) AS s").write.format("lance").mode(
        "append"
    ).save(path)
    ds = lance.dataset(path)
    assert ds.version == committed + 2
    want = _ids(path, committed) + [5000] + list(range(6000, 6010))
    assert _ids(path) == sorted(want)
    got = sorted(r.id for r in spark.read.format("lance").load(path).select("id").collect())
    assert got == sorted(want)
    ds.validate()
