"""What the voter commands print: the plan, the voters' names, the result as text and JSON, and a
failure as one line."""

from __future__ import annotations

from kafka_admin_kraft.errors import (
    KafkaTimeoutError,
    VoterChangeError,
    VoterChangeRefusedError,
    VoterChangeTimeoutError,
)
from kafka_admin_kraft.voters import ReconcileResult, StepOutcome, VoterPlan
from kafka_admin_kraft_cli.metadata_quorum.voter_text import (
    done_text,
    failure_text,
    nothing_to_do_text,
    plan_text,
    result_json,
    voter_names,
)
from tools.metadata_quorum.voter_util import D1, D2, D3, D4, GROW, step


def test_plan_text() -> None:
    assert plan_text(GROW) == (
        "Current voters:  1\n"
        "Desired voters:  1, 2, 3\n"
        "Fault tolerance: 0 now, 1 after the change\n"
        "Plan (2 steps, each committed before the next):\n"
        f"  1. Add voter 2 (directory id {D2})\n"
        "     because; 2 voters afterwards, fault tolerance 0\n"
        f"  2. Add voter 3 (directory id {D3})\n"
        "     because; 3 voters afterwards, fault tolerance 1\n"
    )
    waiting = VoterPlan(frozenset({(1, D1)}), frozenset(), waiting="node 4 is not fetching yet")
    assert plan_text(waiting, [1, 4]).splitlines()[1:] == [
        "Desired voters:  1, 4", "Fault tolerance: 0 now", "Waiting: node 4 is not fetching yet",
        "Plan: known once that holds"]


def test_the_plan_ends_with_its_notes_in_text_and_json() -> None:
    note = "if controller 3 runs with controller.quorum.auto.join.enable=true, it adds itself back"
    shrink = VoterPlan(frozenset({(1, D1), (2, D2), (3, D3)}), frozenset({(1, D1), (2, D2)}),
                       (step("remove", 3, D3, {(1, D1), (2, D2)}, 0),), fault_tolerance=1, notes=(note,))
    assert plan_text(shrink).splitlines()[-3:] == [
        f"  1. Remove voter 3 (directory id {D3})", "     because; 2 voters afterwards, fault tolerance 0",
        f"Note: {note}"]
    assert result_json(shrink, (), True)["plan"]["notes"] == [note]
    assert result_json(GROW, (), True)["plan"]["notes"] == [] and "Note:" not in plan_text(GROW)


def test_a_replaced_directory_shows_both_ids() -> None:
    current, desired = {(1, D1), (2, D2)}, {(1, D1), (2, D4)}
    assert voter_names(current, desired) == f"1, 2@{D2}"
    assert voter_names(desired, current) == f"1, 2@{D4}"
    assert voter_names(desired) == "1, 2"
    assert voter_names(()) == "none"


def test_results_as_text_and_json() -> None:
    outcomes = (StepOutcome(GROW.steps[0], 0.25), StepOutcome(GROW.steps[1], 0.5))
    assert done_text(ReconcileResult(GROW, outcomes)) == (
        "Done: the voters are now 1, 2, 3, fault tolerance 1 (2 steps committed in 0.75 s)\n")
    assert nothing_to_do_text(VoterPlan(frozenset({(2, D2), (1, D1)}), frozenset())) == (
        "Nothing to do: the voters are already 1, 2\n")
    document = result_json(GROW, outcomes[:1], False, "it broke")
    assert document["plan"]["steps"][1] == {"action": "add", "node_id": 3, "directory_id": str(D3),
                                            "why": GROW.steps[1].why, "fault_tolerance_after": 1}
    assert document["plan"]["current_voters"] == [{"node_id": 1, "directory_id": str(D1)}]
    assert document["completed"] == [
        {"action": "add", "node_id": 2, "directory_id": str(D2), "seconds": 0.25}]
    assert (document["changed"], document["dry_run"], document["error"]) == (True, False, "it broke")
    assert result_json(None, (), True, "refused")["plan"] is None


