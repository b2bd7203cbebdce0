"""``Admin.reconcile_voters`` and ``Admin.replace_controller`` over the in-memory network: a fake leader
keeps a voter set that AddRaftVoter and RemoveRaftVoter change, observers that catch up on the fake
clock, and commits each change at once or after a number of reads; controllers with auto-join change
the voter set themselves, as Kafka 4.2's do. The fake fails the test when it is sent a change before
the previous one committed, or an add of an observer that is not caught up."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from kafka_admin_kraft import Admin, AsyncAdmin, Endpoint
from kafka_admin_kraft.client.operations.reconcile_voters import REJOIN_WATCH, WATCH_POLL
from kafka_admin_kraft.errors import (
    RequestTimedOutError,
    VoterChangeError,
    VoterChangeRefusedError,
    VoterChangeTimeoutError,
)
from kafka_admin_kraft.health import HealthThresholds
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.voters import DesiredVoter, Progress, ReconcileResult, StepOutcome, VoterKey
from unit.client.fake import AsyncFakeNetwork, FakeNetwork, FakeNode, leader_of
from unit.client.fake import describe_cluster as listed_controllers

LISTENER = "CTRL_PLANE"
"""The voters' listener name: an endpoint the executor finds itself must carry it."""
START_OFFSET = 100_000
REQUEST_TIMED_OUT = 7


