"""`kafka-metadata-quorum`: describe the KRaft controller quorum, add and remove controllers.

A drop-in for Kafka's tool of the same name: same subcommands and options, same text and exit codes.
Additions: `--output json`, a progress line on a terminal while `add-controller` waits for the new
controller to catch up, and `CommittedVoters:` in `describe --status` from DescribeQuorum v3 servers.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from .. import output
from .._click import CONTEXT_SETTINGS, KafkaGroup
from ..admin_options import JAVA_INT, AdminTarget, bootstrap_options, connect, reported_errors, target

if TYPE_CHECKING:
    from kafka_admin_kraft.admin import Admin
    from kafka_admin_kraft.config.server import Listener
    from kafka_admin_kraft.models import Endpoint, QuorumInfo

EXACT_ONLY = ["--output"]
"""Options Kafka's tool lacks: never matched by prefix, so they cannot make an abbreviation ambiguous."""
INVALID_CONFIG = "Is this a valid controller configuration file?"


@click.group("kafka-metadata-quorum", cls=KafkaGroup, context_settings=CONTEXT_SETTINGS)
@bootstrap_options
@click.pass_context
def main(
    ctx: click.Context,
    bootstrap_server: str | None,
    bootstrap_controller: str | None,
    command_config: str | None,
) -> None:
    """Describe and change the KRaft controller quorum (the `__cluster_metadata` Raft group).

    \b
    Examples:
      kafka-metadata-quorum --bootstrap-controller localhost:9093 describe --status
      kafka-metadata-quorum --bootstrap-server localhost:9092 describe --replication --human-readable
      kafka-metadata-quorum --bootstrap-controller localhost:9093 \\
          --command-config controller-4.properties add-controller
      kafka-metadata-quorum --bootstrap-controller localhost:9093 remove-controller -i 4 -d <directory id>
    """
    ctx.obj = AdminTarget(bootstrap_server, bootstrap_controller, command_config)


@main.command(exact_only=EXACT_ONLY)
@click.option(
    "--status", is_flag=True, help="Leader, epoch, high watermark, lag, and the voters and observers."
)
@click.option(
    "--replication",
    is_flag=True,
    help="One row per replica of the metadata log: offsets, lag, fetch times and role.",
)
@click.option(
    "--human-readable",
    is_flag=True,
    help="With --replication: show fetch times as '<n> ms ago' instead of epoch milliseconds.",
)
@output.output_option
@click.pass_context
def describe(
    ctx: click.Context, status: bool, replication: bool, human_readable: bool, output_format: str
) -> None:
    """Describe the metadata quorum: exactly one of --status or --replication.

    \b
    Examples:
      kafka-metadata-quorum --bootstrap-controller localhost:9093 describe --status
      kafka-metadata-quorum --bootstrap-controller localhost:9093 describe --replication --human-readable
      kafka-metadata-quorum --bootstrap-controller localhost:9093 describe --status --output json
    """
    _, admin = connect(ctx)
    with admin:
        if not status and not replication:
            output.fail("One of --status or --replication must be specified with describe sub-command")
        if status and replication:
            output.fail("Only one of --status or --replication should be specified with describe sub-command")
        if status and human_readable:
            output.fail("The option --human-readable is only supported along with --replication")
        from . import describe_text

        with reported_errors():
            cluster_id = admin.describe_cluster().cluster_id if status else ""
            quorum = admin.describe_metadata_quorum()
        try:
            if status:
                if output_format == "json":
                    output.write_json(describe_text.status_json(cluster_id, quorum))
                else:
                    output.write(describe_text.status_text(cluster_id, quorum))
            elif output_format == "json":
                output.write_json(describe_text.replication_json(quorum))
            else:
                now_ms = int(time.time() * 1000) if human_readable else None
                output.write(describe_text.replication_text(quorum, now_ms))
        except (describe_text.LeaderNotAVoterError, describe_text.ClockDriftError) as exc:
            output.fail(str(exc))


@dataclass(frozen=True)
class ControllerIdentity:
    """What AddRaftVoter needs about a controller, read from its own configuration."""

    node_id: int
    directory_id: str
    endpoints: tuple[Endpoint, ...]

    def describe(self) -> str:
        endpoints = ", ".join(str(endpoint) for endpoint in self.endpoints)
        return f"controller {self.node_id} with directory id {self.directory_id} and endpoints: {endpoints}"


