"""The voter planner (``kafka_admin_kraft.voters``): each ordering rule of its docstring on hand-built
quorums, then properties over random quorums that hold for any correct planner: every plan is a chain
of single committed changes that never loses the majority, and every refusal is justified (for a lost
majority: no order of the needed changes at all keeps one)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_admin_kraft.health import HealthThresholds, Registrations
from kafka_admin_kraft.models import Endpoint, QuorumInfo, ReplicaState
from kafka_admin_kraft.protocol.primitives import ZERO_UUID, Uuid
from kafka_admin_kraft.voters import (
    DesiredVoter,
    VoterKey,
    VoterPlan,
    auto_join_note,
    fault_tolerance,
    plan_voter_changes,
)

NOW = 1_700_000_000_000
LEADER_OFFSET = 50_000
LAGGING = ("time", "offsets", "never")
"""How a replica can be behind the leader: not caught up for a minute, 20000 offsets behind, never
fetched. Each is far outside the default thresholds."""


def directory(node_id: int, generation: int = 0) -> Uuid:
    """A directory id of ``node_id``; a higher generation is a replaced disk."""
    return Uuid(bytes([node_id, generation + 1] * 8))


def replica(
    node_id: int,
    state: str = "ok",
    *,
    generation: int = 0,
    directory_id: Uuid | None = None,
    fetched: int = NOW,
) -> ReplicaState:
    offset, caught_up = LEADER_OFFSET, NOW
    if state == "time":
        caught_up = NOW - 60_000
    elif state == "offsets":
        offset = LEADER_OFFSET - 20_000
    elif state == "never":
        return ReplicaState(
            replica_id=node_id,
            replica_directory_id=directory_id or directory(node_id, generation),
            log_end_offset=-1,
        )
    return ReplicaState(
        replica_id=node_id,
        replica_directory_id=directory_id or directory(node_id, generation),
        log_end_offset=offset,
        last_fetch_timestamp=fetched,
        last_caught_up_timestamp=caught_up,
    )


def quorum(
    *voters: ReplicaState,
    leader: int = 1,
    observers: Sequence[ReplicaState] = (),
    committed: Sequence[ReplicaState] | None = None,
    version: int = 3,
) -> QuorumInfo:
    return QuorumInfo(
        leader_id=leader,
        leader_epoch=5,
        high_watermark=LEADER_OFFSET,
        voters=voters,
        committed_voters=(tuple(voters) if committed is None else tuple(committed)) if version >= 3 else None,
        observers=tuple(observers),
        nodes={},
        api_version=version,
    )


def healthy_quorum(*ids: int, leader: int = 1, observers: Sequence[ReplicaState] = ()) -> QuorumInfo:
    return quorum(*(replica(i) for i in ids), leader=leader, observers=observers)


def key(node_id: int, generation: int = 0) -> VoterKey:
    return node_id, directory(node_id, generation)


def keys(*ids: int) -> frozenset[VoterKey]:
    return frozenset(key(i) for i in ids)


def actions(plan: VoterPlan) -> list[tuple[str, int]]:
    return [(step.action, step.node_id) for step in plan.steps]


# ------------------------------------------------------------------ the rules, by example


def test_an_already_desired_quorum_is_done_whatever_the_order_or_form_of_the_desired_voters() -> None:
    info = healthy_quorum(1, 2, 3)
    for desired in ([3, 1, 2], [1, 2, 3]):
        plan = plan_voter_changes(info, [DesiredVoter(i) for i in desired])
        assert plan.done and plan.steps == () and plan.desired == plan.current == keys(1, 2, 3)
        assert plan.fault_tolerance == 1 and plan.refused is None and plan.waiting is None
    explicit = plan_voter_changes(info, [DesiredVoter(i, directory(i)) for i in (1, 2, 3)])
    assert explicit.done


def test_adds_come_before_removes_and_each_step_states_its_voters_and_fault_tolerance() -> None:
    info = healthy_quorum(1, 2, 3, observers=(replica(4), replica(5)))
    plan = plan_voter_changes(info, [DesiredVoter(i) for i in (1, 4, 5)])
    assert actions(plan) == [("add", 4), ("add", 5), ("remove", 2), ("remove", 3)]
    assert [step.voters_after for step in plan.steps] == [
        keys(1, 2, 3, 4),
        keys(1, 2, 3, 4, 5),
        keys(1, 3, 4, 5),
        keys(1, 4, 5),
    ]
    assert [step.fault_tolerance_after for step in plan.steps] == [1, 2, 1, 1]
    assert plan.steps[0].directory_id == directory(4)
    assert plan.steps[0].describe() == f"Add voter 4 (directory id {directory(4)})"
    assert plan.steps[2].describe() == f"Remove voter 2 (directory id {directory(2)})"
    assert (
        "adding raises the fault tolerance: it fetches as an observer and is caught up" in plan.steps[0].why
    )
    assert plan.steps[1].why.endswith("5 voters afterwards, fault tolerance 2")
    assert (plan.waiting, plan.refused, plan.done, plan.desired) == (None, None, False, keys(1, 4, 5))


def test_failed_voters_leave_before_healthy_ones_which_keeps_the_majority() -> None:
    # removing the healthy voter 2 first would leave 2 healthy of 4 voters: no majority
    info = quorum(replica(1), replica(2), replica(3), replica(4, "time"), replica(5))
    plan = plan_voter_changes(info, [DesiredVoter(1), DesiredVoter(3)], unreachable={5})
    assert actions(plan) == [("remove", 4), ("remove", 5), ("remove", 2)]
    assert [step.fault_tolerance_after for step in plan.steps] == [0, 1, 0]
    assert plan.fault_tolerance == 0
    assert "a failed voter leaves first" in plan.steps[0].why
    assert "a healthy voter leaves after every addition" in plan.steps[2].why


def test_the_leader_leaves_last_after_the_adds_and_the_other_removals() -> None:
    info = healthy_quorum(1, 2, 3, 4, 5, leader=2, observers=(replica(6),))
    plan = plan_voter_changes(info, [DesiredVoter(i) for i in (4, 5, 6)])
    assert actions(plan) == [("add", 6), ("remove", 1), ("remove", 3), ("remove", 2)]
    assert "the leader leaves last" in plan.steps[-1].why
    assert plan.steps[-1].voters_after == keys(4, 5, 6)


def test_the_leader_counts_as_healthy_and_the_thresholds_decide_who_lags() -> None:
    info = quorum(replica(1), replica(2, "offsets"), replica(3))
    assert plan_voter_changes(info, [DesiredVoter(i) for i in (1, 2, 3)]).fault_tolerance == 0
    lenient = HealthThresholds(max_lag_offsets=30_000)
    assert (
        plan_voter_changes(info, [DesiredVoter(i) for i in (1, 2, 3)], thresholds=lenient).fault_tolerance
        == 1
    )
    # an unreachable voter counts as failed, the leader too (as a quorum check counts it)
    assert plan_voter_changes(info, [DesiredVoter(1)], unreachable={1}).fault_tolerance == -1
    assert plan_voter_changes(info, [DesiredVoter(1)], unreachable={3}).fault_tolerance == -1


def test_a_changed_directory_is_removed_then_added_back_once_the_new_disk_is_caught_up() -> None:
    info = healthy_quorum(1, 2, 3, observers=(replica(3, generation=1),))
    desired = [DesiredVoter(1), DesiredVoter(2), DesiredVoter(3, directory(3, 1))]
    plan = plan_voter_changes(info, desired)
    assert [(s.action, s.node_id, s.directory_id) for s in plan.steps] == [
        ("remove", 3, directory(3)),
        ("add", 3, directory(3, 1)),
    ]
    assert [step.voters_after for step in plan.steps] == [keys(1, 2), keys(1, 2) | {key(3, 1)}]
    assert [step.fault_tolerance_after for step in plan.steps] == [0, 1]
    assert "old directory (still healthy) leaves before the new one joins" in plan.steps[0].why
    assert plan.waiting is None and plan.desired == keys(1, 2) | {key(3, 1)}


def test_a_failed_old_directory_may_be_swapped_while_another_voter_is_failed_too() -> None:
    info = quorum(
        replica(1),
        replica(2),
        replica(3, "never"),
        replica(4),
        replica(5, "time"),
        observers=(replica(3, generation=1),),
    )
    desired = [DesiredVoter(i) for i in (1, 2, 4, 5)] + [DesiredVoter(3, directory(3, 1))]
    plan = plan_voter_changes(info, desired)
    assert plan.refused is None and actions(plan) == [("remove", 3), ("add", 3)]
    assert [step.fault_tolerance_after for step in plan.steps] == [0, 1]
    assert "old directory (failed)" in plan.steps[0].why


def test_a_healthy_old_directory_is_not_removed_while_another_voter_is_failed() -> None:
    # removing it would still leave 3 healthy of 4: the refusal is the swap rule, not the majority
    info = quorum(
        *(replica(i) for i in (1, 2, 3, 4)), replica(5, "offsets"), observers=(replica(3, generation=1),)
    )
    desired = [DesiredVoter(i) for i in (1, 2, 4, 5)] + [DesiredVoter(3, directory(3, 1))]
    plan = plan_voter_changes(info, desired)
    assert plan.refused == (
        f"node 3 must change its directory id from {directory(3)} to {directory(3, 1)}, which removes a "
        "healthy voter first; every other voter must be healthy for that, and 5 are not"
    )
    assert plan.steps == () and not plan.done


def test_a_failed_voter_that_leaves_anyway_does_not_block_a_directory_swap() -> None:
    info = quorum(replica(1), replica(2), replica(3), observers=(replica(2, generation=1),))
    plan = plan_voter_changes(info, [DesiredVoter(1), DesiredVoter(2, directory(2, 1))], unreachable={3})
    assert plan.refused is None
    assert actions(plan) == [("remove", 3), ("remove", 2), ("add", 2)]


def test_an_add_waits_for_its_observer_to_catch_up_or_to_fetch_at_all() -> None:
    catching_up = healthy_quorum(1, observers=(replica(2, "time"),))
    plan = plan_voter_changes(catching_up, [DesiredVoter(1), DesiredVoter(2)])
    assert actions(plan) == [("add", 2)] and not plan.done
    assert plan.waiting == "node 2 is still catching up with the leader"
    assert "it must first catch up with the leader" in plan.steps[0].why
    absent = plan_voter_changes(healthy_quorum(1), [DesiredVoter(1), DesiredVoter(2, directory(2))])
    assert actions(absent) == [("add", 2)]
    assert absent.waiting == f"node 2 with directory id {directory(2)} does not fetch from the leader yet"
    unknown = plan_voter_changes(healthy_quorum(1), [DesiredVoter(1), DesiredVoter(2)])
    assert unknown.waiting == (
        "node 2 is neither a voter nor fetching as an observer yet (start it, formatted with "
        "--no-initial-controllers)"
    )
    assert (unknown.steps, unknown.desired, unknown.refused) == ((), frozenset(), None)


def test_only_the_first_step_waits() -> None:
    info = healthy_quorum(1, observers=(replica(2), replica(3, "never")))
    plan = plan_voter_changes(info, [DesiredVoter(i) for i in (1, 2, 3)])
    assert actions(plan) == [("add", 2), ("add", 3)] and plan.waiting is None


def test_an_observer_without_a_directory_id_cannot_be_added_and_the_latest_incarnation_is_used() -> None:
    broker_like = healthy_quorum(1, observers=(replica(2, directory_id=ZERO_UUID),))
    assert "neither a voter nor fetching" in (
        plan_voter_changes(broker_like, [DesiredVoter(2)]).waiting or ""
    )
    two = healthy_quorum(
        1, observers=(replica(2, generation=1), replica(2, generation=2, fetched=NOW - 9000))
    )
    plan = plan_voter_changes(two, [DesiredVoter(1), DesiredVoter(2)])
    assert plan.desired == keys(1) | {key(2, 1)}


def test_the_removal_half_of_a_swap_waits_for_the_new_directory_to_catch_up() -> None:
    desired = [DesiredVoter(1), DesiredVoter(2), DesiredVoter(3, directory(3, 1))]
    behind = healthy_quorum(1, 2, 3, observers=(replica(3, "offsets", generation=1),))
    plan = plan_voter_changes(behind, desired)
    assert actions(plan) == [("remove", 3), ("add", 3)]
    assert plan.waiting == "node 3 is still catching up with the leader"
    missing = plan_voter_changes(healthy_quorum(1, 2, 3), desired)
    assert missing.waiting == f"node 3 with directory id {directory(3, 1)} does not fetch from the leader yet"
    # a plain removal does not wait for anything
    assert plan_voter_changes(healthy_quorum(1, 2, 3), [DesiredVoter(1), DesiredVoter(2)]).waiting is None


def test_an_uncommitted_previous_change_makes_the_plan_wait_and_only_v3_can_tell() -> None:
    voters = (replica(1), replica(2), replica(3))
    pending = quorum(*voters, committed=voters[:2])
    plan = plan_voter_changes(pending, [DesiredVoter(i) for i in (1, 2, 3)])
    assert plan.waiting == "the previous voter change is not committed yet" and not plan.done
    assert plan.notes == ()  # notes are for what does not stop the plan (rule 6); waiting says this
    shrink = plan_voter_changes(pending, [DesiredVoter(1), DesiredVoter(2)])
    assert (
        actions(shrink) == [("remove", 3)]
        and shrink.waiting == "the previous voter change is not committed yet"
    )
    assert plan_voter_changes(quorum(*voters, version=2), [DesiredVoter(i) for i in (1, 2, 3)]).done


def test_refusals_say_why() -> None:
    info = healthy_quorum(1, 2, 3)
    assert plan_voter_changes(info, []).refused == "the quorum needs at least one voter"
    twice = plan_voter_changes(
        info,
        [
            DesiredVoter(1),
            DesiredVoter(2),
            DesiredVoter(2, directory(2, 1)),
            DesiredVoter(3),
            DesiredVoter(3),
        ],
    )
    assert twice.refused == "node id(s) 2, 3 listed more than once"
    one_failed = quorum(replica(1), replica(2), replica(3, "time"))
    lost = plan_voter_changes(one_failed, [DesiredVoter(1), DesiredVoter(3)])
    assert lost.refused == (
        "removing voter 2 would leave 1 healthy of 2 voters, short of the majority of 2 needed to commit "
        "the change"
    )
    assert lost.steps == () and lost.fault_tolerance == 0
    two_failed = quorum(replica(1), replica(2, "never"), replica(3, "never"), observers=(replica(4),))
    add = plan_voter_changes(two_failed, [DesiredVoter(i) for i in (1, 2, 3, 4)])
    assert add.refused == (
        "adding voter 4 would leave 2 healthy of 4 voters, short of the majority of 3 needed to commit the "
        "change"
    )
    lone = healthy_quorum(1, observers=(replica(1, generation=1),))
    assert plan_voter_changes(lone, [DesiredVoter(1, directory(1, 1))]).refused == (
        "the quorum needs at least one voter"
    )


def test_a_static_quorum_is_refused_any_change_but_is_done_as_it_is() -> None:
    static = [replica(i, directory_id=ZERO_UUID) for i in (1, 2, 3)]
    info = quorum(*static, observers=(replica(4),), version=2)
    plan = plan_voter_changes(info, [DesiredVoter(i) for i in (1, 2, 3, 4)])
    assert plan.refused == (
        "the voters have no directory ids (a static quorum, kraft.version 0): upgrade kraft.version to 1 "
        "(kafka-features upgrade --feature kraft.version=1) before changing voters"
    )
    assert plan_voter_changes(info, [DesiredVoter(i) for i in (3, 2, 1)]).done


def test_endpoints_given_for_a_new_voter_ride_on_its_add_step() -> None:
    endpoint = Endpoint(listener="CONTROLLER", host="ctl4", port=9093)
    info = healthy_quorum(1, 2, observers=(replica(4),))
    plan = plan_voter_changes(info, [DesiredVoter(1), DesiredVoter(4, endpoints=(endpoint,))])
    assert [(s.action, s.node_id, s.endpoints) for s in plan.steps] == [
        ("add", 4, (endpoint,)),
        ("remove", 2, ()),
    ]


# ------------------------------------------------------------------ rule 6: controllers that auto-join

AUTO_JOIN_FIX = (
    "is configured with controller.quorum.auto.join.enable=true: removed while it runs, it adds itself back "
    "to the voters; stop it, or set controller.quorum.auto.join.enable=false and restart it, before "
    "removing it"
)


def test_removing_a_running_controller_configured_to_auto_join_is_refused_with_the_fix() -> None:
    info = healthy_quorum(1, 2, 3)
    plan = plan_voter_changes(info, [DesiredVoter(1), DesiredVoter(2)], auto_join={3: True})
    assert plan.refused == f"controller 3 {AUTO_JOIN_FIX}"
    assert plan.steps == () and not plan.done
    # the leader too: once it resigns it fetches as an observer and would add itself back
    leader = plan_voter_changes(info, [DesiredVoter(2), DesiredVoter(3)], auto_join={1: True, 2: True})
    assert leader.refused == f"controller 1 {AUTO_JOIN_FIX}"
    both = plan_voter_changes(
        healthy_quorum(1, 2, 3, 4, 5), [DesiredVoter(1), DesiredVoter(2), DesiredVoter(3)],
        auto_join={4: True, 5: True},
    )
    assert both.refused == (
        "controllers 4, 5 are configured with controller.quorum.auto.join.enable=true: removed while they "
        "run, they add themselves back to the voters; stop them, or set controller.quorum.auto.join.enable="
        "false and restart them, before removing them"
    )
    # a lagging controller still answers: it runs, so it would come back
    lagging = quorum(replica(1), replica(2), replica(3, "time"))
    assert plan_voter_changes(lagging, [DesiredVoter(1), DesiredVoter(2)], auto_join={3: True}).refused == (
        f"controller 3 {AUTO_JOIN_FIX}"
    )


def test_a_majority_refusal_comes_before_the_auto_join_one() -> None:
    one_failed = quorum(replica(1), replica(2), replica(3, "time"))
    lost = plan_voter_changes(one_failed, [DesiredVoter(1), DesiredVoter(3)], auto_join={2: True})
    assert lost.refused is not None and lost.refused.startswith("removing voter 2 would leave 1 healthy")


def test_a_stopped_controller_configured_to_auto_join_is_removed_with_a_note() -> None:
    info = quorum(replica(1), replica(2), replica(3, "never"))
    plan = plan_voter_changes(info, [DesiredVoter(1), DesiredVoter(2)], unreachable={3}, auto_join={3: True})
    assert plan.refused is None and actions(plan) == [("remove", 3)]
    assert plan.notes == (
        "controller 3 does not answer and is configured with controller.quorum.auto.join.enable=true: "
        "started so again, it adds itself back to the voters; set the option to false before starting it",
    )


def test_a_controller_configured_without_auto_join_is_removed_without_a_note() -> None:
    info = healthy_quorum(1, 2, 3)
    plan = plan_voter_changes(info, [DesiredVoter(1), DesiredVoter(2)], auto_join={3: False, 1: True})
    assert actions(plan) == [("remove", 3)] and plan.notes == () and plan.refused is None


def test_removing_a_controller_whose_setting_is_unknown_carries_one_note() -> None:
    info = healthy_quorum(1, 2, 3, 4, 5)
    one = plan_voter_changes(info, [DesiredVoter(i) for i in (1, 2, 3, 4)])
    assert one.notes == (
        "if controller 5 runs with controller.quorum.auto.join.enable=true (Kafka 4.2+), it adds itself back "
        "to the voters unless it is stopped first",
    )
    two = plan_voter_changes(info, [DesiredVoter(i) for i in (1, 2, 3)], auto_join={4: False})
    assert actions(two) == [("remove", 4), ("remove", 5)]
    assert two.notes == (
        "if controller 5 runs with controller.quorum.auto.join.enable=true (Kafka 4.2+), it adds itself back "
        "to the voters unless it is stopped first",
    )
    three = plan_voter_changes(info, [DesiredVoter(1), DesiredVoter(2)])
    assert three.notes == (
        "if controllers 3, 4, 5 run with controller.quorum.auto.join.enable=true (Kafka 4.2+), they add "
        "themselves back to the voters unless they are stopped first",
    )
    # adding voters removes nobody: no note
    grow = plan_voter_changes(healthy_quorum(1, observers=(replica(2),)), [DesiredVoter(1), DesiredVoter(2)])
    assert grow.notes == ()


def test_a_directory_swap_of_a_controller_that_auto_joins_is_planned_as_without_it() -> None:
    """Replacing a disk keeps the node id: the new, auto-joining incarnation wants exactly this swap
    (it removes the entry of its id with the old directory, then adds itself), so rule 6 refuses
    nothing; the plan is rule 4's, waits as rule 2 says, and notes that the controller acts itself."""
    desired = [DesiredVoter(1), DesiredVoter(2), DesiredVoter(3, directory(3, 1))]
    info = healthy_quorum(1, 2, 3, observers=(replica(3, generation=1),))
    without = plan_voter_changes(info, desired)
    plan = plan_voter_changes(info, desired, auto_join={3: True})
    assert plan.refused is None and plan.steps == without.steps and plan.waiting is None
    assert [(s.action, s.directory_id) for s in plan.steps] == [
        ("remove", directory(3)),
        ("add", directory(3, 1)),
    ]
    assert plan.notes == (
        "controller 3 is configured with controller.quorum.auto.join.enable=true: it joins the voters by "
        "itself (removing an entry of its id with another directory first), and a step it has made is not "
        "sent again",
    )
    assert without.notes == ()
    behind = healthy_quorum(1, 2, 3, observers=(replica(3, "offsets", generation=1),))
    assert plan_voter_changes(behind, desired, auto_join={3: True}).waiting == (
        "node 3 is still catching up with the leader"
    )
    # the controller removed its old entry itself: what is left is its add
    halfway = healthy_quorum(1, 2, observers=(replica(3, generation=1),))
    rest = plan_voter_changes(halfway, desired, auto_join={3: True})
    assert [(s.action, s.node_id, s.directory_id) for s in rest.steps] == [("add", 3, directory(3, 1))]
    # and added itself: nothing is left
    joined = quorum(replica(1), replica(2), replica(3, generation=1))
    assert plan_voter_changes(joined, desired, auto_join={3: True}).done


