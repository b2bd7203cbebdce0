"""Planning voter changes: from the quorum as it is to a desired voter set, one safe change at a time.

:func:`plan_voter_changes` is pure. Given what the leader reports (voters, observers with their
offsets and directory ids, committed voters), which nodes did not answer a probe, and the desired
voters (node ids, optionally with directory ids), it returns the ordered single-voter changes and
why each is safe, or the reason it refuses. The rules, after the KIP-853 operations guide and
Kafka's documentation for replacing a controller's disk:

1. One change at a time, each committed before the next (the executor waits; KIP-853 allows one
   uncommitted voter change).
2. Only observers that are caught up with the leader are added; a desired voter that is neither a
   voter nor fetching as an observer yet leaves the plan waiting for it (it has to be started).
3. Adds come first (they raise the fault tolerance), then removes of failed voters (they count
   against the majority without voting), then same-id replacements, then removes of healthy voters,
   the leader last (it resigns once its removal commits).
4. A node id whose directory id must change (a replaced disk) is removed first and added back
   afterwards, since a voter set holds one directory per id; the removal needs every other voter
   healthy when the old directory is itself still healthy.
5. Every voter set along the way must keep a majority of healthy voters (so that the change can
   commit) and at least one voter; a plan that cannot is refused, with the reason.
6. A controller that runs with ``controller.quorum.auto.join.enable=true`` (Kafka 4.2+, KAFKA-19078;
   see Kafka 4.2's upgrade notes) sends AddRaftVoter for itself, on a timer, while it fetches as an
   observer, so removing it for good does not stick while it runs; Kafka leaves it to the operator to
   stop it first. Where the caller knows a controller's configuration (``auto_join``), a plan that
   removes a node id configured with the option on, and that answers, is refused with that fix; one
   that does not answer (stopped) is removed with a note not to start it so again; one whose setting
   is not known gets a note that it must be stopped first. A directory swap (rule 4) keeps the node
   id and is what an auto-joining controller does itself (it removes the entry of its id with another
   directory, then adds itself): it is never refused for it, and a step the controller has made is
   not planned again, since each plan starts from the quorum as it is.
7. A controller removed from the voters keeps its registration (KIP-919), and the active controller
   refuses any feature level a registered node does not support, running or not (Kafka's
   ``FeatureControlManager``): a controller removed for good holds back every later upgrade until
   UnregisterController removes it (KIP-1312), which Kafka allows from metadata.version 4.4-IV2 on,
   for a controller that is not a voter. Where the caller has read the registrations
   (``registrations``), the plan unregisters, once the voters are as desired, each controller that
   leaves for good and does not answer, and each registered controller that is neither desired, a
   voter nor fetching (``health.ghost_controllers``: left behind earlier, or by an interrupted run,
   which therefore finishes this too). A controller that still answers is not unregistered (it would
   register again, as Kafka's ``ControllerRegistrationManager`` does when its registration goes), nor
   any below 4.4-IV2: a note says so, and what to do. ``keep_registrations`` keeps them all, with a
   note.

A voter is healthy as in ``kafka_admin_kraft.health``: the leader, or caught up within the thresholds
and not unreachable. The fault tolerance of a voter set is its healthy voters beyond a majority.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Literal

from kafka_admin_kraft.config.server import QUORUM_AUTO_JOIN_ENABLE as AUTO_JOIN
from kafka_admin_kraft.features import CONTROLLER_UNREGISTRATION_VERSION, NEWEST
from kafka_admin_kraft.health import (
    HealthThresholds,
    Registrations,
    ghost_controllers,
    lag_reason,
    leader_state,
    majority,
    voter_change,
)
from kafka_admin_kraft.models import Endpoint, QuorumInfo, ReplicaState
from kafka_admin_kraft.protocol.primitives import ZERO_UUID, Uuid
from kafka_admin_kraft.values import VoterKey, voter_order

__all__ = [
    "DesiredVoter",
    "Progress",
    "ReconcileResult",
    "StepOutcome",
    "VoterKey",
    "VoterPlan",
    "VoterStep",
    "auto_join_note",
    "fault_tolerance",
    "plan_voter_changes",
    "voter_listener",
]

@dataclass(frozen=True)
class DesiredVoter:
    """A voter the caller wants: a node id, and the directory id when it matters (a replaced disk).
    ``Admin.reconcile_voters`` also takes the directory id's text form here."""

    node_id: int
    directory_id: Uuid | None = None
    endpoints: tuple[Endpoint, ...] = ()
    """Its listeners, when the caller knows them (``id@host:port:directory-id``)."""


