"""``kafka-metadata-quorum --help`` (and ``-h``) without loading click: the top-level help as click
prints it, kept here for the two widths most help is read at.

Importing click is most of the tool's start-up when all it has to do is print its help (BENCHMARKS.md,
"Command-line tools"), so the console script prints the text below when the command line is exactly
``--help`` or ``-h`` and click would format it at one of the widths kept: 78 columns (a terminal of 80
columns, or no terminal: a pipe or a file) and 98 (a terminal of 100 columns or more; the group's
``max_content_width`` is 100). Any other width or command line goes to click as before.

    python -m kafka_admin_kraft_cli.quorum_help [--check]
        (in a source checkout) rewrite the texts below from what click prints, or with --check fail
        when they differ; tests/tools/test_quorum_help.py checks it too
"""

from __future__ import annotations

import os
import sys

COMPLETE_VAR = "_KAFKA_METADATA_QUORUM_COMPLETE"
"""click answers shell completion instead when this is set."""
MAX_CONTENT_WIDTH = 100
"""The group's ``max_content_width`` (``_click.CONTEXT_SETTINGS``)."""
COLUMNS = (80, MAX_CONTENT_WIDTH)
"""Terminal widths whose help is kept; click formats at the width less 2."""
MARKER = "# The help texts, as click prints them; written by `python -m kafka_admin_kraft_cli.quorum_help`."


def terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``, which click formats by, without importing ``shutil`` (and
    the compression modules it loads): ``$COLUMNS`` if a positive number, else the size of the
    terminal on standard output, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
        columns = columns or 80
    return columns


def help_width(columns: int) -> int:
    """The width click's ``HelpFormatter`` wraps the group's help at, for a terminal of ``columns``."""
    return max(min(columns, MAX_CONTENT_WIDTH) - 2, 50)


def kept_help(argv: list[str]) -> str | None:
    """The help click would print for the command line ``argv`` (``sys.argv``), if it is kept here."""
    if argv[1:] not in (["--help"], ["-h"]) or COMPLETE_VAR in os.environ:
        return None
    return TEXTS.get(help_width(terminal_columns()))


def click_help(columns: int) -> str:
    """What ``kafka-metadata-quorum --help`` prints through click on a terminal of ``columns``: the
    click app run in a process of its own, as the console script runs it."""
    import subprocess

    env = {key: value for key, value in os.environ.items() if key != COMPLETE_VAR}
    env["COLUMNS"] = str(columns)
    app = "from kafka_admin_kraft_cli.metadata_quorum import main; main()"
    run = subprocess.run([sys.executable, "-c", app, "--help"], env=env, capture_output=True, check=True)
    return run.stdout.decode()


def source() -> str:
    """This module with the texts click prints today."""
    from pathlib import Path

    here = Path(__file__).read_text()
    lines = [MARKER, "TEXTS: dict[int, str] = {"]
    for columns in COLUMNS:
        lines.append(f"    {help_width(columns)}: (")
        for line in click_help(columns).splitlines(keepends=True):
            lines += [f"        {line[at:at + 80]!r}" for at in range(0, len(line), 80)]
        lines.append("    ),")
    lines.append("}")
    return here[:here.index(f"\n{MARKER}\n") + 1] + "\n".join(lines) + "\n"


def main() -> None:
    from pathlib import Path

    path = Path(__file__)
    fresh = source()
    if sys.argv[1:] == ["--check"]:
        if path.read_text() != fresh:
            sys.exit(f"{path.name} is stale: run python -m kafka_admin_kraft_cli.quorum_help")
        return
    path.write_text(fresh)


if __name__ == "__main__":
    main()