def test_a_new_controller_that_auto_joins_is_added_with_a_note() -> None:
    info = healthy_quorum(1, 2, observers=(replica(3),))
    plan = plan_voter_changes(info, [DesiredVoter(i) for i in (1, 2, 3)], auto_join={3: True})
    assert actions(plan) == [("add", 3)] and plan.refused is None
    assert len(plan.notes) == 1 and plan.notes[0].startswith("controller 3 is configured with")


# ------------------------------------------------------------------ rule 7: registrations


def registered(*ids: int) -> Registrations:
    return Registrations(controllers=ids)


TWO = [DesiredVoter(1), DesiredVoter(2)]


def test_a_stopped_controller_removed_for_good_is_unregistered_once_the_voters_are_as_desired() -> None:
    info = quorum(replica(1), replica(2), replica(3, "never"))
    plan = plan_voter_changes(info, TWO, unreachable={3}, auto_join={3: False},
                              registrations=registered(1, 2, 3), metadata_version=33)
    assert actions(plan) == [("remove", 3)] and plan.unregister == (3,) and plan.notes == ()
    # not registered (never, or unregistered already): nothing to do
    gone = plan_voter_changes(info, TWO, unreachable={3}, auto_join={3: False},
                              registrations=registered(1, 2), metadata_version=33)
    assert gone.unregister == () and gone.notes == ()
    # through brokers the registered controllers are not known: a stopped one that leaves is tried
    blind = plan_voter_changes(info, TWO, unreachable={3}, auto_join={3: False},
                               registrations=Registrations(brokers=(101,)), metadata_version=33)
    assert blind.unregister == (3,)
    # without registrations (a caller of the planner that did not read them): rule 7 does not apply
    unread = plan_voter_changes(info, TWO, unreachable={3}, auto_join={3: False}, metadata_version=33)
    assert unread.unregister == () and unread.notes == ()


