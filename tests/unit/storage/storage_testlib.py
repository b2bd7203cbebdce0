"""What the tests of the storage files share: a directory id, and the zero checkpoint as Kafka 4.4's
formatter writes it."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.records import METADATA_PARTITION_DIR, MetadataRecord, control_batch, metadata_batches
from kafka_admin_kraft.records.snapshot import BOOTSTRAP_SNAPSHOT_ID, SnapshotWriter
from kafka_admin_kraft.storage import InitialController
from kafka_admin_kraft.storage.bootstrap import voters_record

DIR_ID = Uuid.from_string("3Db5QLSqSZieL3rJBUUegA")


def write_kip1170_zero_checkpoint(metadata_dir: str | os.PathLike[str], records: Sequence[MetadataRecord], *,
                                  kraft_version: int = 0, controllers: Sequence[InitialController] = (),
                                  listener: str = "CONTROLLER", timestamp_ms: int = 0) -> Path:
    """``__cluster_metadata-0/00000000000000000000-0000000000.checkpoint`` as Kafka 4.4's formatter writes
    it on a controller (KIP-1170, PR #20707: ``RecordsSnapshotWriter`` with the bootstrap records
    appended): a control batch with SnapshotHeaderRecord, and from kraft.version 1 on KRaftVersionRecord
    and the initial voters' VotersRecord, if any; the bootstrap records; a control batch with
    SnapshotFooterRecord."""
    control: list[messages.SnapshotHeaderRecord | messages.KRaftVersionRecord | messages.VotersRecord] = [
        messages.SnapshotHeaderRecord(version=0, last_contained_log_timestamp=timestamp_ms)]
    if kraft_version >= 1:
        control.append(messages.KRaftVersionRecord(version=0, k_raft_version=kraft_version))
        if controllers:
            control.append(voters_record(controllers, listener))
    first = control_batch(0, 0, timestamp_ms, control)
    data = metadata_batches(first.next_offset, 0, timestamp_ms, list(records))
    footer = control_batch(data[-1].next_offset, 0, timestamp_ms, [messages.SnapshotFooterRecord(version=0)])
    partition = Path(metadata_dir) / METADATA_PARTITION_DIR
    partition.mkdir(parents=True, exist_ok=True)
    with SnapshotWriter(partition, BOOTSTRAP_SNAPSHOT_ID) as writer:
        for batch in (first, *data, footer):
            writer.append(batch)
    return writer.path
