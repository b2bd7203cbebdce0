"""Trace tests: scenario scripts of elections and voter changes replayed against ``RaftCore``, each
command followed by the message trace it must produce (the format is in this folder's README.md).

``python -m pytest tests/trace --rewrite-traces`` (or ``KRAFT_REWRITE_TRACES=1``) writes what the core
does now into the scenario files instead of comparing, so a change of behaviour shows as a diff of
readable text.

This folder has no ``__init__.py``: as a package its name would shadow the standard library's ``trace``.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import pytest
from simulation.memory import MemoryLog, MemoryStore
from unit.reference_server.raft.raft_testlib import (
    CLUSTER,
    LISTENER,
    Message,
    Network,
    Replica,
    endpoint,
    make_replica,
    uuid,
)

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.error_codes import ERRORS
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.protocol.primitives import ZERO_UUID, Uuid
from kafka_admin_kraft.records import decode_batches, decode_control_batch
from kafka_admin_kraft_server.raft.api import Address, Endpoint, RaftConfig, ReplicaKey, VoterInfo, VoterSet

SCENARIOS = Path(__file__).resolve().parent / "scenarios"
SEPARATOR = "----"
FLAGS = frozenset({"wipe", "auto-join"})
"""Command words that stand alone (the rest are positional, or key=value)."""
STEP_MS = 5
"""The clock moves in steps of this size; every node is polled and every message delivered at each."""


class ScenarioError(Exception):
    """A scenario line the runner cannot follow; the message names the file and line."""


# ---------------------------------------------------------------------------------------------
# The file format: commands, each followed by "----" and its expected output, blocks apart by a
# blank line; lines starting with "#" before a command are comments, kept when the file is rewritten.
# ---------------------------------------------------------------------------------------------

@dataclass
class Block:
    preamble: list[str]
    """The comment lines before the command."""
    command: str
    line: int
    expected: list[str]


def parse(text: str, name: str) -> list[Block]:
    blocks: list[Block] = []
    lines = text.splitlines()
    preamble: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        if not line.strip() or line.startswith("#"):
            if line.strip():
                preamble.append(line)
            index += 1
            continue
        command, line_number = line.strip(), index + 1
        index += 1
        if index >= len(lines) or lines[index] != SEPARATOR:
            raise ScenarioError(f"{name}:{line_number}: {command!r} is not followed by a {SEPARATOR} line")
        index += 1
        expected: list[str] = []
        while index < len(lines) and lines[index].strip():
            expected.append(lines[index])
            index += 1
        blocks.append(Block(preamble, command, line_number, expected))
        preamble = []
    return blocks


def unparse(blocks: list[Block], outputs: list[list[str]]) -> str:
    return "\n\n".join("\n".join([*block.preamble, block.command, SEPARATOR, *output])
                       for block, output in zip(blocks, outputs, strict=True)) + "\n"


# ---------------------------------------------------------------------------------------------
# How things print: node ids, directory ids as letters (a: the node's first directory, left out),
# error names, and one line per message with the fields that matter.
# ---------------------------------------------------------------------------------------------

def directory(node_id: int, generation: int) -> Uuid:
    """Directory id number ``generation`` of a node (0 is the one ``make_replica`` gives it)."""
    return uuid(node_id) if generation == 0 else Uuid(bytes([node_id, generation]) + bytes(14))


def key_text(node_id: int, directory_id: Uuid) -> str:
    if directory_id == ZERO_UUID:
        return f"{node_id}:-"
    for generation in range(26):
        if directory(node_id, generation) == directory_id:
            return str(node_id) if generation == 0 else f"{node_id}:{chr(ord('a') + generation)}"
    return f"{node_id}:{directory_id}"


def voter_text(node_id: int, directory_id: Uuid, hosts: list[tuple[str, int]]) -> str:
    """A voter's key, and its listeners where they are not the ones the node starts with."""
    default = endpoint(node_id)
    moved = hosts != [(default.host, default.port)]
    return key_text(node_id, directory_id) + ("@" + ",".join(f"{h}:{p}" for h, p in hosts) if moved else "")