def test_a_controller_still_answering_or_a_level_below_4_4_iv2_keeps_its_registration_with_a_note() -> None:
    running = plan_voter_changes(healthy_quorum(1, 2, 3), TWO, auto_join={3: False},
                                 registrations=registered(1, 2, 3), metadata_version=33)
    assert running.unregister == () and running.notes == (
        "controller 3 still answers, so it is not unregistered (a running controller registers again): once "
        "it is stopped, unregister it (kafka-cluster unregister-controller --id 3)",
    )
    info = quorum(replica(1), replica(2), replica(3, "never"), replica(4, "never"), replica(5))
    below = plan_voter_changes(info, [DesiredVoter(i) for i in (1, 2, 5)], unreachable={3, 4},
                               auto_join={3: False, 4: False}, registrations=registered(1, 2, 3, 4, 5),
                               metadata_version=29)
    assert below.unregister == () and below.notes == (
        "the registrations of controllers 3, 4 stay: unregistering needs metadata.version 4.4-IV2 (33) or "
        "later, and it is 29; until then their supported feature levels hold back feature upgrades",
    )
    unknown = plan_voter_changes(info, [DesiredVoter(i) for i in (1, 2, 4, 5)], unreachable={3, 4},
                                 auto_join={3: False}, registrations=registered(1, 2, 3, 4, 5))
    assert unknown.notes == (
        "the registration of controller 3 stays: unregistering needs metadata.version 4.4-IV2 (33) or later, "
        "and it is not known; until then its supported feature levels hold back feature upgrades",
    )