class FakeQuorum:
    """The leader's side of the metadata quorum, answering DescribeQuorum, AddRaftVoter and
    RemoveRaftVoter on every node of ``net``. A change commits after ``commit_after_reads``
    DescribeQuorum reads (0: at once): CommittedVoters (v3) catches up and the high watermark advances.
    The leader resigns once its own removal commits.

    The node ids in ``auto_joining`` run with ``controller.quorum.auto.join.enable=true``: one removed
    by a client fetches on as a caught-up observer. It removes a voter entry of its id with another
    directory, else adds itself (AckWhenCommitted false: the fake commits it at once), one change at a
    time, when ``auto_join_at`` says: ``read``, at a DescribeQuorum read ``auto_join_reads`` reads after
    it became an observer; ``before`` / ``after``, just before / after the leader handles a client's
    AddRaftVoter or RemoveRaftVoter (its request landed first / right behind)."""

    def __init__(
        self, net: FakeNetwork, voters: Sequence[int], *, version: int = 3, commit_after_reads: int = 0
    ) -> None:
        self.net = net
        self.voters: list[VoterKey] = [(i, net.nodes[i].directory_id) for i in voters]
        self.committed = list(self.voters)
        self.listeners = {i: (LISTENER, net.host, net.nodes[i].port) for i in voters}
        self.observers: dict[VoterKey, float | None] = {}
        """Each observer, and from when (fake clock) it is caught up; None: never."""
        self.lagging: set[VoterKey] = set()
        self.high_watermark = START_OFFSET
        self.commit_after_reads = commit_after_reads
        self.reads_to_commit = 0
        self.failures: dict[tuple[str, int], list[tuple[int, bool]]] = {}
        """(action, node id) -> answers to give first: (error code, whether the change is made anyway)."""
        self.changes: list[tuple[float, str, VoterKey]] = []
        self.require_caught_up = True
        self.auto_joining: set[int] = set()
        self.auto_join_reads = 0
        self.auto_join_at = "read"
        self.reads = 0
        self.joins_at: dict[VoterKey, int] = {}
        """Auto-joining observers, and the read at which each acts next."""
        self.joined: list[tuple[str, VoterKey]] = []
        """The changes the auto-joining controllers made themselves."""
        self.refused: list[tuple[str, VoterKey]] = []
        """A client's changes answered DUPLICATE_VOTER or VOTER_NOT_FOUND."""
        for node in net.nodes.values():
            node.versions[55] = (0, version)
            node.handlers.update({55: self.describe_quorum, 80: self.add_voter, 81: self.remove_voter})

    def observe(
        self, node_id: int, directory: Uuid | None = None, caught_up_in: float | None = 0.0
    ) -> VoterKey:
        """Node ``node_id`` fetches as an observer (with its own directory, or ``directory``), caught up
        ``caught_up_in`` seconds from now."""
        key = (node_id, directory or self.net.nodes[node_id].directory_id)
        self.observers[key] = None if caught_up_in is None else self.net.now + caught_up_in
        return key

    @property
    def pending(self) -> bool:
        return self.reads_to_commit > 0

    def caught_up(self, key: VoterKey) -> bool:
        since = self.observers.get(key)
        return since is not None and self.net.now >= since

    def commit(self) -> None:
        self.committed = list(self.voters)
        self.high_watermark += 1
        if self.net.leader not in {node_id for node_id, _ in self.voters}:
            self.net.leader = self.voters[0][0]

    def change(self, action: str, key: VoterKey) -> None:
        assert not self.pending, f"{action} {key} was sent before the previous change committed"
        if action == "add":
            assert self.caught_up(key) or not self.require_caught_up, f"{key} was added before it caught up"
            del self.observers[key]
            self.voters.append(key)
        else:
            self.voters.remove(key)
            if key[0] in self.auto_joining:  # it fetches on, as an observer
                self.observe(key[0], key[1])
        self.changes.append((self.net.now, action, key))
        self.reads_to_commit = self.commit_after_reads
        if not self.pending:
            self.commit()

    def auto_join(self, moment: str) -> None:
        """One auto-joining observer makes its change, if ``moment`` is its time and one is due."""
        if moment != self.auto_join_at:
            return
        for key in list(self.observers):
            if key[0] not in self.auto_joining or self.pending:
                continue
            due = self.joins_at.setdefault(key, self.reads + self.auto_join_reads)
            if self.reads < due:
                continue
            stale = [k for k in self.voters if k[0] == key[0] and k != key]
            if stale:
                self.voters.remove(stale[0])
                self.joined.append(("remove", stale[0]))
            elif key[0] not in {node_id for node_id, _ in self.voters} and self.caught_up(key):
                del self.observers[key]
                self.voters.append(key)
                self.joined.append(("add", key))
            else:
                continue
            del self.joins_at[key]
            self.commit()
            return

    def injected(self, action: str, key: VoterKey) -> int:
        """The error code to answer with, if one is due (after making the change when it should)."""
        due = self.failures.get((action, key[0]))
        if not due:
            return 0
        code, applied = due.pop(0)
        if applied:
            self.change(action, key)
        return code

    def state(self, key: VoterKey, version: int, caught_up: bool) -> Any:
        now_ms = int(self.net.now * 1000)
        return messages.DescribeQuorumResponse.ReplicaState(
            replica_id=key[0],
            replica_directory_id=key[1] if version >= 2 else Uuid(bytes(16)),
            log_end_offset=self.high_watermark if caught_up else self.high_watermark - 20_000,
            last_fetch_timestamp=now_ms,
            last_caught_up_timestamp=now_ms if caught_up else now_ms - 60_000,
        )

    def describe_quorum(self, node: FakeNode, version: int, body: Any) -> Any:
        r = messages.DescribeQuorumResponse
        if leader_of(node) is None:
            error = r.PartitionData(partition_index=0, error_code=6, error_message="not the leader")
            return r(topics=[r.TopicData(topic_name="__cluster_metadata", partitions=[error])])
        if self.pending:
            self.reads_to_commit -= 1
            if not self.pending:
                self.commit()
        self.auto_join("read")
        self.reads += 1
        partition = r.PartitionData(
            partition_index=0,
            leader_id=node.node_id,
            leader_epoch=7,
            high_watermark=self.high_watermark,
            current_voters=[self.state(k, version, k not in self.lagging) for k in self.voters],
            committed_voters=[self.state(k, version, k not in self.lagging) for k in self.committed]
            if version >= 3
            else [],
            observers=[self.state(k, version, self.caught_up(k)) for k in self.observers],
        )
        nodes = [
            r.Node(node_id=i, listeners=[r.Listener(name=name, host=host, port=port)])
            for i, (name, host, port) in self.listeners.items()
            if i in {node_id for node_id, _ in self.voters}
        ]
        return r(
            topics=[r.TopicData(topic_name="__cluster_metadata", partitions=[partition])],
            nodes=nodes if version >= 2 else [],
        )

    def add_voter(self, node: FakeNode, version: int, body: Any) -> Any:
        reply = messages.AddRaftVoterResponse
        if leader_of(node) is None:
            return reply(error_code=6, error_message="not the leader")
        key = (body.voter_id, body.voter_directory_id)
        self.auto_join("before")
        code = self.injected("add", key)
        if code:
            return reply(error_code=code, error_message="injected failure")
        if body.voter_id in {node_id for node_id, _ in self.voters}:
            self.refused.append(("add", key))
            return reply(error_code=126, error_message="already a voter")
        (listener,) = body.listeners
        self.listeners[body.voter_id] = (listener.name, listener.host, listener.port)
        self.change("add", key)
        self.auto_join("after")
        return reply()

    def remove_voter(self, node: FakeNode, version: int, body: Any) -> Any:
        reply = messages.RemoveRaftVoterResponse
        if leader_of(node) is None:
            return reply(error_code=6, error_message="not the leader")
        key = (body.voter_id, body.voter_directory_id)
        self.auto_join("before")
        code = self.injected("remove", key)
        if code:
            return reply(error_code=code, error_message="injected failure")
        if key not in self.voters:
            self.refused.append(("remove", key))
            return reply(error_code=127, error_message="not a voter")
        self.change("remove", key)
        self.auto_join("after")
        return reply()


class Recorder:
    """Progress events as (kind, step, message), and at each ``committed`` whether the fake had
    really committed the change."""

    def __init__(self, fake: FakeQuorum) -> None:
        self.fake = fake
        self.events: list[tuple[str, str | None, str]] = []
        self.committed_for_real: list[bool] = []

    def __call__(self, event: Progress) -> None:
        self.events.append((event.kind, event.step.describe() if event.step else None, event.message))
        if event.kind == "committed":
            fake = self.fake
            self.committed_for_real.append(not fake.pending and fake.committed == fake.voters)

    def kinds(self) -> list[tuple[str, str | None]]:
        return [(kind, step) for kind, step, _ in self.events if kind != "waiting"]


def admin(net: FakeNetwork) -> Admin:
    return Admin(
        bootstrap_controllers=net.controllers(),
        transport=net,
        retry_backoff_ms=100,
        request_timeout_ms=1000,
        default_api_timeout_ms=5000,
    )


def add(key: VoterKey) -> str:
    return f"Add voter {key[0]} (directory id {key[1]})"


def remove(key: VoterKey) -> str:
    return f"Remove voter {key[0]} (directory id {key[1]})"


