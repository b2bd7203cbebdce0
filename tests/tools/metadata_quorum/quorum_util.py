"""What the tests of `kafka-metadata-quorum` run in-process share: the tool under click's runner, Kafka's
two shapes of error, a controller's properties file for add-controller (none of these reach a server:
the address given is never contacted, or nothing listens there), and the installed tool against a
reference cluster."""
# ruff: noqa: E501

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result
from integration.harness import Cluster

from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.storage import MetaProperties, write_meta_properties
from kafka_admin_kraft_cli.metadata_quorum import main
from tools.cluster_util import run_against

PROG = "kafka-metadata-quorum"
NOWHERE = "127.0.0.1:1"
DIRECTORY_ID = "wZoXPqWoSu6F6c8MkmdyAg"


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), prog_name=PROG)


def refused(result: Result, message: str) -> None:
    """Kafka's terse errors: the message alone on stderr, nothing on stdout, exit status 1."""
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", message + "\n")


def parse_error(result: Result, message: str, command: str = PROG) -> None:
    """argparse4j: the usage, then `<prog>: error: <message>`, exit status 1."""
    assert result.exit_code == 1
    assert result.stdout == ""
    usage, error = result.stderr.splitlines()
    assert usage.startswith(f"usage: {command} [-h]")
    assert error == f"{command}: error: {message}"


def controller_config(tmp_path: Path, lines: dict[str, str | None], *, directory_id: str | None = DIRECTORY_ID,
                      meta: bool = True) -> Path:
    """A controller's properties file; its metadata directory holds a meta.properties (unless told not
    to) with ``directory_id``."""
    metadata_dir = tmp_path / "metadata"
    metadata_dir.mkdir(exist_ok=True)
    if meta:
        write_meta_properties(metadata_dir, MetaProperties(
            version=1, cluster_id="c", node_id=5,
            directory_id=Uuid.from_string(directory_id) if directory_id else None))
    props: dict[str, str | None] = {
        "process.roles": "controller",
        "node.id": "5",
        "controller.listener.names": "CONTROLLER,CONTROLLER_SSL",
        "listeners": "CONTROLLER://:9093,CONTROLLER_SSL://:9094",
        "advertised.listeners": "CONTROLLER://example.com:9093,CONTROLLER_SSL://example.com:9094",
        "metadata.log.dir": str(metadata_dir),
        **lines,
    }
    path = tmp_path / "controller.properties"
    path.write_text("".join(f"{key}={value}\n" for key, value in props.items() if value is not None))
    return path


def add_dry_run(config: Path, *extra: str) -> Result:
    return run("--bootstrap-controller", NOWHERE, "--command-config", str(config), "add-controller", "--dry-run",
               *extra)


def quorum_tool(cluster: Cluster, *args: str) -> tuple[int, str, str]:
    """The installed tool against ``cluster``'s controllers: exit code, stdout, stderr."""
    return run_against(cluster, PROG, *args)