@dataclass(frozen=True)
class VoterStep:
    """One voter change of a plan."""

    action: Literal["add", "remove"]
    node_id: int
    directory_id: Uuid
    voters_after: frozenset[VoterKey]
    fault_tolerance_after: int
    """Healthy voters beyond a majority once the change is committed (new voters counted healthy)."""
    why: str
    """Why the step is safe, in words."""
    endpoints: tuple[Endpoint, ...] = ()
    """For an add: the endpoints the caller gave (the executor finds them otherwise)."""

    def describe(self) -> str:
        verb = "Add" if self.action == "add" else "Remove"
        return f"{verb} voter {self.node_id} (directory id {self.directory_id})"


@dataclass(frozen=True)
class VoterPlan:
    """The changes that take the quorum from its voter set to the desired one."""

    current: frozenset[VoterKey]
    desired: frozenset[VoterKey]
    steps: tuple[VoterStep, ...] = ()
    refused: str | None = None
    """Why the plan is refused (it would stop the quorum, or a desired voter cannot be added)."""
    waiting: str | None = None
    """Why the first step cannot run yet (an uncommitted change, an observer still catching up)."""
    fault_tolerance: int = 0
    """The current voter set's fault tolerance."""
    notes: tuple[str, ...] = field(default=())
    """What the operator should know that does not stop the plan, one line each: a removed controller
    that may add itself back, one that joins by itself (rule 6), a registration that stays (rule 7)."""
    unregister: tuple[int, ...] = ()
    """Controllers to unregister once the voters are as desired (rule 7)."""

    @property
    def done(self) -> bool:
        """The quorum already has the desired voters, and no registration is left to remove."""
        return self.refused is None and self.waiting is None and not self.steps and not self.unregister


def fault_tolerance(voters: Collection[VoterKey], healthy: Collection[VoterKey]) -> int:
    """Healthy voters beyond a majority (negative: the set cannot commit)."""
    alive = sum(1 for key in voters if key in healthy)
    return alive - majority(len(voters))


def voter_listener(quorum: QuorumInfo) -> str | None:
    """The listener the voters are reached on: the first endpoint's of the first voter that lists one
    (DescribeQuorum v2+); None before v2."""
    for voter in quorum.voters:
        node = quorum.nodes.get(voter.replica_id)
        if node is not None and node.endpoints:
            return node.endpoints[0].listener
    return None


def _key(replica: ReplicaState) -> VoterKey:
    return replica.replica_id, replica.replica_directory_id


def _caught_up(quorum: QuorumInfo, replica: ReplicaState, limits: HealthThresholds) -> bool:
    leader = leader_state(quorum)
    return leader is not None and lag_reason(leader, replica, limits) is None


def _healthy_voters(
    quorum: QuorumInfo, unreachable: Collection[int], limits: HealthThresholds
) -> set[VoterKey]:
    """The reachable voters that are the leader, or caught up and not superseded: a voter whose node
    id fetches more recently as an observer under another directory id runs on a new disk, so the voter's
    directory is gone whatever its last offsets say."""
    return {
        _key(v)
        for v in quorum.voters
        if v.replica_id not in unreachable
        and (
            v.replica_id == quorum.leader_id
            or (
                _caught_up(quorum, v, limits)
                and not any(
                    o.replica_id == v.replica_id
                    and o.replica_directory_id != v.replica_directory_id
                    and (o.last_fetch_timestamp or -1) > (v.last_fetch_timestamp or -1)
                    for o in quorum.observers
                )
            )
        )
    }