def described(completed: Sequence[object]) -> list[str]:
    """What the steps an error lists as completed did (each a StepOutcome)."""
    assert all(isinstance(outcome, StepOutcome) for outcome in completed)
    return [outcome.step.describe() for outcome in completed if isinstance(outcome, StepOutcome)]


def changes_sent(net: FakeNetwork) -> list[tuple[str, int, Uuid]]:
    return [
        (api, body.voter_id, body.voter_directory_id)
        for _, api, _, body in net.requests
        if api in ("AddRaftVoter", "RemoveRaftVoter")
    ]


def listeners_sent(net: FakeNetwork) -> list[list[tuple[str, str, int]]]:
    return [[(e.name, e.host, e.port) for e in body.listeners] for _, _, body in net.sent("AddRaftVoter")]


def growth(version: int = 3, commit_after_reads: int = 0) -> tuple[FakeNetwork, FakeQuorum]:
    """One voter (1, the leader) and two caught-up observers (2, 3)."""
    net = FakeNetwork(3, leader=1)
    fake = FakeQuorum(net, [1], version=version, commit_after_reads=commit_after_reads)
    fake.observe(2)
    fake.observe(3)
    return net, fake


def key_of(net: FakeNetwork, node_id: int) -> VoterKey:
    return node_id, net.nodes[node_id].directory_id


# ------------------------------------------------------------------ growing and idempotence


def test_growing_one_voter_to_three_adds_each_with_its_given_endpoints_and_reports_progress() -> None:
    net, fake = growth()
    two, three = key_of(net, 2), key_of(net, 3)
    desired = [
        DesiredVoter(1),
        DesiredVoter(2, endpoints=(Endpoint(listener="CONTROLLER", host="ctl2.example", port=19092),)),
        DesiredVoter(3, endpoints=(Endpoint(listener="CONTROLLER", host="ctl3.example", port=19093),)),
    ]
    recorder = Recorder(fake)
    with admin(net) as client:
        result = client.reconcile_voters(desired, progress=recorder, timeout=30)
    assert recorder.events == [
        ("plan", None, ""),
        ("step", add(two), ""),
        ("committed", add(two), ""),
        ("step", add(three), ""),
        ("committed", add(three), ""),
    ]
    assert recorder.committed_for_real == [True, True]
    assert changes_sent(net) == [("AddRaftVoter", *two), ("AddRaftVoter", *three)]
    assert {node for node, _, _ in net.sent("AddRaftVoter")} == {1}
    assert listeners_sent(net) == [
        [("CONTROLLER", "ctl2.example", 19092)],
        [("CONTROLLER", "ctl3.example", 19093)],
    ]
    assert fake.voters == fake.committed == [key_of(net, 1), two, three]
    assert result.changed and not result.dry_run
    assert [outcome.step.describe() for outcome in result.completed] == [add(two), add(three)]
    assert [step.describe() for step in result.plan.steps] == [add(two), add(three)]
    assert all(outcome.seconds >= 0 for outcome in result.completed)


def test_a_second_run_on_the_reconciled_quorum_changes_nothing() -> None:
    net, _ = growth()
    with admin(net) as client:
        assert client.reconcile_voters([1, 2, 3], timeout=30).changed
        sent = len(changes_sent(net))
        again = client.reconcile_voters([3, 2, 1], timeout=30)
    assert sent == 2 and len(changes_sent(net)) == 2
    assert (again.changed, again.completed, again.plan.done) == (False, (), True)


def test_a_dry_run_plans_but_sends_no_change_and_does_not_wait() -> None:
    net, fake = growth()
    fake.observe(2, caught_up_in=None)  # a real run would wait for it
    with admin(net) as client:
        result = client.reconcile_voters([1, 2, 3], dry_run=True, timeout=30)
    assert changes_sent(net) == [] and net.sleeps == []
    assert result.plan.waiting == "node 2 is still catching up with the leader"
    assert result.dry_run and not result.changed and result.completed == ()
    assert [(s.action, s.node_id) for s in result.plan.steps] == [("add", 2), ("add", 3)]
    assert fake.voters == [key_of(net, 1)]


def test_a_refused_plan_raises_before_any_change() -> None:
    net = FakeNetwork(3, leader=1)
    FakeQuorum(net, [1, 2, 3])
    net.nodes[3].up = False
    with admin(net) as client:
        with pytest.raises(VoterChangeRefusedError) as lost:
            client.reconcile_voters([1, 3], timeout=30)
        with pytest.raises(VoterChangeRefusedError) as empty:
            client.reconcile_voters([], timeout=30)
    assert str(lost.value) == (
        "removing voter 2 would leave 1 healthy of 2 voters, short of the majority of 2 needed to commit the "
        "change (no step was completed)"
    )
    assert str(empty.value) == "the quorum needs at least one voter (no step was completed)"
    assert lost.value.completed == () and changes_sent(net) == []


# ------------------------------------------------------------------ waiting


def test_an_add_waits_until_its_observer_catches_up_polling_on_the_clock() -> None:
    net, fake = growth()
    ready_at = net.now + 3
    fake.observe(2, caught_up_in=3)
    recorder = Recorder(fake)
    with admin(net) as client:
        result = client.reconcile_voters([1, 2], progress=recorder, timeout=30)
    ((sent_at, action, key),) = fake.changes
    assert (action, key) == ("add", key_of(net, 2))
    assert ready_at <= sent_at < ready_at + 1
    waits = [message for kind, _, message in recorder.events if kind == "waiting"]
    assert waits and set(waits) == {"node 2 is still catching up with the leader"}
    assert 0.2 in net.sleeps
    assert recorder.kinds() == [("plan", None), ("step", add(key)), ("committed", add(key))]
    assert result.changed


