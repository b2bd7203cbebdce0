"""The committed metadata: a compacted image of the data records, the node's only metadata image.

The core applies committed batches (below the high watermark) to a ``SnapshotImage``; the image
answers what the runtime serves (finalized features, the highest applied offset, whether a
metadata.version was ever committed, an open metadata transaction) and is written out as the data
batches of a snapshot. Compaction keeps the latest record per key:

* FeatureLevelRecord per feature name (a level of 0 removes the feature, except metadata.version);
* TopicRecord per topic id, PartitionRecord per (topic id, partition), RegisterBrokerRecord per broker
  id, RegisterControllerRecord per controller id;
* BrokerRegistrationChangeRecord, FenceBrokerRecord and UnfenceBrokerRecord change the Fenced flag of
  the broker's RegisterBrokerRecord when the broker epoch matches, and vanish: a snapshot holds each
  registration as it stands, as Kafka's image writes it;
* UnregisterBrokerRecord and UnregisterControllerRecord (KIP-1312, Kafka 4.4) remove the broker's or
  controller's registration, whatever its epoch or incarnation (Kafka's ``ClusterDelta``), and vanish:
  a snapshot written afterwards holds no trace of it;
* AccessControlEntryRecord per ACL id; RemoveAccessControlEntryRecord removes the ACL with its id and
  vanishes (Kafka's ``AclsDelta``): a snapshot holds the ACLs that stand, which ``acls`` lists for the
  authorizer;
* NoOpRecords vanish;
* any other record (types the image does not key, raw records) is kept in log order.

Metadata transactions (KIP-868): records between BeginTransactionRecord and EndTransactionRecord take
effect at the End, and are dropped at an AbortTransactionRecord. A snapshot is never taken while a
transaction is open (Kafka snapshots at a stable offset too).

Memory: keyed records are kept as their framed bytes (decoded only to find their key), and the other
records are not kept at all: the image remembers where they are, as runs of offsets in the snapshot
it was loaded from or in the log (``OtherRun``), and reads them back when it writes a snapshot. After
a snapshot is written the runs are moved onto it (``rebase``), before retention deletes the segments
and older snapshot they pointed into. Nothing else removes committed records: the log is truncated
only above the high watermark, and installing a fetched snapshot replaces the image.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from kafka_admin_kraft.features import METADATA_VERSION
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.api_keys import MetadataRecordType as Record
from kafka_admin_kraft.protocol.exceptions import DecodeError
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.records import (
    ApiMessageAndVersion,
    RecordBatch,
    SnapshotId,
    decode_metadata_record,
    encode_batch,
    encode_metadata_record,
    read_frame,
)

FENCE: Final = 1
"""BrokerRegistrationChangeRecord.Fenced: 1 fenced, 0 no change, -1 unfenced."""
UNFENCE: Final = -1
_DECODED = frozenset({Record.FEATURE_LEVEL_RECORD, Record.TOPIC_RECORD, Record.PARTITION_RECORD,
                      Record.REGISTER_BROKER_RECORD, Record.REGISTER_CONTROLLER_RECORD,
                      Record.BEGIN_TRANSACTION_RECORD, Record.END_TRANSACTION_RECORD,
                      Record.ABORT_TRANSACTION_RECORD, Record.FENCE_BROKER_RECORD,
                      Record.UNFENCE_BROKER_RECORD, Record.BROKER_REGISTRATION_CHANGE_RECORD,
                      Record.UNREGISTER_BROKER_RECORD, Record.UNREGISTER_CONTROLLER_RECORD,
                      Record.ACCESS_CONTROL_ENTRY_RECORD, Record.REMOVE_ACCESS_CONTROL_ENTRY_RECORD})
"""Record types the image decodes; every other type is kept by reference without decoding."""


def batch_size(batch: RecordBatch) -> int:
    """Encoded size of a batch (decoded batches know it; built ones are encoded to find out)."""
    return batch.size_in_bytes or len(encode_batch(batch))


@dataclass
class OtherRun:
    """Consecutive records kept in log order: offsets ``first``..``last`` of ``source`` (a snapshot
    file, whose offsets start at 0, or the log when None)."""

    source: SnapshotId | None
    first: int
    last: int


# A change waiting for the end of a metadata transaction.
_Change = tuple[str, object, bytes | None, int]


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
        self.transaction_start_offset = -1
        """Offset of a BeginTransactionRecord whose End/Abort has not been applied, or -1."""
        self.metadata_version_committed = False
        """A FeatureLevelRecord for metadata.version took effect (Kafka's activation looks for one)."""
        self.source: SnapshotId | None = None
        """The snapshot the image was loaded from (None: built from the log alone)."""
        self._features: dict[str, tuple[int, bytes]] = {}
        self._keyed: dict[tuple[int, object], bytes] = {}
        self._others: list[OtherRun] = []
        self._transaction: list[_Change] | None = None
        self._acls: Mapping[Uuid, messages.AccessControlEntryRecord] | None = None
        """The decoded ACLs, until the next ACL change (``acls``)."""

    def reset(self, next_offset: int, epoch: int, timestamp: int = -1) -> None:
        """Empty the image and place it at ``next_offset`` (a snapshot's end offset and epoch)."""
        self.__init__()  # type: ignore[misc]
        self.next_offset = next_offset
        self.last_epoch = epoch
        self.last_timestamp = timestamp

    @property
    def in_transaction(self) -> bool:
        return self._transaction is not None

    # ------------------------------------------------------------------ what the runtime serves

    @property
    def metadata_version(self) -> int | None:
        entry = self._features.get(METADATA_VERSION)
        return entry[0] if entry is not None else None

    @property
    def highest_offset(self) -> int:
        """Offset of the last applied record, -1 before any (Kafka's FinalizedFeaturesEpoch)."""
        return self.next_offset - 1

    def feature_levels(self) -> dict[str, int]:
        """Every finalized feature of the image whose level is not 0 (kraft.version is not a record
        of the image: the core adds it from the control records)."""
        return {name: level for name, (level, _) in self._features.items() if level != 0}

    def broker_registrations(self) -> list[messages.RegisterBrokerRecord]:
        """Every registered broker as it stands, by broker id."""
        found = [m for m in self._keyed_messages(Record.REGISTER_BROKER_RECORD)
                 if isinstance(m, messages.RegisterBrokerRecord)]
        return sorted(found, key=lambda registration: registration.broker_id)

    def controller_registrations(self) -> list[messages.RegisterControllerRecord]:
        """The latest registration of every controller (KIP-919), by controller id. A controller that
        stopped, or left the voter set, stays registered until an UnregisterControllerRecord removes
        it (KIP-1312)."""
        found = [m for m in self._keyed_messages(Record.REGISTER_CONTROLLER_RECORD)
                 if isinstance(m, messages.RegisterControllerRecord)]
        return sorted(found, key=lambda registration: registration.controller_id)

    def acls(self) -> Mapping[Uuid, messages.AccessControlEntryRecord]:
        """The ACLs that stand, by id (read-only; the same mapping until an ACL record changes it)."""
        if self._acls is None:
            found = {m.id: m for m in self._keyed_messages(Record.ACCESS_CONTROL_ENTRY_RECORD)
                     if isinstance(m, messages.AccessControlEntryRecord)}
            self._acls = MappingProxyType(found)
        return self._acls

    def _keyed_messages(self, record_type: int) -> Iterator[object]:
        for (api_key, _), value in self._keyed.items():
            if api_key == record_type:
                record = decode_metadata_record(value)
                assert isinstance(record, ApiMessageAndVersion)
                yield record.message

    def keyed_count(self) -> int:
        """How many records ``values`` yields before the ones kept in log order."""
        return len(self._features) + len(self._keyed)

    def other_count(self) -> int:
        """How many records are kept in log order (tests)."""
        return sum(run.last - run.first + 1 for run in self._others)

    # ------------------------------------------------------------------ applying

    def start_snapshot(self, snapshot_id: SnapshotId) -> None:
        """Empty the image before loading the data records of ``snapshot_id`` (``apply_snapshot_batch``
        for each of its batches, then ``finish_snapshot``)."""
        self.reset(snapshot_id.end_offset, snapshot_id.epoch)
        self.source = snapshot_id

    def apply_snapshot_batch(self, batch: RecordBatch) -> None:
        if batch.is_control:
            return
        for record in batch.records:
            self._apply_value(record.value, self.source, record.offset, batch.base_offset)
        self.last_timestamp = max(self.last_timestamp, batch.max_timestamp)

    def finish_snapshot(self) -> None:
        self._transaction = None
        self.transaction_start_offset = -1
        self.bytes_applied = 0

    def load_snapshot(self, snapshot_id: SnapshotId, batches: Iterable[RecordBatch]) -> None:
        """Replace the image with the data records of a snapshot, in one go."""
        self.start_snapshot(snapshot_id)
        for batch in batches:
            self.apply_snapshot_batch(batch)
        self.finish_snapshot()

    def apply_batch(self, batch: RecordBatch) -> None:
        """Apply one whole committed log batch at ``next_offset``."""
        if batch.next_offset <= self.next_offset:
            return
        if batch.base_offset != self.next_offset:
            raise ValueError(f"batch at {batch.base_offset} does not continue the image at "
                             f"{self.next_offset}")
        if not batch.is_control:
            for record in batch.records:
                self._apply_value(record.value, None, record.offset, batch.base_offset)
        self.next_offset = batch.next_offset
        self.last_epoch = batch.partition_leader_epoch
        self.last_timestamp = batch.max_timestamp
        self.bytes_applied += batch_size(batch)

    def _apply_value(self, value: bytes | None, source: SnapshotId | None, offset: int, base: int) -> None:
        if value is None:
            return
        try:
            api_key = read_frame(value)[0]
            if api_key == Record.NO_OP_RECORD:
                return  # most of an idle log: vanishes without decoding
            if api_key not in _DECODED:
                self._change(("other", source, None, offset), offset)
                return
            record = decode_metadata_record(value)
        except DecodeError as exc:
            where = "snapshot" if source is not None else "metadata log"
            raise exc.describe(f"{where} batch at offset {base}") from None
        message = record.message if isinstance(record, ApiMessageAndVersion) else None
        if isinstance(message, messages.BeginTransactionRecord):
            self._transaction = []
            self.transaction_start_offset = offset
        elif isinstance(message, messages.EndTransactionRecord):
            pending, self._transaction = self._transaction or [], None
            self.transaction_start_offset = -1
            for change in pending:
                self._store(change)
        elif isinstance(message, messages.AbortTransactionRecord):
            self._transaction = None
            self.transaction_start_offset = -1
        elif isinstance(message, messages.FeatureLevelRecord):
            self._change(("feature", message.name, value, message.feature_level), offset)
        elif isinstance(message, messages.TopicRecord):
            self._change(("keyed", (Record.TOPIC_RECORD, message.topic_id), value, 0), offset)
        elif isinstance(message, messages.PartitionRecord):
            partition = (message.topic_id, message.partition_id)
            self._change(("keyed", (Record.PARTITION_RECORD, partition), value, 0), offset)
        elif isinstance(message, messages.RegisterBrokerRecord):
            self._change(("keyed", (Record.REGISTER_BROKER_RECORD, message.broker_id), value, 0), offset)
        elif isinstance(message, messages.BrokerRegistrationChangeRecord):
            self._change(("fencing", (message.broker_id, message.broker_epoch), None, message.fenced), offset)
        elif isinstance(message, messages.FenceBrokerRecord | messages.UnfenceBrokerRecord):
            fenced = FENCE if isinstance(message, messages.FenceBrokerRecord) else UNFENCE
            self._change(("fencing", (message.id, message.epoch), None, fenced), offset)
        elif isinstance(message, messages.RegisterControllerRecord):
            controller = (Record.REGISTER_CONTROLLER_RECORD, message.controller_id)
            self._change(("keyed", controller, value, 0), offset)
        elif isinstance(message, messages.UnregisterBrokerRecord):
            self._change(("unkeyed", (Record.REGISTER_BROKER_RECORD, message.broker_id), None, 0), offset)
        elif isinstance(message, messages.UnregisterControllerRecord):
            controller = (Record.REGISTER_CONTROLLER_RECORD, message.controller_id)
            self._change(("unkeyed", controller, None, 0), offset)
        elif isinstance(message, messages.AccessControlEntryRecord):
            self._change(("keyed", (Record.ACCESS_CONTROL_ENTRY_RECORD, message.id), value, 0), offset)
        elif isinstance(message, messages.RemoveAccessControlEntryRecord):
            self._change(("unkeyed", (Record.ACCESS_CONTROL_ENTRY_RECORD, message.id), None, 0), offset)
        else:  # a type the codec does not model at this version
            self._change(("other", source, None, offset), offset)

    def _change(self, change: _Change, offset: int) -> None:
        if self._transaction is not None:
            self._transaction.append(change)
        else:
            self._store(change)

    def _store(self, change: _Change) -> None:
        kind, key, value, level = change
        if kind == "feature":
            assert isinstance(key, str) and value is not None
            if level == 0 and key != METADATA_VERSION:
                self._features.pop(key, None)
            else:
                self._features[key] = (level, value)
                if key == METADATA_VERSION:
                    self.metadata_version_committed = True
        elif kind == "keyed":
            assert value is not None
            self._keyed[key] = value  # type: ignore[index]
            self._forget_acls(key)
        elif kind == "unkeyed":
            self._keyed.pop(key, None)  # type: ignore[call-overload]
            self._forget_acls(key)
        elif kind == "fencing":
            assert isinstance(key, tuple)
            self._fence(key[0], key[1], level)
        else:
            source = key if isinstance(key, SnapshotId) else None
            offset = level
            last = self._others[-1] if self._others else None
            if last is not None and last.source == source and last.last + 1 == offset:
                last.last = offset
            else:
                self._others.append(OtherRun(source, offset, offset))

    def _forget_acls(self, key: object) -> None:
        if isinstance(key, tuple) and key[0] == Record.ACCESS_CONTROL_ENTRY_RECORD:
            self._acls = None

    def _fence(self, broker_id: int, broker_epoch: int, change: int) -> None:
        stored = self._keyed.get((Record.REGISTER_BROKER_RECORD, broker_id))
        if stored is None or change not in (FENCE, UNFENCE):
            return
        record = decode_metadata_record(stored)
        assert isinstance(record, ApiMessageAndVersion)
        registration = record.message
        assert isinstance(registration, messages.RegisterBrokerRecord)
        if registration.broker_epoch != broker_epoch:
            return  # a change for an older registration of this broker id
        registration.fenced = change == FENCE
        self._keyed[(Record.REGISTER_BROKER_RECORD, broker_id)] = encode_metadata_record(record)

    # ------------------------------------------------------------------ writing out

    def values(self, read: Callable[[SnapshotId | None, int], Iterator[RecordBatch]]) -> Iterator[bytes]:
        """The image as framed records: metadata.version first, other features by name, then keyed
        records by record type and insertion, then the rest in log order, read back through
        ``read(source, first_offset)`` (the batches of a snapshot, or of the log, from that offset)."""
        if METADATA_VERSION in self._features:
            yield self._features[METADATA_VERSION][1]
        for name in sorted(self._features):
            if name != METADATA_VERSION:
                yield self._features[name][1]
        for api_key in sorted({api_key for api_key, _ in self._keyed}):
            yield from (value for (key, _), value in list(self._keyed.items()) if key == api_key)
        for run in list(self._others):
            yield from _run_values(run, read(run.source, run.first))

    def other_runs(self) -> list[OtherRun]:
        return list(self._others)

    def rebase(self, snapshot_id: SnapshotId, first_other_offset: int) -> None:
        """The image was just written as ``snapshot_id`` with its kept records from
        ``first_other_offset`` on: point the runs there (the old sources may be deleted now)."""
        count = self.other_count()
        last = first_other_offset + count - 1
        self._others = [OtherRun(snapshot_id, first_other_offset, last)] if count else []
        self.source = snapshot_id


def _run_values(run: OtherRun, batches: Iterator[RecordBatch]) -> Iterator[bytes]:
    try:
        for batch in batches:
            if batch.base_offset > run.last:
                return
            for record in batch.records:
                if run.first <= record.offset <= run.last and record.value is not None:
                    yield record.value
            if batch.last_offset >= run.last:
                return
    finally:
        close = getattr(batches, "close", None)
        if callable(close):
            close()


__all__ = ["OtherRun", "SnapshotImage", "batch_size"]