def _latest_observer(quorum: QuorumInfo, node_id: int, directory_id: Uuid | None) -> ReplicaState | None:
    """The observer with this id (and directory id) that fetched last."""
    found = [
        o
        for o in quorum.observers
        if o.replica_id == node_id and (directory_id is None or o.replica_directory_id == directory_id)
    ]
    return max(found, key=lambda o: o.last_fetch_timestamp or -1, default=None)


def _resolve(quorum: QuorumInfo, wanted: DesiredVoter) -> VoterKey | str:
    """The voter key a desired voter stands for, or why it has none."""
    if wanted.directory_id is not None:
        return wanted.node_id, wanted.directory_id
    current = [_key(v) for v in quorum.voters if v.replica_id == wanted.node_id]
    if current:
        return current[0]
    observer = _latest_observer(quorum, wanted.node_id, None)
    if observer is None or observer.replica_directory_id == ZERO_UUID:
        return (
            f"node {wanted.node_id} is neither a voter nor fetching as an observer yet (start it, "
            "formatted with --no-initial-controllers)"
        )
    return _key(observer)


def _names(keys: Iterable[VoterKey]) -> str:
    return ", ".join(str(node_id) for node_id, _ in sorted(keys, key=voter_order)) or "none"


def _controllers(node_ids: Sequence[int], one: str, many: str) -> str:
    """``one`` or ``many`` (their ``{who}`` filled in: ``controller 3``, ``controllers 2, 3``)."""
    if len(node_ids) == 1:
        return one.format(who=f"controller {node_ids[0]}")
    return many.format(who=f"controllers {', '.join(map(str, node_ids))}")


def auto_join_note(node_ids: Sequence[int]) -> str:
    """The note on removing controllers whose auto-join setting is not known (rule 6), one line."""
    return _controllers(
        node_ids,
        f"if {{who}} runs with {AUTO_JOIN}=true (Kafka 4.2+), it adds itself back to the voters unless it "
        "is stopped first",
        f"if {{who}} run with {AUTO_JOIN}=true (Kafka 4.2+), they add themselves back to the voters unless "
        "they are stopped first",
    )


