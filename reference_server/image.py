"""The runtime's view of the committed metadata: finalized features and kraft.version.

Kafka's controllers replay every committed batch into a metadata image; ApiVersions reports the
image's finalized features and, as FinalizedFeaturesEpoch, the image's highest offset. The reference
server models only what it serves: FeatureLevelRecords (inside metadata transactions they take
effect at the EndTransactionRecord and are dropped at an AbortTransactionRecord), KRaftVersionRecord
control records, and whether a metadata.version was ever committed (a new leader that finds none
appends the bootstrap records, as Kafka's controller activation does).

``ImageLoader`` feeds the image from a ``ReplicatedLog`` in bounded steps, so that a follower
replaying a large log keeps serving its sockets: the latest snapshot when the log starts past what
was applied (start-up, or a snapshot fetched from the leader), then log batches below the high
watermark.
"""

from __future__ import annotations

from collections.abc import Iterator

from kafka_admin_kraft.features import KRAFT_VERSION, METADATA_VERSION
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.records import (
    ApiMessageAndVersion,
    RecordBatch,
    SnapshotId,
    decode_control_batch,
    decode_metadata_record,
    read_frame,
)
from reference_server.raft.api import ReplicatedLog

FEATURE_LEVEL_RECORD = 12
BEGIN_TRANSACTION_RECORD = 23
END_TRANSACTION_RECORD = 24
ABORT_TRANSACTION_RECORD = 25
_INTERESTING = frozenset({FEATURE_LEVEL_RECORD, BEGIN_TRANSACTION_RECORD, END_TRANSACTION_RECORD,
                          ABORT_TRANSACTION_RECORD})


class MetadataImage:
    """Finalized features, kraft.version and the next offset to apply."""

    def __init__(self) -> None:
        self.features: dict[str, int] = {}
        self.kraft_version = 0
        self.next_offset = 0
        """Every committed record below this offset has been applied."""
        self.transaction_start_offset = -1
        """Offset of a BeginTransactionRecord whose End/Abort has not been seen, or -1."""
        self._pending: list[tuple[str, int]] = []

    def reset(self) -> None:
        """Forget everything (before loading a snapshot)."""
        self.features = {}
        self.kraft_version = 0
        self.next_offset = 0
        self.transaction_start_offset = -1
        self._pending = []

    @property
    def metadata_version(self) -> int | None:
        return self.features.get(METADATA_VERSION)

    @property
    def highest_offset(self) -> int:
        """Offset of the last applied record, -1 before any (Kafka's FinalizedFeaturesEpoch)."""
        return self.next_offset - 1

    def finalized_features(self) -> dict[str, int]:
        """Every finalized feature whose level is not 0, kraft.version included when it is 1."""
        levels = {name: level for name, level in self.features.items() if level != 0}
        if self.kraft_version:
            levels[KRAFT_VERSION] = self.kraft_version
        return levels

    def apply_batch(self, batch: RecordBatch, limit: int | None = None) -> None:
        """Apply the records of ``batch`` from ``next_offset`` up to (not including) ``limit``."""
        end = batch.next_offset if limit is None else min(limit, batch.next_offset)
        if end <= self.next_offset:
            return
        if batch.is_control:
            for record, control in zip(batch.records, decode_control_batch(batch), strict=True):
                if self.next_offset <= record.offset < end and isinstance(control.value,
                                                                           messages.KRaftVersionRecord):
                    self.kraft_version = control.value.k_raft_version
        else:
            for record in batch.records:
                if record.offset < self.next_offset or record.offset >= end or record.value is None:
                    continue
                api_key = read_frame(record.value)[0]
                if api_key in _INTERESTING:
                    self._apply_record(record.offset, decode_metadata_record(record.value))
        self.next_offset = end

    def _apply_record(self, offset: int, record: object) -> None:
        if not isinstance(record, ApiMessageAndVersion):
            return
        message = record.message
        if isinstance(message, messages.FeatureLevelRecord):
            change = (message.name, message.feature_level)
            if self.transaction_start_offset >= 0:
                self._pending.append(change)
            else:
                self._set_feature(*change)
        elif isinstance(message, messages.BeginTransactionRecord):
            self.transaction_start_offset = offset
            self._pending = []
        elif isinstance(message, messages.EndTransactionRecord):
            for change in self._pending:
                self._set_feature(*change)
            self.transaction_start_offset = -1
            self._pending = []
        elif isinstance(message, messages.AbortTransactionRecord):
            self.transaction_start_offset = -1
            self._pending = []

    def _set_feature(self, name: str, level: int) -> None:
        if level == 0 and name != METADATA_VERSION:
            self.features.pop(name, None)
        else:
            self.features[name] = level


class ImageLoader:
    """Applies committed batches of a log to a ``MetadataImage`` a bounded amount at a time.

    A snapshot is loaded into a fresh image that replaces ``image`` only once it is complete, so a
    reader never sees half a snapshot.
    """

    def __init__(self, log: ReplicatedLog, image: MetadataImage | None = None) -> None:
        self.log = log
        self.image = image if image is not None else MetadataImage()
        self._started = False
        self._loading: tuple[SnapshotId, MetadataImage, Iterator[RecordBatch]] | None = None

    def _needs_snapshot(self) -> SnapshotId | None:
        if self._started and self.image.next_offset >= self.log.start_offset():
            return None
        self._started = True
        snapshot = self.log.latest_snapshot()
        if snapshot is None or snapshot.end_offset < self.image.next_offset:
            return None
        return snapshot

    def _load_snapshot(self, budget_bytes: int) -> tuple[bool, int]:
        """Continue loading a snapshot; (done, bytes used)."""
        if self._loading is None:
            snapshot = self._needs_snapshot()
            if snapshot is None:
                return True, 0
            self._loading = (snapshot, MetadataImage(), iter(self.log.snapshot_batches(snapshot)))
        snapshot, image, batches = self._loading
        used = 0
        for batch in batches:
            image.apply_batch(batch)
            used += max(batch.size_in_bytes, 1)
            if used >= budget_bytes:
                return False, used
        image.next_offset = snapshot.end_offset
        self.image = image
        self._loading = None
        return True, used

    def catch_up(self, committed_offset: int, budget_bytes: int = 4 * 1024 * 1024) -> bool:
        """Apply committed batches below ``committed_offset``; True once everything is applied, False
        when the budget ran out first (call again)."""
        done, used = self._load_snapshot(budget_bytes)
        if not done:
            return False
        image = self.image
        if image.next_offset >= committed_offset:
            return True
        batches: Iterator[RecordBatch] = iter(self.log.batches(image.next_offset))
        try:
            for batch in batches:
                if batch.base_offset >= committed_offset:
                    break
                image.apply_batch(batch, committed_offset)
                used += max(batch.size_in_bytes, 1)
                if image.next_offset >= committed_offset:
                    return True
                if used >= budget_bytes:
                    return False
        finally:
            close = getattr(batches, "close", None)
            if close is not None:
                close()
        # The log ended below the committed offset (it is being replaced by a snapshot, or the
        # high watermark names records this replica has not flushed yet): nothing more for now.
        return True