def voters_text(voters: VoterSet) -> str:
    return "{" + " ".join(voter_text(v.key.id, v.key.directory_id, [(e.host, e.port) for e in v.endpoints])
                          for _, v in sorted(voters.voters.items())) + "}"


def error_text(code: int, message: str | None = None) -> str:
    entry = ERRORS.get(code)
    name = entry.name if entry is not None else f"error {code}"
    return f"error={name}" + (f' "{message}"' if message else "")


def leader_text(leader_id: int, epoch: int) -> str:
    return f"epoch={epoch}" + (f" leader={leader_id}" if leader_id >= 0 else "")


def errors_of(*codes: int) -> list[str]:
    """Every error code that is not NONE, once."""
    seen: list[int] = []
    for code in codes:
        if code and code not in seen:
            seen.append(code)
    return [error_text(code) for code in seen]


def records_text(data: bytes | None) -> str:
    """The batches of a Fetch response: ``base[-last]@epoch`` and what the batch holds."""
    batches = []
    for batch in decode_batches(data or b""):
        span = str(batch.base_offset)
        if batch.last_offset > batch.base_offset:
            span += f"-{batch.last_offset}"
        if batch.is_control:
            what = " ".join(control_text(record.value) for record in decode_control_batch(batch))
        else:
            what = f"data x{len(batch.records)}"
        batches.append(f"{span}@{batch.partition_leader_epoch} {what}")
    return "[" + ", ".join(batches) + "]"


def control_text(value: object) -> str:
    if isinstance(value, messages.LeaderChangeMessage):
        return f"LeaderChange(leader={value.leader_id})"
    if isinstance(value, messages.VotersRecord):
        return "Voters{" + " ".join(
            voter_text(v.voter_id, v.voter_directory_id, [(e.host, e.port) for e in v.endpoints])
            for v in sorted(value.voters, key=lambda v: v.voter_id)) + "}"
    if isinstance(value, messages.KRaftVersionRecord):
        return f"KRaftVersion({value.k_raft_version})"
    return type(value).__name__


def listeners_text(listeners: list[Struct]) -> str:
    return ",".join(f"{item.host}:{item.port}" for item in listeners)  # type: ignore[attr-defined]


