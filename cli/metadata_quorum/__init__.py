"""`kafka-metadata-quorum`: describe the KRaft controller quorum, add and remove controllers.

A drop-in for Kafka's tool of the same name: same subcommands and options, same text and exit codes.
Additions: `--output json`, a progress line on a terminal while `add-controller` waits for the new
controller to catch up, a note on stderr after `remove-controller` that a controller with
`controller.quorum.auto.join.enable=true` adds itself back unless stopped first, `CommittedVoters:` in
`describe --status` from DescribeQuorum v3 servers, and the subcommands `check`, `watch`, `exporter`
(health) and `reconcile`, `scale`, `replace-controller` (guided voter changes).

This module builds the click group; each subcommand is a module of its own, which never imports this
one. What subcommands share lies beside them: ``common`` (Kafka's three), ``controller_identity``
(a controller's properties file), ``health_options`` (check, watch, exporter and the voter commands),
``voter_entries``, ``voter_text``, ``voter_progress`` and ``voter_changes`` (reconcile, scale,
replace-controller); ``describe_text``, ``events``, ``alerts`` (with ``webhook_http``, its HTTP) and
``metrics`` are what a command prints, reports or serves, loaded only when it runs.
"""

from __future__ import annotations

import click

from .._click import CONTEXT_SETTINGS, KafkaGroup
from ..admin_options import AdminTarget, bootstrap_options
from . import (
    add_controller,
    check,
    describe,
    exporter,
    reconcile,
    remove_controller,
    replace_controller,
    scale,
    watch,
)


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


# Kafka's subcommands first, in its order; the additions after them.
main.add_command(describe.describe)
main.add_command(add_controller.add_controller)
main.add_command(remove_controller.remove_controller)
main.add_command(check.check)
main.add_command(watch.watch)
main.add_command(exporter.exporter)
main.add_command(reconcile.reconcile)
main.add_command(scale.scale)
main.add_command(replace_controller.replace_controller)
