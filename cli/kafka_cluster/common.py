"""What the subcommands of `kafka-cluster` share: their connection options and the Admin client they
open, as Kafka's ``ClusterTool`` gives every subcommand its own.

Kafka's tool takes the options after the subcommand (``kafka-cluster cluster-id --bootstrap-server
H:P``): exactly one of ``--bootstrap-server``/``-b`` and ``--bootstrap-controller``/``-C``, and the
client properties file as ``--command-config``/``-c`` (Kafka 4.2, KIP-1147). ``--config`` still works
with a deprecation notice on standard output (on stderr with ``--output json``, whose standard output
is the document); both at once are refused (PR #20431). Kafka 3.9 spelled the file ``--config``/``-c``;
``-c`` reads it in either case.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from .. import output
from .._click import Exclusive, KafkaCommand
from ..admin_options import AdminTarget, open_admin

if TYPE_CHECKING:
    from kafka_admin_kraft.admin import Admin

EXACT_ONLY = ["--output"]
"""Options Kafka's tool lacks: never matched by prefix, so they cannot make an abbreviation ambiguous."""
CONFIG_DEPRECATED = (
    "Option --config has been deprecated and will be removed in a future version. Use --command-config "
    "instead."
)

_CONNECTION_OPTIONS = (
    click.option(
        "--bootstrap-server", "-b", metavar="BOOTSTRAP_SERVER",
        help="Brokers to connect to, as host:port[,host:port]. Example: -b localhost:9092",
    ),
    click.option(
        "--bootstrap-controller", "-C", metavar="BOOTSTRAP_CONTROLLER",
        help="Controllers to connect to directly, as host:port[,host:port]. Example: -C localhost:9093",
    ),
    click.option(
        "--config", metavar="CONFIG",
        help="Deprecated since Kafka 4.2: the client properties file; use --command-config.",
    ),
    click.option(
        "--command-config", "-c", metavar="COMMAND_CONFIG",
        help="Kafka client properties (security.protocol, ssl.*, sasl.*, timeouts) for the admin client. "
        "Example: -c admin.properties",
    ),
)


@dataclass(frozen=True)
class Connection:
    """A subcommand's connection options, as given."""

    bootstrap_server: str | None
    bootstrap_controller: str | None
    config: str | None
    command_config: str | None

    @property
    def to_controllers(self) -> bool:
        return self.bootstrap_controller is not None

    def open(self, *, json_output: bool = False) -> Admin:
        """Kafka's order: refuse both files, say that --config is deprecated, load the file, set the
        bootstrap key, create the Admin client."""
        if self.config is not None and self.command_config is not None:
            output.fail("--config and --command-config cannot be specified together.")
        if self.config is not None:
            click.echo(CONFIG_DEPRECATED, err=json_output)
        properties_file = self.command_config or self.config
        target = AdminTarget(self.bootstrap_server, self.bootstrap_controller, properties_file)
        return open_admin(target.admin_properties(target.command_properties()))


def cluster_command(name: str) -> Callable[[Callable[..., None]], click.Command]:
    """A subcommand with the connection options (handed to it as one ``Connection``), ahead of its
    own, exactly one bootstrap option required."""

    def decorate(function: Callable[..., None]) -> click.Command:
        @functools.wraps(function)
        def run(bootstrap_server: str | None, bootstrap_controller: str | None, config: str | None,
                command_config: str | None, **arguments: Any) -> None:
            function(Connection(bootstrap_server, bootstrap_controller, config, command_config), **arguments)

        command: Callable[..., None] = run
        for option in reversed(_CONNECTION_OPTIONS):
            command = option(command)
        bootstrap = Exclusive(("bootstrap_server", "bootstrap_controller"), required=True)
        return click.command(name, cls=KafkaCommand, exclusive=[bootstrap], exact_only=EXACT_ONLY)(command)

    return decorate


def unregister_node(connection: Connection, kind: str, node_id: int, output_format: str) -> None:
    """``unregister`` (``kind`` broker) and ``unregister-controller``: Kafka's line on success; when the
    cluster cannot unregister (a server or metadata.version too old), Kafka's line saying so, still with
    exit status 0, and on stderr what to do."""
    from kafka_admin_kraft.errors import UnsupportedOperationError, UnsupportedVersionError

    from ..admin_options import reported_errors

    json_output = output_format == "json"
    if node_id < 0:
        output.fail(f"Invalid negative --id: {node_id}")
    reason: str | None = None
    with connection.open(json_output=json_output) as admin, reported_errors():
        unregister = admin.unregister_broker if kind == "broker" else admin.unregister_controller
        try:
            unregister(node_id)
        except UnsupportedVersionError as exc:
            reason = exc.hint or str(exc)
        except UnsupportedOperationError as exc:
            reason = str(exc)
    if json_output:
        document: dict[str, Any] = {f"{kind}_id": node_id, "unregistered": reason is None}
        if reason is not None:
            document["reason"] = reason
        output.write_json(document)
    elif reason is None:
        output.write(f"{kind.capitalize()} {node_id} is no longer registered.\n")
    else:
        output.write(f"The target cluster does not support the {kind} unregistration API.\n")
        click.echo(f"Note: {reason}", err=True)
