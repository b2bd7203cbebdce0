"""Guided voter changes (``Admin.reconcile_voters`` / ``replace_controller``) on real processes: growing
a standalone controller to five voters and shrinking without the leader, replacing a wiped disk only
once the new incarnation is caught up, finishing a plan whose first run was killed, surviving a leader
killed mid-step, and refusing a removal that would leave no healthy majority."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Collection, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from integration.harness import HOST, LISTENER, Cluster
from integration.test_voters import FAST, format_observer, standalone
from kafka_admin_kraft import Admin, Endpoint
from kafka_admin_kraft.errors import VoterChangeRefusedError
from kafka_admin_kraft.health import HealthThresholds
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.voters import DesiredVoter, Progress, StepOutcome, VoterStep

Make = Callable[..., Cluster]
Key = tuple[int, Uuid]
STEP_TIMEOUT = 30.0


def grown_from_one(make_cluster: Make, size: int, extra: dict[str, str] | None = None) -> Cluster:
    """``standalone`` (node 1 ``--standalone``, the others observers) with ``extra`` added to its
    properties."""

    def make(count: int, **options: Any) -> Cluster:
        return make_cluster(count, properties={**options["properties"], **(extra or {})})

    return standalone(make, size)


def desired(cluster: Cluster, *node_ids: int) -> list[DesiredVoter]:
    """The voters wanted, each with its endpoint given (not looked up among registered controllers)."""
    return [DesiredVoter(i, endpoints=(Endpoint(listener=LISTENER, host=HOST, port=cluster.nodes[i].port),))
            for i in node_ids]


def keys(cluster: Cluster, *node_ids: int) -> frozenset[Key]:
    return frozenset((i, cluster.nodes[i].directory_id) for i in node_ids)


def admin(cluster: Cluster, request_timeout_ms: int = 10000) -> Admin:
    """A client whose AddRaftVoter / RemoveRaftVoter waits (commit included) do not time out on a busy
    machine: a step whose answer is lost counts as done only through a later plan, not as completed."""
    return Admin(bootstrap_controllers=cluster.bootstrap_servers(), request_timeout_ms=request_timeout_ms,
                 default_api_timeout_ms=20000)


def voter_sets(cluster: Cluster, candidates: Collection[int] | None = None
               ) -> tuple[int, frozenset[Key], frozenset[Key]]:
    """The leader (among ``candidates``), its CurrentVoters and CommittedVoters (DescribeQuorum v3,
    asked of the leader)."""
    leader, _ = cluster.wait_for_leader(candidates=candidates)
    partition = cluster.describe_quorum(leader, 3).topics[0].partitions[0]
    assert partition.leader_id == leader
    return (leader, frozenset((v.replica_id, v.replica_directory_id) for v in partition.current_voters),
            frozenset((v.replica_id, v.replica_directory_id) for v in partition.committed_voters))


class Recorder:
    """A progress callback that keeps every event and, at each ``committed``, the committed voter set
    the leader reports right then."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.events: list[Progress] = []
        self.committed_at: list[frozenset[Key]] = []

    def __call__(self, event: Progress) -> None:
        self.events.append(event)
        if event.kind == "committed":
            self.committed_at.append(voter_sets(self.cluster)[2])

    def kinds(self) -> list[str]:
        return [e.kind for e in self.events]

    def first_steps(self) -> tuple[VoterStep, ...]:
        """The plan as the first step was sent (a plan read earlier may still wait for an observer)."""
        return next(e.plan.steps for e in self.events if e.kind == "step")


def steps_of(completed: Sequence[StepOutcome]) -> list[tuple[str, int]]:
    return [(o.step.action, o.step.node_id) for o in completed]


