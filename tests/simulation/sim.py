"""A seeded simulator: whole KRaft clusters of ``RaftCore`` on a simulated clock and network.

Everything random comes from one ``random.Random(seed)``, so a seed replays exactly::

    python -m tests.simulation.sim --seed 17 --voters 3 --observers 1 --kraft-version 1
    python -m tests.simulation.sim --seed 1000 --count 200 --duration-ms 20000   # a longer sweep

The network delivers requests and responses after a random delay (so they reorder), loses and
duplicates them, and splits the cluster into partitions for a while. Nodes crash (the log loses what
was not flushed, messages in flight to and from the node vanish) and restart as a new ``RaftCore``
over the surviving log and quorum-state; leaders sometimes resign gracefully (EndQuorumEpoch) and
stop; observers are sometimes wiped and come back empty (they catch up through FetchSnapshot). A
client appends records to whoever is leader. Messages cross the wire encoded at per-seed versions.

Quorums of mixed Kafka lines: the last ``old_voters`` voters run as Kafka 3.9 does for elections (no
pre-vote, Vote v0-1). A request goes at the highest version both nodes speak; one that version cannot
carry (a pre-vote to such a voter) is never sent: the sender gets UNSUPPORTED_VERSION at once, as the
runtime's peer client gives it. ``restart`` lets a test restart a node with timeouts of its own.

``Checker`` verifies after every event:

1. at most one leader per epoch;
2. a node's epoch never decreases (across restarts too);
3. a node's high watermark never decreases while it lives, and a leader's epoch high watermark
   never decreases while it stays leader;
4. committed entries never diverge: every node's log below its high watermark equals the committed
   history (the batches below the highest high watermark seen, taken from the node that had them);
5. committed entries are never lost: a majority of voters hold the whole committed history durably
   (flushed log, or a snapshot below their log start) - so no high watermark ever passed an offset
   that a majority had not flushed;
6. the leader of the highest epoch holds the whole committed history in its log;
7. one voter change at a time: consecutive voter sets in any log differ by at most one voter;
8. committed voter sets of any two replicas never disagree (same offset, same voter set);
9. no node receives a request at a version it does not speak (a Kafka 3.9 voter would close the
   connection on Vote v2).

With kraft.version 1 the faults include voter changes: a client asks the leader to add a live
non-voter or remove a voter (AddRaftVoter with or without AckWhenCommitted, RemoveRaftVoter);
ApiVersions to the new voter is answered by the simulated server around the core. Invariant 5 then
accepts a majority of any voter set in force (static, current or committed on some live node).

Clients also send DescribeQuorum (v0-v3) to random nodes: the leader must describe itself (epoch,
voters, high watermark) and every other node answer NOT_LEADER_OR_FOLLOWER.

After the faulty phase the network heals and every node restarts; the liveness check then wants one
leader that all live nodes follow, a committed history that grows, and every node caught up.
At the end, every snapshot is compared with the committed records below its end offset.
"""

from __future__ import annotations

import argparse
import bisect
import heapq
import random
import sys
from collections import deque
from dataclasses import dataclass, field, replace
from typing import Any

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.error_codes import ErrorCode
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.records import (
    ApiMessageAndVersion,
    MetadataRecord,
    RawMetadataRecord,
    SnapshotId,
    control_batch,
    decode_batch_bytes,
    decode_control_batch,
    decode_metadata_batch,
)
from kafka_admin_kraft_server.raft import rpc
from kafka_admin_kraft_server.raft.api import (
    Address,
    Bootstrap,
    Endpoint,
    InboundRequest,
    NodeIdentity,
    RaftConfig,
    ReplicaKey,
    VoterInfo,
    VoterSet,
)
from kafka_admin_kraft_server.raft.core import RaftCore
from kafka_admin_kraft_server.raft.voters import voters_record

# Relative, unlike the rest of tests/: this module also runs as ``python -m tests.simulation.sim``.
from .memory import BatchKey, MemoryLog, MemoryStore

LISTENER = "CONTROLLER"
CLUSTER_ID = "sim-cluster-id-000000"

REQUEST_CLASSES: dict[int, type[Struct]] = {}
RESPONSE_CLASSES: dict[int, type[Struct]] = {}


def _classes() -> None:
    if REQUEST_CLASSES:
        return
    for key, request, response in (
        (1, messages.FetchRequest, messages.FetchResponse),
        (52, messages.VoteRequest, messages.VoteResponse),
        (53, messages.BeginQuorumEpochRequest, messages.BeginQuorumEpochResponse),
        (54, messages.EndQuorumEpochRequest, messages.EndQuorumEpochResponse),
        (55, messages.DescribeQuorumRequest, messages.DescribeQuorumResponse),
        (59, messages.FetchSnapshotRequest, messages.FetchSnapshotResponse),
        (18, messages.ApiVersionsRequest, messages.ApiVersionsResponse),
        (80, messages.AddRaftVoterRequest, messages.AddRaftVoterResponse),
        (81, messages.RemoveRaftVoterRequest, messages.RemoveRaftVoterResponse),
        (82, messages.UpdateRaftVoterRequest, messages.UpdateRaftVoterResponse),
    ):
        REQUEST_CLASSES[key] = request
        RESPONSE_CLASSES[key] = response


class SimulationFailure(AssertionError):
    """An invariant broke; the message says which, where, and how to replay the seed."""