def plan_voter_changes(
    quorum: QuorumInfo,
    desired: Sequence[DesiredVoter],
    *,
    thresholds: HealthThresholds | None = None,
    unreachable: Collection[int] = (),
    auto_join: Mapping[int, bool] | None = None,
    registrations: Registrations | None = None,
    metadata_version: int | None = None,
    keep_registrations: bool = False,
) -> VoterPlan:
    """The ordered single-voter changes from ``quorum``'s voters to ``desired`` (see the module
    docstring). ``unreachable``: node ids whose endpoints did not answer (counted as failed).
    ``auto_join``: what the configuration of a controller sets ``controller.quorum.auto.join.enable``
    to, by node id, where the caller has read it (rule 6). ``registrations``: what DescribeCluster
    listed, and ``metadata_version`` the finalized level, where the caller has read them (rule 7; the
    registered controllers are known with bootstrap controllers only)."""
    limits = thresholds or HealthThresholds()
    configured = auto_join or {}
    current = frozenset(_key(v) for v in quorum.voters)
    healthy = _healthy_voters(quorum, unreachable, limits)
    tolerance = fault_tolerance(current, healthy)
    refused = _refused_desired(desired)
    if refused is not None:
        return VoterPlan(current, frozenset(), refused=refused, fault_tolerance=tolerance)
    wanted = _resolve_desired(quorum, desired)
    if isinstance(wanted, str):  # it may be starting: the executor waits for it to fetch
        return VoterPlan(current, frozenset(), waiting=wanted, fault_tolerance=tolerance)
    target = frozenset(wanted)

    # Rule 3: adds, removals of failed voters, directory swaps (rule 4), removals of healthy voters
    # with the leader last. Each change must leave a voter set that can commit (rule 5): the first
    # that cannot refuses the plan, and the changes after it are not tried.
    changes = _Changes.between(quorum, current, target, healthy)
    planner = _Planner(quorum, limits, wanted, set(current), set(healthy))
    refusals = chain(
        (planner.add(key) for key in changes.adds),
        (planner.remove(key) for key in changes.failed_removes),
        (planner.swap(old, new) for old, new in changes.swaps),
        (planner.remove(key) for key in changes.healthy_removes),
    )
    refused = next((refusal for refusal in refusals if refusal is not None), None)
    if refused is None and planner.steps:
        refused = _static_quorum(quorum, current)
    # Rule 6: node ids that leave for good, and the new keys of those that join.
    leaving = sorted({k[0] for k in chain(changes.failed_removes, changes.healthy_removes)})
    joining = sorted({k[0] for k in target - current})
    if refused is None:
        refused = _auto_join_refusal(leaving, configured, unreachable)
    if refused is not None:
        return VoterPlan(current, target, refused=refused, fault_tolerance=tolerance)

    # Rules 1 and 2: the first step waits for an uncommitted change, or for its observer.
    steps = tuple(planner.steps)
    waiting = _waiting(quorum, steps, limits) if steps else None
    if voter_change(quorum) is not None:
        waiting = "the previous voter change is not committed yet"
    notes = _auto_join_notes(leaving, joining, configured, unreachable)
    unregister: tuple[int, ...] = ()
    if registrations is not None:
        gone = _Registrations(quorum, {w.node_id for w in desired}, registrations, unreachable, limits)
        unregister, more = gone.plan(leaving, metadata_version, keep_registrations)
        notes += more
    return VoterPlan(
        current, target, steps, waiting=waiting, fault_tolerance=tolerance, notes=notes, unregister=unregister
    )


def _auto_join_refusal(
    leaving: Sequence[int], configured: Mapping[int, bool], unreachable: Collection[int]
) -> str | None:
    """Rule 6: why removing controllers configured to auto-join, while they answer, would not stick."""
    running = [node_id for node_id in leaving if configured.get(node_id) and node_id not in unreachable]
    if not running:
        return None
    return _controllers(
        running,
        f"{{who}} is configured with {AUTO_JOIN}=true: removed while it runs, it adds itself back to the "
        f"voters; stop it, or set {AUTO_JOIN}=false and restart it, before removing it",
        f"{{who}} are configured with {AUTO_JOIN}=true: removed while they run, they add themselves back "
        f"to the voters; stop them, or set {AUTO_JOIN}=false and restart them, before removing them",
    )


def _auto_join_notes(
    leaving: Sequence[int],
    joining: Sequence[int],
    configured: Mapping[int, bool],
    unreachable: Collection[int],
) -> tuple[str, ...]:
    """Rule 6's notes: controllers that leave and may come back, and controllers that join by
    themselves."""
    notes = []
    unknown = [node_id for node_id in leaving if node_id not in configured]
    if unknown:
        notes.append(auto_join_note(unknown))
    stopped = [node_id for node_id in leaving if configured.get(node_id) and node_id in unreachable]
    if stopped:
        notes.append(_controllers(
            stopped,
            f"{{who}} does not answer and is configured with {AUTO_JOIN}=true: started so again, it adds "
            "itself back to the voters; set the option to false before starting it",
            f"{{who}} do not answer and are configured with {AUTO_JOIN}=true: started so again, they add "
            "themselves back to the voters; set the option to false before starting them",
        ))
    themselves = [node_id for node_id in joining if configured.get(node_id)]
    if themselves:
        notes.append(_controllers(
            themselves,
            f"{{who}} is configured with {AUTO_JOIN}=true: it joins the voters by itself (removing an "
            "entry of its id with another directory first), and a step it has made is not sent again",
            f"{{who}} are configured with {AUTO_JOIN}=true: they join the voters by themselves (removing "
            "an entry of their id with another directory first), and a step they have made is not sent "
            "again",
        ))
    return tuple(notes)


