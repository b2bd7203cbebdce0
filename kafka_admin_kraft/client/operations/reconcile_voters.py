"""reconcile_voters: carry out a voter plan (``kafka_admin_kraft.voters``) one committed step at a time.

Each round reads the quorum afresh (``check_quorum``: DescribeQuorum, DescribeCluster, a probe of each
node), plans from what it sees and carries out the plan's first step only, so that a run killed at any
point and started again computes what is left and finishes, and a quorum already as desired is left
alone. A round:

1. A read that fails (a failover in progress) is retried until the step deadline.
2. A refused plan raises ``VoterChangeRefusedError``; an empty plan ends the run.
3. While the first step waits (the previous change is not committed, an observer is catching up), the
   quorum is read again every 200 ms until the step deadline, then ``VoterChangeTimeoutError``.
4. The step is sent: AddRaftVoter (acknowledged once committed) with the endpoints the caller gave, or
   else the registered controller's endpoint from DescribeCluster; or RemoveRaftVoter. A server error
   or a lost leader ends the round and the next one re-plans: a change that took effect all the same
   counts as completed once it is seen committed, and is not planned again; the third failure of one
   step raises ``VoterChangeError``.
5. The step counts as done when it is committed: CommittedVoters equals the planned voter set
   (DescribeQuorum v3), or on older servers when the voter set is the planned one and the high
   watermark has passed where it was when the step was sent.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kafka_admin_kraft.client.core import AdminCore, Op, Sleep
from kafka_admin_kraft.client.operations.check_quorum import check_quorum
from kafka_admin_kraft.client.operations.describe_cluster import describe_cluster
from kafka_admin_kraft.client.operations.describe_metadata_quorum import describe_metadata_quorum
from kafka_admin_kraft.client.operations.raft_voters import add_raft_voter, remove_raft_voter
from kafka_admin_kraft.errors import (
    KafkaAdminError,
    VoterChangeError,
    VoterChangeRefusedError,
    VoterChangeTimeoutError,
)
from kafka_admin_kraft.health import HealthThresholds
from kafka_admin_kraft.models import Endpoint, QuorumInfo
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.voters import (
    DesiredVoter,
    Progress,
    ReconcileResult,
    StepOutcome,
    VoterPlan,
    VoterStep,
    plan_voter_changes,
    voter_listener,
)

POLL = 0.2
STEP_ATTEMPTS = 3
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


def _committed(quorum: QuorumInfo, step: VoterStep, high_watermark: int) -> bool:
    voters = frozenset((v.replica_id, v.replica_directory_id) for v in quorum.voters)
    if voters != step.voters_after:
        return False
    if quorum.committed_voters is not None:
        return frozenset((v.replica_id, v.replica_directory_id) for v in quorum.committed_voters) == voters
    return quorum.high_watermark > high_watermark


@dataclass(frozen=True)
class _Sent:
    """A change whose answer was an error: it may still have taken effect."""

    step: VoterStep
    started: float
    high_watermark: int


def reconcile_voters(
    core: AdminCore,
    desired: Sequence[DesiredVoter],
    *,
    thresholds: HealthThresholds,
    dry_run: bool,
    step_timeout: float,
    progress: Observer | None,
) -> Op[ReconcileResult]:
    completed: list[StepOutcome] = []
    first: VoterPlan | None = None
    failures = 0
    deadline = core.clock() + step_timeout

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
        plan = plan_voter_changes(quorum, desired, thresholds=thresholds, unreachable=unreachable)
        if first is None:
            first = plan
            tell(Progress("plan", plan))
        if unconfirmed is not None and _committed(quorum, unconfirmed.step, unconfirmed.high_watermark):
            # its answer was an error (a lost leader, a timeout) but the change took effect
            completed.append(StepOutcome(unconfirmed.step, core.clock() - unconfirmed.started))
            tell(Progress("committed", plan, unconfirmed.step))
            unconfirmed = None
        if plan.refused is not None:
            raise VoterChangeRefusedError(f"{plan.refused} ({_completed_text(completed)})", completed)
        if plan.done or dry_run:
            return ReconcileResult(first, tuple(completed), dry_run)
        if plan.waiting is not None:
            tell(Progress("waiting", plan, plan.steps[0] if plan.steps else None, plan.waiting))
            waiting_for = plan.waiting
            yield Sleep(POLL)
            continue
        step = plan.steps[0]
        tell(Progress("step", plan, step))
        started, high_watermark = core.clock(), quorum.high_watermark
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
            unconfirmed = _Sent(step, started, high_watermark)
            failures += 1
            if failures >= STEP_ATTEMPTS:
                raise VoterChangeError(
                    f"{step.describe()} failed {failures} times, last: {exc} ({_completed_text(completed)})",
                    completed,
                ) from exc
            continue
        while True:
            left = time_left(f"{step.describe()} to commit")
            try:
                after = yield from describe_metadata_quorum(core, left)
            except KafkaAdminError:
                continue
            if _committed(after, step, high_watermark):
                break
            yield Sleep(POLL)
        completed.append(StepOutcome(step, core.clock() - started))
        tell(Progress("committed", plan, step))
        failures = 0
        deadline = core.clock() + step_timeout
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
) -> Op[ReconcileResult]:
    """The disk-replacement runbook: the voter set as it is, but ``node_id`` under its new directory id
    (remove the old directory once the new incarnation is caught up and the other voters hold every
    committed offset, then add the new one). Run again after an interruption between the two, it finds
    ``node_id`` missing from the voters and adds it back."""
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
        )
    )
