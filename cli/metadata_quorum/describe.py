"""`kafka-metadata-quorum describe`: the quorum's status or its replication table, as Kafka's tool prints
them (the text is ``describe_text``'s), or as a JSON document."""

from __future__ import annotations

import time

import click

from .. import output
from .._click import KafkaCommand
from ..admin_options import connect, reported_errors
from .common import EXACT_ONLY


@click.command("describe", cls=KafkaCommand, exact_only=EXACT_ONLY)
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
        from kafka_admin_kraft.client.operations.describe_cluster import describe_cluster_answer
        from kafka_admin_kraft.client.operations.describe_metadata_quorum import describe_quorum_answer

        from . import describe_text

        with reported_errors():
            cluster_id = admin.run(describe_cluster_answer).cluster_id if status else ""
            quorum = admin.run(describe_quorum_answer)
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