def _listeners_by_name(properties: dict[str, str]) -> dict[str, Listener]:
    """`listeners`, then `advertised.listeners` over them, by name: Kafka's tool keeps the last entry
    of a name."""
    from kafka_admin_kraft.config.server import (
        ADVERTISED_LISTENERS,
        LISTENERS,
        ConfigError,
        csv_list,
        parse_listener,
    )

    found: dict[str, Listener] = {}
    for key in (LISTENERS, ADVERTISED_LISTENERS):
        for entry in csv_list(properties.get(key, "")):
            try:
                listener = parse_listener(entry)
            except ConfigError:
                output.fail(f"Unable to parse {entry} as a listener: expected NAME://host:port")
            found[listener.name] = listener
    return found


def controller_identity(properties: dict[str, str]) -> ControllerIdentity:
    """Node id, metadata directory id and controller endpoints from a controller's properties, checked in
    Kafka's order and with its messages."""
    from kafka_admin_kraft.config.server import (
        CONTROLLER_LISTENER_NAMES,
        LOG_DIRS,
        METADATA_LOG_DIR,
        NODE_ID,
        PROCESS_ROLES,
        csv_list,
    )
    from kafka_admin_kraft.models import Endpoint
    from kafka_admin_kraft.storage.meta_properties import META_PROPERTIES_FILE, read_meta_properties

    node_text = properties.get(NODE_ID)
    if node_text is None:
        output.fail(f"{NODE_ID} not found in configuration file. {INVALID_CONFIG}")
    if not re.fullmatch(r"[+-]?\d+", node_text.strip()):
        output.fail(f'For input string: "{node_text}"')
    node_id = int(node_text.strip())
    if node_id < 0:
        output.fail(f"{NODE_ID} was negative in configuration file. {INVALID_CONFIG}")
    if "controller" not in csv_list(properties.get(PROCESS_ROLES, "")):
        output.fail(f"{PROCESS_ROLES} did not contain 'controller' in configuration file. {INVALID_CONFIG}")
    metadata_dir = properties.get(METADATA_LOG_DIR)
    if metadata_dir is None and LOG_DIRS in properties:
        metadata_dir = properties[LOG_DIRS].split(",")[0].strip()
    if metadata_dir is None:
        output.fail(f"Neither {METADATA_LOG_DIR} nor {LOG_DIRS} were found. {INVALID_CONFIG}")
    try:
        meta = read_meta_properties(os.path.join(metadata_dir, META_PROPERTIES_FILE))
    except (OSError, ValueError):
        output.fail(f"Unable to read {META_PROPERTIES_FILE} from {metadata_dir}")
    if meta.directory_id is None:
        output.fail(f"No directory id found in {metadata_dir}")
    names = properties.get(CONTROLLER_LISTENER_NAMES)
    if names is None:
        output.fail(f"{CONTROLLER_LISTENER_NAMES} was not found. {INVALID_CONFIG}")
    listeners = _listeners_by_name(properties)
    endpoints = []
    for name in (name.upper() for name in csv_list(names)):
        listener = listeners.get(name)
        if listener is None:
            output.fail(f"Cannot find information about controller listener name: {name}")
        try:
            endpoints.append(Endpoint(listener=name, host=listener.host or "localhost", port=listener.port))
        except ValueError as exc:
            output.fail(str(exc))
    return ControllerIdentity(node_id, str(meta.directory_id), tuple(endpoints))


def _wait_until_observed(admin: Admin, controller: ControllerIdentity) -> None:
    """Wait (up to the client's default API timeout) until the leader sees the new controller fetching
    and caught up, as AddRaftVoter demands; on timeout the request is sent anyway so that the leader's
    own refusal is what gets reported."""
    deadline = time.monotonic() + admin.config.default_api_timeout

    def ready(quorum: QuorumInfo) -> bool:
        if any(v.replica_id == controller.node_id for v in quorum.voters):
            return True
        return any(
            o.replica_id == controller.node_id
            and o.replica_directory_id == controller.directory_id
            and o.last_fetch_timestamp is not None
            and o.last_caught_up_timestamp is not None
            for o in quorum.observers
        )

    with output.progress(f"Waiting for controller {controller.node_id} to catch up with the leader"):
        while not ready(admin.describe_metadata_quorum()) and time.monotonic() < deadline:
            time.sleep(0.2)