# The help texts, as click prints them; written by `python -m kafka_admin_kraft_cli.quorum_help`.
TEXTS: dict[int, str] = {
    78: (
        'usage: kafka-metadata-quorum [-h] {describe,add-controller,remove-controller,che'
        'ck,watch,exporter,reconcile,scale,replace-controller} ...\n'
        '\n'
        '  Describe and change the KRaft controller quorum (the `__cluster_metadata`\n'
        '  Raft group).\n'
        '\n'
        '  Examples:\n'
        '    kafka-metadata-quorum --bootstrap-controller localhost:9093 describe --statu'
        's\n'
        '    kafka-metadata-quorum --bootstrap-server localhost:9092 describe --replicati'
        'on --human-readable\n'
        '    kafka-metadata-quorum --bootstrap-controller localhost:9093 \\\n'
        '        --command-config controller-4.properties add-controller\n'
        '    kafka-metadata-quorum --bootstrap-controller localhost:9093 remove-controlle'
        'r -i 4 -d <directory id>\n'
        '\n'
        'Options:\n'
        '  --bootstrap-server HOSTS      Brokers to connect to (they forward to the\n'
        '                                active controller), as host:port[,host:port].\n'
        '                                Example: --bootstrap-server localhost:9092\n'
        '  --bootstrap-controller HOSTS  Controllers to connect to directly, as\n'
        '                                host:port[,host:port]. Example: --bootstrap-\n'
        '                                controller localhost:9093\n'
        '  --command-config FILE         Kafka client properties (security.protocol,\n'
        '                                ssl.*, sasl.*, timeouts) for the admin client.\n'
        '                                Example: --command-config admin.properties\n'
        '  -h, --help                    Show this message and exit.\n'
        '\n'
        'Commands:\n'
        '  describe            Describe the metadata quorum: exactly one of...\n'
        '  add-controller      Add a controller to the voters.\n'
        '  remove-controller   Remove a controller from the voters, and with...\n'
        "  check               Check the quorum's health once: leader, voters...\n"
        "  watch               Watch the quorum's health: report each change...\n"
        "  exporter            Serve the quorum's health as Prometheus metrics...\n"
        '  reconcile           Change the voters to exactly --voters, one...\n'
        '  scale               Add and/or remove voters: reconcile to the current...\n'
        "  replace-controller  Swap in a controller's new disk: --command-config...\n"
    ),
    98: (
        'usage: kafka-metadata-quorum [-h] {describe,add-controller,remove-controller,che'
        'ck,watch,exporter,reconcile,scale,replace-controller} ...\n'
        '\n'
        '  Describe and change the KRaft controller quorum (the `__cluster_metadata` Raft'
        ' group).\n'
        '\n'
        '  Examples:\n'
        '    kafka-metadata-quorum --bootstrap-controller localhost:9093 describe --statu'
        's\n'
        '    kafka-metadata-quorum --bootstrap-server localhost:9092 describe --replicati'
        'on --human-readable\n'
        '    kafka-metadata-quorum --bootstrap-controller localhost:9093 \\\n'
        '        --command-config controller-4.properties add-controller\n'
        '    kafka-metadata-quorum --bootstrap-controller localhost:9093 remove-controlle'
        'r -i 4 -d <directory id>\n'
        '\n'
        'Options:\n'
        '  --bootstrap-server HOSTS      Brokers to connect to (they forward to the activ'
        'e controller), as\n'
        '                                host:port[,host:port]. Example: --bootstrap-serv'
        'er localhost:9092\n'
        '  --bootstrap-controller HOSTS  Controllers to connect to directly, as host:port'
        '[,host:port].\n'
        '                                Example: --bootstrap-controller localhost:9093\n'
        '  --command-config FILE         Kafka client properties (security.protocol, ssl.'
        '*, sasl.*,\n'
        '                                timeouts) for the admin client. Example: --comma'
        'nd-config\n'
        '                                admin.properties\n'
        '  -h, --help                    Show this message and exit.\n'
        '\n'
        'Commands:\n'
        '  describe            Describe the metadata quorum: exactly one of --status or -'
        '-replication.\n'
        '  add-controller      Add a controller to the voters.\n'
        '  remove-controller   Remove a controller from the voters, and with --unregister'
        ' its...\n'
        "  check               Check the quorum's health once: leader, voters caught up a"
        'nd reachable,...\n'
        "  watch               Watch the quorum's health: report each change (status, lea"
        'der, voters,...\n'
        "  exporter            Serve the quorum's health as Prometheus metrics (kraft_quo"
        'rum_*) until...\n'
        '  reconcile           Change the voters to exactly --voters, one committed chang'
        'e at a time:...\n'
        '  scale               Add and/or remove voters: reconcile to the current voters '
        'plus --add...\n'
        "  replace-controller  Swap in a controller's new disk: --command-config names th"
        'e NEW...\n'
    ),
}
