"""Reading a whole ``__cluster_metadata-0`` directory: snapshots and segments in offset order."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from kafka_admin_kraft.protocol.exceptions import CorruptRecordError
from kafka_admin_kraft.records.batch import RecordBatch
from kafka_admin_kraft.records.reader import BatchReader, TornTail
from kafka_admin_kraft.records.segment import SegmentFiles, list_segments
from kafka_admin_kraft.records.snapshot import SnapshotId, list_snapshots, read_snapshot

METADATA_PARTITION_DIR: Final = "__cluster_metadata-0"


class MetadataLogDir:
    """A partition directory of the metadata log (or any log in Kafka's layout).

    Only the newest segment may end in a torn batch; the reader then sets ``torn_tail``.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.torn_tail: TornTail | None = None
        self.torn_segment: Path | None = None

    def segments(self) -> list[SegmentFiles]:
        return list_segments(self.path)

    def snapshots(self) -> list[SnapshotId]:
        return list_snapshots(self.path)

    def latest_snapshot(self) -> SnapshotId | None:
        snapshots = self.snapshots()
        return snapshots[-1] if snapshots else None

    def snapshot_path(self, snapshot_id: SnapshotId) -> Path:
        return self.path / snapshot_id.file_name

    def read_log(self, start_offset: int = 0, *, verify_crc: bool = True) -> Iterator[RecordBatch]:
        """Batches of the segments holding offsets from ``start_offset`` on, in offset order.

        A batch that straddles ``start_offset`` is returned whole. Offsets must grow from batch to
        batch across segments; a gap is allowed (compacted or truncated logs), going back is not.
        """
        segments = self.segments()
        first = 0
        for index, segment in enumerate(segments):
            if segment.base_offset <= start_offset:
                first = index
        next_offset = -1
        for index in range(first, len(segments)):
            segment = segments[index]
            newest = index == len(segments) - 1
            with BatchReader.open(segment.log, verify_crc=verify_crc, allow_torn_tail=newest) as reader:
                for batch in reader:
                    if batch.base_offset < next_offset:
                        raise CorruptRecordError(
                            f"batch offset {batch.base_offset} is below the previous batch's next "
                            f"offset {next_offset}", what=str(segment.log), offset=batch.position)
                    next_offset = batch.next_offset
                    if batch.last_offset >= start_offset:
                        yield batch
                if reader.torn_tail is not None:
                    self.torn_tail = reader.torn_tail
                    self.torn_segment = segment.log

    def read_all(self, *, verify_crc: bool = True) -> Iterator[RecordBatch]:
        """The latest snapshot's batches (their offsets start at 0), then the log from its end offset.

        This is the state a KRaft node loads at start-up. Without a snapshot the whole log is read.
        """
        snapshot = self.latest_snapshot()
        start = 0
        if snapshot is not None:
            yield from read_snapshot(self.snapshot_path(snapshot), verify_crc=verify_crc)
            start = snapshot.end_offset
        yield from self.read_log(start, verify_crc=verify_crc)
