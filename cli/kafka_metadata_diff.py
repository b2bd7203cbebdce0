"""`kafka-metadata-diff`: what changed between two metadata images.

``kafka-metadata-diff A B``, where A and B are anything ``kafka-metadata-shell --snapshot`` takes (a
snapshot, a log segment, a ``__cluster_metadata-0`` directory), each at its end or at an offset
(``--offset-a``, ``--offset-b``; two offsets of one log compare the log with itself). Prints every
path added (``+``), removed (``-``) or changed (``~``, with the old and new value), grouped by area
(features, voters and registrations, brokers, topics and partitions, ACLs, configs, client quotas,
producer ids, SCRAM credentials and delegation tokens by name only), as text, or as one JSON document
with ``--output json``; on a terminal the text is a rich table per area. Exit status as ``diff``'s:
0 when the images are equal, 1 when they differ, 2 when an input cannot be read.

A tool of its own rather than a command of ``kafka-metadata-shell``, whose words after the options
are Kafka's shell commands.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import click

from ._click import CONTEXT_SETTINGS
from .output import OUTPUT_FORMATS, write

PROG = "kafka-metadata-diff"
TROUBLE = 2


@click.command(PROG, context_settings=CONTEXT_SETTINGS)
@click.argument("a", metavar="A")
@click.argument("b", metavar="B")
@click.option("--offset-a", type=click.IntRange(min=-1), metavar="OFFSET",
              help="Load A at this offset instead of at its end (example: --offset-a 1000).")
@click.option("--offset-b", type=click.IntRange(min=-1), metavar="OFFSET",
              help="Load B at this offset instead of at its end (example: --offset-b 2000).")
@click.option("--committed", is_flag=True,
              help="Load each image at its last offset proven committed.")
@click.option("--output", "output_format", type=click.Choice(OUTPUT_FORMATS), default="text",
              help="Print text, or one JSON document for scripts (example: --output json).")
def main(a: str, b: str, offset_a: int | None, offset_b: int | None, committed: bool,
         output_format: str) -> None:
    """Compare the metadata images of two snapshots, log segments or metadata log directories.

    \b
    Examples:
      kafka-metadata-diff 00000000000000001200-0000000004.checkpoint /var/kafka/meta/__cluster_metadata-0
      kafka-metadata-diff /data/controller-1/meta /data/controller-2/meta
      kafka-metadata-diff LOG_DIR LOG_DIR --offset-a 5000 --offset-b 9000 --output json
    """
    from kafka_admin_kraft.image import ImageError, diff_images, load_image, load_images

    try:
        if os.path.realpath(a) == os.path.realpath(b):  # two offsets of one log: read it once
            before, after = load_images(a, [offset_a, offset_b], committed=committed)
        else:
            before = load_image(a, offset=offset_a, committed=committed)
            after = load_image(b, offset=offset_b, committed=committed)
    except ImageError as exc:
        sys.stderr.write(f"Error: {exc}\n")
        sys.exit(TROUBLE)
    for name, image in (("A", before), ("B", after)):
        for warning in image.warnings:
            sys.stderr.write(f"Warning: {name}: {warning}\n")
    difference = diff_images(before, after)
    if output_format == "json":
        write(json.dumps(difference.to_json(), indent=2) + "\n")
    elif not difference.equal and sys.stdout.isatty():
        _print_rich(difference)
    else:
        write(difference.text())
    sys.exit(0 if difference.equal else 1)


def _print_rich(difference: Any) -> None:
    """One table per area: the change, the path, the old and the new value."""
    from rich.console import Console
    from rich.table import Table

    console = Console()
    console.print(f"[red]--- {difference.text().splitlines()[0][4:]}[/red]", highlight=False)
    console.print(f"[green]+++ {difference.text().splitlines()[1][4:]}[/green]", highlight=False)
    marks = {"added": "[green]+[/green]", "removed": "[red]-[/red]", "changed": "[yellow]~[/yellow]"}
    for _, title, changes in difference.by_area():
        table = Table(title=title, title_justify="left", show_lines=False, expand=True)
        table.add_column("", width=1)
        table.add_column("path", overflow="fold")
        table.add_column("old", overflow="fold")
        table.add_column("new", overflow="fold")
        for change in changes:
            table.add_row(marks[change.kind], change.path, "" if change.old is None else change.old.text,
                          "" if change.new is None else change.new.text)
        console.print(table)
    count = len(difference.changes)
    console.print(f"{count} change{'' if count == 1 else 's'}")


if __name__ == "__main__":
    main()