def test_an_observer_that_never_catches_up_times_out_listing_the_steps_already_done() -> None:
    net, fake = growth()
    fake.observe(3, caught_up_in=None)
    with admin(net) as client, pytest.raises(VoterChangeTimeoutError) as caught:
        client.reconcile_voters([1, 2, 3], timeout=5)
    two = key_of(net, 2)
    assert described(caught.value.completed) == [add(two)]
    assert str(caught.value) == (
        f"gave up after 5 s: node 3 is still catching up with the leader (completed: {add(two)})"
    )
    assert changes_sent(net) == [("AddRaftVoter", *two)]
    assert 5 <= net.now - fake.changes[0][0] < 6


def test_a_previous_change_still_uncommitted_is_waited_for_before_the_next_is_sent() -> None:
    net, fake = growth()
    start, two = net.now, key_of(net, 2)
    del fake.observers[two]  # another client added 2; the change commits on the 60th read
    fake.voters.append(two)
    fake.reads_to_commit = 60
    recorder = Recorder(fake)
    with admin(net) as client:
        result = client.reconcile_voters([1, 2, 3], progress=recorder, timeout=30)
    assert fake.changes[0][1:] == ("add", key_of(net, 3)) and fake.changes[0][0] > start + 5
    assert "the previous voter change is not committed yet" in {message for _, _, message in recorder.events}
    assert [(s.action, s.node_id) for s in result.plan.steps] == [("add", 3)]


def test_commits_are_awaited_through_committed_voters_on_describe_quorum_v3() -> None:
    net, fake = growth(commit_after_reads=3)
    recorder = Recorder(fake)
    with admin(net) as client:
        result = client.reconcile_voters([1, 2, 3], progress=recorder, timeout=30)
    assert recorder.committed_for_real == [True, True] and len(result.completed) == 2
    assert {v for _, v, _ in net.sent("DescribeQuorum")} == {3}


def test_a_v2_server_commit_is_seen_from_the_voter_set_and_a_high_watermark_past_the_step() -> None:
    net, fake = growth(version=2, commit_after_reads=3)
    recorder = Recorder(fake)
    with admin(net) as client:
        result = client.reconcile_voters([1, 2, 3], progress=recorder, timeout=30)
    assert {v for _, v, _ in net.sent("DescribeQuorum")} == {2}
    # the voter set changes at once on the leader: only the high watermark tells the commit
    assert recorder.committed_for_real == [True, True] and len(result.completed) == 2
    assert fake.high_watermark == START_OFFSET + 2


# ------------------------------------------------------------------ failures


def test_a_step_that_fails_is_planned_again_and_one_that_took_effect_is_not_repeated() -> None:
    net, fake = growth()
    fake.failures[("add", 2)] = [(REQUEST_TIMED_OUT, False)]
    fake.failures[("add", 3)] = [(REQUEST_TIMED_OUT, True)]
    recorder = Recorder(fake)
    with admin(net) as client:
        client.reconcile_voters([1, 2, 3], progress=recorder, timeout=30)
    two, three = key_of(net, 2), key_of(net, 3)
    assert changes_sent(net) == [("AddRaftVoter", *two)] * 2 + [("AddRaftVoter", *three)]
    assert fake.voters == [key_of(net, 1), two, three]
    assert recorder.kinds()[:4] == [
        ("plan", None),
        ("step", add(two)),
        ("step", add(two)),
        ("committed", add(two)),
    ]


def test_a_change_that_took_effect_despite_an_error_counts_as_a_change() -> None:
    net, fake = growth()
    fake.failures[("add", 2)] = [(REQUEST_TIMED_OUT, True)]
    with admin(net) as client:
        result = client.reconcile_voters([1, 2], timeout=30)
    assert fake.voters == [key_of(net, 1), key_of(net, 2)]
    assert result.changed


def test_a_step_that_fails_three_times_stops_the_run_with_the_server_error_as_cause() -> None:
    net, fake = growth()
    fake.failures[("add", 3)] = [(REQUEST_TIMED_OUT, False)] * 3
    with admin(net) as client, pytest.raises(VoterChangeError) as caught:
        client.reconcile_voters([1, 2, 3], timeout=30)
    error = caught.value
    two, three = key_of(net, 2), key_of(net, 3)
    assert type(error) is VoterChangeError
    assert isinstance(error.__cause__, RequestTimedOutError)
    assert error.__cause__.message == "injected failure"
    assert str(error).startswith(f"{add(three)} failed 3 times, last: [REQUEST_TIMED_OUT] injected failure")
    assert str(error).endswith(f"(completed: {add(two)})")
    assert described(error.completed) == [add(two)]
    assert changes_sent(net) == [("AddRaftVoter", *two)] + [("AddRaftVoter", *three)] * 3
    # run again, it finishes what is left
    with admin(net) as client:
        rest = client.reconcile_voters([1, 2, 3], timeout=30)
    assert [outcome.step.describe() for outcome in rest.completed] == [add(three)]


# ------------------------------------------------------------------ endpoints


def test_an_add_without_endpoints_uses_the_registered_controller_on_the_voters_listener() -> None:
    net, fake = growth()
    with admin(net) as client:
        client.reconcile_voters([1, 2], timeout=30)
    assert listeners_sent(net) == [[(LISTENER, net.host, net.nodes[2].port)]]
    assert fake.listeners[2] == (LISTENER, net.host, net.nodes[2].port)


