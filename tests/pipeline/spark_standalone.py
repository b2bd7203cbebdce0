"""A Spark standalone cluster from the PySpark installation: one master and N one-core workers as
processes on 127.0.0.1, started with PySpark's own ``bin/spark-class``.

Everything binds to 127.0.0.1; the master's ports are free ones, the workers' are picked by Spark.
Each daemon runs in a process group of its own so that stopping the cluster also ends the executors
a worker started, whatever state a test left them in. Logs stay in the cluster's directory and end
every failure message."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

HOST = "127.0.0.1"
DAEMON_JAVA_OPTIONS = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1"
"""Master and workers start faster with the client compiler and need no parallel collector."""
LOG_TAIL = 3000


def clean_environment() -> dict[str, str]:
    """This process's environment without Spark settings or Python paths of its own: what the
    processes of a test see comes from the test alone."""
    return {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("SPARK_", "PYSPARK_")) and name not in ("PYTHONPATH", "PYTHONHOME")
    }


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        port: int = probe.getsockname()[1]
        return port


def spark_home() -> Path:
    """The PySpark package: it ships Spark's jars and ``bin/`` scripts, so it is a SPARK_HOME."""
    import pyspark

    return Path(pyspark.__file__).parent


def tail(path: Path, size: int = LOG_TAIL) -> str:
    if not path.is_file():
        return f"({path} was not written)"
    text = path.read_text(errors="replace")
    return text[-size:]


@dataclass
class Daemon:
    name: str
    process: subprocess.Popen[bytes]
    log: Path
    stream: IO[bytes]

    def stop(self, grace: float = 10.0) -> None:
        """SIGTERM to the whole group (a worker's executors too), SIGKILL after ``grace``."""
        if self.process.poll() is None:
            signal_group(self.process.pid, signal.SIGTERM)
            with suppress(subprocess.TimeoutExpired):
                self.process.wait(grace)
        signal_group(self.process.pid, signal.SIGKILL)
        self.process.wait()
        self.stream.close()


def signal_group(pid: int, sig: signal.Signals) -> None:
    """Signal the process group that ``pid`` leads, if any of it is left."""
    with suppress(ProcessLookupError):
        os.killpg(pid, sig)


@dataclass
class StandaloneCluster:
    """A running master and its workers; ``url`` is what ``--master`` takes."""

    root: Path
    port: int
    webui_port: int
    env: dict[str, str]
    daemons: list[Daemon] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"spark://{HOST}:{self.port}"

    def worker_dir(self, index: int) -> Path:
        return self.root / f"worker-{index}"

    def state(self) -> dict[str, Any]:
        """The master's JSON: workers, running and completed applications."""
        return _get_json(f"http://{HOST}:{self.webui_port}/json/")

    def worker_state(self, worker: Mapping[str, Any]) -> dict[str, Any]:
        """A worker's JSON (from its entry in :meth:`state`): its running and finished executors."""
        return _get_json(f"{worker['webuiaddress']}/json/")

    def logs(self) -> str:
        """The tail of every daemon log and executor ``stderr``, for a failure message."""
        parts = [f"--- {daemon.name} ({daemon.log}):\n{tail(daemon.log)}" for daemon in self.daemons]
        for stderr in sorted(self.root.glob("worker-*/app-*/*/stderr")):
            parts.append(f"--- executor {stderr.parent.relative_to(self.root)}:\n{tail(stderr)}")
        return "\n".join(parts)

    def _start(self, name: str, main_class: str, *args: str) -> Daemon:
        log = self.root / f"{name}.log"
        stream = log.open("wb")
        process = subprocess.Popen(
            ["bash", str(spark_home() / "bin" / "spark-class"), main_class, *args],
            stdin=subprocess.DEVNULL,
            stdout=stream,
            stderr=subprocess.STDOUT,
            env=self.env,
            cwd=self.root,
            start_new_session=True,
        )
        daemon = Daemon(name, process, log, stream)
        self.daemons.append(daemon)
        return daemon

    def _wait(self, what: str, ready: Any, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for daemon in self.daemons:
                if daemon.process.poll() is not None:
                    raise RuntimeError(f"{daemon.name} exited with {daemon.process.returncode} while "
                                       f"waiting for {what}\n{self.logs()}")
            try:
                if ready():
                    return
            except OSError:
                pass  # the web UI is not listening yet
            time.sleep(0.2)
        raise RuntimeError(f"no {what} after {timeout:.0f}s\n{self.logs()}")

    def wait_for_workers(self, timeout: float = 90.0) -> None:
        """Return once every worker started is registered with the master and alive."""
        workers = len(self.daemons) - 1
        self._wait(
            f"{workers} registered workers",
            lambda: sum(w["state"] == "ALIVE" for w in self.state()["workers"]) == workers,
            timeout,
        )

    def stop(self) -> None:
        for daemon in reversed(self.daemons):  # workers first: the master would only see them go
            daemon.stop()


def _get_json(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=5) as response:
        document: dict[str, Any] = json.load(response)
        return document


@contextmanager
def standalone_cluster(root: Path, workers: int = 2, timeout: float = 60.0) -> Iterator[StandaloneCluster]:
    """Start a master, then ``workers`` workers of one core and 1 GiB each, and yield while the
    workers register (:meth:`StandaloneCluster.wait_for_workers`); stop them all on the way out,
    failure or not."""
    conf_dir = root / "conf"
    conf_dir.mkdir(parents=True)  # empty: no spark-env.sh or log4j settings of this machine
    env = {
        **clean_environment(),
        "SPARK_HOME": str(spark_home()),
        "SPARK_CONF_DIR": str(conf_dir),
        "SPARK_LOCAL_IP": HOST,
        "SPARK_LOCAL_DIRS": str(root / "local"),
        "SPARK_DAEMON_MEMORY": "256m",
        "SPARK_DAEMON_JAVA_OPTS": DAEMON_JAVA_OPTIONS,
    }
    cluster = StandaloneCluster(root, free_port(), free_port(), env)
    try:
        cluster._start(
            "master", "org.apache.spark.deploy.master.Master",
            "--host", HOST, "--port", str(cluster.port), "--webui-port", str(cluster.webui_port),
        )
        # Workers that find no master retry only after several seconds: start them once it listens.
        cluster._wait("master", lambda: cluster.state()["status"] == "ALIVE", timeout)
        for index in range(1, workers + 1):
            work_dir = cluster.worker_dir(index)
            work_dir.mkdir()
            cluster._start(
                f"worker-{index}", "org.apache.spark.deploy.worker.Worker",
                "--host", HOST, "--port", "0", "--webui-port", "0",
                "--cores", "1", "--memory", "1g", "--work-dir", str(work_dir), cluster.url,
            )
        yield cluster
    finally:
        cluster.stop()