UNREGISTRATION_RELEASE = NEWEST.release_string(CONTROLLER_UNREGISTRATION_VERSION)


@dataclass(frozen=True)
class _Registrations:
    """Rule 7: the registrations of the controllers a plan leaves out of the voters."""

    quorum: QuorumInfo
    desired: Collection[int]
    registrations: Registrations
    unreachable: Collection[int]
    limits: HealthThresholds

    def plan(
        self, leaving: Sequence[int], metadata_version: int | None, keep: bool
    ) -> tuple[tuple[int, ...], tuple[str, ...]]:
        """The controllers to unregister, and the notes on those whose registrations stay."""
        registered = self.registrations.controllers
        ids = [n for n in leaving if registered is None or n in registered]
        if registered is not None:
            ghosts = ghost_controllers(self.quorum, registered, self.limits)
            ids += [n for n in ghosts if n not in self.desired]
        ids = sorted(set(ids))
        if not ids:
            return (), ()
        if keep:
            return (), (_controllers(
                ids,
                "the registration of {who} is kept: its supported feature levels still count when features "
                "are upgraded",
                "the registrations of {who} are kept: their supported feature levels still count when "
                "features are upgraded",
            ),)
        running = [n for n in ids if n in leaving and n not in self.unreachable]
        stopped = [n for n in ids if n not in running]
        notes = []
        if running:
            notes.append(_controllers(
                running,
                "{who} still answers, so it is not unregistered (a running controller registers again): "
                "once it is stopped, unregister it (kafka-cluster unregister-controller --id "
                f"{running[0]})",
                "{who} still answer, so they are not unregistered (a running controller registers again): "
                "once they are stopped, unregister them (kafka-cluster unregister-controller --id <id>)",
            ))
        if stopped and (metadata_version is None or metadata_version < CONTROLLER_UNREGISTRATION_VERSION):
            level = "is not known" if metadata_version is None else f"is {metadata_version}"
            notes.append(_controllers(
                stopped,
                f"the registration of {{who}} stays: unregistering needs metadata.version "
                f"{UNREGISTRATION_RELEASE} ({CONTROLLER_UNREGISTRATION_VERSION}) or later, and it {level}; "
                "until then its supported feature levels hold back feature upgrades",
                f"the registrations of {{who}} stay: unregistering needs metadata.version "
                f"{UNREGISTRATION_RELEASE} ({CONTROLLER_UNREGISTRATION_VERSION}) or later, and it {level}; "
                "until then their supported feature levels hold back feature upgrades",
            ))
            stopped = []
        return tuple(stopped), tuple(notes)


def _refused_desired(desired: Sequence[DesiredVoter]) -> str | None:
    """Why ``desired`` is no voter set: empty (rule 5), or a node id listed twice."""
    if not desired:
        return "the quorum needs at least one voter"
    ids = [wanted.node_id for wanted in desired]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        return f"node id(s) {', '.join(map(str, twice))} listed more than once"
    return None


def _resolve_desired(
    quorum: QuorumInfo, desired: Sequence[DesiredVoter]
) -> dict[VoterKey, DesiredVoter] | str:
    """The desired voters by the voter key each stands for, or why one has none yet (rule 2)."""
    keys: dict[VoterKey, DesiredVoter] = {}
    for wanted in desired:
        resolved = _resolve(quorum, wanted)
        if isinstance(resolved, str):
            return resolved
        keys[resolved] = wanted
    return keys