def message_fields(body: Struct) -> list[str]:
    """The fields of a KRaft message that a reader of an election or a voter change needs."""
    if isinstance(body, messages.VoteRequest):
        p = body.topics[0].partitions[0]
        return [*(["pre-vote"] if p.pre_vote else []), f"epoch={p.replica_epoch}",
                f"last-offset={p.last_offset}", f"last-epoch={p.last_offset_epoch}"]
    if isinstance(body, messages.VoteResponse):
        p = body.topics[0].partitions[0] if body.topics else None
        if p is None:
            return errors_of(body.error_code)
        return ["granted" if p.vote_granted else "rejected", leader_text(p.leader_id, p.leader_epoch),
                *errors_of(body.error_code, p.error_code)]
    if isinstance(body, messages.BeginQuorumEpochRequest | messages.EndQuorumEpochRequest):
        p = body.topics[0].partitions[0]
        fields = [leader_text(p.leader_id, p.leader_epoch)]
        if isinstance(body, messages.EndQuorumEpochRequest):
            fields.append("preferred=[" + " ".join(key_text(c.candidate_id, c.candidate_directory_id)
                                                   for c in p.preferred_candidates) + "]")
        return fields
    if isinstance(body, messages.BeginQuorumEpochResponse | messages.EndQuorumEpochResponse):
        p = body.topics[0].partitions[0] if body.topics else None
        if p is None:
            return errors_of(body.error_code)
        return [leader_text(p.leader_id, p.leader_epoch), *errors_of(body.error_code, p.error_code)]
    if isinstance(body, messages.FetchRequest):
        p = body.topics[0].partitions[0]
        return [f"epoch={p.current_leader_epoch}", f"offset={p.fetch_offset}",
                f"last-epoch={p.last_fetched_epoch}"]
    if isinstance(body, messages.FetchResponse):
        if not body.responses:
            return errors_of(body.error_code)
        p = body.responses[0].partitions[0]
        fields = [leader_text(p.current_leader.leader_id, p.current_leader.leader_epoch),
                  f"hw={p.high_watermark}", *errors_of(body.error_code, p.error_code)]
        if p.diverging_epoch.epoch >= 0:
            fields.append(f"diverging=epoch {p.diverging_epoch.epoch} ends at {p.diverging_epoch.end_offset}")
        if p.snapshot_id.end_offset >= 0:
            fields.append(f"snapshot={p.snapshot_id.end_offset}@{p.snapshot_id.epoch}")
        if p.records:
            fields.append(f"records={records_text(p.records)}")
        return fields
    if isinstance(body, messages.ApiVersionsResponse):
        ranges = [f"{f.name}={f.min_version}-{f.max_version}" for f in body.supported_features]
        return [*ranges, *errors_of(body.error_code)]
    if isinstance(body, messages.AddRaftVoterRequest):
        return [f"voter={key_text(body.voter_id, body.voter_directory_id)}",
                f"listeners={listeners_text(body.listeners)}",
                *(["ack-when-committed"] if body.ack_when_committed else [])]
    if isinstance(body, messages.RemoveRaftVoterRequest):
        return [f"voter={key_text(body.voter_id, body.voter_directory_id)}"]
    if isinstance(body, messages.AddRaftVoterResponse | messages.RemoveRaftVoterResponse):
        return [error_text(body.error_code, body.error_message)] if body.error_code else ["ok"]
    if isinstance(body, messages.UpdateRaftVoterRequest):
        feature = body.k_raft_version_feature
        return [f"epoch={body.current_leader_epoch}",
                f"voter={key_text(body.voter_id, body.voter_directory_id)}",
                f"listeners={listeners_text(body.listeners)}",
                f"kraft.version={feature.min_supported_version}-{feature.max_supported_version}"]
    if isinstance(body, messages.UpdateRaftVoterResponse):
        current = body.current_leader
        return [*(errors_of(body.error_code) or ["ok"]), leader_text(current.leader_id, current.leader_epoch)]
    return []


def message_text(message: Message) -> str:
    source = "client" if message.source is None else str(message.source)
    target = "client" if message.target is None else str(message.target)
    fate = "" if message.fate == "delivered" else f" [{message.fate}]"
    return " ".join([f"{source}->{target}", type(message.body).NAME, *message_fields(message.body)]) + fate


# ---------------------------------------------------------------------------------------------
# The world a scenario drives: replicas on the test network, and what happened, command by command.
# ---------------------------------------------------------------------------------------------

@dataclass
class Event:
    command: int
    time: int
    text: str
    exchange: int | None = None
    """Set for Fetch messages, so that a round trip that repeats the one before can be left out."""
    waiting: bool = False
    """A request delivered to a node, whose answer is still to come."""


