"""Drop-in replacements for Kafka's kafka-metadata-quorum, kafka-storage, kafka-features,
kafka-cluster and kafka-dump-log tools.

Installed as ``kafka_admin_kraft_cli``. A module per single-file tool, a package per tool of several
files (``metadata_quorum``, ``kafka_cluster``: the click group in its ``__init__``, one module per
subcommand), each a click app; all terminal output goes through ``output``. Modules import the SDK
lazily inside commands so that ``--help`` and argument errors stay fast. This package holds
``kafka-storage``'s console script, which answers ``random-uuid`` before loading click, and
``kafka-metadata-quorum``'s, which prints its top-level help (``quorum_help``) before loading click.
"""

from __future__ import annotations

import sys


def kafka_storage() -> None:
    """``kafka-storage``'s console script. ``kafka-storage random-uuid`` as it stands, which scripts run
    for each id they make, prints before click is loaded (most of the tool's start-up, BENCHMARKS.md);
    every other command line, options and ``--help`` included, goes to the click app."""
    if sys.argv[1:] == ["random-uuid"]:
        from kafka_admin_kraft.protocol.primitives import Uuid

        _answer(f"{Uuid.random()}\n")  # as the click command prints it
        return
    from .kafka_storage import main

    main()


def kafka_metadata_quorum() -> None:
    """``kafka-metadata-quorum``'s console script: ``--help`` or ``-h`` alone prints the help kept in
    ``quorum_help`` where it is kept for the terminal's width, before click is loaded (most of the
    time such a run takes, BENCHMARKS.md); every other command line goes to the click app."""
    from .quorum_help import kept_help

    text = kept_help(sys.argv)
    if text is not None:
        _answer(text)
        return
    from .metadata_quorum import main

    main()


def _answer(text: str) -> None:
    """Print what a console script answers before loading click; a reader that went away (a closed
    pipe) ends the tool quietly with click's exit status, 1."""
    from .output import write

    try:
        write(text)
    except BrokenPipeError:
        sys.stdout = None
        sys.exit(1)