def test_a_registration_left_behind_is_unregistered_even_when_the_voters_are_as_desired() -> None:
    """An earlier removal, or a run interrupted between a removal and the unregistration: the
    controller neither votes nor fetches, and is not desired."""
    info = healthy_quorum(1, 2, observers=(replica(4), replica(5, "time", fetched=NOW - 60_000)))
    plan = plan_voter_changes(info, TWO, registrations=registered(1, 2, 4, 5, 6), metadata_version=33)
    assert (plan.steps, plan.unregister, plan.done) == ((), (5, 6), False)
    # a fetching observer (4) runs and is left alone, or added when desired; a desired node that does not
    # fetch yet is waited for (the plan is not known until it does)
    wanted = plan_voter_changes(info, [*TWO, DesiredVoter(4)], registrations=registered(1, 2, 4, 5, 6),
                                metadata_version=33)
    assert actions(wanted) == [("add", 4)] and wanted.unregister == (5, 6)
    waiting = plan_voter_changes(info, [*TWO, DesiredVoter(6)], registrations=registered(1, 2, 4, 5, 6),
                                 metadata_version=33)
    assert waiting.unregister == () and waiting.waiting is not None
    assert plan_voter_changes(info, TWO, registrations=registered(1, 2, 4), metadata_version=33).done


