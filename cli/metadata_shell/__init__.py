"""`kafka-metadata-shell`: browse the metadata image of a KRaft snapshot, as Kafka's tool of the same
name (``org.apache.kafka.shell.MetadataShell``) does.

``kafka-metadata-shell --snapshot FILE [COMMAND ...]`` runs the command and exits (only ``cat``,
``find``, ``ls`` and ``tree``, as Kafka's non-interactive mode allows; its errors are printed on the
output and the exit status is 0, as Kafka's); without a command it starts the interactive shell
(``Loading...``, ``Starting...``, ``[ Kafka Metadata Shell ]``, prompt ``>> ``).

Additions: ``--snapshot`` also takes a log segment or a ``__cluster_metadata-0`` directory (or a log
directory holding one), read without its lock while the node runs; ``--offset N`` loads the image at
offset N, ``--committed`` at the last offset proven committed; ``--output json`` prints one JSON
document for ``cat``, ``ls``, ``find`` and ``tree`` (exit status 1 when a target was not found); an
empty snapshot opens as an empty image. Records Kafka's loader would refuse are skipped with a
warning on stderr. The interactive shell completes commands and paths, keeps its history in
``$KAFKA_METADATA_SHELL_HISTORY`` (default ``~/.kafka_metadata_shell_history``), and draws ``tree``
with rich on a terminal.

``commands`` runs Kafka's commands, ``parsing`` parses them as Kafka's argparse4j does and prints
their help, ``interactive`` is the prompt (prompt_toolkit, loaded only without a command).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

import click

from .._click import CONTEXT_SETTINGS, KafkaCommand, run_tool
from ..output import OUTPUT_FORMATS, fail, write

PROG = "kafka-metadata-shell"


class ShellCommand(KafkaCommand):
    """Kafka's usage line ends with the command words."""

    def _usage_pieces(self, ctx: click.Context) -> list[str]:
        return [*super()._usage_pieces(ctx), "[command [command ...]]"]

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,  # type: ignore[override]
             **extra: Any) -> NoReturn:
        arguments = list(sys.argv[1:] if args is None else args)
        prog = prog_name or PROG
        run_tool(lambda: super(ShellCommand, self).main(arguments, prog, standalone_mode=False, **extra),
                 prog)


def project_version() -> str:
    """``/local/version``: this tool's version, where Kafka's shows Kafka's."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("kafka-admin-kraft")
    except PackageNotFoundError:
        return "unknown"


@click.command(PROG, cls=ShellCommand, context_settings=CONTEXT_SETTINGS,
               exact_only=("--offset", "--committed", "--output"))
@click.option("--snapshot", "-s", "snapshot", required=True, metavar="SNAPSHOT",
              help="The metadata snapshot file to read; also a log segment, or a __cluster_metadata-0 "
                   "directory (example: --snapshot /var/kafka/meta/__cluster_metadata-0).")
@click.option("--offset", type=click.IntRange(min=-1), metavar="OFFSET",
              help="Load the image at this offset: the latest snapshot at or below it, then the log up to "
                   "it (example: --offset 12000).")
@click.option("--committed", is_flag=True,
              help="Load the image at the last offset proven committed (a snapshot's, or the whole log of "
                   "a single-voter quorum) instead of at the end of the log.")
@click.option("--output", "output_format", type=click.Choice(OUTPUT_FORMATS), default="text",
              help="Print Kafka's text, or one JSON document for cat, ls, find and tree (example: "
                   "--output json).")
@click.argument("command", nargs=-1)
def main(snapshot: str, offset: int | None, committed: bool, output_format: str,
         command: tuple[str, ...]) -> int:
    """The Apache Kafka metadata shell.

    \b
    Examples:
      kafka-metadata-shell --snapshot /var/kafka/meta/__cluster_metadata-0 ls /image/topics/byName
      kafka-metadata-shell -s 00000000000000001234-0000000003.checkpoint cat /image/features/metadataVersion
      kafka-metadata-shell -s /var/kafka/meta --offset 5000 --output json tree /image/cluster
      kafka-metadata-shell -s /var/kafka/meta
    """
    from kafka_admin_kraft.image import ImageError, load_image, root_node

    from .commands import State, run

    interactive = not command
    if interactive:
        write("Loading...\n")
    try:
        image = load_image(snapshot, offset=offset, committed=committed)
    except ImageError as exc:
        fail(f"Error: {exc}")
    for warning in image.warnings:
        sys.stderr.write(f"Warning: {warning}\n")
    state = State(root_node(image, project_version))
    if interactive:
        write("Starting...\n")
        from .interactive import run_shell

        return run_shell(state)
    result = run(list(command), state)
    if output_format == "json":
        write(json.dumps(result.document, indent=2) + "\n")
        return 1 if result.errors else 0
    if result.document.get("trees") and not result.errors and sys.stdout.isatty():
        from .rich_tree import print_trees

        print_trees(state, [word for word in command[1:] if word])
        return 0
    write(result.text)
    return 0