def test_an_add_without_endpoints_of_an_unregistered_controller_is_refused_naming_the_fix() -> None:
    net, fake = growth()

    def without_node_3(node: FakeNode, version: int, body: Any) -> Any:
        response = listed_controllers(node, version, body)
        response.brokers = [b for b in response.brokers if b.broker_id != 3]
        return response

    for node in net.nodes.values():
        node.handlers[60] = without_node_3
    two, three = key_of(net, 2), key_of(net, 3)
    with admin(net) as client, pytest.raises(VoterChangeRefusedError) as caught:
        client.reconcile_voters([1, 2, 3], timeout=30)
    assert str(caught.value) == (
        "no endpoint is known for controller 3: the quorum does not list it among its registered "
        f"controllers; give it as 3@host:port:{three[1]} (completed: {add(two)})"
    )
    assert changes_sent(net) == [("AddRaftVoter", *two)]


# ------------------------------------------------------------------ removals and replacing a disk


def test_removals_take_failed_voters_first_and_the_leader_last_and_survive_its_resignation() -> None:
    net = FakeNetwork(5, leader=1)
    fake = FakeQuorum(net, [1, 2, 3, 4, 5])
    net.nodes[4].up = False  # its last state looks caught up: only the probe shows it failed
    recorder = Recorder(fake)
    with admin(net) as client:
        result = client.reconcile_voters([3, 5], progress=recorder, timeout=30)
    assert [(action, node_id) for _, action, (node_id, _) in fake.changes] == [
        ("remove", 4),
        ("remove", 2),
        ("remove", 1),
    ]
    assert fake.voters == fake.committed == [key_of(net, 3), key_of(net, 5)] and net.leader == 3
    assert len(result.completed) == 3 and recorder.committed_for_real == [True, True, True]


def replaced_disk(old_fails: bool) -> tuple[FakeNetwork, FakeQuorum, VoterKey, VoterKey]:
    """Three voters; node 3 runs again on a new, empty disk that catches up in 2 s."""
    net = FakeNetwork(3, leader=1)
    fake = FakeQuorum(net, [1, 2, 3])
    old = key_of(net, 3)
    if old_fails:
        fake.lagging.add(old)
    new = fake.observe(3, Uuid.random(), caught_up_in=2)
    return net, fake, old, new


def test_replace_controller_swaps_the_directory_once_the_new_one_is_caught_up() -> None:
    net, fake, old, new = replaced_disk(old_fails=True)
    ready_at = net.now + 2
    recorder = Recorder(fake)
    with admin(net) as client:
        result = client.replace_controller(3, str(new[1]), progress=recorder, timeout=30)
    assert [(action, key) for _, action, key in fake.changes] == [("remove", old), ("add", new)]
    assert fake.changes[0][0] >= ready_at
    assert recorder.kinds() == [
        ("plan", None),
        ("step", remove(old)),
        ("committed", remove(old)),
        ("step", add(new)),
        ("committed", add(new)),
    ]
    assert {message for kind, _, message in recorder.events if kind == "waiting"} == {
        "node 3 is still catching up with the leader"
    }
    assert listeners_sent(net) == [[(LISTENER, net.host, net.nodes[3].port)]]
    assert fake.voters == [key_of(net, 1), key_of(net, 2), new] and len(result.completed) == 2


def test_replace_controller_with_endpoints_and_a_healthy_old_directory_and_as_a_dry_run() -> None:
    net, fake, old, new = replaced_disk(old_fails=False)
    given = Endpoint(listener=LISTENER, host="ctl3.example", port=19093)
    with admin(net) as client:
        dry = client.replace_controller(3, new[1], endpoints=[given], dry_run=True)
        assert changes_sent(net) == [] and dry.plan.waiting == "node 3 is still catching up with the leader"
        client.replace_controller(3, str(new[1]), endpoints=[given], timeout=30)
    assert [(action, key) for _, action, key in fake.changes] == [("remove", old), ("add", new)]
    assert listeners_sent(net) == [[(LISTENER, "ctl3.example", 19093)]]


# ------------------------------------------------------------------ AsyncAdmin and arguments


def test_async_admin_reconciles_the_same_way() -> None:
    net, fake = growth(commit_after_reads=2)
    recorder = Recorder(fake)

    async def run() -> ReconcileResult:
        async with AsyncAdmin(
            bootstrap_controllers=net.controllers(), transport=AsyncFakeNetwork(net)
        ) as client:
            await client.reconcile_voters([1, 2, 3], progress=recorder, timeout=30)
            return await client.reconcile_voters([1, 2, 3], timeout=30)

    again = asyncio.run(run())
    two, three = key_of(net, 2), key_of(net, 3)
    assert recorder.kinds() == [
        ("plan", None),
        ("step", add(two)),
        ("committed", add(two)),
        ("step", add(three)),
        ("committed", add(three)),
    ]
    assert recorder.committed_for_real == [True, True] and not again.changed
    assert changes_sent(net) == [("AddRaftVoter", *two), ("AddRaftVoter", *three)]