def test_done_names_the_voters_the_run_left_when_others_made_changes_too() -> None:
    """A controller with auto-join (or another client) may make a planned change before the run does:
    the run ends once the voters are as desired, and says who made what."""
    final = VoterPlan(GROW.desired, GROW.desired, fault_tolerance=1)
    half = (StepOutcome(GROW.steps[0], 0.25),)
    assert done_text(ReconcileResult(GROW, half, final=final)) == (
        "Done: the voters are now 1, 2, 3 (1 step committed in 0.25 s, the others made meanwhile by another "
        "client or by a controller itself (controller.quorum.auto.join.enable))\n")
    assert done_text(ReconcileResult(GROW, (), final=final)) == (
        "Done: the voters are now 1, 2, 3 (no step was sent: the changes were made meanwhile by another "
        "client or by a controller itself (controller.quorum.auto.join.enable))\n")
    assert done_text(ReconcileResult(final, (), final=final)) == (
        "Done: the voters are now 1, 2, 3 (no step was needed)\n")
    # the first plan may not know the voters yet (a controller not started): the end does
    unknown = VoterPlan(frozenset({(1, D1)}), frozenset(), waiting="node 2 is not fetching yet")
    assert done_text(ReconcileResult(unknown, half, final=final)).startswith(
        "Done: the voters are now 1, 2, 3 (")


def test_failures_are_one_line_naming_the_completed_steps() -> None:
    done = [StepOutcome(GROW.steps[0], 0.3)]
    assert failure_text(VoterChangeRefusedError("no majority (no step was completed)"), ()) == (
        "Voter change refused: no majority (no step was completed)")
    timeout = VoterChangeTimeoutError("gave up after 5 s: node 3 lags (completed: x)", done)
    assert failure_text(timeout, done) == f"Voter change timed out: {timeout}"
    assert failure_text(VoterChangeError("Add voter 3 failed 3 times (completed: x)", done), done) == (
        "Voter change failed: Add voter 3 failed 3 times (completed: x)")
    text = failure_text(KafkaTimeoutError("describe_metadata_quorum", 5.0), done)
    assert text.startswith("org.apache.kafka.common.errors.TimeoutException: ")
    assert text.endswith(f" (completed: Add voter 2 (directory id {D2}))")
    assert "\n" not in text


def test_the_controllers_a_plan_unregisters_are_listed_after_its_steps_and_in_the_result() -> None:
    why = "stopped, and no voter: a registration holds back feature upgrades"
    shrink = VoterPlan(frozenset({(1, D1), (2, D2), (3, D3)}), frozenset({(1, D1), (2, D2)}),
                       (step("remove", 3, D3, {(1, D1), (2, D2)}, 0),), fault_tolerance=1, unregister=(3, 4))
    assert plan_text(shrink).splitlines()[-1] == f"Then: unregister controllers 3, 4 ({why})"
    left = VoterPlan(frozenset({(1, D1), (2, D2)}), frozenset({(1, D1), (2, D2)}), unregister=(4,))
    assert not left.done
    assert plan_text(left).splitlines()[-1] == f"Plan: unregister controller 4 ({why})"
    outcome = StepOutcome(shrink.steps[0], 0.5)
    final = VoterPlan(shrink.desired, shrink.desired)
    assert done_text(ReconcileResult(shrink, (outcome,), final=final, unregistered=(3, 4))) == (
        "Done: the voters are now 1, 2, fault tolerance 0 (1 step committed in 0.50 s)\n"
        "Unregistered controllers 3, 4\n")
    assert done_text(ReconcileResult(left, (), final=final, unregistered=(4,))) == (
        "Done: the voters are now 1, 2 (no step was needed)\nUnregistered controller 4\n")
    document = result_json(left, (), False, unregistered=(4,))
    assert (document["plan"]["unregister"], document["unregistered"], document["changed"]) == ([4], [4], True)
    plain = result_json(GROW, (), True)
    assert (plain["unregistered"], plain["plan"]["unregister"]) == ([], [])
