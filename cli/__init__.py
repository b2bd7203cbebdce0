"""Drop-in replacements for Kafka's kafka-metadata-quorum, kafka-storage, kafka-features,
kafka-cluster and kafka-dump-log tools.

Installed as ``kafka_admin_kraft_cli``. A module per single-file tool, a package per tool of several
files (``metadata_quorum``, ``kafka_cluster``: the click group in its ``__init__``, one module per
subcommand), each a click app; all terminal output goes through ``output``. Modules import the SDK
lazily inside commands so that ``--help`` and argument errors stay fast. This package holds
``kafka-storage``'s console script, which answers ``random-uuid`` before loading click.
"""

from __future__ import annotations

import sys


def kafka_storage() -> None:
    """``kafka-storage``'s console script. ``kafka-storage random-uuid`` as it stands, which scripts run
    for each id they make, prints before click is loaded (most of the tool's start-up, BENCHMARKS.md);
    every other command line, options and ``--help`` included, goes to the click app."""
    if sys.argv[1:] == ["random-uuid"]:
        from kafka_admin_kraft.protocol.primitives import Uuid

        from .output import write

        try:
            write(f"{Uuid.random()}\n")  # as the click command prints it
        except BrokenPipeError:  # the reader went away: quietly, with click's exit status
            sys.stdout = None
            sys.exit(1)
        return
    from .kafka_storage import main

    main()
