"""`kafka-metadata-quorum remove-controller`: remove a voter, named by node id and directory id, and with
``--unregister`` (Kafka 4.4, KIP-1312) its registration too.

Standard output is Kafka's line (``Removed  KRaft controller ...``, two spaces as Kafka prints them).
With ``--unregister``, once the removal is committed (the leader answers RemoveRaftVoter after it
commits; the tool also waits until the leader's voter set, and its committed one where DescribeQuorum v3
shows it, no longer hold the voter, since the active controller refuses to unregister a voter), the
controller is unregistered and a second line says so (``Unregistered  KRaft controller <id>``, or
``DRY RUN of unregistering  KRaft controller <id>``, the text of PR #22191's test). A failed
unregistration leaves the removal done: the error goes to stderr with what to do, exit status 1.

The tool cannot know whether the controller runs with ``controller.quorum.auto.join.enable=true``
(Kafka 4.2+), which makes a removed controller add itself back while it runs (``kafka_admin_kraft.voters``
rule 6), so it says so in one note: on stderr after Kafka's text, where a script that reads Kafka's
output does not see it and an operator at a terminal does, or as ``notes`` in the ``--output json``
document, which with ``--unregister`` also lists both ``steps`` and how each ended.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any

import click

from .. import output
from .._click import KafkaCommand
from ..admin_options import JAVA_INT, connect, report_error, reported_errors
from .common import EXACT_ONLY, change_json

if TYPE_CHECKING:
    from kafka_admin_kraft.admin import Admin
    from kafka_admin_kraft.protocol.primitives import Uuid

POLL = 0.2


def _removed(admin: Admin, controller_id: int, directory_id: Uuid) -> bool:
    """Whether, within the client's default API timeout, the leader's voter set (and its committed voter
    set, when DescribeQuorum v3 gives it) stops holding the voter."""
    deadline = time.monotonic() + admin.config.default_api_timeout
    key = (controller_id, directory_id)
    while True:
        quorum = admin.describe_metadata_quorum()
        sets = [quorum.voters] + ([quorum.committed_voters] if quorum.committed_voters is not None else [])
        if all(key not in {(v.replica_id, v.replica_directory_id) for v in voters} for voters in sets):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL)


def _unregister(admin: Admin, controller_id: int, directory_id: Uuid) -> str | None:
    """Wait for the removal to commit, then unregister; on failure the error, written on stderr with
    what to do; None on success."""
    from kafka_admin_kraft.errors import KafkaAdminError

    try:
        if not _removed(admin, controller_id, directory_id):
            text = (
                f"The removal of controller {controller_id} was not committed within "
                f"{admin.config.default_api_timeout:g} s, so it was not unregistered; once describe --status "
                f"no longer lists it as a voter, run kafka-cluster unregister-controller --id {controller_id}"
            )
            sys.stderr.write(text + "\n")
            return text
        admin.unregister_controller(controller_id)
    except KafkaAdminError as exc:
        return report_error(exc)
    return None


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
@click.option(
    "--unregister",
    is_flag=True,
    help="Also unregister the controller once its removal is committed, so that its supported feature "
    "levels no longer hold back upgrades (Kafka 4.4, metadata.version 4.4-IV2 or later). Stop it first.",
)
@output.output_option
@click.pass_context
def remove_controller(
    ctx: click.Context,
    controller_id: int,
    controller_directory_id: str,
    dry_run: bool,
    unregister: bool,
    output_format: str,
) -> None:
    """Remove a controller from the voters, and with --unregister its registration too.

    \b
    Examples:
      kafka-metadata-quorum --bootstrap-controller localhost:9093 \\
          remove-controller --controller-id 4 --controller-directory-id wZoXPqWoSu6F6c8MkmdyAg
      kafka-metadata-quorum --bootstrap-controller localhost:9093 \\
          remove-controller -i 4 -d wZoXPqWoSu6F6c8MkmdyAg --unregister
    """
    json_output = output_format == "json"
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
        if not json_output:
            action = "DRY RUN of removing" if dry_run else "Removed"
            output.write(f"{action}  KRaft controller {controller_id} with directory id {directory_id}\n")
        failure = _unregister(admin, controller_id, directory_id) if unregister and not dry_run else None
    from kafka_admin_kraft.voters import auto_join_note

    note = auto_join_note([controller_id])
    if json_output:
        document = change_json(controller_id, directory_id, None, dry_run, [note])
        if unregister:
            document["steps"] = _steps(dry_run, failure)
        output.write_json(document)
    else:
        if unregister and failure is None:
            action = "DRY RUN of unregistering" if dry_run else "Unregistered"
            output.write(f"{action}  KRaft controller {controller_id}\n")
        sys.stderr.write(f"Note: {note}\n")
    if failure is not None:
        raise SystemExit(1)


def _steps(dry_run: bool, failure: str | None) -> list[dict[str, Any]]:
    """Both steps of ``--unregister`` in the JSON document: ``status`` done, dry-run or failed (with the
    ``error``)."""
    done = "dry-run" if dry_run else "done"
    unregistered: dict[str, Any] = {"step": "unregister-controller", "status": done}
    if failure is not None:
        unregistered = {"step": "unregister-controller", "status": "failed", "error": failure}
    return [{"step": "remove-voter", "status": done}, unregistered]
