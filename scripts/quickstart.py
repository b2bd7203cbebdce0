"""The quickstart: the whole KIP-853 story on a local reference quorum, told with the drop-in tools.

Every step runs the installed console scripts exactly as an operator types them (each command is
printed before its output):

1. ``kafka-storage format --standalone`` for controller 1 and ``--no-initial-controllers`` for
   controllers 2 and 3, then ``kraft-server`` for each (three processes on 127.0.0.1);
2. ``kafka-metadata-quorum add-controller`` for 2 and 3, which waits until each has caught up as an
   observer;
3. ``describe --status`` and ``describe --replication``;
4. controller 3 loses its disk: it is killed, its directory wiped and formatted again (a new
   directory id), restarted, and replaced with ``remove-controller`` + ``add-controller``;
5. ``kafka-features upgrade --release-version`` from the formatted 4.3 levels to 4.4, then
   ``kafka-features describe``;
6. every process it started is stopped, and the directory is removed unless ``--dir`` was given.

    python scripts/quickstart.py [--dir DIRECTORY]
"""

from __future__ import annotations

import argparse
import contextlib
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from kafka_admin_kraft import Admin
from kafka_admin_kraft.storage import read_meta_properties
from kafka_admin_kraft_server.local import HOST, free_ports

BIN = Path(sys.executable).parent
FIRST_RELEASE = "4.3"
UPGRADE_RELEASE = "4.4"


class Quickstart:
    """Three controllers' files and processes under one directory."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.ports = dict(zip((1, 2, 3), free_ports(3), strict=True))
        self.processes: dict[int, subprocess.Popen[bytes]] = {}

    def config(self, node_id: int) -> Path:
        return self.root / f"controller-{node_id}.properties"

    def log_dir(self, node_id: int) -> Path:
        return self.root / f"controller-{node_id}" / "metadata"

    @property
    def bootstrap(self) -> str:
        return f"{HOST}:{self.ports[1]}"

    def write_configs(self) -> None:
        quorum = ",".join(f"{HOST}:{port}" for port in self.ports.values())
        for node_id, port in self.ports.items():
            self.config(node_id).write_text(
                "process.roles=controller\n"
                f"node.id={node_id}\n"
                f"listeners=CONTROLLER://{HOST}:{port}\n"
                f"advertised.listeners=CONTROLLER://{HOST}:{port}\n"
                "controller.listener.names=CONTROLLER\n"
                "listener.security.protocol.map=CONTROLLER:PLAINTEXT\n"
                f"controller.quorum.bootstrap.servers={quorum}\n"
                f"log.dirs={self.log_dir(node_id)}\n"
                # DescribeQuorum v3 (CommittedVoters), the reference server's unreleased version
                "unstable.api.versions.enable=true\n"
            )

    def tool(self, *args: str) -> str:
        """Run one console script as an operator would, echoing the command and its output."""
        print(f"\n$ {shlex.join(args)}", flush=True)
        result = subprocess.run([str(BIN / args[0]), *args[1:]], capture_output=True, text=True, timeout=120)
        sys.stdout.write(result.stdout)
        if result.returncode != 0:
            sys.stdout.write(result.stderr)
            raise SystemExit(f"{args[0]} exited with status {result.returncode}")
        return result.stdout

    def format(self, node_id: int, cluster_id: str, how: str) -> None:
        self.tool("kafka-storage", "format", "--config", str(self.config(node_id)),
                  "--cluster-id", cluster_id, "--release-version", FIRST_RELEASE, how)

    def quorum_tool(self, *args: str) -> str:
        return self.tool("kafka-metadata-quorum", "--bootstrap-controller", self.bootstrap, *args)

    def start(self, node_id: int) -> None:
        log = (self.root / f"controller-{node_id}.log").open("ab")
        with log:
            self.processes[node_id] = subprocess.Popen(
                [str(BIN / "kraft-server"), "--config", str(self.config(node_id))],
                stdout=log, stderr=log, stdin=subprocess.DEVNULL,
            )
        pid = self.processes[node_id].pid
        print(f"started controller {node_id} (pid {pid}) on {HOST}:{self.ports[node_id]}")

    def kill(self, node_id: int) -> None:
        process = self.processes.pop(node_id)
        process.send_signal(signal.SIGKILL)
        process.wait(10)
        print(f"killed controller {node_id} with SIGKILL")

    def stop_all(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for node_id, process in self.processes.items():
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)
            print(f"stopped controller {node_id}")
        self.processes.clear()

    def directory_id(self, node_id: int) -> str:
        return str(read_meta_properties(self.log_dir(node_id) / "meta.properties").directory_id)

    def wait_for_leader(self, timeout: float = 60.0) -> None:
        """Until controller 1 leads with a high watermark (``add-controller`` does its own waiting
        for each new controller to catch up)."""
        deadline = time.monotonic() + timeout
        with Admin(bootstrap_controllers=self.bootstrap, default_api_timeout_ms=int(timeout * 1000)) as admin:
            while admin.describe_metadata_quorum().high_watermark <= 0:
                if time.monotonic() > deadline:
                    raise SystemExit(f"controller 1 did not lead within {timeout:g} s")
                time.sleep(0.2)


def heading(text: str) -> None:
    print(f"\n== {text}", flush=True)


def run(root: Path) -> None:
    qs = Quickstart(root)
    qs.write_configs()
    try:
        heading("Format controller 1 as a standalone quorum, 2 and 3 to join it later")
        cluster_id = qs.tool("kafka-storage", "random-uuid").strip()
        qs.format(1, cluster_id, "--standalone")
        for node_id in (2, 3):
            qs.format(node_id, cluster_id, "--no-initial-controllers")

        heading("Start the three controllers; 2 and 3 fetch the log as observers")
        for node_id in (1, 2, 3):
            qs.start(node_id)
        qs.wait_for_leader()
        qs.quorum_tool("describe", "--status")

        heading("Add controllers 2 and 3 to the voter set")
        for node_id in (2, 3):
            qs.quorum_tool("--command-config", str(qs.config(node_id)), "add-controller")
        qs.quorum_tool("describe", "--status")
        qs.quorum_tool("describe", "--replication")

        heading("Controller 3 loses its disk: format it again and replace it in the voter set")
        old_directory = qs.directory_id(3)
        qs.kill(3)
        shutil.rmtree(qs.log_dir(3))
        qs.format(3, cluster_id, "--no-initial-controllers")
        qs.start(3)
        qs.quorum_tool("remove-controller", "--controller-id", "3",
                       "--controller-directory-id", old_directory)
        qs.quorum_tool("--command-config", str(qs.config(3)), "add-controller")
        qs.quorum_tool("describe", "--replication", "--human-readable")

        heading(f"Upgrade every feature from the {FIRST_RELEASE} levels to {UPGRADE_RELEASE}")
        features = ("kafka-features", "--bootstrap-controller", qs.bootstrap)
        qs.tool(*features, "describe")
        qs.tool(*features, "upgrade", "--release-version", UPGRADE_RELEASE)
        qs.tool(*features, "describe")
        qs.quorum_tool("describe", "--status", "--output", "json")
    finally:
        heading("Stop everything")
        qs.stop_all()


@contextlib.contextmanager
def workdir(given: str | None) -> Iterator[Path]:
    if given is not None:
        path = Path(given)
        path.mkdir(parents=True, exist_ok=True)
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="kraft-quickstart-") as tmp:
        yield Path(tmp)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dir", help="keep the controllers' files here (default: a temporary directory)")
    args = parser.parse_args()
    with workdir(args.dir) as root:
        run(root)


if __name__ == "__main__":
    main()