def test_registrations_asked_to_be_kept_are_noted() -> None:
    info = quorum(replica(1), replica(2), replica(3, "never"))
    kept = plan_voter_changes(info, TWO, unreachable={3}, auto_join={3: False},
                              registrations=registered(1, 2, 3, 7), metadata_version=33,
                              keep_registrations=True)
    assert actions(kept) == [("remove", 3)] and kept.unregister == ()
    assert kept.notes == (
        "the registrations of controllers 3, 7 are kept: their supported feature levels still count when "
        "features are upgraded",
    )


# ------------------------------------------------------------------ properties over random quorums

STATUSES = ("ok", "ok", "ok", "time", "offsets", "never", "unreachable")


def rarely(one_in: int) -> st.SearchStrategy[bool]:
    """True about once in ``one_in`` draws (not on the all-zero draws Hypothesis favours)."""
    return st.sampled_from(range(one_in)).map(lambda n: n == one_in - 1)


@dataclass(frozen=True)
class Scenario:
    quorum: QuorumInfo
    desired: tuple[DesiredVoter, ...]
    unreachable: frozenset[int]
    healthy: frozenset[VoterKey]
    """The voters that are healthy by construction."""
    caught_up: dict[VoterKey, bool]
    """Each observer, and whether it is caught up (by construction)."""
    auto_join: dict[int, bool]
    """The controllers whose ``controller.quorum.auto.join.enable`` the caller knows (rule 6)."""


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    ids = draw(st.lists(st.integers(1, 8), min_size=1, max_size=7, unique=True))
    leader = draw(st.sampled_from(ids))
    static = draw(rarely(12))
    version = 2 if static else draw(st.sampled_from((2, 3, 3)))
    voters: list[ReplicaState] = []
    unreachable: set[int] = set()
    healthy: set[VoterKey] = set()
    for node_id in ids:
        status = "ok" if node_id == leader else draw(st.sampled_from(STATUSES))
        if status == "unreachable":  # its last state may look caught up: the probe decides
            unreachable.add(node_id)
            status = draw(st.sampled_from(("ok", *LAGGING)))
        elif status == "ok":
            healthy.add((node_id, ZERO_UUID if static else directory(node_id)))
        voters.append(replica(node_id, status, directory_id=ZERO_UUID if static else None))
    observers: list[ReplicaState] = []
    caught_up: dict[VoterKey, bool] = {}
    for node_id in range(1, 9):
        kind = draw(st.sampled_from(("none", "caught up", "behind")))
        if kind == "none":
            continue
        generation = 1 if node_id in ids else 0  # a voter's id fetching: its replaced disk
        observers.append(
            replica(
                node_id,
                "ok" if kind == "caught up" else draw(st.sampled_from(LAGGING)),
                generation=generation,
            )
        )
        caught_up[key(node_id, generation)] = kind == "caught up"
    if draw(rarely(10)):
        observers.append(replica(9, directory_id=ZERO_UUID))
    others = [node_id for node_id in range(1, 10) if node_id not in ids]
    unreachable |= set(draw(st.lists(st.sampled_from(others), max_size=2)))  # probes of non-voters count not
    committed: list[ReplicaState] | None = None
    if version == 3 and len(voters) > 1 and draw(rarely(8)):
        committed = [v for v in voters if v.replica_id != draw(st.sampled_from(ids))]
    desired: list[DesiredVoter] = []
    known = {*ids, *(k[0] for k in caught_up)}
    for node_id in draw(st.permutations(range(1, 9))):
        if not draw(st.booleans()) or (node_id not in known and not draw(rarely(3))):
            continue
        form = draw(st.sampled_from(("id", "id", "current", "replaced", "unknown")))
        if form == "id":
            desired.append(DesiredVoter(node_id))
        else:
            generation = {"current": 0, "replaced": 1, "unknown": 2}[form]
            desired.append(DesiredVoter(node_id, directory(node_id, generation)))
    if draw(rarely(15)) and desired:
        desired.append(DesiredVoter(desired[0].node_id))
    auto_join = {
        node_id: setting
        for node_id in range(1, 9)
        if (setting := draw(st.sampled_from((None, None, None, False, True)))) is not None
    }
    return Scenario(
        quorum(*voters, leader=leader, observers=observers, committed=committed, version=version),
        tuple(desired),
        frozenset(unreachable),
        frozenset(healthy),
        caught_up,
        auto_join if draw(rarely(3)) else {},
    )