def _static_quorum(quorum: QuorumInfo, current: Collection[VoterKey]) -> str | None:
    """Why no voter can change: the voters have no directory ids (DescribeQuorum v2+ would show them)."""
    if quorum.api_version >= 2 and any(d == ZERO_UUID for _, d in current):
        return (
            "the voters have no directory ids (a static quorum, kraft.version 0): upgrade kraft.version "
            "to 1 (kafka-features upgrade --feature kraft.version=1) before changing voters"
        )
    return None


@dataclass(frozen=True)
class _Changes:
    """The changes from the current voters to the target ones, in the order of rule 3."""

    adds: list[VoterKey]
    """Node ids that are no voter yet."""
    failed_removes: list[VoterKey]
    swaps: list[tuple[VoterKey, VoterKey]]
    """(old, new) directory of each node id that stays a voter with another directory (rule 4)."""
    healthy_removes: list[VoterKey]
    """The leader last."""

    @classmethod
    def between(
        cls,
        quorum: QuorumInfo,
        current: frozenset[VoterKey],
        target: frozenset[VoterKey],
        healthy: Collection[VoterKey],
    ) -> _Changes:
        adds = sorted(target - current, key=voter_order)
        removes = current - target
        swapped_ids = {node_id for node_id, _ in adds} & {node_id for node_id, _ in removes}
        leaving = sorted(
            (k for k in removes if k[0] not in swapped_ids),
            key=lambda k: (k[0] == quorum.leader_id, k in healthy, k[0]),
        )
        return cls(
            adds=[k for k in adds if k[0] not in swapped_ids],
            failed_removes=[k for k in leaving if k not in healthy],
            swaps=[
                (next(k for k in removes if k[0] == node_id), next(k for k in adds if k[0] == node_id))
                for node_id in sorted(swapped_ids)
            ],
            healthy_removes=[k for k in leaving if k in healthy],
        )


@dataclass
class _Planner:
    """The voter set as the plan changes it, one voter at a time (after etcd's ``confchange.Changer``):
    each change checks that the set it leads to can commit (rule 5) and appends its step, or returns
    why it cannot."""

    quorum: QuorumInfo
    limits: HealthThresholds
    wanted: Mapping[VoterKey, DesiredVoter]
    voters: set[VoterKey]
    alive: set[VoterKey]
    """The healthy voters; a new voter counts as healthy, as it is added only once caught up."""
    steps: list[VoterStep] = field(default_factory=list)

    def add(self, key: VoterKey) -> str | None:
        return self._change("add", key, f"adding raises the fault tolerance: {self._observer_note(key)}")

    def remove(self, key: VoterKey) -> str | None:
        if key[0] == self.quorum.leader_id:
            why = "the leader leaves last; it resigns once its removal commits and the others elect a leader"
        elif key in self.alive:
            why = "a healthy voter leaves after every addition"
        else:
            why = "a failed voter leaves first: it counts against the majority without voting"
        return self._change("remove", key, why)

    def swap(self, old: VoterKey, new: VoterKey) -> str | None:
        """Rule 4: the old directory leaves, then the new one joins."""
        node_id = old[0]
        if old in self.alive and not all(k in self.alive for k in self.voters if k != old):
            return (
                f"node {node_id} must change its directory id from {old[1]} to {new[1]}, which removes a "
                f"healthy voter first; every other voter must be healthy for that, and "
                f"{_names(k for k in self.voters if k != old and k not in self.alive)} are not"
            )
        state = "still healthy" if old in self.alive else "failed"
        leaves = (
            f"node {node_id}'s old directory ({state}) leaves before the new one joins: a voter set holds "
            "one directory per node id"
        )
        joins = f"node {node_id} rejoins with its new directory: {self._observer_note(new)}"
        return self._change("remove", old, leaves) or self._change("add", new, joins)

    def _change(self, action: Literal["add", "remove"], key: VoterKey, why: str) -> str | None:
        """Make the change and append its step, or say why the voter set it leads to cannot commit."""
        if action == "add":
            self.voters.add(key)
            self.alive.add(key)
        else:
            self.voters.discard(key)
            self.alive.discard(key)
        if not self.voters:
            return "the quorum needs at least one voter"
        tolerance = fault_tolerance(self.voters, self.alive)
        if tolerance < 0:
            count = sum(1 for k in self.voters if k in self.alive)
            verb = "adding" if action == "add" else "removing"
            return (
                f"{verb} voter {key[0]} would leave {count} healthy of {len(self.voters)} voters, short of "
                f"the majority of {majority(len(self.voters))} needed to commit the change"
            )
        after = frozenset(self.voters)
        wanted = self.wanted.get(key)
        plural = "s" if len(after) > 1 else ""
        self.steps.append(
            VoterStep(
                action,
                key[0],
                key[1],
                after,
                tolerance,
                f"{why}; {len(after)} voter{plural} afterwards, fault tolerance {tolerance}",
                wanted.endpoints if wanted is not None and action == "add" else (),
            )
        )
        return None

    def _observer_note(self, key: VoterKey) -> str:
        """How far the observer that joins as ``key`` is (rule 2)."""
        observer = _latest_observer(self.quorum, *key)
        if observer is None:
            return f"it must first fetch from the leader as an observer with directory id {key[1]}"
        if not _caught_up(self.quorum, observer, self.limits):
            return "it must first catch up with the leader (it fetches as an observer)"
        return "it fetches as an observer and is caught up"


