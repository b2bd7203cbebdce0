"""In-memory stand-ins for the consensus core and the replicated log, to test the runtime alone."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.protocol.primitives import ZERO_UUID, Uuid
from kafka_admin_kraft.records import (
    ApiMessageAndVersion,
    RecordBatch,
    SnapshotId,
    control_batch,
    decode_batch_bytes,
    encode_batch,
    metadata_batches,
)
from kafka_admin_kraft_server.raft.api import (
    CommittedFeatures,
    Endpoint,
    InboundRequest,
    NodeIdentity,
    OutboundRequest,
    PollResult,
    ReplicaKey,
    Reply,
    VoterInfo,
    VoterSet,
)
from kafka_admin_kraft_server.raft.image import SnapshotImage


class MemoryLog:
    """A ReplicatedLog in memory: encoded batches, an optional snapshot."""

    def __init__(self) -> None:
        self.batches_: list[bytes] = []
        self.snapshot_id: SnapshotId | None = None
        self.snapshot_data: list[RecordBatch] = []
        self.start = 0
        self.flushes = 0

    def start_offset(self) -> int:
        return self.start

    def end_offset(self) -> int:
        if not self.batches_:
            return self.start
        return decode_batch_bytes(self.batches_[-1]).next_offset

    def flushed_offset(self) -> int:
        return self.end_offset()

    def last_epoch(self) -> int:
        return decode_batch_bytes(self.batches_[-1]).partition_leader_epoch if self.batches_ else 0

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        return (self.last_epoch(), self.end_offset())

    def append(self, batch: RecordBatch) -> None:
        assert batch.base_offset == self.end_offset()
        self.batches_.append(encode_batch(batch))

    def append_bytes(self, data: bytes) -> int:
        self.batches_.append(data)
        return self.end_offset()

    def read(self, start_offset: int, max_bytes: int) -> bytes:
        return b"".join(self.batches_)

    def batches(self, start_offset: int) -> Iterator[RecordBatch]:
        for data in self.batches_:
            batch = decode_batch_bytes(data)
            if batch.last_offset >= start_offset:
                yield batch

    def truncate_to(self, offset: int) -> None:
        self.batches_ = [b for b in self.batches_ if decode_batch_bytes(b).base_offset < offset]

    def flush(self) -> None:
        self.flushes += 1

    def latest_snapshot(self) -> SnapshotId | None:
        return self.snapshot_id

    def read_snapshot(self, snapshot_id: SnapshotId, position: int, max_bytes: int) -> bytes:
        return b""

    def snapshot_size(self, snapshot_id: SnapshotId) -> int:
        return 0

    def snapshot_batches(self, snapshot_id: SnapshotId) -> Iterator[RecordBatch]:
        return iter(self.snapshot_data)

    def write_snapshot(self, snapshot_id: SnapshotId, batches: list[RecordBatch]) -> None:
        self.snapshot_id = snapshot_id
        self.snapshot_data = batches

    def install_snapshot(self, snapshot_id: SnapshotId, data: bytes) -> None:
        raise NotImplementedError

    def delete_before_snapshot(self) -> None:
        pass


def identity(node_id: int = 1, port: int = 9093) -> NodeIdentity:
    return NodeIdentity(node_id=node_id, directory_id=ZERO_UUID, cluster_id="test-cluster-id-000000",
                        listeners=(Endpoint("CONTROLLER", "127.0.0.1", port),))


def voter_set(*ids: int, port: int = 9093) -> VoterSet:
    return VoterSet({i: VoterInfo(ReplicaKey(i), (Endpoint("CONTROLLER", "127.0.0.1", port + i),), 0, 1)
                     for i in ids})


class FakeCore:
    """Leads epoch 1 alone from its first poll; commits everything at once; answers with canned replies."""

    def __init__(self, node_id: int, log: MemoryLog, *, lead: bool = True) -> None:
        self.node_id = node_id
        self.log = log
        self.lead = lead
        self._leader = -1
        self._epoch = 0
        self.requests: list[InboundRequest] = []
        self.responses: list[tuple[int, Struct | None]] = []
        self.appended: list[list[Struct]] = []
        self.outbox: list[OutboundRequest] = []
        self._replies: list[Reply] = []
        self.hold_fetch = False
        self.resigned = False
        self.polls = 0
        self.image = SnapshotImage()
        """Everything in the log counts as committed: the image applies all of it."""

    def _catch_up(self) -> None:
        for batch in list(self.log.batches(self.image.next_offset)):
            self.image.apply_batch(batch)

    @property
    def applied_offset(self) -> int:
        self._catch_up()
        return self.image.next_offset

    def registered_brokers(self) -> list[messages.RegisterBrokerRecord]:
        self._catch_up()
        return self.image.broker_registrations()

    def registered_controllers(self) -> list[messages.RegisterControllerRecord]:
        self._catch_up()
        return self.image.controller_registrations()

    def acls(self) -> Mapping[Uuid, messages.AccessControlEntryRecord]:
        self._catch_up()
        return self.image.acls()

    def committed_features(self) -> CommittedFeatures:
        self._catch_up()
        image = self.image
        return CommittedFeatures(image.feature_levels(), image.highest_offset, image.metadata_version,
                                 image.transaction_start_offset)

    @property
    def leader_id(self) -> int:
        return self._leader

    @property
    def is_leader(self) -> bool:
        return self._leader == self.node_id and not self.resigned

    @property
    def epoch(self) -> int:
        return self._epoch

    @property
    def high_watermark(self) -> int:
        return self.log.end_offset()

    @property
    def voters(self) -> VoterSet:
        return voter_set(self.node_id)

    def handle_request(self, request: InboundRequest, now_ms: int) -> None:
        self.requests.append(request)
        if request.api_key == 1 and self.hold_fetch:
            return
        self._replies.append(Reply(request.request_id, self._answer(request)))

    def _answer(self, request: InboundRequest) -> Struct:
        if request.api_key == 55:
            R = messages.DescribeQuorumResponse
            state = R.ReplicaState(replica_id=self.node_id, log_end_offset=self.log.end_offset())
            return R(topics=[R.TopicData(topic_name="__cluster_metadata", partitions=[R.PartitionData(
                partition_index=0, leader_id=self._leader, leader_epoch=self._epoch,
                high_watermark=self.log.end_offset(), current_voters=[state])])])
        if request.api_key == 52:
            return messages.VoteResponse(error_code=0)
        if request.api_key == 1:
            return messages.FetchResponse(error_code=0)
        return messages.response_class(request.api_key)()

    def handle_response(self, request_id: int, body: Struct | None, now_ms: int) -> None:
        self.responses.append((request_id, body))

    def poll(self, now_ms: int) -> PollResult:
        self.polls += 1
        if self.lead and self._leader != self.node_id:
            self._leader, self._epoch = self.node_id, self._epoch + 1
            leader_change = messages.LeaderChangeMessage(
                version=0, leader_id=self.node_id, voters=[messages.LeaderChangeMessage.Voter(voter_id=1)],
                granting_voters=[messages.LeaderChangeMessage.Voter(voter_id=1)])
            self.log.append(control_batch(self.log.end_offset(), self._epoch, now_ms, [leader_change]))
        replies, self._replies = self._replies, []
        sends, self.outbox = self.outbox, []
        return PollResult(sends=sends, replies=replies, next_poll_ms=now_ms + 1000,
                          committed_offset=self.log.end_offset())

    def append(self, batch_records: list[Struct | ApiMessageAndVersion], now_ms: int) -> int:
        if self._leader != self.node_id:
            raise RuntimeError("not the leader")
        records = [r if isinstance(r, ApiMessageAndVersion) else ApiMessageAndVersion(r, 0)
                   for r in batch_records]
        self.appended.append([record.message for record in records])
        for batch in metadata_batches(self.log.end_offset(), self._epoch, now_ms, records):
            self.log.append(batch)
        return self.log.end_offset() - 1

    def snapshot(self, now_ms: int) -> SnapshotId | None:
        return None

    def resign(self, now_ms: int) -> None:
        self.resigned = True

    def release_fetches(self) -> None:
        for request in self.requests:
            if request.api_key == 1:
                self._replies.append(Reply(request.request_id, self._answer(request)))