@dataclass
class World:
    network: Network = field(default_factory=lambda: Network([]))
    voters: VoterSet = field(default_factory=lambda: VoterSet({}))
    """The voter set every voter was formatted with."""
    generations: dict[int, int] = field(default_factory=dict)
    incarnations: dict[int, int] = field(default_factory=dict)
    auto_join: set[int] = field(default_factory=set)
    old_line: set[int] = field(default_factory=set)
    """Nodes that hold elections as Kafka 3.9 does: no pre-vote, Vote v0-1."""
    ports: dict[int, int] = field(default_factory=dict)
    """Listener ports that differ from ``endpoint(node_id)``'s."""
    events: list[Event] = field(default_factory=list)
    command: int = 0
    clock_moved: set[int] = field(default_factory=set)
    """The commands during which time passed: their events are grouped by time."""
    shown: dict[int, tuple[str, str]] = field(default_factory=dict)
    """The status and voters line last printed for each node."""
    next_client_request: int = 1

    def __post_init__(self) -> None:
        self.network.on_message = self._on_message

    # -- observing ------------------------------------------------------------------------------

    def _emit(self, text: str, exchange: int | None = None, waiting: bool = False) -> None:
        self.events.append(Event(self.command, self.network.now, text, exchange, waiting))

    def _on_message(self, message: Message) -> None:
        self.observe()
        fetch = isinstance(message.body, messages.FetchRequest | messages.FetchResponse)
        waiting = isinstance(message.body, messages.FetchRequest) and message.fate == "delivered"
        self._emit(message_text(message), message.exchange if fetch else None, waiting)

    def repeated_fetches(self) -> set[int]:
        """Fetch round trips whose request and answer read exactly as the last ones between the same
        two nodes: the steady polling of followers (and of voters that know no leader yet)."""
        texts: dict[int, list[str]] = {}
        pairs: dict[int, str] = {}
        unanswered: set[int] = set()
        for event in self.events:
            if event.exchange is not None:
                texts.setdefault(event.exchange, []).append(event.text)
                pairs.setdefault(event.exchange, event.text.split(" ", 1)[0])
                if event.waiting:
                    unanswered.add(event.exchange)
                else:
                    unanswered.discard(event.exchange)
        last: dict[str, list[str]] = {}
        repeated: set[int] = set()
        for exchange, lines in texts.items():
            before = last.get(pairs[exchange], [])
            # A request still waiting for its answer when the scenario ends repeats a request alike.
            if before == lines or (exchange in unanswered and before[:1] == lines):
                repeated.add(exchange)
            last[pairs[exchange]] = lines
        return repeated

    def status(self, replica: Replica) -> tuple[str, str]:
        core = replica.core
        state = f"{replica.node_id}: {core.role} {leader_text(core.leader_id, core.epoch)}"
        voted = core.voted_key
        if core.role == "unattached" and voted is not None:
            state += f" voted={key_text(voted.id, voted.directory_id)}"
        voters = f"{replica.node_id}: voters {voters_text(core.voters)}"
        if core.committed_voters != core.voters:
            voters += f" (committed {voters_text(core.committed_voters)})"
        return state, voters

    def observe(self) -> None:
        """Print each running node's role, epoch, leader and voter set where they changed."""
        for node_id, replica in sorted(self.network.replicas.items()):
            if node_id in self.network.dropped:
                continue
            now = self.status(replica)
            before = self.shown.get(node_id, ("", ""))
            for old, new in zip(before, now, strict=True):
                if old != new:
                    self._emit(new)
            self.shown[node_id] = now

    # -- commands -------------------------------------------------------------------------------

    def replica(self, node_id: int) -> Replica:
        if node_id not in self.network.replicas:
            raise ScenarioError(f"there is no node {node_id}")
        return self.network.replicas[node_id]

    def leader(self, args: dict[str, str]) -> int:
        """The node a client request goes to: ``to=N``, else the leader."""
        if "to" in args:
            return self.replica(int(args["to"])).node_id
        leader = self.network.leader()
        if leader is None:
            raise ScenarioError("no node leads now: name the receiver with to=N")
        return leader.node_id

    def bootstrap_servers(self) -> tuple[Address, ...]:
        return tuple(Address(f"n{node}", 9000 + node) for node in sorted(self.voters.voters))

    def new_replica(self, node_id: int, *, formatted: bool, log: MemoryLog | None = None,
                    store: MemoryStore | None = None) -> Replica:
        """A process of the node: over ``log`` and ``store`` when it restarts, else over a new directory,
        formatted with the voter set or empty; its randomness is seeded by its id and incarnation."""
        if log is None and not formatted:
            log = MemoryLog()
        return make_replica(
            node_id, self.voters, log=log, store=store,
            now=self.network.now, seed=node_id + 100 * self.incarnations.get(node_id, 0),
            config=RaftConfig(auto_join_enable=node_id in self.auto_join,
                              pre_vote=node_id not in self.old_line),
            bootstrap_servers=() if formatted else self.bootstrap_servers(),
            directory=directory(node_id, self.generations.get(node_id, 0)), listeners=self.listeners(node_id))

    def listeners(self, node_id: int) -> tuple[Endpoint, ...]:
        port = self.ports.get(node_id)
        return (endpoint(node_id),) if port is None else (Endpoint(LISTENER, f"n{node_id}", port),)

    def start(self, positional: list[str], args: dict[str, str]) -> None:
        """``start voters=1,2,3[:b] [observers=4,...] [auto-join=4,...] [kafka-3.9=3,...]``: voters
        formatted with the voter set (kafka-storage format --initial-controllers), observers with an
        empty log that find the leader through the voters (--no-initial-controllers); ``auto-join``
        nodes have controller.quorum.auto.join.enable; ``kafka-3.9`` nodes hold elections as Kafka 3.9
        does (no pre-vote, Vote v0-1)."""
        voters = [parse_key(item) for item in split(args.get("voters", ""))]
        observers = [parse_key(item) for item in split(args.get("observers", ""))]
        if not voters:
            raise ScenarioError("start needs voters=...")
        self.auto_join = {int(item) for item in split(args.get("auto-join", ""))}
        self.old_line = {int(item) for item in split(args.get("kafka-3.9", ""))}
        self.network.max_versions = {node_id: {messages.VoteRequest.API_KEY: 1} for node_id in self.old_line}
        for node_id, generation in voters + observers:
            self.generations[node_id] = generation
        keys = [ReplicaKey(node_id, directory(node_id, generation)) for node_id, generation in voters]
        self.voters = VoterSet({key.id: VoterInfo(key, (endpoint(key.id),), 0, 1) for key in keys})
        replicas = [self.new_replica(node_id, formatted=True) for node_id, _ in voters]
        replicas += [self.new_replica(node_id, formatted=False) for node_id, _ in observers]
        self.network.replicas = {replica.node_id: replica for replica in replicas}
        self.observe()

    def run(self, positional: list[str], args: dict[str, str]) -> None:
        """``run MS``: move the clock MS milliseconds, a step at a time."""
        until = self.network.now + int(single(positional, "run MS"))
        self.clock_moved.add(self.command)
        while self.network.now < until:
            self.network.run(until=self.network.now + STEP_MS, step_ms=STEP_MS)
            self.observe()

    def partition(self, positional: list[str], args: dict[str, str]) -> None:
        """``partition 3[,4]``: cut these nodes off from the others, both ways; they keep running."""
        inside = {int(item) for item in split(single(positional, "partition NODES"))}
        outside = set(self.network.replicas) - inside
        self.network.cut |= {link for a in inside for b in outside for link in ((a, b), (b, a))}

    def heal(self, positional: list[str], args: dict[str, str]) -> None:
        self.network.cut.clear()

    def crash(self, positional: list[str], args: dict[str, str]) -> None:
        """``crash N``: the process dies; what its log had not flushed is lost, connections to it fail."""
        node_id = int(single(positional, "crash N"))
        self.replica(node_id).log.crash()
        self.network.dropped.add(node_id)
        self.shown.pop(node_id, None)
        self._emit(f"{node_id}: crashed")

    def restart(self, positional: list[str], args: dict[str, str]) -> None:
        """``restart N [wipe] [auto-join] [port=P]``: a new process over the same log and quorum-state;
        ``wipe`` formats a new empty directory (a new directory id) first, ``auto-join`` turns on
        controller.quorum.auto.join.enable, ``port`` moves its listener."""
        node_id = int(single(positional, "restart N"))
        if "auto-join" in args:
            self.auto_join.add(node_id)
        old = self.replica(node_id)
        if node_id not in self.network.dropped:
            old.log.crash()
        self.incarnations[node_id] = self.incarnations.get(node_id, 0) + 1
        if "port" in args:
            self.ports[node_id] = int(args["port"])
        if "wipe" in args:
            self.generations[node_id] = self.generations.get(node_id, 0) + 1
            replica = self.new_replica(node_id, formatted=False)
        else:
            replica = self.new_replica(node_id, formatted=True, log=old.log, store=old.store)
        self.network.replicas[node_id] = replica
        self.network.dropped.discard(node_id)
        self.shown.pop(node_id, None)
        self.observe()

    def client_request(self, node_id: int, body: Struct, version: int) -> None:
        self.observe()
        self.network.client_request(node_id, body, version, self.next_client_request)
        self.next_client_request += 1
        self.observe()

    def add_voter(self, positional: list[str], args: dict[str, str]) -> None:
        """``add-voter N[:b] [to=L] [ack=false]``: AddRaftVoter v1 from a client to the leader (or L)."""
        node_id, generation = parse_key(single(positional, "add-voter N"))
        body = messages.AddRaftVoterRequest(
            cluster_id=CLUSTER, timeout_ms=30_000, voter_id=node_id,
            voter_directory_id=directory(node_id, generation),
            listeners=[messages.AddRaftVoterRequest.Listener(name=e.name, host=e.host, port=e.port)
                       for e in self.listeners(node_id)],
            ack_when_committed=args.get("ack", "true") != "false")
        self.client_request(self.leader(args), body, 1)

    def remove_voter(self, positional: list[str], args: dict[str, str]) -> None:
        """``remove-voter N[:b] [to=L]``: RemoveRaftVoter from a client to the leader (or L)."""
        node_id, generation = parse_key(single(positional, "remove-voter N"))
        body = messages.RemoveRaftVoterRequest(cluster_id=CLUSTER, voter_id=node_id,
                                               voter_directory_id=directory(node_id, generation))
        self.client_request(self.leader(args), body, 0)

    def append(self, positional: list[str], args: dict[str, str]) -> None:
        """``append K``: the leader appends one batch of K NoOp records."""
        count = int(single(positional, "append K"))
        leader = self.replica(self.leader(args))
        last = leader.core.append([messages.NoOpRecord()] * count, self.network.now)
        self._emit(f"{leader.node_id}: appended {last - count + 1}-{last}")
        self.network.pump()
        self.observe()

    def status_command(self, positional: list[str], args: dict[str, str]) -> None:
        """``status``: every node's role, epoch, leader, high watermark, log end and voter sets."""
        for node_id, replica in sorted(self.network.replicas.items()):
            if node_id in self.network.dropped:
                self._emit(f"{node_id}: down")
                continue
            state, voters = self.status(replica)
            self._emit(f"{state} hw={replica.core.high_watermark} end={replica.log.end_offset()}")
            self._emit(voters)

    COMMANDS: ClassVar[dict[str, Callable[[World, list[str], dict[str, str]], None]]] = {
        "start": start, "run": run, "partition": partition, "heal": heal, "crash": crash,
        "restart": restart, "add-voter": add_voter, "remove-voter": remove_voter, "append": append,
        "status": status_command,
    }

    def execute(self, command: str) -> None:
        name, *words = command.split()
        action = self.COMMANDS.get(name)
        if action is None:
            raise ScenarioError(f"unknown command {name!r} (known: {', '.join(sorted(self.COMMANDS))})")
        positional = [word for word in words if "=" not in word and word not in FLAGS]
        args = dict(word.split("=", 1) if "=" in word else (word, "") for word in words
                    if "=" in word or word in FLAGS)
        action(self, positional, args)

    def output(self, command: int, repeated: set[int]) -> list[str]:
        """The events of one command, repeated Fetch round trips left out, grouped by time where the
        clock moved during the command."""
        events = [event for event in self.events
                  if event.command == command and event.exchange not in repeated]
        hidden = len({event.exchange for event in self.events
                      if event.command == command and event.exchange in repeated})
        lines: list[str] = []
        if command not in self.clock_moved:
            lines = [event.text for event in events]
        else:
            time = None
            for event in events:
                if event.time != time:
                    time = event.time
                    lines.append(f"t={time}")
                lines.append("  " + event.text)
        if hidden:
            lines.append(f"({hidden} repeated Fetch round trips not shown)")
        return lines