def _waiting(quorum: QuorumInfo, steps: Sequence[VoterStep], limits: HealthThresholds) -> str | None:
    """Why the first step cannot run now, if it cannot: an add waits for its observer to catch up, and
    so does the removal of a directory that the same node rejoins with next (a replaced disk is
    swapped only once the new incarnation holds the log)."""
    first = steps[0]
    joining = first if first.action == "add" else None
    if first.action == "remove" and len(steps) > 1 and steps[1].node_id == first.node_id:
        joining = steps[1]
    if joining is None:
        return None
    observer = _latest_observer(quorum, joining.node_id, joining.directory_id)
    if observer is None:
        return (
            f"node {joining.node_id} with directory id {joining.directory_id} does not fetch from the "
            "leader yet"
        )
    if not _caught_up(quorum, observer, limits):
        return f"node {joining.node_id} is still catching up with the leader"
    return None


@dataclass(frozen=True)
class StepOutcome:
    """A step that was carried out and committed."""

    step: VoterStep
    seconds: float
    """From sending the change to seeing it committed."""


@dataclass(frozen=True)
class ReconcileResult:
    """What ``Admin.reconcile_voters`` did."""

    plan: VoterPlan
    """The plan as first computed (later re-planning after each step only ever shortens it)."""
    completed: tuple[StepOutcome, ...]
    dry_run: bool = False
    final: VoterPlan | None = None
    """The plan found done at the end (None for a dry run): its ``current`` voters are the ones the run
    left, whoever made the changes (this run, another client, or a controller joining by itself)."""
    unregistered: tuple[int, ...] = ()
    """Controllers the run unregistered (rule 7)."""

    @property
    def changed(self) -> bool:
        return bool(self.completed or self.unregistered)


@dataclass(frozen=True)
class Progress:
    """What a reconciliation is doing, for a progress display: ``plan`` (the plan is known),
    ``waiting`` (a precondition does not hold yet: ``message`` says which), ``step`` (a change is
    sent), ``committed`` (it is committed), ``unregistered`` (a controller's registration is removed,
    rule 7: ``message`` says which), ``watching`` (every change is made, and a removed controller that
    still answered is watched for a moment in case it adds itself back, rule 6: ``message`` says
    which)."""

    kind: Literal["plan", "waiting", "step", "committed", "unregistered", "watching"]
    plan: VoterPlan
    step: VoterStep | None = None
    message: str = ""