def _change_json(controller_id: int, directory_id: str, endpoints: list[str] | None, dry_run: bool) -> Any:
    document: dict[str, Any] = {"node_id": controller_id, "directory_id": directory_id}
    if endpoints is not None:
        document["endpoints"] = endpoints
    document["dry_run"] = dry_run
    return document


@main.command("add-controller", exact_only=EXACT_ONLY)
@click.option("--dry-run", is_flag=True, help="Check the controller's configuration without adding it.")
@output.output_option
@click.pass_context
def add_controller(ctx: click.Context, dry_run: bool, output_format: str) -> None:
    """Add a controller to the voters. --command-config must name that controller's own properties
    file: node.id, controller.listener.names, listeners / advertised.listeners, and metadata.log.dir (or
    log.dirs) whose meta.properties holds its directory id. The controller must already be running (it
    fetches as an observer); this command waits, with a progress line on a terminal, until the leader
    sees it caught up.

    \b
    Example:
      kafka-metadata-quorum --bootstrap-controller localhost:9093 \\
          --command-config config/controller-4.properties add-controller
    """
    properties, admin = connect(ctx)
    with admin:
        if target(ctx).command_config is None:
            output.fail(
                "You must supply the configuration file of the controller you are adding when using "
                "add-controller."
            )
        controller = controller_identity(properties)
        if not dry_run:
            with reported_errors():
                _wait_until_observed(admin, controller)
                admin.add_raft_voter(controller.node_id, controller.directory_id, controller.endpoints)
    if output_format == "json":
        endpoints = [str(endpoint) for endpoint in controller.endpoints]
        output.write_json(_change_json(controller.node_id, controller.directory_id, endpoints, dry_run))
    else:
        output.write(f"{'DRY RUN of adding' if dry_run else 'Added'} {controller.describe()}\n")


@main.command("remove-controller", exact_only=EXACT_ONLY)
@click.option(
    "--controller-id", "-i", type=JAVA_INT, required=True, help="Node id of the controller to remove."
)
@click.option(
    "--controller-directory-id",
    "-d",
    required=True,
    help="Directory id of its metadata log (the directoryId that describe --status shows).",
)
@click.option("--dry-run", is_flag=True, help="Check the arguments without removing the controller.")
@output.output_option
@click.pass_context
def remove_controller(
    ctx: click.Context, controller_id: int, controller_directory_id: str, dry_run: bool, output_format: str
) -> None:
    """Remove a controller from the voters.

    \b
    Example:
      kafka-metadata-quorum --bootstrap-controller localhost:9093 \\
          remove-controller --controller-id 4 --controller-directory-id wZoXPqWoSu6F6c8MkmdyAg
    """
    _, admin = connect(ctx)
    with admin:
        if controller_id < 0:
            output.fail(f"Invalid negative --controller-id: {controller_id}")
        from kafka_admin_kraft.protocol.primitives import Uuid

        try:
            directory_id = str(Uuid.from_string(controller_directory_id))
        except ValueError as exc:
            output.fail(f"Failed to parse --controller-directory-id: {exc}")
        if not dry_run:
            with reported_errors():
                admin.remove_raft_voter(controller_id, directory_id)
    if output_format == "json":
        output.write_json(_change_json(controller_id, directory_id, None, dry_run))
    else:
        action = "DRY RUN of removing" if dry_run else "Removed"
        output.write(f"{action}  KRaft controller {controller_id} with directory id {directory_id}\n")


from .check import check  # noqa: E402 - the group above must exist first
from .exporter import exporter  # noqa: E402
from .voter_changes import reconcile, replace_controller, scale  # noqa: E402
from .watch import watch  # noqa: E402

main.add_command(check)
main.add_command(watch)
main.add_command(exporter)
main.add_command(reconcile)
main.add_command(scale)
main.add_command(replace_controller)
