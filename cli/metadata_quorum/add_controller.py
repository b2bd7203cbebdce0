"""`kafka-metadata-quorum add-controller`: add the controller that ``--command-config`` describes to the
voters, once the leader sees it caught up."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import click

from .. import output
from .._click import KafkaCommand
from ..admin_options import connect, reported_errors, target
from .common import EXACT_ONLY, change_json

if TYPE_CHECKING:
    from kafka_admin_kraft.admin import Admin
    from kafka_admin_kraft.models import QuorumInfo

    from .controller_identity import ControllerIdentity


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


@click.command("add-controller", cls=KafkaCommand, exact_only=EXACT_ONLY)
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
    from .controller_identity import controller_identity

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
        output.write_json(change_json(controller.node_id, controller.directory_id, endpoints, dry_run))
    else:
        output.write(f"{'DRY RUN of adding' if dry_run else 'Added'} {controller.describe()}\n")