def test_async_replace_controller() -> None:
    net, fake, old, new = replaced_disk(old_fails=True)

    async def run() -> ReconcileResult:
        async with AsyncAdmin(
            bootstrap_controllers=net.controllers(), transport=AsyncFakeNetwork(net)
        ) as client:
            return await client.replace_controller(3, str(new[1]), timeout=30)

    assert len(asyncio.run(run()).completed) == 2
    assert [(action, key) for _, action, key in fake.changes] == [("remove", old), ("add", new)]


BAD_CALLS: list[tuple[Callable[[Any], object], type[Exception], str]] = [  # Any: wrong types on purpose
    (lambda a: a.reconcile_voters("123"), TypeError, "desired must be an iterable"),
    (lambda a: a.reconcile_voters(3), TypeError, "desired must be an iterable"),
    (lambda a: a.reconcile_voters([1, True]), TypeError, "desired voter must be a node id"),
    (lambda a: a.reconcile_voters([1, -2]), ValueError, "desired voter must be a node id"),
    (lambda a: a.reconcile_voters([DesiredVoter(1, "not-a-uuid")]), ValueError, "directory_id must be"),
    (lambda a: a.reconcile_voters([DesiredVoter(1, endpoints=("x",))]), TypeError, "endpoints"),  # type: ignore[arg-type]
    (lambda a: a.reconcile_voters([1], dry_run="yes"), TypeError, "dry_run must be True or False"),
    (lambda a: a.reconcile_voters([1], thresholds={"max_lag_ms": 1}), TypeError, "thresholds must be"),
    (lambda a: a.reconcile_voters([1], progress=5), TypeError, "progress must be callable"),
    (lambda a: a.reconcile_voters([1], timeout=0), ValueError, "timeout must be"),
    (lambda a: a.replace_controller("3", str(Uuid.random())), TypeError, "node_id must be"),
    (lambda a: a.replace_controller(3, "short"), ValueError, "directory_id must be"),
    (
        lambda a: a.replace_controller(3, str(Uuid.random()), endpoints="ctl:9093"),
        TypeError,
        "endpoints must be",
    ),
    (
        lambda a: a.replace_controller(3, str(Uuid.random()), endpoints=[]),
        ValueError,
        "at least one listener",
    ),
    (lambda a: a.replace_controller(3, str(Uuid.random()), timeout=-1), ValueError, "timeout must be"),
    (lambda a: a.reconcile_voters([1], auto_join=[3]), TypeError, "auto_join must be a mapping"),
    (lambda a: a.reconcile_voters([1], auto_join={3: "true"}), TypeError, r"auto_join\[3\] must be True"),
    (lambda a: a.reconcile_voters([1], auto_join={-3: True}), ValueError, "auto_join node id must be"),
    (lambda a: a.replace_controller(3, str(Uuid.random()), auto_join=1), TypeError, "auto_join must be True"),
]


@pytest.mark.parametrize(("call", "error", "text"), BAD_CALLS)
def test_bad_arguments_raise_before_anything_is_sent(
    call: Callable[[Any], object], error: type[Exception], text: str
) -> None:
    net, _ = growth()
    with admin(net) as client, pytest.raises(error, match=text):
        call(client)
    assert net.requests == []


def test_thresholds_are_used_for_the_plan() -> None:
    net, fake = growth()
    fake.observe(2, caught_up_in=None)  # 20000 offsets behind, last caught up a minute ago
    fake.require_caught_up = False
    with admin(net) as client:
        result = client.reconcile_voters(
            [1, 2], thresholds=HealthThresholds(max_lag_offsets=30_000, max_lag_ms=120_000), timeout=30
        )
    assert result.changed and changes_sent(net) == [("AddRaftVoter", *key_of(net, 2))]


# ------------------------------------------------------------------ controllers that join by themselves

REJOINED = (
    "controller 3 rejoined the voter set: it runs with controller.quorum.auto.join.enable=true; stop it "
    "before removing it"
)


def shrinking(auto_join_reads: int = 0) -> tuple[FakeNetwork, FakeQuorum]:
    """Voters 1 (the leader), 2, 3; node 3 runs with auto-join."""
    net = FakeNetwork(3, leader=1)
    fake = FakeQuorum(net, [1, 2, 3])
    fake.auto_joining = {3}
    fake.auto_join_reads = auto_join_reads
    return net, fake


def test_a_removed_controller_that_adds_itself_back_at_once_is_reported() -> None:
    net, fake = shrinking()
    three = key_of(net, 3)
    with admin(net) as client, pytest.raises(VoterChangeError) as caught:
        client.reconcile_voters([1, 2], timeout=30)
    assert type(caught.value) is VoterChangeError
    # the removal committed (the leader answers it once committed), then the controller came back
    # before the quorum was read again: completed all the same, and not sent twice
    assert str(caught.value) == f"{REJOINED} (completed: {remove(three)})"
    assert described(caught.value.completed) == [remove(three)]
    assert changes_sent(net) == [("RemoveRaftVoter", *three)]
    assert fake.joined == [("add", three)] and three in fake.voters


def test_a_rejoin_within_the_watch_after_the_last_step_is_reported() -> None:
    net, fake = shrinking(auto_join_reads=4)
    three = key_of(net, 3)
    recorder = Recorder(fake)
    with admin(net) as client, pytest.raises(VoterChangeError) as caught:
        client.reconcile_voters([1, 2], progress=recorder, timeout=30)
    assert str(caught.value) == f"{REJOINED} (completed: {remove(three)})"
    assert described(caught.value.completed) == [remove(three)]
    assert recorder.kinds() == [("plan", None), ("step", remove(three)), ("committed", remove(three)),
                                ("watching", None)]
    (message,) = [m for kind, _, m in recorder.events if kind == "watching"]
    assert message == (
        f"watching controller 3 for {REJOIN_WATCH:g} s: removed while running, a controller with "
        "controller.quorum.auto.join.enable=true adds itself back"
    )
    assert changes_sent(net) == [("RemoveRaftVoter", *three)]


