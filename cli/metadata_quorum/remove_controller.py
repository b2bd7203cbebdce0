"""`kafka-metadata-quorum remove-controller`: remove a voter, named by node id and directory id.

Standard output is Kafka's line. The tool cannot know whether the controller runs with
``controller.quorum.auto.join.enable=true`` (Kafka 4.2+), which makes a removed controller add itself
back while it runs (``kafka_admin_kraft.voters`` rule 6), so it says so in one note: on stderr after
Kafka's text, where a script that reads Kafka's output does not see it and an operator at a terminal
does, or as ``notes`` in the ``--output json`` document.
"""

from __future__ import annotations

import sys

import click

from .. import output
from .._click import KafkaCommand
from ..admin_options import JAVA_INT, connect, reported_errors
from .common import EXACT_ONLY, change_json


@click.command("remove-controller", cls=KafkaCommand, exact_only=EXACT_ONLY)
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
            directory_id = Uuid.from_string(controller_directory_id)
        except ValueError as exc:
            output.fail(f"Failed to parse --controller-directory-id: {exc}")
        if not dry_run:
            with reported_errors():
                admin.remove_raft_voter(controller_id, directory_id)
    from kafka_admin_kraft.voters import auto_join_note

    note = auto_join_note([controller_id])
    if output_format == "json":
        output.write_json(change_json(controller_id, directory_id, None, dry_run, [note]))
    else:
        action = "DRY RUN of removing" if dry_run else "Removed"
        output.write(f"{action}  KRaft controller {controller_id} with directory id {directory_id}\n")
        sys.stderr.write(f"Note: {note}\n")
