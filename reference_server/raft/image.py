"""The committed metadata that a snapshot holds: a compacted image of the data records.

The core applies committed batches (below the high watermark) to a ``SnapshotImage`` and writes it
out as the data batches of a snapshot. Compaction keeps the latest record per key:

* FeatureLevelRecord per feature name (a level of 0 removes the feature, except metadata.version);
* TopicRecord per topic id, PartitionRecord per (topic id, partition), RegisterBrokerRecord per broker
  id, RegisterControllerRecord per controller id;
* NoOpRecords vanish;
* any other record (types the codec does not model, raw records) is kept in log order.

Metadata transactions (KIP-868): records between BeginTransactionRecord and EndTransactionRecord take
effect at the End, and are dropped at an AbortTransactionRecord. A snapshot is never taken while a
transaction is open (Kafka snapshots at a stable offset too).
"""

from __future__ import annotations

from collections.abc import Iterable

from kafka_admin_kraft.features import METADATA_VERSION
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.exceptions import DecodeError
from kafka_admin_kraft.records import (
    ApiMessageAndVersion,
    MetadataRecord,
    RecordBatch,
    decode_metadata_batch,
    decode_metadata_record,
    encode_batch,
    read_frame,
)

NO_OP_RECORD = 20


def batch_size(batch: RecordBatch) -> int:
    """Encoded size of a batch (decoded batches know it; built ones are encoded to find out)."""
    return batch.size_in_bytes or len(encode_batch(batch))


class SnapshotImage:
    """Committed metadata records up to ``next_offset``, compacted by key."""

    def __init__(self) -> None:
        self.next_offset = 0
        """Every committed record below this offset has been applied."""
        self.last_epoch = 0
        """Epoch of the batch holding the record at ``next_offset - 1``."""
        self.last_timestamp = -1
        """Append time of the record at ``next_offset - 1`` (-1 when unknown)."""
        self.bytes_applied = 0
        """Bytes of log batches applied since ``reset`` (drives periodic snapshots)."""
        self._features: dict[str, MetadataRecord] = {}
        self._keyed: dict[tuple[int, object], MetadataRecord] = {}
        self._others: list[MetadataRecord] = []
        self._transaction: list[MetadataRecord] | None = None

    def reset(self, next_offset: int, epoch: int, timestamp: int = -1) -> None:
        """Empty the image and place it at ``next_offset`` (a snapshot's end offset and epoch)."""
        self.__init__()  # type: ignore[misc]
        self.next_offset = next_offset
        self.last_epoch = epoch
        self.last_timestamp = timestamp

    @property
    def in_transaction(self) -> bool:
        return self._transaction is not None

    def load_snapshot(self, end_offset: int, epoch: int, batches: Iterable[RecordBatch]) -> None:
        """Replace the image with the data records of a snapshot ending at ``end_offset``."""
        self.reset(end_offset, epoch)
        for batch in batches:
            if batch.is_control:
                continue
            for record in decode_metadata_batch(batch, what="snapshot"):
                self._apply(record)
            self.last_timestamp = max(self.last_timestamp, batch.max_timestamp)
        self._transaction = None
        self.bytes_applied = 0

    def apply_batch(self, batch: RecordBatch) -> None:
        """Apply one whole committed log batch at ``next_offset``."""
        if batch.next_offset <= self.next_offset:
            return
        if batch.base_offset != self.next_offset:
            raise ValueError(f"batch at {batch.base_offset} does not continue the image at "
                             f"{self.next_offset}")
        if not batch.is_control:
            for record in batch.records:
                # NoOpRecords (most of an idle log) vanish: skip them without decoding.
                if record.value is not None and read_frame(record.value)[0] == NO_OP_RECORD:
                    continue
                try:
                    self._apply(decode_metadata_record(record.value))
                except DecodeError as exc:
                    raise exc.describe(f"metadata log batch at offset {batch.base_offset}") from None
        self.next_offset = batch.next_offset
        self.last_epoch = batch.partition_leader_epoch
        self.last_timestamp = batch.max_timestamp
        self.bytes_applied += batch_size(batch)

    def _apply(self, record: MetadataRecord) -> None:
        message = record.message if isinstance(record, ApiMessageAndVersion) else None
        if isinstance(message, messages.BeginTransactionRecord):
            self._transaction = []
            return
        if isinstance(message, messages.EndTransactionRecord):
            pending, self._transaction = self._transaction or [], None
            for item in pending:
                self._store(item)
            return
        if isinstance(message, messages.AbortTransactionRecord):
            self._transaction = None
            return
        if self._transaction is not None:
            self._transaction.append(record)
        else:
            self._store(record)

    def _store(self, record: MetadataRecord) -> None:
        message = record.message if isinstance(record, ApiMessageAndVersion) else None
        if isinstance(message, messages.NoOpRecord):
            return
        if isinstance(message, messages.FeatureLevelRecord):
            if message.feature_level == 0 and message.name != METADATA_VERSION:
                self._features.pop(message.name, None)
            else:
                self._features[message.name] = record
            return
        key: object
        if isinstance(message, messages.TopicRecord):
            key = message.topic_id
        elif isinstance(message, messages.PartitionRecord):
            key = (message.topic_id, message.partition_id)
        elif isinstance(message, messages.RegisterBrokerRecord):
            key = message.broker_id
        elif isinstance(message, messages.RegisterControllerRecord):
            key = message.controller_id
        else:
            self._others.append(record)
            return
        self._keyed[(record.api_key, key)] = record

    def records(self) -> list[MetadataRecord]:
        """The image as records: metadata.version first, other features by name, then keyed records
        by record type and insertion, then the rest in log order."""
        out: list[MetadataRecord] = []
        if METADATA_VERSION in self._features:
            out.append(self._features[METADATA_VERSION])
        out.extend(self._features[name] for name in sorted(self._features) if name != METADATA_VERSION)
        for api_key in sorted({api_key for api_key, _ in self._keyed}):
            out.extend(record for (key, _), record in self._keyed.items() if key == api_key)
        out.extend(self._others)
        return out
