"""Dumping log segments and snapshot files as Kafka's ``kafka-dump-log.sh`` (``DumpLogSegments``) does."""