def resolve(scenario: Scenario, wanted: DesiredVoter) -> VoterKey | None:
    """What a desired voter stands for: its given key, else the voter with its id, else the observer
    with its id and a directory id (the scenarios have at most one)."""
    if wanted.directory_id is not None:
        return wanted.node_id, wanted.directory_id
    named = [o for o in scenario.quorum.observers if o.replica_directory_id != ZERO_UUID]
    for found in (*scenario.quorum.voters, *named):
        if found.replica_id == wanted.node_id:
            return found.replica_id, found.replica_directory_id
    return None


def ids_unique(voters: Iterable[VoterKey]) -> bool:
    node_ids = [node_id for node_id, _ in voters]
    return len(node_ids) == len(set(node_ids))


def some_order_keeps_a_majority(
    current: frozenset[VoterKey], target: frozenset[VoterKey], healthy: frozenset[VoterKey]
) -> bool:
    """Whether any order of the needed single changes (add each missing key, remove each extra one)
    passes only through non-empty voter sets with one directory per id and a healthy majority."""
    changes = current ^ target
    seen = {current}
    frontier = [current]
    while frontier:
        voters = frontier.pop()
        if voters == target:
            return True
        for change in changes:
            after = voters - {change} if change in voters else voters | {change}
            if (
                after in seen
                or not after
                or not ids_unique(after)
                or (change in voters) != (change in current)
                or fault_tolerance(after, healthy) < 0
            ):
                continue
            seen.add(after)
            frontier.append(after)
    return False


