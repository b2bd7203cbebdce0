"""Drop-in replacements for Kafka's kafka-metadata-quorum, kafka-storage, kafka-features,
kafka-cluster and kafka-dump-log tools.

Installed as ``kafka_admin_kraft_cli``. A module per single-file tool, a package per tool of several
files (``metadata_quorum``, ``kafka_cluster``: the click group in its ``__init__``, one module per
subcommand), each a click app; all terminal output goes through ``output``. Modules import the SDK
lazily inside commands so that ``--help`` and argument errors stay fast.
"""
