"""Helpers for the consensus core's unit tests: replicas over in-memory logs, hand-built requests, and a
lossless network that delivers everything at once."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from simulation.memory import MemoryLog, MemoryStore

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.protocol.primitives import METADATA_TOPIC_ID, ZERO_UUID, Uuid
from kafka_admin_kraft.records import SnapshotId, control_batch, data_batch, encode_metadata_record
from kafka_admin_kraft.records.metadata import ApiMessageAndVersion
from kafka_admin_kraft_server.raft.api import (
    Bootstrap,
    Endpoint,
    InboundRequest,
    NodeIdentity,
    PollResult,
    RaftConfig,
    ReplicaKey,
    VoterInfo,
    VoterSet,
)
from kafka_admin_kraft_server.raft.core import RaftCore
from kafka_admin_kraft_server.raft.voters import voters_record

CLUSTER = "unit-test-cluster-id00"
LISTENER = "CONTROLLER"
META = "__cluster_metadata"


def uuid(n: int) -> Uuid:
    return Uuid(bytes([n]) * 16)


def endpoint(node_id: int) -> Endpoint:
    return Endpoint(LISTENER, f"n{node_id}", 9000 + node_id)


def voter_set(ids: list[int], *, directories: bool = True) -> VoterSet:
    return VoterSet(
        {
            i: VoterInfo(ReplicaKey(i, uuid(i) if directories else ZERO_UUID), (endpoint(i),), 0, 1)
            for i in ids
        }
    )


def bootstrap_snapshot(log: MemoryLog, voters: VoterSet) -> None:
    """What ``kafka-storage format --initial-controllers`` writes: snapshot (0, 0) with the voters."""
    log.write_snapshot(
        SnapshotId(0, 0),
        [
            control_batch(
                0,
                0,
                0,
                [
                    messages.SnapshotHeaderRecord(version=0, last_contained_log_timestamp=0),
                    messages.KRaftVersionRecord(version=0, k_raft_version=1),
                    voters_record(voters),
                ],
            ),
            control_batch(3, 0, 0, [messages.SnapshotFooterRecord(version=0)]),
        ],
    )


def noop_batch(base: int, epoch: int, count: int = 1, timestamp: int = 0):  # type: ignore[no-untyped-def]
    value = encode_metadata_record(ApiMessageAndVersion(messages.NoOpRecord(), 0))
    return data_batch(base, epoch, timestamp, [value] * count)


@dataclass
class Replica:
    node_id: int
    core: RaftCore
    log: MemoryLog
    store: MemoryStore
    outbox: list[PollResult] = field(default_factory=list)


def make_replica(
    node_id: int,
    voters: VoterSet,
    *,
    kraft_version: int = 1,
    log: MemoryLog | None = None,
    store: MemoryStore | None = None,
    now: int = 0,
    config: RaftConfig | None = None,
    seed: int = 0,
    bootstrap_servers: tuple = (),
) -> Replica:  # type: ignore[type-arg]
    if log is None:
        log = MemoryLog()
        if kraft_version >= 1:
            bootstrap_snapshot(log, voters)
    store = store if store is not None else MemoryStore()
    directory = uuid(node_id)
    identity = NodeIdentity(node_id, directory, CLUSTER, (endpoint(node_id),))
    bootstrap = Bootstrap(voters if kraft_version == 0 else None, bootstrap_servers)
    core = RaftCore(identity, config or RaftConfig(), bootstrap, log, store, random.Random(seed), now)
    return Replica(node_id, core, log, store)


def request(api_key: int, body: Struct, version: int, request_id: int = 1) -> InboundRequest:
    return InboundRequest(request_id, api_key, version, body, LISTENER)


def vote(
    epoch: int,
    candidate: int,
    last_epoch: int,
    last_offset: int,
    *,
    voter: int = -1,
    voter_directory: Uuid = ZERO_UUID,
    pre_vote: bool = False,
    cluster_id: str | None = CLUSTER,
    candidate_directory: Uuid | None = None,
) -> messages.VoteRequest:
    return messages.VoteRequest(
        cluster_id=cluster_id,
        voter_id=voter,
        topics=[
            messages.VoteRequest.TopicData(
                topic_name=META,
                partitions=[
                    messages.VoteRequest.PartitionData(
                        partition_index=0,
                        replica_epoch=epoch,
                        replica_id=candidate,
                        replica_directory_id=uuid(candidate)
                        if candidate_directory is None
                        else candidate_directory,
                        voter_directory_id=voter_directory,
                        last_offset_epoch=last_epoch,
                        last_offset=last_offset,
                        pre_vote=pre_vote,
                    )
                ],
            )
        ],
    )


def fetch(
    epoch: int,
    replica: int,
    fetch_offset: int,
    last_epoch: int,
    *,
    max_wait: int = 0,
    directory: Uuid | None = None,
) -> messages.FetchRequest:
    return messages.FetchRequest(
        cluster_id=CLUSTER,
        replica_state=messages.FetchRequest.ReplicaState(replica_id=replica),
        max_wait_ms=max_wait,
        max_bytes=1 << 20,
        topics=[
            messages.FetchRequest.FetchTopic(
                topic_id=METADATA_TOPIC_ID,
                partitions=[
                    messages.FetchRequest.FetchPartition(
                        partition=0,
                        current_leader_epoch=epoch,
                        fetch_offset=fetch_offset,
                        last_fetched_epoch=last_epoch,
                        partition_max_bytes=1 << 20,
                        replica_directory_id=uuid(replica) if directory is None else directory,
                    )
                ],
            )
        ],
    )


def describe_request(topic: str = META, partitions: tuple[int, ...] = (0,)) -> messages.DescribeQuorumRequest:
    return messages.DescribeQuorumRequest(
        topics=[
            messages.DescribeQuorumRequest.TopicData(
                topic_name=topic,
                partitions=[
                    messages.DescribeQuorumRequest.PartitionData(partition_index=p) for p in partitions
                ],
            )
        ]
    )


def single_reply(replica: Replica, now: int) -> Struct:
    result = replica.core.poll(now)
    assert len(result.replies) == 1, result.replies
    return result.replies[0].body


class Network:
    """Delivers every request and response at once (no loss) through the wire codec, on a clock that
    only moves when asked."""

    VERSIONS = {1: 17, 18: 4, 52: 2, 53: 1, 54: 1, 55: 2, 59: 1, 80: 1, 81: 0, 82: 0}

    def __init__(self, replicas: list[Replica]) -> None:
        self.replicas = {replica.node_id: replica for replica in replicas}
        self.now = 0
        self.next_id = 1000
        self.routes: dict[int, tuple[Replica, int, int]] = {}
        self.dropped: set[int] = set()
        """Node ids whose traffic is dropped (a crashed or isolated node)."""
        self.client_replies: dict[int, Struct] = {}
        """Replies to requests a test handed to a core itself (request ids below 1000)."""
        self.kraft_ranges: dict[int, tuple[int, int]] = {}
        """The kraft.version range a node's ApiVersions answer advertises (default 0-1)."""

    def _target(self, host: str, port: int, node_id: int | None) -> Replica | None:
        if node_id is not None:
            return self.replicas.get(node_id)
        for replica in self.replicas.values():
            if (f"n{replica.node_id}", 9000 + replica.node_id) == (host, port):
                return replica
        return None

    def pump(self, limit: int = 20_000) -> None:
        """Poll until nobody has anything to send."""
        dirty = set(self.replicas)
        while dirty:
            limit -= 1
            assert limit > 0, "the replicas keep talking without the clock moving"
            node_id = min(dirty)
            dirty.discard(node_id)
            replica = self.replicas[node_id]
            if node_id in self.dropped:
                continue
            result = replica.core.poll(self.now)
            for reply in result.replies:
                route = self.routes.pop(reply.request_id, None)
                if route is None:
                    self.client_replies[reply.request_id] = reply.body
                    continue
                source, source_request_id, version = route
                body = type(reply.body).decode(reply.body.encode(version), version)
                if source.node_id not in self.dropped:
                    source.core.handle_response(source_request_id, body, self.now)
                    dirty.add(source.node_id)
            for send in result.sends:
                destination = send.destination
                target = self._target(destination.host, destination.port, destination.node_id)
                if target is None or target.node_id in self.dropped:
                    replica.core.handle_response(send.request_id, None, self.now)
                    dirty.add(node_id)
                    continue
                version = self.VERSIONS[send.api_key]
                body = type(send.body).decode(send.body.encode(version), version)
                if send.api_key == 18:  # answered by the server around the core, as the runtime does
                    low, high = self.kraft_ranges.get(target.node_id, (0, 1))
                    answer = messages.ApiVersionsResponse(error_code=0, supported_features=[
                        messages.ApiVersionsResponse.SupportedFeatureKey(
                            name="kraft.version", min_version=low, max_version=high)])
                    answer = type(answer).decode(answer.encode(version), version)
                    replica.core.handle_response(send.request_id, answer, self.now)
                    dirty.add(node_id)
                    continue
                self.routes[self.next_id] = (replica, send.request_id, version)
                target.core.handle_request(
                    InboundRequest(self.next_id, send.api_key, version, body, LISTENER), self.now
                )
                self.next_id += 1
                dirty.add(target.node_id)

    def run(self, until: int, step_ms: int = 5) -> None:
        while self.now < until:
            self.pump()
            self.now += step_ms

    def leader(self) -> Replica | None:
        leaders = [r for r in self.replicas.values() if r.core.is_leader and r.node_id not in self.dropped]
        assert len(leaders) <= 1
        return leaders[0] if leaders else None
