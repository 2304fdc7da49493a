"""A real Spark standalone cluster on this machine, started with pyspark's own scripts: one
master and N workers (``spark-class org.apache.spark.deploy.{master.Master,worker.Worker}``),
each a separate JVM in its own process group, bound to 127.0.0.1 only, with its own work and
log directories. ``StandaloneCluster`` is a context manager: it always stops every process it
started (SIGTERM to the process group, then SIGKILL after a bounded wait)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Optional

from support import TEST_JVM_OPTS

LOCALHOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((LOCALHOST, 0))
        return s.getsockname()[1]


def pyspark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def spark_class() -> Path:
    p = pyspark_home() / "bin" / "spark-class"
    if not p.exists():
        raise FileNotFoundError(f"{p} missing (pyspark installs it)")
    return p


def base_env(tmp: Path, host: str = LOCALHOST) -> dict:
    env = dict(os.environ)
    env.update(
        {
            "SPARK_HOME": str(pyspark_home()),
            "SPARK_LOCAL_IP": host,
            "SPARK_LOCAL_HOSTNAME": host,
            "SPARK_LOG_DIR": str(tmp / "logs"),
            "SPARK_LOCAL_DIRS": str(tmp / "local"),
            "SPARK_PID_DIR": str(tmp / "pids"),
            "TZ": "UTC",
            # small daemons: the machine is shared; the test JVMs' JIT settings
            "SPARK_DAEMON_MEMORY": "256m",
            "SPARK_DAEMON_JAVA_OPTS": TEST_JVM_OPTS,
        }
    )
    env.pop("SPARK_CONF_DIR", None)
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    return env


class StandaloneCluster:
    def __init__(
        self,
        tmp: Path,
        workers: int = 2,
        worker_cores: int = 1,
        worker_memory: str = "1g",
        start_timeout: float = 90.0,
        distinct_hosts: bool = False,
    ):
        """``distinct_hosts``: worker i binds to 127.0.0.(1 + i) instead of 127.0.0.1, so Spark
        sees one host per worker (it never runs a speculative copy of a task on a host where
        an attempt of that task already runs; Linux routes all of 127/8 to loopback)."""
        self.tmp = Path(tmp)
        self.n_workers = workers
        self.worker_cores = worker_cores
        self.worker_memory = worker_memory
        self.start_timeout = start_timeout
        self.distinct_hosts = distinct_hosts
        self.port = free_port()
        self.webui_port = free_port()
        self.procs: list[tuple[str, subprocess.Popen, Path]] = []

    @property
    def master_url(self) -> str:
        return f"spark://{LOCALHOST}:{self.port}"

    @property
    def json_url(self) -> str:
        return f"http://{LOCALHOST}:{self.webui_port}/json/"

    # -- processes -------------------------------------------------------------------------

    def worker_host(self, i: int) -> str:
        return f"127.0.0.{1 + i}" if self.distinct_hosts else LOCALHOST

    def _spawn(self, name: str, args: list[str], host: str = LOCALHOST) -> None:
        (self.tmp / "logs").mkdir(parents=True, exist_ok=True)
        (self.tmp / "local").mkdir(parents=True, exist_ok=True)
        log = self.tmp / "logs" / f"{name}.out"
        with open(log, "wb") as out:
            p = subprocess.Popen(
                [str(spark_class()), *args],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=base_env(self.tmp, host),
                cwd=str(self.tmp),
                start_new_session=True,  # own process group: stop() kills the JVM and its wrapper
            )
        self.procs.append((name, p, log))

    def start(self) -> "StandaloneCluster":
        self._spawn(
            "master",
            [
                "org.apache.spark.deploy.master.Master",
                "--host",
                LOCALHOST,
                "--port",
                str(self.port),
                "--webui-port",
                str(self.webui_port),
            ],
        )
        self._wait(lambda st: st is not None, "the master's web UI")
        for i in range(self.n_workers):
            work = self.tmp / f"worker{i}"
            work.mkdir(parents=True, exist_ok=True)
            self._spawn(
                f"worker{i}",
                [
                    "org.apache.spark.deploy.worker.Worker",
                    self.master_url,
                    "--cores",
                    str(self.worker_cores),
                    "--memory",
                    self.worker_memory,
                    "--host",
                    self.worker_host(i),
                    "--port",
                    str(free_port()),
                    "--webui-port",
                    str(free_port()),
                    "--work-dir",
                    str(work),
                ],
                host=self.worker_host(i),
            )
        self._wait(
            lambda st: st is not None and len(self.alive_workers(st)) == self.n_workers,
            f"{self.n_workers} workers to register",
        )
        return self

    def stop(self) -> None:
        # workers first, then the master; each: SIGTERM to the group, bounded wait, SIGKILL
        for name, p, _ in reversed(self.procs):
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + 20
        for name, p, _ in reversed(self.procs):
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait(timeout=10)

    def __enter__(self) -> "StandaloneCluster":
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- state -----------------------------------------------------------------------------

    def state(self) -> Optional[dict]:
        try:
            with urllib.request.urlopen(self.json_url, timeout=5) as r:
                return json.loads(r.read().decode())
        except Exception:  # noqa: BLE001  (not up yet)
            return None

    @staticmethod
    def alive_workers(st: dict) -> list[dict]:
        return [w for w in st.get("workers", []) if w.get("state") == "ALIVE"]

    def _wait(self, ok, what: str) -> None:
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            for name, p, log in self.procs:
                if p.poll() is not None:
                    raise RuntimeError(
                        f"{name} exited with {p.returncode} while waiting for {what}:\n{self.tail(log)}"
                    )
            if ok(self.state()):
                return
            time.sleep(1)
        logs = "\n".join(f"--- {n}\n{self.tail(log)}" for n, _, log in self.procs)
        raise TimeoutError(f"timed out after {self.start_timeout}s waiting for {what}\n{logs}")

    @staticmethod
    def tail(log: Path, n: int = 4000) -> str:
        try:
            return log.read_text(errors="replace")[-n:]
        except OSError:
            return ""

    def logs(self) -> str:
        return "\n".join(f"--- {n} ({log})\n{self.tail(log, 3000)}" for n, _, log in self.procs)


def run_driver(
    cluster: StandaloneCluster, script: Path, spec: dict, tmp: Path, timeout: float
) -> dict:
    """Runs a driver script (``script <spec.json> <out.pickle>``) in its own interpreter against
    ``cluster`` and returns what it pickled; fails the test with the driver's stderr and the
    daemons' logs when it times out or exits non-zero."""
    import pickle
    import sys

    import pytest

    import spark_lance

    spec_file, out = tmp / "spec.json", tmp / "out.pickle"
    spec_file.write_text(
        json.dumps(
            dict(
                spec,
                master=cluster.master_url,
                jar=str(spark_lance.jar_path()),
                tmp=str(tmp),
                jvm_opts=TEST_JVM_OPTS,
            )
        )
    )
    env = dict(os.environ, TZ="UTC", SPARK_LOCAL_IP=LOCALHOST, PYSPARK_PYTHON=sys.executable)
    env.pop("SPARK_HOME", None)
    env.pop(spark_lance.JAR_ENV_VAR, None)
    try:
        r = subprocess.run(
            [sys.executable, str(script), str(spec_file), str(out)],
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
            cwd=str(tmp),
        )
    except subprocess.TimeoutExpired as e:
        pytest.fail(
            f"the driver did not finish in {timeout}s\n{(e.stderr or b'')[-4000:]!r}\n{cluster.logs()}"
        )
    if r.returncode != 0 or not out.exists():
        pytest.fail(f"driver exited {r.returncode}\nstderr:\n{r.stderr[-6000:]}\n{cluster.logs()}")
    return pickle.loads(out.read_bytes())
