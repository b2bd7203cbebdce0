"""Helpers for the consensus core's unit and trace tests: replicas over in-memory logs, hand-built
requests, and a network that delivers everything at once and tells an observer what crossed it."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from simulation.memory import MemoryLog, MemoryStore

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.error_codes import ErrorCode
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.protocol.primitives import METADATA_TOPIC_ID, ZERO_UUID, Uuid
from kafka_admin_kraft.records import SnapshotId, control_batch, data_batch, encode_metadata_record
from kafka_admin_kraft.records.metadata import ApiMessageAndVersion
from kafka_admin_kraft_server.raft import rpc
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
    directory: Uuid | None = None,
    listeners: tuple[Endpoint, ...] | None = None,
) -> Replica:  # type: ignore[type-arg]
    """A replica over a bootstrapped log (or ``log``), with ``uuid(node_id)`` as its directory id and
    ``endpoint(node_id)`` as its listener unless told otherwise."""
    if log is None:
        log = MemoryLog()
        if kraft_version >= 1:
            bootstrap_snapshot(log, voters)
    store = store if store is not None else MemoryStore()
    directory = uuid(node_id) if directory is None else directory
    listeners = (endpoint(node_id),) if listeners is None else listeners
    identity = NodeIdentity(node_id, directory, CLUSTER, listeners)
    bootstrap = Bootstrap(voters if kraft_version == 0 else None, bootstrap_servers)
    core = RaftCore(identity, config or RaftConfig(), bootstrap, log, store, random.Random(seed), now)
    return Replica(node_id, core, log, store)


STATIC_ONE = voter_set([1], directories=False)
"""A static quorum of voter 1 alone (no directory ids)."""


def leader_with_log(epochs: list[int]) -> Replica:
    """Single static voter 1 whose log holds one batch per epoch listed; it elects itself at once."""
    log = MemoryLog()
    for offset, epoch in enumerate(epochs):
        log.append(noop_batch(offset, epoch))
    log.flush()
    replica = make_replica(1, STATIC_ONE, kraft_version=0, log=log)
    replica.core.poll(0)
    assert replica.core.is_leader
    return replica


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


@dataclass(frozen=True)
class Message:
    """A request or response as it crossed the network, decoded at its wire version; ``None`` as
    source or target is the test itself acting as a client."""

    source: int | None
    target: int | None
    body: Struct
    exchange: int
    """The network's id of the request and its response (a test's own request id for its requests)."""
    fate: str
    """``delivered``, ``lost`` (a cut link: the sender's request times out), ``refused`` (the
    target is down, or restarted since it sent the request: the send fails at once) or
    ``unsupported`` (no version both speak carries it, e.g. a pre-vote to a Vote v0-1 node: the
    sender's network client answers UNSUPPORTED_VERSION itself and the target never sees it)."""


class Network:
    """Delivers every request and response at once through the wire codec, on a clock that only moves
    when asked; nothing is lost but what goes to a dropped node or across a cut link."""

    VERSIONS = {
        messages.FetchRequest.API_KEY: 17,
        messages.ApiVersionsRequest.API_KEY: 4,
        messages.VoteRequest.API_KEY: 2,
        messages.BeginQuorumEpochRequest.API_KEY: 1,
        messages.EndQuorumEpochRequest.API_KEY: 1,
        messages.DescribeQuorumRequest.API_KEY: 2,
        messages.FetchSnapshotRequest.API_KEY: 1,
        messages.AddRaftVoterRequest.API_KEY: 1,
        messages.RemoveRaftVoterRequest.API_KEY: 0,
        messages.UpdateRaftVoterRequest.API_KEY: 0,
    }
    """The version each API crosses the wire at."""

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
        self.cut: set[tuple[int, int]] = set()
        """(source, target) links whose messages vanish while both nodes keep running (a partition)."""
        self.max_versions: dict[int, dict[int, int]] = {}
        """Per node, the highest version it speaks of an API where that is below ``VERSIONS`` (a node
        of an older Kafka line: ``{52: 1}`` for Kafka 3.9's Vote); a pair of nodes uses the lower."""
        self.on_message: Callable[[Message], None] | None = None
        """Told of every message between replicas and every reply to a request a test handed in."""

    def version(self, api_key: int, source: int, target: int) -> int:
        """The version a request crosses between two nodes at: the highest both speak."""
        highest = self.VERSIONS[api_key]
        return min(highest, *(self.max_versions.get(node, {}).get(api_key, highest)
                              for node in (source, target)))

    def _tell(self, source: int | None, target: int | None, body: Struct, exchange: int,
              fate: str = "delivered") -> None:
        if self.on_message is not None:
            self.on_message(Message(source, target, body, exchange, fate))

    def client_request(self, node_id: int, body: Struct, version: int, request_id: int) -> None:
        """Hand ``body`` to a node as a client sends it (through the wire codec, ``request_id`` below
        1000) and deliver everything that follows; the reply lands in ``client_replies``."""
        body = type(body).decode(body.encode(version), version)
        self._tell(None, node_id, body, request_id)
        self.replicas[node_id].core.handle_request(
            InboundRequest(request_id, type(body).API_KEY, version, body, LISTENER), self.now)
        self.pump()

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
                    self._tell(node_id, None, reply.body, reply.request_id)
                    continue
                source, source_request_id, version = route
                body = type(reply.body).decode(reply.body.encode(version), version)
                if (node_id, source.node_id) in self.cut:
                    self._tell(node_id, source.node_id, body, reply.request_id, "lost")
                # A restarted replica is a new object: answers to the old one's requests go nowhere.
                elif source.node_id not in self.dropped and self.replicas.get(source.node_id) is source:
                    self._tell(node_id, source.node_id, body, reply.request_id)
                    source.core.handle_response(source_request_id, body, self.now)
                    dirty.add(source.node_id)
                else:
                    self._tell(node_id, source.node_id, body, reply.request_id, "refused")
            for send in result.sends:
                exchange = self.next_id
                self.next_id += 1
                destination = send.destination
                target = self._target(destination.host, destination.port, destination.node_id)
                if target is None or target.node_id in self.dropped:
                    down = target.node_id if target is not None else destination.node_id
                    self._tell(node_id, down, send.body, exchange, "refused")
                    replica.core.handle_response(send.request_id, None, self.now)
                    dirty.add(node_id)
                    continue
                version = self.version(send.api_key, node_id, target.node_id)
                if version < rpc.lowest_version(send.body):
                    self._tell(node_id, target.node_id, send.body, exchange, "unsupported")
                    unsupported = rpc.error_response(send.api_key, ErrorCode.UNSUPPORTED_VERSION)
                    replica.core.handle_response(send.request_id, unsupported, self.now)
                    dirty.add(node_id)
                    continue
                body = type(send.body).decode(send.body.encode(version), version)
                if (node_id, target.node_id) in self.cut:
                    self._tell(node_id, target.node_id, body, exchange, "lost")
                    continue
                self._tell(node_id, target.node_id, body, exchange)
                if send.api_key == messages.ApiVersionsRequest.API_KEY:  # the server around the core answers
                    low, high = self.kraft_ranges.get(target.node_id, (0, 1))
                    answer = messages.ApiVersionsResponse(error_code=0, supported_features=[
                        messages.ApiVersionsResponse.SupportedFeatureKey(
                            name="kraft.version", min_version=low, max_version=high)])
                    answer = type(answer).decode(answer.encode(version), version)
                    if (target.node_id, node_id) in self.cut:
                        self._tell(target.node_id, node_id, answer, exchange, "lost")
                        continue
                    self._tell(target.node_id, node_id, answer, exchange)
                    replica.core.handle_response(send.request_id, answer, self.now)
                    dirty.add(node_id)
                    continue
                self.routes[exchange] = (replica, send.request_id, version)
                target.core.handle_request(
                    InboundRequest(exchange, send.api_key, version, body, LISTENER), self.now
                )
                dirty.add(target.node_id)

    def run(self, until: int, step_ms: int = 5) -> None:
        while self.now < until:
            self.pump()
            self.now += step_ms

    def leader(self) -> Replica | None:
        leaders = [r for r in self.replicas.values() if r.core.is_leader and r.node_id not in self.dropped]
        assert len(leaders) <= 1
        return leaders[0] if leaders else None