@dataclass(frozen=True)
class Scenario:
    """The parameters of one run; ``command()`` replays it."""

    seed: int
    voters: int = 3
    observers: int = 1
    kraft_version: int = 1
    duration_ms: int = 6_000
    heal_ms: int = 8_000
    faults: bool = True
    loss: float = 0.05
    duplicate: float = 0.03
    max_delay_ms: int = 25
    append_interval_ms: int = 200
    snapshot_interval_bytes: int = 2_500
    wire: bool = True
    apply_budget_bytes: int = RaftConfig.apply_budget_bytes
    """Image work per poll: small budgets spread snapshot loads and writes over many polls."""
    max_fetch_bytes: int = RaftConfig.max_fetch_bytes
    """Fetch and FetchSnapshot chunk size: small ones copy a snapshot in many chunks."""
    old_voters: int = 0
    """How many voters (the highest ids) run as Kafka 3.9: no pre-vote, Vote v0-1."""

    def command(self) -> str:
        return (
            f"python -m tests.simulation.sim --seed {self.seed} --voters {self.voters} "
            f"--observers {self.observers} --kraft-version {self.kraft_version} "
            f"--duration-ms {self.duration_ms} --heal-ms {self.heal_ms}"
            + ("" if self.faults else " --no-faults")
            + ("" if self.wire else " --no-wire")
            + f" --apply-budget-bytes {self.apply_budget_bytes} --max-fetch-bytes {self.max_fetch_bytes}"
            + f" --old-voters {self.old_voters}"
        )


