"""reconcile_voters: carry out a voter plan (``kafka_admin_kraft.voters``) one committed step at a time.

Each round reads the quorum afresh (``check_quorum``: DescribeQuorum, DescribeCluster, a probe of each
node), plans from what it sees and carries out the plan's first step only, so that a run killed at any
point and started again computes what is left and finishes, and a quorum already as desired is left
alone. A round:

1. A read that fails (a failover in progress) is retried until the step deadline.
2. A controller this run removed for good that is a voter again raises ``VoterChangeError``: it
   added itself back (``controller.quorum.auto.join.enable``, the planner's rule 6), and removing it
   again would only repeat the race.
3. A refused plan raises ``VoterChangeRefusedError``; a plan without steps unregisters (step 7), an
   empty plan ends the run (after step 8).
4. While the first step waits (the previous change is not committed, an observer is catching up), the
   quorum is read again every 200 ms until the step deadline, then ``VoterChangeTimeoutError``.
5. The step is sent: AddRaftVoter (acknowledged once committed) with the endpoints the caller gave, or
   else the registered controller's endpoint from DescribeCluster; or RemoveRaftVoter. A server error
   or a lost leader ends the round and the next one re-plans: a change that took effect all the same
   (made by this run's lost request, or by an auto-joining controller itself) counts as completed once
   it is seen committed, and is not planned again; the third failure of one step raises
   ``VoterChangeError``.
6. The step counts as done when it is committed: its voter is in (an add) or out of (a removal)
   CommittedVoters (DescribeQuorum v3), or on older servers in or out of the voter set with the high
   watermark past where it was when the step was sent. The rest of the voter set may have moved on
   meanwhile (a controller with auto-join adding itself right after its old directory left).
7. Once the voters are as desired, the controllers the plan unregisters (the planner's rule 7:
   stopped, no longer voters, from metadata.version 4.4-IV2 on) are unregistered one by one
   (UnregisterController, KIP-1312; one already gone counts as done, any other error raises
   ``VoterChangeError``), and the round starts again, so that the plan is read afresh.
8. Once the plan is done, a controller removed for good that answered its probe before its removal,
   and whose auto-join setting is not known to be off, is watched for ``REJOIN_WATCH`` seconds
   (DescribeQuorum every ``WATCH_POLL``, within the step deadline); a rejoin raises as in 2. A stopped
   controller is not watched, so stopping it first also keeps the run short.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from kafka_admin_kraft.client.core import AdminCore, Op, Sleep
from kafka_admin_kraft.client.operations.check_quorum import check_quorum
from kafka_admin_kraft.client.operations.describe_cluster import describe_cluster
from kafka_admin_kraft.client.operations.describe_metadata_quorum import describe_metadata_quorum
from kafka_admin_kraft.client.operations.raft_voters import add_raft_voter, remove_raft_voter
from kafka_admin_kraft.client.operations.unregister import unregister_controller
from kafka_admin_kraft.config.server import QUORUM_AUTO_JOIN_ENABLE
from kafka_admin_kraft.errors import (
    ControllerIdNotRegisteredError,
    KafkaAdminError,
    VoterChangeError,
    VoterChangeRefusedError,
    VoterChangeTimeoutError,
)
from kafka_admin_kraft.features import METADATA_VERSION
from kafka_admin_kraft.health import HealthThresholds
from kafka_admin_kraft.models import Endpoint, QuorumInfo, ReplicaState
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.voters import (
    DesiredVoter,
    Progress,
    ReconcileResult,
    StepOutcome,
    VoterKey,
    VoterPlan,
    VoterStep,
    plan_voter_changes,
    voter_listener,
)

POLL = 0.2
STEP_ATTEMPTS = 3
REJOIN_WATCH = 5.0
"""Seconds a controller removed for good while it answered is watched for a rejoin: long enough for a
controller with auto-join, which asks on a timer of the order of its ``controller.quorum.fetch.timeout.ms``
(2 s by default), to ask and be added; short enough not to hold up every removal for long."""
WATCH_POLL = 0.5
Observer = Callable[[Progress], None]


def _completed_text(completed: Sequence[StepOutcome]) -> str:
    if not completed:
        return "no step was completed"
    return "completed: " + "; ".join(outcome.step.describe() for outcome in completed)


def registered_endpoints(
    quorum: QuorumInfo, node_id: int, listed: dict[int, tuple[str, int]]
) -> tuple[Endpoint, ...]:
    """The endpoint of a registered controller (DescribeCluster lists host and port on the listener the
    client uses), named after that listener as the voters' endpoints show it."""
    address = listed.get(node_id)
    if address is None:
        return ()
    names = [
        e.listener
        for voter_id, (host, port) in listed.items()
        if voter_id in quorum.nodes
        for e in quorum.nodes[voter_id].endpoints
        if (e.host, e.port) == (host, port)
    ]
    listener = names[0] if names else voter_listener(quorum)
    if listener is None:
        return ()
    return (Endpoint(listener=listener, host=address[0], port=address[1]),)