def test_a_rejoin_before_the_next_step_stops_the_run_before_it() -> None:
    net = FakeNetwork(5, leader=1)
    fake = FakeQuorum(net, [1, 2, 3, 4, 5])
    fake.auto_joining = {4}
    with admin(net) as client, pytest.raises(VoterChangeError) as caught:
        client.reconcile_voters([1, 2, 3], timeout=30)
    four = key_of(net, 4)
    assert str(caught.value).startswith("controller 4 rejoined the voter set: ")
    assert changes_sent(net) == [("RemoveRaftVoter", *four)]  # 5 is not removed after 4 came back


def test_a_controller_that_stays_out_is_watched_only_a_few_cheap_reads() -> None:
    net, fake = shrinking()
    fake.auto_joining = set()  # it runs, without auto-join
    recorder = Recorder(fake)
    with admin(net) as client:
        started = net.now
        reads = len(net.sent("DescribeQuorum"))
        result = client.reconcile_voters([1, 2], progress=recorder, timeout=30)
    assert [kind for kind, _ in recorder.kinds()][-1] == "watching"
    assert result.final is not None and result.final.current == {key_of(net, 1), key_of(net, 2)}
    assert REJOIN_WATCH <= net.now - started < REJOIN_WATCH + 3
    watched = len(net.sent("DescribeQuorum")) - reads
    assert watched <= REJOIN_WATCH / WATCH_POLL + 12  # the plan's reads, the commit's and the watch's


def test_no_watch_for_a_stopped_controller_or_one_configured_without_auto_join() -> None:
    for setting, up in ((None, False), (False, True)):
        net, fake = shrinking(auto_join_reads=4)
        net.nodes[3].up = up
        recorder = Recorder(fake)
        with admin(net) as client:
            result = client.reconcile_voters(
                [1, 2], progress=recorder, timeout=30, auto_join={} if setting is None else {3: setting}
            )
        assert [kind for kind, _ in recorder.kinds()] == ["plan", "step", "committed"]
        assert WATCH_POLL not in net.sleeps and len(result.completed) == 1
        if up:  # it comes back after the run: the note of a controller configured so says it would not
            # (only the registration it keeps, running, is noted: rule 7)
            assert result.plan.notes == (
                "controller 3 still answers, so it is not unregistered (a running controller registers "
                "again): once it is stopped, unregister it (kafka-cluster unregister-controller --id 3)",
            )


def test_removing_a_running_controller_configured_to_auto_join_is_refused_before_any_change() -> None:
    net, fake = shrinking()
    with admin(net) as client, pytest.raises(VoterChangeRefusedError) as caught:
        client.reconcile_voters([1, 2], timeout=30, auto_join={3: True})
    assert str(caught.value) == (
        "controller 3 is configured with controller.quorum.auto.join.enable=true: removed while it runs, it "
        "adds itself back to the voters; stop it, or set controller.quorum.auto.join.enable=false and "
        "restart it, before removing it (no step was completed)"
    )
    assert changes_sent(net) == []
    net.nodes[3].up = False  # stopped: the removal sticks
    fake.auto_joining = set()
    with admin(net) as client:
        result = client.reconcile_voters([1, 2], timeout=30, auto_join={3: True})
    assert len(result.completed) == 1 and len(result.plan.notes) == 2
    assert result.plan.notes[0].startswith("controller 3 does not answer and is configured with")
    assert result.plan.notes[1].startswith("the registration of controller 3 stays")  # rule 7, below 33


@pytest.mark.parametrize(
    ("moment", "sent", "joined", "refused"),
    [
        # it swapped itself before the run could (its first read): nothing is sent
        ("read", [], ["remove old", "add new"], []),
        # its requests land just before the run's: both of the run's are refused, and count as made
        ("before", ["remove old", "add new"], ["remove old", "add new"], ["remove old", "add new"]),
        # it adds itself right behind the run's removal, before the run sees that commit
        ("after", ["remove old"], ["add new"], []),
    ],
)
def test_replace_controller_races_a_new_incarnation_that_swaps_itself(
    moment: str, sent: list[str], joined: list[str], refused: list[str]
) -> None:
    """The new, auto-joining incarnation removes its stale entry and adds itself while the run plans
    and sends the same changes: whoever makes a change first, the run ends with the new directory in
    the voter set, without failing on the other's DUPLICATE_VOTER or VOTER_NOT_FOUND or waiting for a
    voter set the controller has already moved past."""
    net, fake, old, new = replaced_disk(old_fails=True)
    fake.auto_joining = {3}
    fake.auto_join_at = moment
    names = {old: "old", new: "new"}
    with admin(net) as client:
        result = client.replace_controller(3, str(new[1]), timeout=30, auto_join=True)
    assert fake.voters == fake.committed == [key_of(net, 1), key_of(net, 2), new]
    assert result.final is not None and result.final.current == {key_of(net, 1), key_of(net, 2), new}
    actions = {"AddRaftVoter": "add", "RemoveRaftVoter": "remove"}
    assert [f"{actions[api]} {names[(node_id, d)]}" for api, node_id, d in changes_sent(net)] == sent
    assert [f"{action} {names[key]}" for action, key in fake.joined] == joined
    assert [f"{action} {names[key]}" for action, key in fake.refused] == refused
    assert [o.step.describe() for o in result.completed] == [
        {"remove old": remove(old), "add new": add(new)}[s] for s in sent
    ]
    assert result.plan.notes == (
        "controller 3 is configured with controller.quorum.auto.join.enable=true: it joins the voters by "
        "itself (removing an entry of its id with another directory first), and a step it has made is not "
        "sent again",
    )