def split(text: str) -> list[str]:
    return [item for item in text.split(",") if item]


def single(positional: list[str], usage: str) -> str:
    if len(positional) != 1:
        raise ScenarioError(f"usage: {usage}")
    return positional[0]


def parse_key(text: str) -> tuple[int, int]:
    """``4`` (the node's first directory) or ``4:b`` (its second)."""
    node, _, letter = text.partition(":")
    return int(node), (ord(letter) - ord("a")) if letter else 0


# ---------------------------------------------------------------------------------------------
# The test
# ---------------------------------------------------------------------------------------------

def replay(path: Path) -> tuple[list[Block], list[list[str]]]:
    blocks = parse(path.read_text(), path.name)
    world = World()
    for index, block in enumerate(blocks):
        world.command = index
        try:
            world.execute(block.command)
        except (ScenarioError, ValueError) as exc:  # ValueError: a number that is not one
            raise ScenarioError(f"{path.name}:{block.line}: {exc}") from None
    repeated = world.repeated_fetches()
    return blocks, [world.output(index, repeated) for index in range(len(blocks))]


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.txt")), ids=lambda path: path.stem)
def test_trace(path: Path, request: pytest.FixtureRequest) -> None:
    blocks, outputs = replay(path)
    if request.config.getoption("rewrite_traces") or os.environ.get("KRAFT_REWRITE_TRACES") == "1":
        path.write_text(unparse(blocks, outputs))
        return
    differences = [
        "\n".join(difflib.unified_diff(block.expected, output, f"{path.name}:{block.line}: {block.command}",
                                       "what the core does now", lineterm=""))
        for block, output in zip(blocks, outputs, strict=True) if block.expected != output]
    assert not differences, (
        "the trace differs (rewrite with --rewrite-traces and read the diff):\n" + "\n".join(differences))


