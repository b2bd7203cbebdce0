"""`kafka-metadata-quorum scale`: add and/or remove voters.

Like ``reconcile``, it says what the voters should be, so that a run interrupted anywhere finishes
when called again and a run on a quorum already as wanted changes nothing and exits 0: a --remove id
that is not a voter (removed by an earlier run, or never one) is named in a note and left as it is.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import click

from .. import output
from .._click import KafkaCommand
from ..admin_options import connect
from .voter_changes import (
    COMMON,
    CONFIG_OPTION,
    LISTENER_OPTION,
    describe_quorum,
    planning_thresholds,
    reconcile_to,
    voter_options,
)
from .voter_entries import SYNTAX, VoterEntry, VoterSpecError, configured_voters, parse_entries


def scaled(
    current: Sequence[int], add: Sequence[VoterEntry], remove: Sequence[VoterEntry]
) -> list[VoterEntry]:
    """The current voters plus ``add`` (an added id that votes already keeps its place, with the
    directory id given) minus ``remove`` (node ids; one that is not a voter has nothing to remove)."""
    for entry in remove:
        if entry.directory_id is not None:
            raise VoterSpecError(f"Invalid --remove entry '{entry.node_id}@...': --remove takes node ids")
    both = sorted({e.node_id for e in add} & {e.node_id for e in remove})
    if both:
        raise VoterSpecError(f"Node id {', '.join(map(str, both))} is given to both --add and --remove")
    added = {entry.node_id: entry for entry in add}
    removed = {entry.node_id for entry in remove}
    kept = [added.pop(node_id, VoterEntry(node_id)) for node_id in current if node_id not in removed]
    return kept + list(added.values())


def not_voters(ids: Sequence[int], voters: Sequence[int]) -> str:
    """``node 9 is not a voter (the voters are 1, 2, 3)``, as scale and replace-controller say it."""
    listed = ", ".join(map(str, voters)) or "none"
    if len(ids) == 1:
        return f"node {ids[0]} is not a voter (the voters are {listed})"
    return f"nodes {', '.join(map(str, ids))} are not voters (the voters are {listed})"


@planning_thresholds
@click.command(
    "scale",
    cls=KafkaCommand,
    exact_only=["--add", "--remove", "--controller-listener", "--controller-config", *COMMON],
)
@click.option(
    "--add", multiple=True, metavar="VOTERS", help=f"Controllers to add: {SYNTAX}, comma-separated."
)
@click.option("--remove", multiple=True, metavar="IDS", help="Node ids of voters to remove, comma-separated.")
@LISTENER_OPTION
@CONFIG_OPTION
@voter_options
@click.pass_context
def scale(
    ctx: click.Context,
    /,
    add: tuple[str, ...],
    remove: tuple[str, ...],
    controller_listener: str | None,
    **options: Any,
) -> None:
    """Add and/or remove voters: reconcile to the current voters plus --add (and each
    --controller-config's controller that --remove does not name) minus --remove. A removed
    controller's --controller-config tells whether it would add itself back
    (controller.quorum.auto.join.enable).

    \b
    Examples:
      kafka-metadata-quorum --bootstrap-controller localhost:9093 scale --add 4,5 --yes
      kafka-metadata-quorum --bootstrap-controller localhost:9093 scale \\
          --controller-config config/controller-4.properties --yes
      kafka-metadata-quorum --bootstrap-controller localhost:9093 scale --remove 2 --dry-run
      kafka-metadata-quorum --bootstrap-controller localhost:9093 scale --remove 2 \\
          --controller-config config/controller-2.properties --yes
    """
    if not add and not remove and not options["controller_configs"]:
        raise click.UsageError("one of the arguments --add --remove --controller-config is required", ctx)
    try:
        adds, removes = parse_entries(add, "--add"), parse_entries(remove, "--remove")
    except VoterSpecError as exc:
        output.fail(str(exc))
    configured = configured_voters(options.pop("controller_configs"))
    given = {e.node_id for e in adds} | {e.node_id for e in removes}
    adds += [VoterEntry(node_id) for node_id in configured if node_id not in given]
    _, admin = connect(ctx)
    with admin:
        quorum = describe_quorum(admin)
        current = [v.replica_id for v in quorum.voters]
        try:
            entries = scaled(current, adds, removes)
        except VoterSpecError as exc:
            output.fail(str(exc))
        gone = sorted({e.node_id for e in removes} - set(current))
        if gone:
            sys.stderr.write(f"Note: {not_voters(gone, current)}: nothing to remove\n")
            # their controller configs name controllers this run leaves alone
            configured = {node_id: c for node_id, c in configured.items() if node_id not in gone}
        from kafka_admin_kraft.voters import voter_listener

        listener = controller_listener.strip().upper() if controller_listener else voter_listener(quorum)
        reconcile_to(admin, entries, listener, options, configured, "--add")