def scenario_for_seed(seed: int) -> Scenario:
    """The CI mix: cluster shape, kraft.version, budgets and the voters running as Kafka 3.9 (none,
    one, two) vary with the seed."""
    shapes = [(3, 1), (5, 1), (3, 0), (1, 1), (5, 2), (3, 2)]
    voters, observers = shapes[seed % len(shapes)]
    budgets = [1, 300, RaftConfig.apply_budget_bytes]
    chunks = [64, 700, RaftConfig.max_fetch_bytes]
    return Scenario(seed=seed, voters=voters, observers=observers, kraft_version=(seed // len(shapes)) % 2,
                    apply_budget_bytes=budgets[(seed // 12) % 3], max_fetch_bytes=chunks[(seed // 36) % 3],
                    old_voters=min((seed // 108) % 3, voters))


@dataclass
class SimNode:
    node_id: int
    is_voter: bool
    directory_id: Uuid
    log: MemoryLog
    store: MemoryStore
    core: RaftCore | None = None
    incarnation: int = 0
    timer_generation: int = 0
    inbound: dict[int, tuple[int, int, int, int, int]] = field(default_factory=dict)
    """Our request id -> (source node, its incarnation, its request id, api key, version)."""
    stopping: bool = False
    old_line: bool = False
    """Holds elections as Kafka 3.9 does: no pre-vote, Vote v0-1."""
    config: RaftConfig | None = None
    """Its own timeouts, when a test gave it some (``Simulation.restart``)."""

    @property
    def max_versions(self) -> dict[int, int]:
        """The highest version it speaks of an API where below the cluster's."""
        return {52: 1} if self.old_line else {}

    @property
    def alive(self) -> bool:
        return self.core is not None

    @property
    def address(self) -> tuple[str, int]:
        return f"n{self.node_id}", 9000 + self.node_id


@dataclass(order=True)
class _Event:
    time: int
    seq: int
    kind: str = field(compare=False)
    args: tuple[Any, ...] = field(compare=False)


class Simulation:
    """One seeded cluster run."""

    def __init__(self, scenario: Scenario) -> None:
        _classes()
        self.scenario = scenario
        self.rng = random.Random(scenario.seed)
        self.now = 0
        self.seq = 0
        self.events: list[_Event] = []
        self.trace: deque[str] = deque(maxlen=60)
        self.faulty = scenario.faults
        self.partition: dict[int, int] | None = None
        self.next_request_id = 1
        self.config = RaftConfig(snapshot_interval_bytes=scenario.snapshot_interval_bytes,
                                 apply_budget_bytes=scenario.apply_budget_bytes,
                                 max_fetch_bytes=scenario.max_fetch_bytes)
        self.versions = {
            1: self.rng.choice([15, 16, 17]),
            52: 2,
            53: self.rng.choice([0, 1]),
            54: self.rng.choice([0, 1]),
            55: 2,
            59: self.rng.choice([0, 1]),
            18: 4,
            80: self.rng.choice([0, 1]),
            81: 0,
            82: 0,
        }
        self.voter_changes: dict[str, int] = {}
        """Answers to the client's AddRaftVoter / RemoveRaftVoter, by error name."""
        self.nodes: dict[int, SimNode] = {}
        count = scenario.voters + scenario.observers
        for node_id in range(1, count + 1):
            self.nodes[node_id] = SimNode(
                node_id, node_id <= scenario.voters, self._uuid(), MemoryLog(), MemoryStore()
            )
        self.static_voters = VoterSet(
            {
                node.node_id: VoterInfo(
                    ReplicaKey(
                        node.node_id, node.directory_id if scenario.kraft_version else Uuid(bytes(16))
                    ),
                    (Endpoint(LISTENER, *node.address),),
                    0,
                    1,
                )
                for node in self.nodes.values()
                if node.is_voter
            }
        )
        for node in self.nodes.values():
            node.old_line = scenario.voters - scenario.old_voters < node.node_id <= scenario.voters
            self._format(node)
        self.checker = Checker(self)
        self.appended = 0
        self.snapshots_installed = 0
        self.elections = 0
        self.roles: dict[int, tuple[str, int, int] | None] = {}
        self.touched: set[int] = set()
        """Nodes whose core or log changed during the current event."""

    # -- setup ---------------------------------------------------------------------------------

    def _uuid(self) -> Uuid:
        return Uuid(bytes([self.rng.randrange(1, 256)]) + self.rng.randbytes(15))

    def _format(self, node: SimNode) -> None:
        """kafka-storage format: with kraft.version 1 a bootstrap snapshot (0, 0) holding the voters."""
        if self.scenario.kraft_version >= 1:
            node.log.write_snapshot(
                SnapshotId(0, 0),
                [
                    control_batch(
                        0,
                        0,
                        0,
                        [
                            messages.SnapshotHeaderRecord(version=0, last_contained_log_timestamp=0),
                            messages.KRaftVersionRecord(version=0, k_raft_version=1),
                            voters_record(self.static_voters),
                        ],
                    ),
                    control_batch(3, 0, 0, [messages.SnapshotFooterRecord(version=0)]),
                ],
            )

    def _identity(self, node: SimNode) -> NodeIdentity:
        return NodeIdentity(node.node_id, node.directory_id, CLUSTER_ID, (Endpoint(LISTENER, *node.address),))

    def _bootstrap(self, node: SimNode) -> Bootstrap:
        static = self.static_voters if self.scenario.kraft_version == 0 else None
        servers: tuple[Address, ...] = ()
        if not node.is_voter or self.scenario.kraft_version == 0 and node.node_id % 2 == 0:
            servers = tuple(Address(*other.address) for other in self.nodes.values() if other.is_voter)
        return Bootstrap(static, servers)

    def _start(self, node: SimNode) -> None:
        node.core = RaftCore(
            self._identity(node),
            replace(node.config or self.config, pre_vote=not node.old_line),
            self._bootstrap(node),
            node.log,
            node.store,
            random.Random(self.rng.random()),
            self.now,
        )
        node.incarnation += 1
        node.inbound.clear()
        node.stopping = False
        self.trace.append(f"{self.now}: start n{node.node_id} as {node.core.role} epoch {node.core.epoch}")
        self._run(node)

    # -- event loop ----------------------------------------------------------------------------

    def _schedule(self, time: int, kind: str, *args: Any) -> None:
        self.seq += 1
        heapq.heappush(self.events, _Event(time, self.seq, kind, args))

    def run(self) -> Simulation:
        scenario = self.scenario
        self.start()
        self.advance(scenario.duration_ms + scenario.heal_ms)
        if scenario.heal_ms > 0:
            self.checker.check_liveness()
        self.checker.check_snapshots()
        return self

    def start(self) -> None:
        """Start every node and the workload: appends, snapshots, DescribeQuorum, faults (when the
        scenario has them) until the heal at ``duration_ms``."""
        scenario = self.scenario
        for node in self.nodes.values():
            self._start(node)
        self._schedule(self.rng.randrange(scenario.append_interval_ms), "append")
        if scenario.faults:
            self._schedule(self.rng.randrange(500, 2000), "fault")
        self._schedule(self.rng.randrange(1000, 4000), "snapshot")
        self._schedule(self.rng.randrange(200, 1500), "describe")
        self._schedule(scenario.duration_ms, "heal")
        self._trace_roles()
        self.checker.check(set(self.nodes))
        self.touched.clear()

    def advance(self, until: int) -> None:
        """Carry out every event up to ``until`` ms, checking the invariants after each."""
        while self.events and self.events[0].time <= until:
            event = heapq.heappop(self.events)
            self.now = event.time
            if getattr(self, "_on_" + event.kind)(*event.args) or self.touched:
                self._trace_roles()
                self.checker.check(self.touched)
                self.touched.clear()
        self.now = max(self.now, until)

    def _trace_roles(self) -> None:
        for node in (self.nodes[node_id] for node_id in self.touched):
            core = node.core
            now = (core.role, core.epoch, core.leader_id) if core is not None else None
            if now != self.roles.get(node.node_id) and core is not None:
                self.trace.append(
                    f"{self.now}: n{node.node_id} {core.role} epoch {core.epoch} "
                    f"leader {core.leader_id} hwm {core.high_watermark} end {node.log.end_offset()}"
                )
                if core.role == "leader":
                    self.elections += 1
            self.roles[node.node_id] = now

    def fail(self, message: str) -> SimulationFailure:
        trace = "\n  ".join(self.trace)
        return SimulationFailure(
            f"{message}\n  at t={self.now} ms; replay with: {self.scenario.command()}\n"
            f"  last events:\n  {trace}"
        )

    def _run(self, node: SimNode) -> None:
        """Poll a node and carry out what it asks for."""
        core = node.core
        if core is None:
            return
        self.touched.add(node.node_id)
        result = core.poll(self.now)
        for send in result.sends:
            self._send_request(node, send.request_id, send.destination, send.api_key, send.body)
        for reply in result.replies:
            self._send_response(node, reply.request_id, reply.body)
        node.timer_generation += 1
        self._schedule(max(result.next_poll_ms, self.now + 1), "poll", node.node_id, node.timer_generation)

    def _on_poll(self, node_id: int, generation: int) -> bool:
        node = self.nodes[node_id]
        if not node.alive or node.timer_generation != generation:
            return False
        self._run(node)
        return True

    # -- network -------------------------------------------------------------------------------

    def _resolve(self, address: Address) -> SimNode | None:
        if address.node_id is not None:
            return self.nodes.get(address.node_id)
        for node in self.nodes.values():
            if node.address == (address.host, address.port):
                return node
        return None

    def _connected(self, a: int, b: int) -> bool:
        return self.partition is None or self.partition[a] == self.partition[b]

    def _delay(self) -> int:
        return 1 + self.rng.randrange(self.scenario.max_delay_ms)

    def _copies(self) -> int:
        if not self.faulty:
            return 1
        if self.rng.random() < self.scenario.loss:
            return 0
        return 2 if self.rng.random() < self.scenario.duplicate else 1

    def _encode(self, body: Struct, version: int) -> Any:
        return body.encode(version) if self.scenario.wire else body

    def _version(self, api_key: int, *nodes: SimNode) -> int:
        """The highest version of the API the nodes all speak."""
        highest = self.versions[api_key]
        return min(highest, *(node.max_versions.get(api_key, highest) for node in nodes))

    def _send_request(
        self, source: SimNode, request_id: int, destination: Address, api_key: int, body: Struct
    ) -> None:
        target = self._resolve(destination)
        if target is None or not target.alive or not self._connected(source.node_id, target.node_id):
            if self.rng.random() < 0.5:  # connection refused, seen quickly; otherwise a silent timeout
                self._schedule(
                    self.now + self._delay(),
                    "response",
                    source.node_id,
                    source.incarnation,
                    request_id,
                    api_key,
                    self.versions[api_key],
                    None,
                )
            return
        version = self._version(api_key, source, target)
        if version < rpc.lowest_version(body):  # never sent: the sender's client answers at once
            answer = rpc.error_response(api_key, ErrorCode.UNSUPPORTED_VERSION)
            self.trace.append(f"{self.now}: n{source.node_id} cannot send {body.NAME} to n{target.node_id} "
                              f"at v{version}")
            self._schedule(self.now, "response", source.node_id, source.incarnation, request_id, api_key,
                           version, self._encode(answer, version))
            return
        payload = self._encode(body, version)
        for _ in range(self._copies()):
            self._schedule(
                self.now + self._delay(),
                "request",
                source.node_id,
                source.incarnation,
                target.node_id,
                target.incarnation,
                request_id,
                api_key,
                version,
                payload,
            )

    def _on_request(
        self,
        source_id: int,
        source_incarnation: int,
        target_id: int,
        target_incarnation: int,
        request_id: int,
        api_key: int,
        version: int,
        payload: Any,
    ) -> bool:
        target = self.nodes[target_id]
        if (
            target.core is None
            or target.incarnation != target_incarnation
            or not self._connected(source_id, target_id)
        ):
            return False
        if version > target.max_versions.get(api_key, version):
            raise self.fail(f"n{source_id} sent {REQUEST_CLASSES[api_key].NAME} v{version} to n{target_id}, "
                            f"which speaks v{target.max_versions[api_key]} at most")
        body = REQUEST_CLASSES[api_key].decode(payload, version) if self.scenario.wire else payload
        if api_key == 18:  # ApiVersions: answered by the server around the core (kraft.version 0-1)
            answer = messages.ApiVersionsResponse(error_code=0, supported_features=[
                messages.ApiVersionsResponse.SupportedFeatureKey(name="kraft.version", min_version=0,
                                                                 max_version=1)])
            for _ in range(self._copies()):
                self._schedule(self.now + self._delay(), "response", source_id, source_incarnation,
                               request_id, api_key, version, self._encode(answer, version))
            return True
        local_id = self.next_request_id
        self.next_request_id += 1
        target.inbound[local_id] = (source_id, source_incarnation, request_id, api_key, version)
        target.core.handle_request(InboundRequest(local_id, api_key, version, body, LISTENER), self.now)
        self._run(target)
        return True

    def _send_response(self, node: SimNode, local_id: int, body: Struct) -> None:
        route = node.inbound.pop(local_id, None)
        if route is None:
            raise self.fail(f"n{node.node_id} replied to unknown request {local_id}")
        source_id, source_incarnation, request_id, api_key, version = route
        if source_id == 0:  # a client's voter change
            error = getattr(body, "error_code", -1)
            self.voter_changes[str(error)] = self.voter_changes.get(str(error), 0) + 1
            self.trace.append(f"{self.now}: n{node.node_id} answers voter change with error {error}")
            return
        payload = self._encode(body, version)
        if not self._connected(node.node_id, source_id):
            return
        for _ in range(self._copies()):
            self._schedule(
                self.now + self._delay(),
                "response",
                source_id,
                source_incarnation,
                request_id,
                api_key,
                version,
                payload,
            )

    def _on_response(
        self, node_id: int, incarnation: int, request_id: int, api_key: int, version: int, payload: Any
    ) -> bool:
        node = self.nodes[node_id]
        if node.core is None or node.incarnation != incarnation:
            return False
        body = None
        if payload is not None:
            body = RESPONSE_CLASSES[api_key].decode(payload, version) if self.scenario.wire else payload
        node.core.handle_response(request_id, body, self.now)
        self._run(node)
        return True

    # -- workload and faults -------------------------------------------------------------------

    def _records(self) -> list[Struct | MetadataRecord]:
        roll = self.rng.random()
        if roll < 0.2:
            # Records the image keeps in log order (by reference), some in metadata transactions.
            records: list[Struct | MetadataRecord] = [
                RawMetadataRecord(4, 0, f"config-{self.rng.randrange(1000)}".encode())
                for _ in range(self.rng.randrange(1, 4))
            ]
            if roll < 0.08:
                end: Struct = (messages.AbortTransactionRecord(reason="x") if roll < 0.03
                               else messages.EndTransactionRecord())
                level = self.rng.randrange(30)
                records = [messages.BeginTransactionRecord(name="t"), *records,
                           messages.FeatureLevelRecord(name="group.version", feature_level=level), end]
            return records
        roll = self.rng.random()
        if roll < 0.15:
            return [
                messages.FeatureLevelRecord(
                    name=self.rng.choice(["metadata.version", "group.version"]),
                    feature_level=self.rng.randrange(0, 30),
                )
            ]
        if roll < 0.3:
            index = self.rng.randrange(8)
            return [
                messages.TopicRecord(
                    name=f"topic-{index}-{self.rng.randrange(3)}",
                    topic_id=Uuid(bytes(15) + bytes([index + 100])),
                )
            ]
        return [messages.NoOpRecord() for _ in range(self.rng.randrange(1, 3))]

    def _on_append(self) -> bool:
        for node in self.nodes.values():
            if node.core is not None and node.core.is_leader and not node.stopping:
                node.core.append(self._records(), self.now)
                self.appended += 1
                self.touched.add(node.node_id)
                # The leader flushes on its next poll: until then a crash loses the batch.
                self._schedule(self.now + self.rng.randrange(3), "poll", node.node_id, node.timer_generation)
        self._schedule(
            self.now
            + self.scenario.append_interval_ms // 2
            + self.rng.randrange(self.scenario.append_interval_ms),
            "append",
        )
        return True

    def _on_describe(self) -> bool:
        """A client's DescribeQuorum to a random node: the leader describes itself, others refuse."""
        live = [node for node in self.nodes.values() if node.core is not None]
        self._schedule(self.now + self.rng.randrange(200, 1500), "describe")
        if not live:
            return False
        node = self.rng.choice(live)
        core = node.core
        assert core is not None
        version = self.rng.randrange(4)
        request = messages.DescribeQuorumRequest(
            topics=[
                messages.DescribeQuorumRequest.TopicData(
                    topic_name="__cluster_metadata",
                    partitions=[messages.DescribeQuorumRequest.PartitionData()],
                )
            ]
        )
        local_id = self.next_request_id
        self.next_request_id += 1
        core.handle_request(InboundRequest(local_id, 55, version, request, LISTENER), self.now)
        was_leader, high_watermark, epoch = core.is_leader, core.leader_high_watermark, core.epoch
        voters = sorted(core.voters.ids())
        result = core.poll(self.now)
        replies = [reply for reply in result.replies if reply.request_id == local_id]
        if len(replies) != 1:
            raise self.fail(f"DescribeQuorum to n{node.node_id} got {len(replies)} answers")
        for send in result.sends:
            self._send_request(node, send.request_id, send.destination, send.api_key, send.body)
        for reply in result.replies:
            if reply.request_id != local_id:
                self._send_response(node, reply.request_id, reply.body)
        body = messages.DescribeQuorumResponse.decode(replies[0].body.encode(version), version)
        partition = body.topics[0].partitions[0]
        if was_leader:
            if (partition.error_code, partition.leader_id, partition.leader_epoch) != (
                0,
                node.node_id,
                epoch,
            ):
                raise self.fail(f"leader n{node.node_id} describes {partition}")
            if [v.replica_id for v in partition.current_voters] != voters:
                raise self.fail(
                    f"leader n{node.node_id} lists voters {partition.current_voters}, not {voters}"
                )
            if partition.high_watermark != high_watermark:
                raise self.fail(
                    f"DescribeQuorum high watermark {partition.high_watermark} != {high_watermark}"
                )
        elif partition.error_code != 6:
            raise self.fail(f"non-leader n{node.node_id} answers DescribeQuorum with {partition.error_code}")
        self.touched.add(node.node_id)
        node.timer_generation += 1
        self._schedule(max(result.next_poll_ms, self.now + 1), "poll", node.node_id, node.timer_generation)
        return True

    def _on_snapshot(self) -> bool:
        live = [node for node in self.nodes.values() if node.core is not None]
        if live:
            node = self.rng.choice(live)
            assert node.core is not None
            node.core.snapshot(self.now)
            self._run(node)
        self._schedule(self.now + self.rng.randrange(1000, 4000), "snapshot")
        return True

    def _on_fault(self) -> bool:
        if not self.faulty:
            return False
        roll = self.rng.random()
        live = [node for node in self.nodes.values() if node.core is not None and not node.stopping]
        if roll < 0.3 and self.partition is None:
            ids = list(self.nodes)
            self.rng.shuffle(ids)
            cut = self.rng.randrange(1, len(ids)) if len(ids) > 1 else 1
            self.partition = {node_id: (0 if index < cut else 1) for index, node_id in enumerate(ids)}
            self.trace.append(f"{self.now}: partition {sorted(ids[:cut])} | {sorted(ids[cut:])}")
            self._schedule(self.now + self.rng.randrange(300, 4000), "unpartition")
        elif roll < 0.6 and live:
            node = self.rng.choice(live)
            self._crash(node)
            self._schedule(self.now + self.rng.randrange(100, 3000), "restart", node.node_id)
        elif roll < 0.75:
            leaders = [node for node in live if node.core is not None and node.core.is_leader]
            if leaders:
                node = leaders[0]
                assert node.core is not None
                node.core.resign(self.now)
                node.stopping = True
                self.trace.append(f"{self.now}: n{node.node_id} resigns")
                self._run(node)
                self._schedule(self.now + self.rng.randrange(50, 400), "stop", node.node_id)
        elif roll < 0.85:
            in_use = set().union(*(node.core.voters.ids() for node in live if node.core is not None))
            observers = [node for node in live if not node.is_voter and node.node_id not in in_use]
            if observers:
                node = self.rng.choice(observers)
                self._crash(node)
                self.snapshots_installed += node.log.installs
                node.log = MemoryLog()
                node.store = MemoryStore()
                node.directory_id = self._uuid()
                self._format(node)
                self.checker.forget(node.node_id)
                self.trace.append(f"{self.now}: n{node.node_id} wiped")
                self._schedule(self.now + self.rng.randrange(100, 1000), "restart", node.node_id)
        elif roll < 0.95 and self.scenario.kraft_version >= 1:
            self._voter_change(live)
        self._schedule(self.now + self.rng.randrange(200, 1500), "fault")
        return True

    def _voter_change(self, live: list[SimNode]) -> None:
        """A client asks the leader to add a live non-voter (with its current directory id) or to
        remove a voter; the answer is only counted (the checker watches the voter sets)."""
        leaders = [node for node in live if node.core is not None and node.core.is_leader]
        if not leaders:
            return
        node = leaders[0]
        core = node.core
        assert core is not None
        voters = core.voters
        candidates = [other for other in live if other.node_id not in voters.voters]
        body: Struct
        if candidates and (self.rng.random() < 0.6 or len(voters.voters) <= 1):
            new = self.rng.choice(candidates)
            api_key, version = 80, self.versions[80]
            body = messages.AddRaftVoterRequest(
                cluster_id=CLUSTER_ID, timeout_ms=2000, voter_id=new.node_id,
                voter_directory_id=new.directory_id,
                listeners=[messages.AddRaftVoterRequest.Listener(name=LISTENER, host=new.address[0],
                                                                 port=new.address[1])],
                ack_when_committed=self.rng.random() < 0.5)
            self.trace.append(f"{self.now}: client adds n{new.node_id} through n{node.node_id}")
        elif len(voters.voters) > 1:
            info = voters.voters[self.rng.choice(sorted(voters.voters))]
            api_key, version = 81, 0
            body = messages.RemoveRaftVoterRequest(cluster_id=CLUSTER_ID, voter_id=info.key.id,
                                                   voter_directory_id=info.key.directory_id)
            self.trace.append(f"{self.now}: client removes n{info.key.id} through n{node.node_id}")
        else:
            return
        local_id = self.next_request_id
        self.next_request_id += 1
        node.inbound[local_id] = (0, 0, 0, api_key, version)
        core.handle_request(InboundRequest(local_id, api_key, version, body, LISTENER), self.now)
        self._run(node)

    def installs(self) -> int:
        """Snapshots installed through FetchSnapshot (wiped logs are counted too)."""
        return self.snapshots_installed + sum(node.log.installs for node in self.nodes.values())

    def _crash(self, node: SimNode) -> None:
        self.touched.add(node.node_id)
        node.log.crash()
        node.core = None
        node.inbound.clear()
        node.incarnation += 1
        self.trace.append(f"{self.now}: n{node.node_id} crashes")

    def _on_stop(self, node_id: int) -> bool:
        node = self.nodes[node_id]
        if node.core is None or not node.stopping:
            return False
        node.log.flush()
        self._crash(node)
        self._schedule(self.now + self.rng.randrange(100, 2000), "restart", node_id)
        return True

    def restart(self, node_id: int, config: RaftConfig | None = None) -> None:
        """Stop a node at once (what it did not flush is lost) and start it again, with ``config``'s
        timeouts from now on (None: the cluster's)."""
        node = self.nodes[node_id]
        if node.core is not None:
            self._crash(node)
        node.config = config
        self._start(node)

    def _on_restart(self, node_id: int) -> bool:
        node = self.nodes[node_id]
        if node.core is not None:
            return False
        self._start(node)
        return True

    def _on_unpartition(self) -> bool:
        if self.partition is None:
            return False
        self.partition = None
        self.trace.append(f"{self.now}: partition healed")
        return True

    def _on_heal(self) -> bool:
        self.faulty = False
        self.partition = None
        self.trace.append(f"{self.now}: faults stop")
        for node in self.nodes.values():
            if node.core is None:
                self._start(node)
        self.checker.heal_start(self.now)
        return True


class Checker:
    """The invariants of the module docstring, checked after every event (incrementally)."""

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.committed: list[BatchKey] = []
        self.committed_bases: list[int] = []
        self.committed_end = 0
        self.committed_bytes: dict[int, bytes] = {}
        self.leader_of_epoch: dict[int, int] = {}
        self.max_epoch: dict[int, int] = {}
        self.max_hwm: dict[tuple[int, int], int] = {}
        self.leader_hwm: dict[tuple[int, int, int], int] = {}
        self.first_leader_ms: int | None = None
        self._prefix_cache: dict[int, tuple[int, int, int, int]] = {}
        self._durable_cache: tuple[Any, ...] = ()
        self.heal_at: int | None = None
        self.committed_at_heal = 0
        self.committed_voters: dict[int, tuple[ReplicaKey, ...]] = {}

    def _fail(self, message: str) -> SimulationFailure:
        return self.sim.fail(message)

    def forget(self, node_id: int) -> None:
        """A wiped node is a new replica: its epoch starts over."""
        self.max_epoch.pop(node_id, None)

    def check(self, touched: set[int]) -> None:
        """Check after an event; only the ``touched`` nodes changed (the others are as last checked)."""
        sim = self.sim
        live = [node for node in sim.nodes.values() if node.core is not None]
        changed = [sim.nodes[node_id] for node_id in touched if sim.nodes[node_id].core is not None]
        for node in changed:
            core = node.core
            assert core is not None
            epoch = core.epoch
            if epoch < self.max_epoch.get(node.node_id, -1):
                raise self._fail(f"n{node.node_id} epoch went from {self.max_epoch[node.node_id]} to {epoch}")
            self.max_epoch[node.node_id] = epoch
            hwm = core.high_watermark
            key = (node.node_id, node.incarnation)
            if hwm < self.max_hwm.get(key, -1):
                raise self._fail(f"n{node.node_id} high watermark went from {self.max_hwm[key]} to {hwm}")
            self.max_hwm[key] = hwm
            if core.is_leader:
                if self.first_leader_ms is None:
                    self.first_leader_ms = sim.now
                leader = self.leader_of_epoch.setdefault(epoch, node.node_id)
                if leader != node.node_id:
                    raise self._fail(f"two leaders in epoch {epoch}: n{leader} and n{node.node_id}")
                leader_key = (node.node_id, node.incarnation, epoch)
                leader_hwm = core.leader_high_watermark
                if leader_hwm < self.leader_hwm.get(leader_key, -1):
                    raise self._fail(
                        f"leader n{node.node_id} high watermark went from "
                        f"{self.leader_hwm[leader_key]} to {leader_hwm} in epoch {epoch}"
                    )
                self.leader_hwm[leader_key] = leader_hwm
        if any(node.core is not None and node.core.high_watermark > self.committed_end for node in changed):
            self._extend(live)
        for node in live:
            self._check_prefix(node)
        for node in changed:
            self._check_voter_sets(node)
        self._check_durability()
        self._check_leader_completeness(live)

    # -- committed history ---------------------------------------------------------------------

    def _extend(self, live: list[SimNode]) -> None:
        """Grow the committed history up to the highest high watermark, from a node holding the batches."""
        target = max((node.core.high_watermark for node in live if node.core is not None), default=-1)
        progress = True
        while target > self.committed_end and progress:
            progress = False
            for node in sorted(live, key=lambda n: -n.core.high_watermark if n.core else 0):
                assert node.core is not None
                hwm = node.core.high_watermark
                if hwm <= self.committed_end:
                    continue
                keys = node.log.all_keys()
                bases = [key[0] for key in keys]
                index = bisect.bisect_left(bases, self.committed_end)
                if index >= len(keys) or keys[index][0] != self.committed_end:
                    continue
                while index < len(keys) and keys[index][1] <= hwm:
                    key = keys[index]
                    data = node.log.batch_bytes(key[0])
                    if data is not None:
                        self.committed_bytes[key[0]] = data
                    self.committed.append(key)
                    self.committed_bases.append(key[0])
                    self.committed_end = key[1]
                    index += 1
                    progress = True
        if target > self.committed_end:
            raise self._fail(
                f"a high watermark of {target} names batches no log holds past {self.committed_end}"
            )

    def _held(self, start: int, keys: list[BatchKey]) -> int:
        """How far ``keys`` (a log from offset ``start``, with everything below covered by a snapshot)
        agrees with the committed history."""
        if start >= self.committed_end:
            return start
        index = bisect.bisect_left(self.committed_bases, start)
        if index >= len(self.committed) or self.committed_bases[index] != start:
            return start
        length = min(len(keys), len(self.committed) - index)
        if keys[:length] == self.committed[index : index + length]:
            return self.committed[index + length - 1][1] if length else start
        for offset in range(length):
            if keys[offset] != self.committed[index + offset]:
                return self.committed[index + offset][0]
        return start

    def _check_prefix(self, node: SimNode) -> None:
        core = node.core
        assert core is not None
        hwm = core.high_watermark
        state = (node.log.mutations, hwm, len(self.committed), node.incarnation)
        if self._prefix_cache.get(node.node_id) == state:
            return
        self._prefix_cache[node.node_id] = state
        keys = node.log.all_keys()
        if hwm <= 0 or not keys:
            return
        bases = [key[0] for key in keys]
        count = bisect.bisect_left(bases, hwm)
        if count == 0:
            return
        index = bisect.bisect_left(self.committed_bases, keys[0][0])
        if keys[:count] != self.committed[index : index + count]:
            mismatch = next(
                i
                for i in range(count)
                if index + i >= len(self.committed) or keys[i] != self.committed[index + i]
            )
            raise self._fail(
                f"n{node.node_id} diverges from the committed history at offset {keys[mismatch][0]} "
                f"below its high watermark {hwm}: {keys[mismatch]} vs "
                f"{self.committed[index + mismatch] if index + mismatch < len(self.committed) else None}"
            )

    def _check_voter_sets(self, node: SimNode) -> None:
        """7. One voter change at a time: consecutive voter sets of a log differ by at most one voter.
        8. Committed voter sets never disagree: the voter set a node read at an offset below its high
           watermark is the one every other node read there."""
        core = node.core
        assert core is not None
        entries = core._history.voters.entries()
        hwm = core.high_watermark
        for (_, before), (offset, after) in zip(entries, entries[1:], strict=False):
            if len(before.ids() ^ after.ids()) > 1:
                raise self._fail(f"n{node.node_id} changes voters {sorted(before.ids())} -> "
                                 f"{sorted(after.ids())} at offset {offset} in one step")
        for offset, voters in entries:
            if offset >= hwm or offset < 0:
                continue
            keys = tuple(sorted(info.key for info in voters.voters.values()))
            known = self.committed_voters.setdefault(offset, keys)
            if known != keys:
                raise self._fail(f"n{node.node_id} read committed voters {keys} at offset {offset}, "
                                 f"another node {known}")

    def _voter_candidates(self) -> list[frozenset[int]]:
        """Voter sets a majority of which must hold the committed history: the static ones, and the
        current and committed sets of every live node (with voter changes the set that committed an
        offset may be any of these)."""
        sets = {frozenset(node.node_id for node in self.sim.nodes.values() if node.is_voter)}
        for node in self.sim.nodes.values():
            if node.core is not None:
                sets.add(node.core.voters.ids())
                sets.add(node.core.committed_voters.ids())
        return [voters for voters in sets if voters]

    def _check_durability(self) -> None:
        nodes = list(self.sim.nodes.values())
        state = (len(self.committed), *((node.log.mutations, node.log.flushed_offset()) for node in nodes))
        if state == self._durable_cache:
            return
        self._durable_cache = state
        held_by = {node.node_id: self._held(node.log.start_offset(),
                                            node.log.live_keys()[: node.log.durable_count()])
                   for node in nodes}
        failures = []
        for voters in self._voter_candidates():
            held = sorted((held_by[node_id] for node_id in voters if node_id in held_by), reverse=True)
            majority = len(voters) // 2 + 1
            if len(held) >= majority and held[majority - 1] >= self.committed_end:
                return
            failures.append((sorted(voters), held))
        raise self._fail(
            f"committed offsets up to {self.committed_end} are durable on fewer than a majority of "
            f"any voter set (voters and held: {failures})"
        )

    def _check_leader_completeness(self, live: list[SimNode]) -> None:
        leaders = [node for node in live if node.core is not None and node.core.is_leader]
        if not leaders:
            return
        leader = max(leaders, key=lambda node: node.core.epoch if node.core else -1)
        assert leader.core is not None
        if leader.core.epoch < max(self.leader_of_epoch):
            return  # a stale leader; a later epoch had a leader already
        held = self._held(leader.log.start_offset(), leader.log.live_keys())
        if held < self.committed_end:
            assert leader.core is not None
            raise self._fail(
                f"leader n{leader.node_id} of epoch {leader.core.epoch} lacks committed offsets "
                f"{held}..{self.committed_end}"
            )

    # -- liveness and snapshots ----------------------------------------------------------------

    def heal_start(self, now: int) -> None:
        self.heal_at = now
        self.committed_at_heal = self.committed_end

    def check_liveness(self) -> None:
        """After the healed phase: one leader that every node follows, progress, everyone caught up."""
        sim = self.sim
        cores = [node.core for node in sim.nodes.values() if node.core is not None]
        leaders = [core for core in cores if core.is_leader]
        if len(leaders) != 1:
            raise self._fail(
                f"after healing, {len(leaders)} leaders: {[(c.local_key.id, c.role, c.epoch) for c in cores]}"
            )
        leader = leaders[0]
        for core in cores:
            if (core.epoch, core.leader_id) != (leader.epoch, leader.local_key.id):
                raise self._fail(
                    f"after healing, n{core.local_key.id} is {core.role} in epoch {core.epoch} "
                    f"with leader {core.leader_id}; the leader is n{leader.local_key.id} "
                    f"of epoch {leader.epoch}"
                )
        if self.committed_end <= self.committed_at_heal:
            raise self._fail(f"no progress after healing: committed end stays {self.committed_end}")
        for core in cores:
            if core.high_watermark < self.committed_at_heal:
                raise self._fail(
                    f"n{core.local_key.id} did not catch up: high watermark "
                    f"{core.high_watermark} < {self.committed_at_heal}"
                )

    def check_snapshots(self) -> None:
        """Each node's latest snapshot equals the committed records below its end offset, compacted;
        each live node's image serves the features of the committed records it applied."""
        for node in self.sim.nodes.values():
            core = node.core
            if core is None:
                continue
            applied = core.applied_offset
            index = bisect.bisect_left(self.committed_bases, applied)
            if index and self.committed[index - 1][1] != applied:
                raise self._fail(f"n{node.node_id} image stops at {applied}, inside a committed batch")
            image, _ = _compact(self.committed_bytes[key[0]] for key in self.committed[:index])
            expected = {name: level for (kind, name), level in image.items() if kind == "feature" and level}
            levels = dict(core.committed_features().levels)
            levels.pop("kraft.version", None)
            if levels != expected:
                raise self._fail(f"n{node.node_id} image at {applied} serves features {levels}, the "
                                 f"committed records give {expected}")
        for node in self.sim.nodes.values():
            snapshot = node.log.latest_snapshot()
            if snapshot is None or snapshot.end_offset == 0:
                continue
            index = bisect.bisect_left(self.committed_bases, snapshot.end_offset)
            if index == 0 or self.committed[index - 1][1] != snapshot.end_offset:
                raise self._fail(f"n{node.node_id} snapshot {snapshot} does not end at a committed batch")
            if self.committed[index - 1][2] != snapshot.epoch:
                raise self._fail(f"n{node.node_id} snapshot {snapshot} has the wrong epoch")
            expected = _compact(self.committed_bytes[key[0]] for key in self.committed[:index])
            batches = list(node.log.snapshot_batches(snapshot))
            header = decode_control_batch(batches[0])
            footer = decode_control_batch(batches[-1])
            if not isinstance(header[0].value, messages.SnapshotHeaderRecord) or not isinstance(
                footer[-1].value, messages.SnapshotFooterRecord
            ):
                raise self._fail(f"n{node.node_id} snapshot {snapshot} lacks its header or footer")
            if self.sim.scenario.kraft_version >= 1 and not any(
                isinstance(record.value, messages.VotersRecord) for record in header
            ):
                raise self._fail(f"n{node.node_id} snapshot {snapshot} lacks its VotersRecord")
            actual = _compact(batch for batch in batches[1:-1])
            if actual != expected:
                raise self._fail(
                    f"n{node.node_id} snapshot {snapshot} holds {actual}, the committed records "
                    f"give {expected}"
                )


def _compact(batches: Any) -> tuple[dict[tuple[str, str], object], list[tuple[int, bytes]]]:
    """An independent compaction of FeatureLevelRecords and TopicRecords (NoOps vanish, metadata
    transactions apply at their End and vanish at an Abort), and the other records in log order."""
    image: dict[tuple[str, str], object] = {}
    others: list[tuple[int, bytes]] = []
    pending: list[object] | None = None

    def store(item: object) -> None:
        if isinstance(item, RawMetadataRecord):
            others.append((item.api_key, item.body))
            return
        assert isinstance(item, ApiMessageAndVersion)
        message = item.message
        if isinstance(message, messages.FeatureLevelRecord):
            if message.feature_level == 0 and message.name != "metadata.version":
                image.pop(("feature", message.name), None)
            else:
                image[("feature", message.name)] = message.feature_level
        elif isinstance(message, messages.TopicRecord):
            image[("topic", str(message.topic_id))] = message.name
        elif not isinstance(message, messages.NoOpRecord):
            image[("other", repr(message))] = True

    for item in batches:
        batch = decode_batch_bytes(item) if isinstance(item, bytes) else item
        if batch.is_control:
            continue
        for record in decode_metadata_batch(batch):
            message = record.message if isinstance(record, ApiMessageAndVersion) else None
            if isinstance(message, messages.BeginTransactionRecord):
                pending = []
            elif isinstance(message, messages.EndTransactionRecord):
                for change in pending or []:
                    store(change)
                pending = None
            elif isinstance(message, messages.AbortTransactionRecord):
                pending = None
            elif pending is not None:
                pending.append(record)
            else:
                store(record)
    return image, others


def run_scenario(scenario: Scenario) -> Simulation:
    return Simulation(scenario).run()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Replay simulated KRaft cluster runs.")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--count", type=int, default=1, help="run this many seeds from --seed on")
    parser.add_argument("--voters", type=int)
    parser.add_argument("--observers", type=int)
    parser.add_argument("--kraft-version", type=int, choices=[0, 1])
    parser.add_argument("--duration-ms", type=int)
    parser.add_argument("--heal-ms", type=int)
    parser.add_argument("--no-faults", action="store_true")
    parser.add_argument("--no-wire", action="store_true", help="hand messages over without encoding them")
    parser.add_argument("--apply-budget-bytes", type=int)
    parser.add_argument("--max-fetch-bytes", type=int)
    parser.add_argument("--old-voters", type=int, help="voters running as Kafka 3.9 (no pre-vote, Vote v0-1)")
    parser.add_argument("--verbose", action="store_true", help="log the core's decisions")
    args = parser.parse_args(argv)
    overrides: dict[str, Any] = {}
    for name in ("voters", "observers", "kraft_version", "duration_ms", "heal_ms", "apply_budget_bytes",
                 "max_fetch_bytes", "old_voters"):
        value = getattr(args, name)
        if value is not None:
            overrides[name] = value
    if args.no_faults:
        overrides["faults"] = False
    if args.no_wire:
        overrides["wire"] = False
    if args.verbose:
        import logging

        logging.basicConfig(level=logging.DEBUG, format="%(message)s")
    failed = 0
    for seed in range(args.seed, args.seed + args.count):
        scenario = replace(scenario_for_seed(seed), **overrides)
        try:
            sim = run_scenario(scenario)
        except SimulationFailure as exc:
            print(f"FAILED: {exc}", file=sys.stderr)
            failed += 1
            continue
        print(
            f"ok: {scenario.command()}: {sim.elections} elections, {sim.appended} appends, "
            f"committed end {sim.checker.committed_end}, {sim.installs()} snapshots fetched"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
