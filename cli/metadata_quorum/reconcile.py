"""`kafka-metadata-quorum reconcile`: change the voters to exactly the ones given."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from kafka_admin_kraft.admin import Admin


def _listener(admin: Admin, given: str | None, entries: Sequence[VoterEntry]) -> str | None:
    """``--controller-listener``, or the voters' first listener when an entry has an endpoint."""
    if given is not None:
        return given.strip().upper()
    if not any(entry.host is not None for entry in entries):
        return None
    from kafka_admin_kraft.voters import voter_listener

    return voter_listener(describe_quorum(admin))


@planning_thresholds
@click.command(
    "reconcile",
    cls=KafkaCommand,
    exact_only=["--voters", "--controller-listener", "--controller-config", *COMMON],
)
@click.option(
    "--voters",
    multiple=True,
    required=True,
    metavar="VOTERS",
    help=f"The voters wanted, comma-separated and/or repeated: {SYNTAX}.",
)
@LISTENER_OPTION
@CONFIG_OPTION
@voter_options
@click.pass_context
def reconcile(
    ctx: click.Context, /, voters: tuple[str, ...], controller_listener: str | None, **options: Any
) -> None:
    """Change the voters to exactly --voters, one committed change at a time: caught-up controllers
    are added first, then failed voters removed, healthy ones next and the leader last; a plan that
    would leave no majority to commit a change is refused. Run again after an interruption, it
    finishes what is left.

    \b
    Examples:
      kafka-metadata-quorum --bootstrap-controller localhost:9093 reconcile --voters 1,2,3 --dry-run
      kafka-metadata-quorum --bootstrap-controller localhost:9093 reconcile \\
          --voters 1,2@ctl2:9093:<directory id>,3@ctl3:9093:<directory id> --yes
    """
    try:
        entries = parse_entries(voters)
    except VoterSpecError as exc:
        output.fail(str(exc))
    configured = configured_voters(options.pop("controller_configs"))
    _, admin = connect(ctx)
    with admin:
        listener = _listener(admin, controller_listener, entries)
        reconcile_to(admin, entries, listener, options, configured, "--voters")