def check_refusal(
    scenario: Scenario, plan: VoterPlan, target: frozenset[VoterKey], healthy_after: frozenset[VoterKey]
) -> None:
    """A refusal has one of the documented reasons, and that reason really holds."""
    current = plan.current
    reason = plan.refused or ""
    if not scenario.desired:
        assert reason == "the quorum needs at least one voter"
    elif "listed more than once" in reason:
        node_ids = [wanted.node_id for wanted in scenario.desired]
        assert len(set(node_ids)) < len(node_ids)
    elif reason.startswith("the voters have no directory ids"):
        assert scenario.quorum.api_version >= 2 and target != current
        assert any(directory_id == ZERO_UUID for _, directory_id in current)
    elif "must change its directory id" in reason:
        node_id = int(reason.split()[1])
        old = next(k for k in current if k[0] == node_id)
        assert old in scenario.healthy and old not in target and node_id in {k[0] for k in target - current}
        # every other voter at that point: the current ones but the old directories swapped before it
        # failed voters leaving for good are removed before any swap
        swapped_before = {k for k in current - target if k[0] < node_id and k[0] in {t[0] for t in target}}
        leaving = {k for k in current - target if k[0] not in {t[0] for t in target}}
        failed = sorted(
            k[0] for k in current - swapped_before - leaving - {old} if k not in scenario.healthy
        )
        assert failed and reason.endswith(f"and {', '.join(map(str, failed))} are not")
    elif "controller.quorum.auto.join.enable=true" in reason:
        # rule 6 comes after rule 5: the plan would keep its majority, but a removal would not stick
        assert some_order_keeps_a_majority(current, target, healthy_after)
        running = sorted(running_auto_joiners(scenario, current, target))
        names = ", ".join(map(str, running))
        assert running and reason.startswith(
            f"controller {names} is " if len(running) == 1 else f"controllers {names} are "
        )
    else:
        assert "would leave" in reason or reason == "the quorum needs at least one voter", reason
        assert not some_order_keeps_a_majority(current, target, healthy_after)


def leaving_ids(current: frozenset[VoterKey], target: frozenset[VoterKey]) -> set[int]:
    """Node ids the plan removes for good (a directory swap keeps its id)."""
    return {k[0] for k in current} - {k[0] for k in target}