def test_a_replay_twice_gives_the_same_trace() -> None:
    path = SCENARIOS / "first_election.txt"
    assert replay(path)[1] == replay(path)[1]


def test_scenario_files_are_as_a_rewrite_writes_them() -> None:
    """So that ``--rewrite-traces`` changes nothing but traces: comments, order and spacing stay."""
    for path in sorted(SCENARIOS.glob("*.txt")):
        blocks = parse(path.read_text(), path.name)
        assert unparse(blocks, [block.expected for block in blocks]) == path.read_text(), path.name


@pytest.mark.parametrize(("script", "error"), [
    ("start voters=1,2,3\n----\n\nelect 1\n----\n", "bad.txt:4: unknown command 'elect'"),
    ("start voters=1,2,3\n----\n\nrun soon\n----\n", "bad.txt:4: invalid literal for int()"),
    ("start voters=1,2,3\n----\n\nadd-voter 4\n----\n", "bad.txt:4: no node leads now"),
    ("start voters=1,2,3\n\nrun 10\n----\n", "bad.txt:1: 'start voters=1,2,3' is not followed by a ----"),
])
def test_a_script_the_runner_cannot_follow_names_its_line(tmp_path: Path, script: str, error: str) -> None:
    path = tmp_path / "bad.txt"
    path.write_text(script)
    with pytest.raises(ScenarioError, match=re.escape(error)):
        replay(path)
