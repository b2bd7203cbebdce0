"""Replaying metadata records into a :class:`~kafka_admin_kraft.image.model.MetadataImage`, as Kafka's
``MetadataDelta`` and its per-area deltas apply them (``metadata`` module, package ``image``).

The rules, per record type:

* FeatureLevelRecord: ``metadata.version`` sets the metadata version (levels 4 to 7 read as 3.3-IV3,
  ``FeaturesDelta``); any other feature is finalized at its level, and level 0 removes it.
* RegisterBrokerRecord / RegisterControllerRecord replace the registration; UnregisterBrokerRecord and
  UnregisterControllerRecord (KIP-1312) remove it whatever its epoch (``ClusterDelta``).
* FenceBrokerRecord, UnfenceBrokerRecord and BrokerRegistrationChangeRecord need the broker registered
  at the record's epoch (``getBrokerOrThrow``); the change record's Fenced is 1 fence, -1 unfence, 0
  none, its InControlledShutdown 1 or 0 none, and non-empty LogDirs replace the directories.
* TopicRecord starts a topic with no partitions; PartitionRecord replaces a partition (directories
  default to ``DirectoryId.MIGRATING`` when none are named); PartitionChangeRecord merges as
  ``PartitionRegistration.merge``: null fields keep their value, Leader -2 keeps the leader (another
  leader bumps the leader epoch), LeaderRecoveryState -1 keeps the state, and the partition epoch
  always grows by one; ClearElrRecord empties the ELR and last known ELR of one topic's partitions
  (or every topic's, when its name is empty) through such a merge (``TopicDelta``); RemoveTopicRecord
  removes the topic and its configuration (``MetadataDelta``).
* ConfigRecord sets a key, or removes it when the value is null; a resource left empty disappears.
  ClientQuotaRecord sets or (Remove) removes one quota of an entity, the same way.
* ProducerIdsRecord sets the next producer id; the ACL, SCRAM and delegation token records add and
  remove entries by id, (mechanism, user) and token id.
* NoOpRecord and ZkMigrationStateRecord change nothing. BeginTransactionRecord opens a metadata
  transaction (KIP-868) whose records apply at its EndTransactionRecord and are dropped at an
  AbortTransactionRecord; records of a transaction still open at the end are not applied, as Kafka's
  loader publishes no image inside one.
* Control records: KRaftVersionRecord sets the kraft.version and VotersRecord the voter set.

A record Kafka would refuse is skipped and named in ``image.warnings``: an unknown type or version,
bytes that do not decode, a change to a broker, topic or partition that does not exist.

Most of a busy log is PartitionChangeRecords: those of framed batches
(:mod:`~kafka_admin_kraft.image.frames`) are applied a run at a time, summed per partition
(:mod:`~kafka_admin_kraft.image.changes`), which leaves the image as applying them one by one does
(see :class:`ImageBuilder`).
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable, Sequence
from typing import Any, Final

from kafka_admin_kraft.dump.json_text import uuid_text
from kafka_admin_kraft.dump.metadata_json import WRITERS
from kafka_admin_kraft.dump.payload import DECODE_FAILURES
from kafka_admin_kraft.image.changes import (
    CHANGE_HEAD,
    DECODE_ERRORS,
    NO_LEADER_CHANGE,
    NO_RECOVERY_CHANGE,
    Tails,
    decode_partition_change,
    sum_changes,
)
from kafka_admin_kraft.image.frames import FramedBatch
from kafka_admin_kraft.image.model import (
    MIGRATING_DIRECTORY,
    Acl,
    BrokerRegistration,
    ControllerRegistration,
    DelegationToken,
    Endpoint,
    MetadataImage,
    Partition,
    Provenance,
    ScramCredential,
    Topic,
    Voter,
    bytes_from_json,
)
from kafka_admin_kraft.image.text import uuid_key
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.exceptions import CorruptRecordError, DecodeError
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.records.batch import RecordBatch
from kafka_admin_kraft.records.control import ControlRecordType, decode_control_record
from kafka_admin_kraft.records.metadata import read_frame

NO_NOP: Final = 20
BEGIN_TRANSACTION: Final = 23
END_TRANSACTION: Final = 24
ABORT_TRANSACTION: Final = 25
ZK_MIGRATION_STATE: Final = 21
RUN_LIMIT: Final = 1 << 21
"""PartitionChangeRecords buffered at most before they are applied (a 100 MB log's worth): their
values take at most about 250 MB whatever the log's length. Each application costs a pass over the
run's distinct values, so shorter runs would be slower."""
MAX_WARNINGS: Final = 100
"""Warnings kept in full; past this only their count grows."""

Record = dict[str, Any]


def decode_record(value: bytes) -> tuple[int, Record]:
    """(api key, Kafka's JSON form of the record) of a framed metadata record value; raises
    ValueError naming why it cannot be read."""
    try:
        api_key, version, pos = read_frame(value)
    except (CorruptRecordError, IndexError) as exc:
        raise ValueError(f"unreadable frame: {exc}") from None
    table = WRITERS.get(api_key)
    if table is None:
        raise ValueError(f"unknown metadata record type {api_key}")
    lowest, readers = table
    if not lowest <= version < lowest + len(readers):
        raise ValueError(f"record type {api_key} has no version {version}")
    try:
        text, end = readers[version - lowest](value, pos)
    except (IndexError, struct.error):
        raise ValueError(f"record type {api_key} v{version} ends inside a field") from None
    except DECODE_FAILURES as exc:
        raise ValueError(f"record type {api_key} v{version} does not decode: {exc}") from None
    if end != len(value):
        raise ValueError(f"{len(value) - end} bytes follow the record type {api_key} v{version}")
    return api_key, json.loads(text)


def _sorted_directories(directories: list[str]) -> tuple[str, ...]:
    return tuple(sorted(directories, key=lambda text: uuid_key(Uuid.from_string(text).bytes)))


def _endpoints(entries: list[Record]) -> dict[str, Endpoint]:
    return {entry["name"]: Endpoint(entry["name"], entry["host"], entry["port"], entry["securityProtocol"])
            for entry in entries}


def _features(entries: list[Record]) -> dict[str, tuple[int, int]]:
    return {entry["name"]: (entry["minSupportedVersion"], entry["maxSupportedVersion"]) for entry in entries}


def _partition(record: Record) -> Partition:
    replicas = tuple(record["replicas"])
    directories = record.get("directories") or []
    if all(directory == MIGRATING_DIRECTORY for directory in directories):
        directories = [MIGRATING_DIRECTORY] * len(replicas)
    return Partition(replicas, tuple(directories), tuple(record["isr"]), tuple(record["removingReplicas"]),
                     tuple(record["addingReplicas"]), tuple(record.get("eligibleLeaderReplicas") or ()),
                     tuple(record.get("lastKnownElr") or ()), record["leader"],
                     record.get("leaderRecoveryState", 0), record["leaderEpoch"], record["partitionEpoch"])


def merge_partition(partition: Partition, change: Record) -> None:
    """``PartitionRegistration.merge`` of a PartitionChangeRecord (in Kafka's JSON form), in place."""
    merge_fields(partition, [
        change.get("isr"), change.get("leader", NO_LEADER_CHANGE), change.get("replicas"),
        change.get("removingReplicas"), change.get("addingReplicas"),
        change.get("leaderRecoveryState", NO_RECOVERY_CHANGE), change.get("directories"),
        change.get("eligibleLeaderReplicas"), change.get("lastKnownElr")])


def merge_fields(partition: Partition, fields: Sequence[Any], leader_changes: int = 1,
                 changes: int = 1) -> None:
    """``PartitionRegistration.merge`` of a change's fields, laid out as
    :func:`~kafka_admin_kraft.image.changes.no_change` lays them out: null fields keep their value,
    leader -2 keeps the leader (another one bumps the leader epoch), recovery -1 keeps the state, the
    partition epoch grows. ``changes`` records summed into one
    (:class:`~kafka_admin_kraft.image.changes.ChangeSum`), of which ``leader_changes`` name a leader,
    bump the epochs that many times."""
    isr, leader, replicas, removing, adding, recovery, directories, elr, last_known_elr = fields
    if replicas is not None:
        partition.replicas = tuple(replicas)
    current = partition.directories if directories is None else tuple(directories)
    if all(directory == MIGRATING_DIRECTORY for directory in current):
        current = (MIGRATING_DIRECTORY,) * len(partition.replicas)
    partition.directories = current
    if isr is not None:
        partition.isr = tuple(isr)
    if removing is not None:
        partition.removing_replicas = tuple(removing)
    if adding is not None:
        partition.adding_replicas = tuple(adding)
    if elr is not None:
        partition.elr = tuple(elr)
    if last_known_elr is not None:
        partition.last_known_elr = tuple(last_known_elr)
    if leader != NO_LEADER_CHANGE:
        partition.leader = leader
        partition.leader_epoch += leader_changes
    if recovery != NO_RECOVERY_CHANGE:
        partition.leader_recovery_state = recovery
    partition.partition_epoch += changes


class Skip(Exception):
    """A record Kafka's loader would refuse: it is left out and reported."""


class ImageBuilder:
    """Applies batches to an image. Feed it batches in offset order (:meth:`apply_batch`), call
    :meth:`flush`, then read :attr:`image`. ``last_offset`` stops it at an offset: later records are
    not applied.

    A :class:`~kafka_admin_kraft.image.frames.FramedBatch` of PartitionChangeRecords outside a
    transaction is not applied at once: its values join a run, which :meth:`flush` applies summed per
    partition (:mod:`~kafka_admin_kraft.image.changes`). The run is flushed before anything that
    could see the difference: a record that reads or changes topics or partitions (one whose type is
    not in :data:`COMMUTING`), a decoded batch, a warning (so that warnings stay in offset order) and
    the end of the input; and once it holds :data:`RUN_LIMIT` values.
    """

    def __init__(self, image: MetadataImage | None = None, *, last_offset: int | None = None) -> None:
        self.image = image if image is not None else MetadataImage()
        self.last_offset = last_offset
        self._pending: list[tuple[int, int, Record]] | None = None
        """Records of the open metadata transaction: (offset, api key, record)."""
        self._run: list[bytes] = []
        """PartitionChangeRecord values not applied yet (see the class docstring)."""
        self._run_offsets: list[tuple[int, int]] = []
        """(offset of the first, count) of each stretch of ``_run``."""
        self._tails = Tails(RUN_LIMIT)
        self._provenance: tuple[int, int, int] | None = None
        """The provenance of the last framed batch, made a :class:`Provenance` by :meth:`flush`."""
        self._warnings = 0
        self._topic_ids: dict[bytes, str] = {}
        self.handlers: dict[int, Callable[[Record], None]] = {
            0: self._register_broker, 1: self._unregister_broker, 2: self._topic, 3: self._partition_record,
            4: self._config, 5: self._partition_change, 7: self._fence, 8: self._unfence,
            9: self._remove_topic,
            10: self._delegation_token, 11: self._scram, 12: self._feature_level, 14: self._client_quota,
            15: self._producer_ids, 17: self._registration_change, 18: self._acl, 19: self._remove_acl,
            22: self._remove_scram, 26: self._remove_delegation_token, 27: self._register_controller,
            28: self._clear_elr, 29: self._unregister_controller,
        }

    # ------------------------------------------------------------------ feeding

    def warn(self, message: str) -> None:
        self.flush()
        self._warnings += 1
        if self._warnings <= MAX_WARNINGS:
            self.image.warnings.append(message)
        elif self._warnings == MAX_WARNINGS + 1:
            self.image.warnings.append("... further skipped records are not listed")

    def note(self, message: str) -> None:
        """A warning about the input rather than a record (a torn tail, a transaction left open):
        always listed, after the warnings of the records before it."""
        self.flush()
        self.image.warnings.append(message)

    @property
    def in_transaction(self) -> bool:
        return self._pending is not None

    def apply_batch(self, batch: RecordBatch | FramedBatch) -> bool:
        """Apply one batch; False once the batch lies past ``last_offset`` (nothing was applied)."""
        limit = self.last_offset
        if limit is not None and batch.base_offset > limit:
            return False
        if isinstance(batch, FramedBatch):
            self._apply_framed(batch, limit)
            return True
        self.flush()
        if batch.is_control:
            self._control(batch, limit)
            return True
        applied = -1
        for record in batch.records:
            if limit is not None and record.offset > limit:
                break
            applied = record.offset
            self._apply_value(record.offset, record.value)
        if applied >= 0 and not self.in_transaction:
            self.image.provenance = Provenance(applied, batch.partition_leader_epoch, batch.max_timestamp)
        return True

    def _apply_framed(self, batch: FramedBatch, limit: int | None) -> None:
        first = batch.first_offset
        values = batch.values
        if limit is not None and first + len(values) - 1 > limit:
            values = values[:max(0, limit - first + 1)]
        if not values:
            return
        if batch.only_changes and self._pending is None:
            self._run += values
            self._run_offsets.append((first, len(values)))
        else:
            for offset, value in enumerate(values, first):
                if value[0] == 1 and value[1] == 5 and value[2] <= 2 and self._pending is None:
                    self._run.append(value)
                    self._run_offsets.append((offset, 1))
                    continue
                if not (value[0] == 1 and value[2] < 0x80 and value[1] in COMMUTING):
                    self.flush()
                self._apply_value(offset, value)
        if self._pending is None:
            self._provenance = (first + len(values) - 1, batch.partition_leader_epoch, batch.max_timestamp)
        if len(self._run) >= RUN_LIMIT:
            self.flush()

    def flush(self) -> None:
        """Bring the image up to date: apply the PartitionChangeRecords not applied yet, summed per
        partition when every one decodes and finds its partition, else one by one (each refused record
        reported), and set the provenance of the last framed batch."""
        if self._provenance is not None:
            self.image.provenance = Provenance(*self._provenance)
            self._provenance = None
        values = self._run
        if not values:
            return
        stretches = self._run_offsets
        self._run, self._run_offsets = [], []
        sums = sum_changes(values, self._tails)
        if sums is not None:
            targets = []
            for key, total in sums.items():
                partition = self._partition_at(key)
                if partition is None:
                    break
                targets.append((partition, total))
            else:
                for partition, total in targets:
                    merge_fields(partition, total.fields, total.leader_changes, total.changes)
                return
        offsets = (offset for first, count in stretches for offset in range(first, first + count))
        for offset, value in zip(offsets, values, strict=True):
            self._fast_change(offset, value)

    def _apply_value(self, offset: int, value: bytes | None) -> None:
        """One record, applied at once (or added to the open transaction)."""
        if value is None:
            self.warn(f"offset {offset}: a metadata record without a value")
            return
        head = value[:3]
        if head[:1] == b"\x01" and head[2:3] < b"\x80":
            kind = head[1:2]
            if kind in _IGNORED_KEYS:
                return  # NoOpRecord, ZkMigrationStateRecord: nothing to decode
            if kind == _CHANGE_KEY and head[2] <= 2 and self._pending is None:
                self._fast_change(offset, value)
                return
        try:
            api_key, data = decode_record(value)
        except ValueError as exc:
            self.warn(f"offset {offset}: {exc}")
            return
        self._record(offset, api_key, data)

    def _topic_id(self, topic_bytes: bytes) -> str:
        topic_id = self._topic_ids.get(topic_bytes)
        if topic_id is None:
            topic_id = self._topic_ids[topic_bytes] = uuid_text(topic_bytes)
        return topic_id

    def _partition_at(self, key: bytes) -> Partition | None:
        """The partition a PartitionChangeRecord's first body bytes (partition id, topic id) name."""
        partition_id, topic_bytes = CHANGE_HEAD.unpack(key)
        topic = self.image.topics.get(self._topic_id(topic_bytes))
        return None if topic is None else topic.partitions.get(partition_id)

    def _fast_change(self, offset: int, value: bytes) -> None:
        """A PartitionChangeRecord outside a transaction, without going through its JSON form."""
        try:
            partition_id, topic_bytes, fields = decode_partition_change(value, 3, value[2])
        except DECODE_ERRORS as exc:
            self.warn(f"offset {offset}: record type 5 v{value[2]} does not decode: {exc}")
            return
        topic_id = self._topic_id(topic_bytes)
        topic = self.image.topics.get(topic_id)
        partition = None if topic is None else topic.partitions.get(partition_id)
        if partition is None:
            self.warn(f"offset {offset}: Unable to find partition {topic_id}:{partition_id}")
            return
        merge_fields(partition, fields)

    def _record(self, offset: int, api_key: int, data: Record) -> None:
        if api_key == BEGIN_TRANSACTION:
            if self._pending is not None:
                self.warn(f"offset {offset}: a metadata transaction begins inside another")
            self._pending = []
        elif api_key in (END_TRANSACTION, ABORT_TRANSACTION):
            if self._pending is None:
                self.warn(f"offset {offset}: a metadata transaction ends that never began")
                return
            pending, self._pending = self._pending, None
            if api_key == END_TRANSACTION:
                for pending_offset, pending_key, pending_data in pending:
                    self._apply(pending_offset, pending_key, pending_data)
        elif self._pending is not None:
            self._pending.append((offset, api_key, data))
        else:
            self._apply(offset, api_key, data)

    def _apply(self, offset: int, api_key: int, data: Record) -> None:
        handler = self.handlers.get(api_key)
        if handler is None:
            return
        try:
            handler(data)
        except Skip as exc:
            self.warn(f"offset {offset}: {exc}")
        except (KeyError, TypeError, ValueError) as exc:
            self.warn(f"offset {offset}: record type {api_key} cannot be applied: {exc}")

    def _control(self, batch: RecordBatch, limit: int | None) -> None:
        for record in batch.records:
            if limit is not None and record.offset > limit:
                return
            try:
                control = decode_control_record(record)
            except DecodeError as exc:
                self.warn(f"offset {record.offset}: unreadable control record: {exc}")
                continue
            value = control.value
            kind = control.type_id
            if kind == ControlRecordType.KRAFT_VERSION and isinstance(value, messages.KRaftVersionRecord):
                self.image.kraft_version = value.k_raft_version
            elif kind == ControlRecordType.KRAFT_VOTERS and isinstance(value, messages.VotersRecord):
                self.image.voters = {
                    voter.voter_id: Voter(voter.voter_id, str(voter.voter_directory_id),
                                          tuple((e.name, e.host, e.port) for e in voter.endpoints),
                                          (voter.k_raft_version_feature.min_supported_version,
                                           voter.k_raft_version_feature.max_supported_version))
                    for voter in value.voters}

    # ------------------------------------------------------------------ features and the cluster

    def _feature_level(self, data: Record) -> None:
        name, level = data["name"], data["featureLevel"]
        if name == "metadata.version":
            self.image.metadata_version = 7 if 4 <= level <= 7 else level
        elif level == 0:
            self.image.features.pop(name, None)
        else:
            self.image.features[name] = level

    def _register_broker(self, data: Record) -> None:
        registration = BrokerRegistration(
            data["brokerId"], data["brokerEpoch"], data["incarnationId"], _endpoints(data["endPoints"]),
            _features(data["features"]), data["rack"], data.get("fenced", True),
            data.get("inControlledShutdown", False), data.get("isMigratingZkBroker", False),
            _sorted_directories(data.get("logDirs") or []))
        self.image.brokers[registration.id] = registration

    def _unregister_broker(self, data: Record) -> None:
        self.image.brokers.pop(data["brokerId"], None)

    def _broker_at(self, broker_id: int, epoch: int, action: str) -> BrokerRegistration:
        broker = self.image.brokers.get(broker_id)
        if broker is None:
            raise Skip(f"tried to {action} broker {broker_id}, but that broker was not registered")
        if broker.epoch != epoch:
            raise Skip(f"tried to {action} broker {broker_id}, but the given epoch, {epoch}, did not match "
                       f"the current broker epoch, {broker.epoch}")
        return broker

    def _changed_broker(self, broker: BrokerRegistration, *, fenced: bool | None = None,
                        in_controlled_shutdown: bool | None = None,
                        directories: tuple[str, ...] | None = None) -> None:
        self.image.brokers[broker.id] = BrokerRegistration(
            broker.id, broker.epoch, broker.incarnation_id, broker.listeners, broker.supported_features,
            broker.rack, broker.fenced if fenced is None else fenced,
            broker.in_controlled_shutdown if in_controlled_shutdown is None else in_controlled_shutdown,
            broker.is_migrating_zk_broker, broker.directories if directories is None else directories)

    def _fence(self, data: Record) -> None:
        self._changed_broker(self._broker_at(data["id"], data["epoch"], "fence"), fenced=True)

    def _unfence(self, data: Record) -> None:
        self._changed_broker(self._broker_at(data["id"], data["epoch"], "unfence"), fenced=False)

    def _registration_change(self, data: Record) -> None:
        broker = self._broker_at(data["brokerId"], data["brokerEpoch"], "change")
        fenced_change = data.get("fenced", 0)
        if fenced_change not in (-1, 0, 1):
            raise Skip(f"unknown value for fenced field: {fenced_change}")
        shutdown_change = data.get("inControlledShutdown", 0)
        if shutdown_change not in (0, 1):
            raise Skip(f"unknown value for inControlledShutdown field: {shutdown_change}")
        directories = data.get("logDirs") or []
        self._changed_broker(broker, fenced=None if fenced_change == 0 else fenced_change == 1,
                             in_controlled_shutdown=True if shutdown_change == 1 else None,
                             directories=_sorted_directories(directories) if directories else None)

    def _register_controller(self, data: Record) -> None:
        registration = ControllerRegistration(
            data["controllerId"], data["incarnationId"], data["zkMigrationReady"],
            _endpoints(data["endPoints"]), _features(data["features"]))
        self.image.controllers[registration.id] = registration

    def _unregister_controller(self, data: Record) -> None:
        self.image.controllers.pop(data["controllerId"], None)

    # ------------------------------------------------------------------ topics

    def _topic(self, data: Record) -> None:
        self.image.topics[data["topicId"]] = Topic(data["name"], data["topicId"])

    def _topic_of(self, topic_id: str) -> Topic:
        topic = self.image.topics.get(topic_id)
        if topic is None:
            raise Skip(f"no topic with id {topic_id}")
        return topic

    def _partition_record(self, data: Record) -> None:
        self._topic_of(data["topicId"]).partitions[data["partitionId"]] = _partition(data)

    def _partition_change(self, data: Record) -> None:
        topic = self._topic_of(data["topicId"])
        partition = topic.partitions.get(data["partitionId"])
        if partition is None:
            raise Skip(f"Unable to find partition {data['topicId']}:{data['partitionId']}")
        merge_partition(partition, data)

    def _remove_topic(self, data: Record) -> None:
        topic = self.image.topics.pop(data["topicId"], None)
        if topic is None:
            raise Skip(f"Unable to delete topic with id {data['topicId']}: no such topic found.")
        self.image.configs.pop((2, topic.name), None)

    def _clear_elr(self, data: Record) -> None:
        name = data["topicName"]
        if name:
            topics = [topic for topic in self.image.topics.values() if topic.name == name]
            if not topics:
                raise Skip(f"Unable to clear elr for topic with name {name}: no such topic found.")
        else:
            topics = list(self.image.topics.values())
        clear: Record = {"eligibleLeaderReplicas": [], "lastKnownElr": []}
        for topic in topics:
            for partition in topic.partitions.values():
                if partition.elr or partition.last_known_elr:
                    merge_partition(partition, clear)

    # ------------------------------------------------------------------ configs, quotas, producer ids

    def _config(self, data: Record) -> None:
        resource = (data["resourceType"], data["resourceName"])
        if data["value"] is None:
            values = self.image.configs.get(resource)
            if values is not None:
                values.pop(data["name"], None)
                if not values:
                    del self.image.configs[resource]
        else:
            self.image.configs.setdefault(resource, {})[data["name"]] = data["value"]

    def _client_quota(self, data: Record) -> None:
        entity = tuple(sorted((entry["entityType"], entry["entityName"]) for entry in data["entity"]))
        value = data["value"]
        if isinstance(value, str):  # NaN and the infinities, quoted in Kafka's JSON form
            value = float(value)
        if data["remove"]:
            quotas = self.image.client_quotas.get(entity)
            if quotas is not None:
                quotas.pop(data["key"], None)
                if not quotas:
                    del self.image.client_quotas[entity]
        else:
            self.image.client_quotas.setdefault(entity, {})[data["key"]] = value

    def _producer_ids(self, data: Record) -> None:
        self.image.next_producer_id = data["nextProducerId"]

    # ------------------------------------------------------------------ security

    def _acl(self, data: Record) -> None:
        self.image.acls[data["id"]] = Acl(data["resourceType"], data["resourceName"], data["patternType"],
                                          data["principal"], data["host"], data["operation"],
                                          data["permissionType"])

    def _remove_acl(self, data: Record) -> None:
        if self.image.acls.pop(data["id"], None) is None:
            raise Skip(f"Failed to remove ACL {data['id']}: not found")

    def _scram(self, data: Record) -> None:
        self.image.scram.setdefault(data["mechanism"], {})[data["name"]] = ScramCredential(
            bytes_from_json(data["salt"]), bytes_from_json(data["storedKey"]),
            bytes_from_json(data["serverKey"]), data["iterations"])

    def _remove_scram(self, data: Record) -> None:
        users = self.image.scram.get(data["mechanism"], {})
        if users.pop(data["name"], None) is None:
            raise Skip(f"no SCRAM credential of {data['name']} for mechanism {data['mechanism']}")

    def _delegation_token(self, data: Record) -> None:
        self.image.delegation_tokens[data["tokenId"]] = DelegationToken(
            data["tokenId"], data["owner"], data["requester"], tuple(data["renewers"]),
            data["issueTimestamp"], data["maxTimestamp"], data["expirationTimestamp"])

    def _remove_delegation_token(self, data: Record) -> None:
        self.image.delegation_tokens.pop(data["tokenId"], None)


_IGNORED_KEYS: Final = frozenset({bytes([NO_NOP]), bytes([ZK_MIGRATION_STATE])})
_CHANGE_KEY: Final = bytes([5])
COMMUTING: Final = frozenset({0, 1, 4, 7, 8, 10, 11, 12, 14, 15, 17, 18, 19, NO_NOP, ZK_MIGRATION_STATE, 22,
                              26, 27, 29})
"""Record types that neither read nor change topics and partitions: applying one before or after a
run of PartitionChangeRecords gives the same image (the run is not flushed for them)."""