@pytest.fixture(scope="module")
def five(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Node 1 formatted ``--standalone``, nodes 2-5 as observers, shared by the grow and shrink tests."""
    root = tmp_path_factory.mktemp("five") / "cluster-0"
    cluster = grown_from_one(lambda size, **options: Cluster(root, size, **options), 5)
    try:
        cluster.start_all()
        cluster.wait_for_leader(30)
        yield cluster
    finally:
        cluster.close()


def test_grow_one_to_three_to_five_then_a_rerun_changes_nothing(five: Cluster) -> None:
    recorder = Recorder(five)
    with admin(five) as client:
        to_three = client.reconcile_voters(desired(five, 1, 2, 3), progress=recorder, timeout=STEP_TIMEOUT)
        assert steps_of(to_three.completed) == [("add", 2), ("add", 3)]
        assert [o.step.voters_after for o in to_three.completed] == [keys(five, 1, 2), keys(five, 1, 2, 3)]
        assert recorder.committed_at == [keys(five, 1, 2), keys(five, 1, 2, 3)]
        one_at_a_time = ["plan", "step", "committed", "step", "committed"]
        assert [k for k in recorder.kinds() if k != "waiting"] == one_at_a_time
        assert to_three.plan.current == keys(five, 1)

        recorder = Recorder(five)
        to_five = client.reconcile_voters(desired(five, 1, 2, 3, 4, 5), progress=recorder,
                                          timeout=STEP_TIMEOUT)
        assert steps_of(to_five.completed) == [("add", 4), ("add", 5)]
        assert recorder.committed_at == [keys(five, 1, 2, 3, 4), keys(five, 1, 2, 3, 4, 5)]
        assert [s.fault_tolerance_after for s in recorder.first_steps()] == [1, 2]

        again = client.reconcile_voters(desired(five, 1, 2, 3, 4, 5), timeout=STEP_TIMEOUT)
        assert not again.changed and again.plan.done and again.completed == ()
    assert voter_sets(five)[1:] == (keys(five, 1, 2, 3, 4, 5),) * 2
    five.assert_running()


def test_shrink_five_to_three_removes_the_leader_last(five: Cluster) -> None:
    with admin(five) as client:
        # A no-op after the grow test; it grows the quorum when this test runs alone.
        client.reconcile_voters(desired(five, 1, 2, 3, 4, 5), timeout=STEP_TIMEOUT)
        leader, _, _ = voter_sets(five)
        other = next(i for i in (5, 4) if i != leader)
        remaining = [i for i in (1, 2, 3, 4, 5) if i not in (leader, other)]
        recorder = Recorder(five)
        result = client.reconcile_voters(desired(five, *remaining), progress=recorder, timeout=STEP_TIMEOUT)
    assert steps_of(result.completed) == [("remove", other), ("remove", leader)]
    assert "leader leaves last" in result.completed[1].step.why
    assert recorder.committed_at[-1] == keys(five, *remaining)
    new_leader, current, committed = voter_sets(five)
    assert new_leader in remaining
    assert current == committed == keys(five, *remaining)
    five.assert_running()


def test_replace_a_wiped_controller_waits_for_the_new_incarnation(make_cluster: Make) -> None:
    cluster = make_cluster(3, properties=dict(FAST)).format().start_all()
    leader, _ = cluster.wait_for_leader()
    cluster.wait_caught_up(leader)
    victim = next(i for i in (3, 2) if i != leader)
    node = cluster.nodes[victim]
    old_directory = node.directory_id
    cluster.kill(victim)
    shutil.rmtree(node.metadata_dir)
    node.directory_id = Uuid.random()
    format_observer(cluster, node)
    new_directory = node.directory_id
    caught_up_at_remove: list[bool] = []
    recorder = Recorder(cluster)

    def progress(event: Progress) -> None:
        recorder(event)
        if event.kind == "waiting" and not node.running:  # the new incarnation starts only now
            cluster.start(victim)
        if event.kind == "step" and event.step is not None and event.step.action == "remove":
            found = cluster.find_leader()
            assert found is not None
            hw = found[1].high_watermark
            caught_up_at_remove.append(any(
                o.replica_id == victim and o.replica_directory_id == new_directory
                and o.last_caught_up_timestamp > 0 and o.log_end_offset >= hw - 10
                for o in found[1].observers))

    with admin(cluster) as client:
        endpoint = Endpoint(listener=LISTENER, host=HOST, port=node.port)
        result = client.replace_controller(victim, str(new_directory), endpoints=[endpoint],
                                           progress=progress, timeout=STEP_TIMEOUT)
    assert steps_of(result.completed) == [("remove", victim), ("add", victim)]
    assert result.completed[0].step.directory_id == old_directory
    kinds = recorder.kinds()
    assert kinds.index("waiting") < kinds.index("step")
    assert "does not fetch from the leader yet" in recorder.events[kinds.index("waiting")].message
    assert caught_up_at_remove == [True]
    _, current, committed = voter_sets(cluster)
    others = [i for i in (1, 2, 3) if i != victim]
    assert current == committed == keys(cluster, *others) | {(victim, new_directory)}
    cluster.assert_running()


CHILD = """
import sys, time
from kafka_admin_kraft import Admin, Endpoint
from kafka_admin_kraft.voters import DesiredVoter

def progress(event):
    step = f" {event.step.action} {event.step.node_id}" if event.step else ""
    print(event.kind + step, flush=True)
    if event.kind == "committed":
        time.sleep(60)  # killed here, before the next step

bootstrap, *wanted = sys.argv[1:]
voters = [DesiredVoter(int(i), endpoints=(Endpoint(listener="CONTROLLER", host="127.0.0.1", port=int(p)),))
          for i, p in (w.split(":") for w in wanted)]
with Admin(bootstrap_controllers=bootstrap, request_timeout_ms=10000, default_api_timeout_ms=20000) as admin:
    admin.reconcile_voters(voters, progress=progress, timeout=20)
print("finished", flush=True)
"""


def test_a_reconcile_killed_mid_plan_is_finished_by_the_next_run(make_cluster: Make, tmp_path: Path) -> None:
    cluster = grown_from_one(make_cluster, 3)
    cluster.start_all()
    cluster.wait_for_leader()
    wanted = [f"{i}:{cluster.nodes[i].port}" for i in (1, 2, 3)]
    child = subprocess.Popen([sys.executable, "-c", CHILD, cluster.bootstrap_servers(), *wanted],
                             stdout=subprocess.PIPE, stderr=(tmp_path / "child.err").open("wb"), text=True)
    lines: list[str] = []
    try:
        assert child.stdout is not None
        for line in child.stdout:
            lines.append(line.strip())
            if line.startswith("committed"):
                child.send_signal(signal.SIGKILL)
                break
    finally:
        child.kill()
        child.wait(10)
    assert lines[-1] == "committed add 2", (lines, (tmp_path / "child.err").read_text())
    assert lines[0] == "plan" and "step add 2" in lines
    _, current, committed = voter_sets(cluster)
    assert current == committed == keys(cluster, 1, 2)

    with admin(cluster) as client:
        result = client.reconcile_voters(desired(cluster, 1, 2, 3), timeout=STEP_TIMEOUT)
    assert result.plan.current == keys(cluster, 1, 2)
    assert steps_of(result.completed) == [("add", 3)]
    assert voter_sets(cluster)[1:] == (keys(cluster, 1, 2, 3),) * 2
    cluster.assert_running()


def three_voters_two_observers(make_cluster: Make) -> Cluster:
    cluster = make_cluster(5, properties=dict(FAST))
    for node in cluster.nodes.values():
        cluster.write_config(node)
        cluster.format_node(node, [1, 2, 3] if node.node_id <= 3 else [])
    cluster.start_all()
    return cluster


def test_the_leader_killed_during_a_step_the_reconcile_replans(make_cluster: Make) -> None:
    cluster = three_voters_two_observers(make_cluster)
    leader, _ = cluster.wait_for_leader()
    cluster.wait_caught_up(leader)
    survivors = [i for i in (1, 2, 3) if i != leader]
    killed: list[int] = []
    recorder = Recorder(cluster)

    def progress(event: Progress) -> None:
        recorder.events.append(event)
        if event.kind == "step" and not killed:
            killed.append(leader)
            cluster.kill(leader)

    with admin(cluster) as client:
        result = client.reconcile_voters(desired(cluster, *survivors, 4, 5), progress=progress,
                                         timeout=STEP_TIMEOUT)
    assert killed == [leader]
    planned = [(s.action, s.node_id) for s in recorder.first_steps()]
    assert planned == [("add", 4), ("add", 5), ("remove", leader)]
    # The first step may or may not have reached the old leader before it died; either way every
    # change of the desired set was made once the others had elected a leader.
    assert {("add", 4), ("add", 5), ("remove", leader)} >= set(steps_of(result.completed))
    assert ("remove", leader) in steps_of(result.completed)
    new_leader, current, committed = voter_sets(cluster)
    assert new_leader in survivors
    assert current == committed == keys(cluster, *survivors, 4, 5)


def test_removing_a_voter_is_refused_when_the_rest_has_no_healthy_majority(make_cluster: Make) -> None:
    cluster = make_cluster(3, properties=dict(FAST)).format().start_all()
    leader, _ = cluster.wait_for_leader()
    cluster.wait_caught_up(leader)
    stopped, healthy = (i for i in (1, 2, 3) if i != leader)
    before = voter_sets(cluster, [leader])
    process = cluster.nodes[stopped].process
    assert process is not None
    process.send_signal(signal.SIGSTOP)
    try:
        # A short request timeout: a request sent to the stopped node waits for it in full.
        with admin(cluster, 3000) as client, pytest.raises(VoterChangeRefusedError) as refused:
            client.reconcile_voters(desired(cluster, leader, stopped), timeout=STEP_TIMEOUT,
                                    thresholds=HealthThresholds(probe_timeout_ms=500))
        assert refused.value.completed == ()
        assert (f"removing voter {healthy} would leave 1 healthy of 2 voters, short of the majority of 2"
                in str(refused.value))
        assert voter_sets(cluster, [leader]) == before  # (asking the stopped node would hang)
    finally:
        process.send_signal(signal.SIGCONT)
    cluster.assert_running()