def running_auto_joiners(
    scenario: Scenario, current: frozenset[VoterKey], target: frozenset[VoterKey]
) -> set[int]:
    """Rule 6: node ids removed for good that are configured to auto-join and answer their probe."""
    leaving = leaving_ids(current, target)
    return {n for n in leaving if scenario.auto_join.get(n) and n not in scenario.unreachable}


@settings(max_examples=400, deadline=None)
@given(scenarios())
def test_every_plan_is_a_chain_of_safe_single_changes_and_every_refusal_is_justified(
    scenario: Scenario,
) -> None:
    info = scenario.quorum
    plan = plan_voter_changes(
        info, scenario.desired, unreachable=scenario.unreachable, auto_join=scenario.auto_join
    )
    current = frozenset((v.replica_id, v.replica_directory_id) for v in info.voters)
    assert plan.current == current
    assert plan.fault_tolerance == fault_tolerance(current, scenario.healthy)
    node_ids = [wanted.node_id for wanted in scenario.desired]
    if not scenario.desired or len(set(node_ids)) != len(node_ids):
        assert plan.refused is not None and plan.steps == ()
        check_refusal(scenario, plan, frozenset(), scenario.healthy)
        return
    resolved = [resolve(scenario, wanted) for wanted in scenario.desired]
    if None in resolved:  # a desired node that has not started: nothing to plan yet
        assert plan.refused is None and plan.steps == () and not plan.done
        missing = next(w.node_id for w, k in zip(scenario.desired, resolved, strict=True) if k is None)
        assert plan.waiting is not None and plan.waiting.startswith(f"node {missing} is neither a voter")
        return
    target = frozenset(k for k in resolved if k is not None)
    healthy_after = scenario.healthy | (target - current)  # new voters are added once caught up
    if plan.refused is not None:
        assert plan.steps == () and not plan.done
        check_refusal(scenario, plan, target, healthy_after)
        return
    assert plan.desired == target
    assert ids_unique(target) and some_order_keeps_a_majority(current, target, healthy_after)
    # rule 6: no running auto-joiner leaves; one note for the leaving controllers not known
    assert not running_auto_joiners(scenario, current, target)
    unknown = sorted(n for n in leaving_ids(current, target) if n not in scenario.auto_join)
    assert [note for note in plan.notes if note.startswith("if controller")] == (
        [auto_join_note(unknown)] if unknown else []
    )
    # each step changes exactly one voter, and the chain ends at the desired set
    voters = current
    swap_ids = {k[0] for k in target - current} & {k[0] for k in current - target}
    bound = min(fault_tolerance(current, scenario.healthy), fault_tolerance(target, healthy_after))
    for step in plan.steps:
        changed = voters ^ step.voters_after
        assert changed == {(step.node_id, step.directory_id)}
        assert (step.action == "add") == (step.voters_after > voters)
        if step.action == "add":
            assert (step.node_id, step.directory_id) in target
        else:
            assert (step.node_id, step.directory_id) in current
        assert step.voters_after and ids_unique(step.voters_after)
        tolerance = fault_tolerance(step.voters_after, healthy_after)
        assert tolerance >= 0 and step.fault_tolerance_after == tolerance
        swapping_out_healthy = (
            step.action == "remove"
            and step.node_id in swap_ids
            and (step.node_id, step.directory_id) in scenario.healthy
        )
        assert tolerance >= bound - (1 if swapping_out_healthy else 0)
        voters = step.voters_after
    assert voters == target
    assert len(plan.steps) == len(current ^ target)
    # adds of new ids first, then failed removals, then swaps, then healthy removals, the leader last
    kinds = [
        "add"
        if s.action == "add" and s.node_id not in swap_ids
        else "swap"
        if s.node_id in swap_ids
        else "remove failed"
        if (s.node_id, s.directory_id) not in scenario.healthy
        else "remove healthy"
        for s in plan.steps
    ]
    order = ["add", "remove failed", "swap", "remove healthy"]
    assert [order.index(kind) for kind in kinds] == sorted(order.index(kind) for kind in kinds)
    leader_leaves = [
        i
        for i, s in enumerate(plan.steps)
        if s.action == "remove" and s.node_id == info.leader_id and s.node_id not in swap_ids
    ]
    assert leader_leaves in ([], [len(plan.steps) - 1])
    # it waits exactly when the first step cannot run yet
    pending = (
        info.committed_voters is not None
        and {(v.replica_id, v.replica_directory_id) for v in info.committed_voters} != current
    )
    joining = None
    if plan.steps and plan.steps[0].action == "add":
        joining = plan.steps[0]
    elif len(plan.steps) > 1 and plan.steps[1].node_id == plan.steps[0].node_id:
        joining = plan.steps[1]
    not_ready = joining is not None and not scenario.caught_up.get(
        (joining.node_id, joining.directory_id), False
    )
    assert (plan.waiting is not None) == (pending or not_ready), plan.waiting
    if pending:
        assert plan.waiting == "the previous voter change is not committed yet"
    assert plan.done == (target == current and not pending)
