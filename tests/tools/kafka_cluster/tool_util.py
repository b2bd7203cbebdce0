"""What the tests of `kafka-cluster` share: the tool in-process under click's runner, and the installed
tool against a reference cluster (none of the in-process runs reach a server: the address given is never
contacted, or nothing listens there)."""

from __future__ import annotations

from click.testing import CliRunner, Result

from kafka_admin_kraft_cli.kafka_cluster import main
from tools.cluster_util import run as run_installed

PROG = "kafka-cluster"
NOWHERE = "127.0.0.1:1"
SUBCOMMANDS = ("cluster-id", "unregister", "list-endpoints", "api-versions", "unregister-controller")
"""Kafka 4.4's, in its order."""
FAST_FAILURE = "request.timeout.ms=300\ndefault.api.timeout.ms=800\n"
"""Client settings under which an unreachable cluster fails in under a second."""


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), prog_name=PROG)


def tool(*args: str) -> tuple[int, str, str]:
    """The installed `kafka-cluster`: exit code, stdout, stderr."""
    result = run_installed(PROG, *args)
    return result.returncode, result.stdout, result.stderr