# ------------------------------------------------------------------ registrations (rule 7)


def registering(fake: FakeQuorum, level: int = 33) -> None:
    """The controllers finalize ``level``, list the registered controllers (``net.registrations``)
    and unregister a controller that is no longer a voter, as Kafka 4.4's active controller does."""
    from unit.client.fake import api_versions

    net = fake.net

    def versions(node: FakeNode, version: int, body: Any) -> Any:
        response = api_versions(node, version, body)
        response.finalized_features[0].max_version_level = level
        return response

    def listed(node: FakeNode, version: int, body: Any) -> Any:
        response = listed_controllers(node, version, body)
        response.brokers = [b for b in response.brokers if b.broker_id in net.registrations]
        return response

    def unregister(node: FakeNode, version: int, body: Any) -> Any:
        reply = messages.UnregisterControllerResponse
        wanted = body.controller_id
        if wanted in {node_id for node_id, _ in fake.voters}:
            return reply(error_code=42, error_message=f"Cannot unregister controller {wanted} because it is "
                         "part of the voter set.")
        if level < 33:
            return reply(error_code=35, error_message="The current MetadataVersion is too old to support "
                         "controller unregistration.")
        if wanted not in net.registrations:
            return reply(error_code=136, error_message=f"Controller ID {wanted} is not currently registered.")
        net.registrations.discard(wanted)
        return reply(error_message="")

    for node in net.nodes.values():
        node.handlers.update({18: versions, 60: listed, 94: unregister})


def apis(net: FakeNetwork) -> list[str]:
    return [api for _, api, _, _ in net.requests if api in ("RemoveRaftVoter", "UnregisterController")]


def test_a_stopped_controller_removed_for_good_is_unregistered_after_its_removal_commits() -> None:
    net, fake = shrinking()
    fake.auto_joining = set()
    registering(fake)
    net.nodes[3].up = False
    recorder = Recorder(fake)
    with admin(net) as client:
        planned = client.reconcile_voters([1, 2], dry_run=True, timeout=30)
        assert planned.plan.unregister == (3,) and apis(net) == []
        result = client.reconcile_voters([1, 2], progress=recorder, timeout=30, auto_join={3: False})
    assert apis(net) == ["RemoveRaftVoter", "UnregisterController"]
    assert (result.plan.unregister, result.unregistered, result.changed) == ((3,), (3,), True)
    assert result.final is not None and result.final.done
    assert [kind for kind, _ in recorder.kinds()] == ["plan", "step", "committed", "unregistered"]
    assert recorder.events[-1][2] == "unregistered controller 3"
    assert 3 not in net.registrations


def test_a_registration_an_interrupted_run_left_is_removed_by_the_next_and_kept_when_asked() -> None:
    net = FakeNetwork(3, leader=1)
    fake = FakeQuorum(net, [1, 2])  # 3 was removed, and stopped, before its unregistration
    registering(fake)
    net.nodes[3].up = False
    with admin(net) as client:
        kept = client.reconcile_voters([1, 2], timeout=30, keep_registrations=True)
        assert kept.plan.done and not kept.changed and apis(net) == []
        assert kept.plan.notes == ("the registration of controller 3 is kept: its supported feature levels "
                                   "still count when features are upgraded",)
        result = client.reconcile_voters([1, 2], timeout=30)
        again = client.reconcile_voters([1, 2], timeout=30)
    assert (result.completed, result.unregistered) == ((), (3,))
    assert apis(net) == ["UnregisterController"] and again.plan.done and not again.changed


def test_below_4_4_iv2_registrations_stay_with_a_note_and_a_refused_unregistration_stops_the_run() -> None:
    net, fake = shrinking()
    fake.auto_joining = set()
    registering(fake, level=29)
    net.nodes[3].up = False
    with admin(net) as client:
        result = client.reconcile_voters([1, 2], timeout=30, auto_join={3: False})
    assert apis(net) == ["RemoveRaftVoter"] and result.unregistered == ()
    assert result.plan.notes == (
        "the registration of controller 3 stays: unregistering needs metadata.version 4.4-IV2 (33) or "
        "later, and it is 29; until then its supported feature levels hold back feature upgrades",)

    net = FakeNetwork(3, leader=1)
    fake = FakeQuorum(net, [1, 2])
    registering(fake)
    net.nodes[3].up = False
    for node in net.nodes.values():
        node.handlers[94] = lambda n, v, b: messages.UnregisterControllerResponse(
            error_code=42, error_message="Controller cannot unregister itself while it is active.")
    with admin(net) as client, pytest.raises(VoterChangeError) as caught:
        client.reconcile_voters([1, 2], timeout=30)
    assert str(caught.value).startswith(
        "unregistering controller 3 failed: [INVALID_REQUEST] Controller cannot unregister itself while it "
        "is active. (unregister_controller on ")
    assert str(caught.value).endswith("(no step was completed)")