def _keys(replicas: Sequence[ReplicaState]) -> set[VoterKey]:
    return {(r.replica_id, r.replica_directory_id) for r in replicas}


def _committed(quorum: QuorumInfo, step: VoterStep, high_watermark: int) -> bool:
    """Round step 6: the step's voter is in (an add) or out of (a removal) the committed voter set."""
    key = (step.node_id, step.directory_id)
    added = step.action == "add"
    if (key in _keys(quorum.voters)) != added:
        return False
    if quorum.committed_voters is not None:
        return (key in _keys(quorum.committed_voters)) == added
    return quorum.high_watermark > high_watermark


def _rejoined_text(node_id: int) -> str:
    return (
        f"controller {node_id} rejoined the voter set: it runs with {QUORUM_AUTO_JOIN_ENABLE}=true; stop it "
        "before removing it"
    )


@dataclass(frozen=True)
class _Sent:
    """A change sent; one whose answer was an error may still have taken effect."""

    step: VoterStep
    started: float
    high_watermark: int
    answered: bool
    """Whether its node answered the probe of the round that planned it."""


def reconcile_voters(
    core: AdminCore,
    desired: Sequence[DesiredVoter],
    *,
    thresholds: HealthThresholds,
    dry_run: bool,
    step_timeout: float,
    progress: Observer | None,
    auto_join: Mapping[int, bool],
    keep_registrations: bool,
) -> Op[ReconcileResult]:
    completed: list[StepOutcome] = []
    unregistered: list[int] = []
    handled: set[int] = set()
    """Controllers this run unregistered, or found unregistered already (round step 7)."""
    first: VoterPlan | None = None
    failures = 0
    deadline = core.clock() + step_timeout
    wanted_ids = {wanted.node_id for wanted in desired}
    gone: dict[int, bool] = {}
    """Node ids this run removed for good, and whether each answered its probe before the removal."""

    def tell(event: Progress) -> None:
        if progress is not None:
            progress(event)

    def time_left(what: str) -> float:
        left = deadline - core.clock()
        if left <= 0:
            raise VoterChangeTimeoutError(
                f"gave up after {step_timeout:g} s: {what} ({_completed_text(completed)})", completed
            )
        return left

    def made(sent: _Sent) -> None:
        """``sent`` took effect: a node it removed for good must not come back (round step 2)."""
        if sent.step.action == "remove" and sent.step.node_id not in wanted_ids:
            gone[sent.step.node_id] = sent.answered

    def done(sent: _Sent) -> None:
        """``sent`` is committed: count it; the next step gets a fresh deadline and attempts."""
        nonlocal failures, deadline
        made(sent)
        completed.append(StepOutcome(sent.step, core.clock() - sent.started))
        failures = 0
        deadline = core.clock() + step_timeout

    def check_rejoined(quorum: QuorumInfo, answered: _Sent | None = None) -> None:
        """Round step 2. ``answered`` is a removal the leader answered, and so committed, before the
        quorum was read: it counts as completed even when its controller is back already."""
        back = sorted(gone.keys() & {v.replica_id for v in quorum.voters})
        if back:
            if answered is not None:
                done(answered)
            raise VoterChangeError(f"{_rejoined_text(back[0])} ({_completed_text(completed)})", completed)

    def watch_rejoins(plan: VoterPlan) -> Op[None]:
        """Round step 7."""
        watched = sorted(n for n, answered in gone.items() if answered and auto_join.get(n) is not False)
        if not watched:
            return
        until = min(core.clock() + REJOIN_WATCH, deadline)
        names = ", ".join(map(str, watched))
        tell(Progress("watching", plan, None, (
            f"watching controller{'s' if len(watched) > 1 else ''} {names} for {REJOIN_WATCH:g} s: removed "
            f"while running, a controller with {QUORUM_AUTO_JOIN_ENABLE}=true adds itself back"
        )))
        while (left := until - core.clock()) > 0:
            try:
                after: QuorumInfo | None = yield from describe_metadata_quorum(core, left)
            except KafkaAdminError:
                after = None
            if after is not None:
                check_rejoined(after)
            yield Sleep(WATCH_POLL)

    def unregister(node_ids: Sequence[int], plan: VoterPlan) -> Op[None]:
        """Round step 7."""
        for node_id in node_ids:
            what = f"unregistering controller {node_id}"
            handled.add(node_id)
            try:
                yield from unregister_controller(core, node_id, time_left(what))
            except ControllerIdNotRegisteredError:
                continue  # unregistered meanwhile
            except KafkaAdminError as exc:
                text = f"{what} failed: {exc} ({_completed_text(completed)})"
                raise VoterChangeError(text, completed) from exc
            unregistered.append(node_id)
            tell(Progress("unregistered", plan, None, f"unregistered controller {node_id}"))

    waiting_for = "reading the quorum"
    unconfirmed: _Sent | None = None
    while True:
        left = time_left(waiting_for)
        health = yield from check_quorum(
            core, thresholds, probe=True, previous=None, connect=None, timeout=min(10.0, left)
        )
        quorum = health.quorum
        if quorum is None:
            waiting_for = f"the quorum cannot be read: {health.findings[0].message}"
            yield Sleep(POLL)
            continue

        unreachable = {p.node_id for p in health.probes if not p.reachable}
        plan = plan_voter_changes(
            quorum,
            desired,
            thresholds=thresholds,
            unreachable=unreachable,
            auto_join=auto_join,
            registrations=health.registrations,
            metadata_version=health.finalized_features.get(METADATA_VERSION),
            keep_registrations=keep_registrations,
        )
        if first is None:
            first = plan
            tell(Progress("plan", plan))
        if unconfirmed is not None and _committed(quorum, unconfirmed.step, unconfirmed.high_watermark):
            # its answer was an error (a lost leader, a timeout) but the change took effect
            done(unconfirmed)
            tell(Progress("committed", plan, unconfirmed.step))
            unconfirmed = None
        check_rejoined(quorum)
        if plan.refused is not None:
            raise VoterChangeRefusedError(f"{plan.refused} ({_completed_text(completed)})", completed)
        if dry_run:
            return ReconcileResult(first, tuple(completed), dry_run)
        if not plan.steps and plan.waiting is None:
            pending = [node_id for node_id in plan.unregister if node_id not in handled]
            if pending:
                yield from unregister(pending, plan)
                continue
            yield from watch_rejoins(plan)
            return ReconcileResult(first, tuple(completed), dry_run, plan, tuple(unregistered))
        if plan.waiting is not None:
            tell(Progress("waiting", plan, plan.steps[0] if plan.steps else None, plan.waiting))
            waiting_for = plan.waiting
            yield Sleep(POLL)
            continue
        step = plan.steps[0]
        tell(Progress("step", plan, step))
        sent = _Sent(step, core.clock(), quorum.high_watermark, step.node_id not in unreachable)
        unconfirmed = None
        try:
            if step.action == "add":
                endpoints = step.endpoints
                if not endpoints:
                    cluster = yield from describe_cluster(core, time_left("DescribeCluster"))
                    listed = {n.node_id: (n.host, n.port) for n in cluster.nodes}
                    endpoints = registered_endpoints(quorum, step.node_id, listed)
                if not endpoints:
                    raise VoterChangeRefusedError(
                        f"no endpoint is known for controller {step.node_id}: the quorum does not list it "
                        f"among its registered controllers; give it as {step.node_id}@host:port:"
                        f"{step.directory_id} ({_completed_text(completed)})",
                        completed,
                    )
                yield from add_raft_voter(
                    core,
                    step.node_id,
                    step.directory_id,
                    endpoints,
                    timeout=time_left(step.describe()),
                )
            else:
                yield from remove_raft_voter(
                    core,
                    step.node_id,
                    step.directory_id,
                    timeout=time_left(step.describe()),
                )
        except VoterChangeError:
            raise
        except KafkaAdminError as exc:
            unconfirmed = sent
            failures += 1
            if failures >= STEP_ATTEMPTS:
                raise VoterChangeError(
                    f"{step.describe()} failed {failures} times, last: {exc} ({_completed_text(completed)})",
                    completed,
                ) from exc
            continue
        made(sent)  # the leader answers a removal once it is committed
        while True:
            left = time_left(f"{step.describe()} to commit")
            try:
                after = yield from describe_metadata_quorum(core, left)
            except KafkaAdminError:
                continue
            check_rejoined(after, sent if step.action == "remove" else None)
            if _committed(after, step, sent.high_watermark):
                break
            yield Sleep(POLL)
        done(sent)
        tell(Progress("committed", plan, step))
        waiting_for = "reading the quorum"


