"""`kafka-metadata-quorum replace-controller`: swap in a controller's new disk."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from .. import output
from .._click import KafkaCommand
from ..admin_options import JAVA_INT, connect, target
from .health_options import thresholds
from .scale import not_voters
from .voter_changes import (
    COMMON,
    change_voters,
    describe_quorum,
    planning_thresholds,
    step_timeout,
    voter_options,
)

if TYPE_CHECKING:
    from kafka_admin_kraft.voters import Progress, ReconcileResult


@planning_thresholds
@click.command("replace-controller", cls=KafkaCommand, exact_only=["--controller-id", *COMMON])
@click.option(
    "--controller-id", type=JAVA_INT, required=True, help="Node id of the controller whose disk was replaced."
)
@voter_options
@click.pass_context
def replace_controller(ctx: click.Context, /, controller_id: int, **options: Any) -> None:
    """Swap in a controller's new disk: --command-config names the NEW controller's properties file
    (node.id, listeners, and metadata.log.dir whose meta.properties holds the new directory id), as
    for add-controller. Waits until the new incarnation fetches and is caught up, removes the old
    directory id from the voters, then adds the new one. A new controller configured with
    controller.quorum.auto.join.enable=true makes this swap itself: the command then sends only what it
    has not made yet. A node that is not a voter is refused: adding a voter is scale --add's (and
    so is finishing a swap interrupted between its removal and its addition).

    \b
    Example:
      kafka-metadata-quorum --bootstrap-controller localhost:9093 \\
          --command-config config/controller-3.properties replace-controller --controller-id 3
    """
    from .controller_identity import auto_join_enabled, controller_identity

    properties, admin = connect(ctx)
    with admin:
        if target(ctx).command_config is None:
            output.fail(
                "You must supply the configuration file of the new controller when using replace-controller."
            )
        controller = controller_identity(properties)
        if controller.node_id != controller_id:
            output.fail(
                f"--controller-id {controller_id} differs from node.id {controller.node_id} in "
                f"{target(ctx).command_config}: is it the replaced controller's file?"
            )
        voters = [v.replica_id for v in describe_quorum(admin).voters]
        if controller_id not in voters:
            output.fail(
                f"Cannot replace controller {controller_id}: {not_voters([controller_id], voters)}; to add "
                f"it as a voter, run scale --add {controller_id}@{controller.directory_id}"
            )
        auto_join = auto_join_enabled(properties)
        limits = thresholds(options)
        timeout = step_timeout(options["step_timeout_ms"])

        def execute(dry_run: bool, progress: Callable[[Progress], None] | None) -> ReconcileResult:
            return admin.replace_controller(
                controller.node_id,
                controller.directory_id,
                endpoints=controller.endpoints,
                dry_run=dry_run,
                thresholds=limits,
                progress=progress,
                timeout=timeout,
                auto_join=auto_join,
                keep_registrations=options["keep_registrations"],
            )

        change_voters(
            execute,
            (),
            dry_run=options["dry_run"],
            yes=options["yes"],
            output_format=options["output_format"],
        )