def replace_controller(
    core: AdminCore,
    node_id: int,
    directory_id: Uuid,
    endpoints: tuple[Endpoint, ...],
    *,
    thresholds: HealthThresholds,
    dry_run: bool,
    step_timeout: float,
    progress: Observer | None,
    auto_join: bool | None,
    keep_registrations: bool,
) -> Op[ReconcileResult]:
    """The disk-replacement runbook: the voter set as it is, but ``node_id`` under its new directory id
    (remove the old directory once the new incarnation is caught up and the other voters hold every
    committed offset, then add the new one). Run again after an interruption between the two, it finds
    ``node_id`` missing from the voters and adds it back. ``auto_join``: the new controller's
    ``controller.quorum.auto.join.enable``, if known (it then makes the swap itself, and the run sends
    only what it has not made yet: the planner's rule 6)."""
    quorum = yield from describe_metadata_quorum(core, step_timeout)
    desired = [DesiredVoter(v.replica_id) for v in quorum.voters if v.replica_id != node_id]
    desired.append(DesiredVoter(node_id, directory_id, endpoints))
    return (
        yield from reconcile_voters(
            core,
            desired,
            thresholds=thresholds,
            dry_run=dry_run,
            step_timeout=step_timeout,
            progress=progress,
            auto_join={} if auto_join is None else {node_id: auto_join},
            keep_registrations=keep_registrations,
        )
    )
