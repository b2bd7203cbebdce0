"""What the voter commands print: the plan, the result, a failure, as text or one JSON document.

Text output, on stdout::

    Current voters:  1
    Desired voters:  1, 2, 3
    Fault tolerance: 0 now, 1 after the change
    Plan (2 steps, each committed before the next):
      1. Add voter 2 (directory id <id>)
         <why it is safe>
      2. Add voter 3 (directory id <id>)
         <why it is safe>
    Done: the voters are now 1, 2, 3, fault tolerance 1 (2 steps committed in 1.42 s)

A single step is announced as ``Plan (1 step):``. A voter whose id is in both sets under different
directory ids is shown as ``id@directory-id``. A ``Waiting: <reason>`` line follows the fault
tolerance when the first step cannot run yet (the run waits for it, up to ``--step-timeout-ms`` per
step); ``Then: unregister controller 3 (...)`` (or ``Plan: unregister ...`` when no voter changes)
follows the steps when the plan unregisters stopped controllers that are no voters, and the run ends
with ``Unregistered controller 3``; a ``Note: <note>`` line ends the plan for each of its notes (a
removed controller that may add itself back, ``controller.quorum.auto.join.enable``, a registration
that stays); ``--dry-run`` ends with ``Dry run: no change made.``; a quorum already as desired prints
only ``Nothing to do: the voters are already 1, 2, 3``. A failure is one line naming the committed
steps (``failure_text``). ``--output json`` prints one
document instead of the text (see ``result_json``).

Nothing here imports the SDK at module level (the tool's start-up stays fast).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

from ..admin_options import error_text

if TYPE_CHECKING:
    from kafka_admin_kraft.values import VoterKey
    from kafka_admin_kraft.voters import ReconcileResult, StepOutcome, VoterPlan, VoterStep


def voter_names(keys: Collection[VoterKey], other: Collection[VoterKey] = ()) -> str:
    """``1, 2, 3``; an id that ``other`` holds under another directory id as ``3@<directory id>``."""
    moved = {node_id for node_id, directory in keys} & {node_id for node_id, _ in other}
    moved -= {node_id for node_id, directory in keys if (node_id, directory) in other}
    from kafka_admin_kraft.values import voter_order

    names = [
        f"{node_id}@{directory}" if node_id in moved else str(node_id)
        for node_id, directory in sorted(keys, key=voter_order)
    ]
    return ", ".join(names) or "none"


def steps(count: int) -> str:
    return f"{count} step{'' if count == 1 else 's'}"


def controllers(node_ids: Sequence[int]) -> str:
    """``controller 3``, ``controllers 3, 4``."""
    return f"controller{'' if len(node_ids) == 1 else 's'} {', '.join(map(str, node_ids))}"


UNREGISTER_WHY = "stopped, and no voter: a registration holds back feature upgrades"


def plan_text(plan: VoterPlan, requested: Sequence[int] = ()) -> str:
    """The plan as printed before anything changes (``requested``: the wanted ids, shown while the
    plan cannot resolve them yet)."""
    if plan.desired or not requested:
        desired = voter_names(plan.desired, plan.current)
    else:
        desired = ", ".join(map(str, sorted(requested)))
    tolerance = f"{plan.fault_tolerance} now"
    if plan.steps:
        tolerance += f", {plan.steps[-1].fault_tolerance_after} after the change"
    lines = [
        f"Current voters:  {voter_names(plan.current, plan.desired)}",
        f"Desired voters:  {desired}",
        f"Fault tolerance: {tolerance}",
    ]
    if plan.waiting is not None:
        lines.append(f"Waiting: {plan.waiting}")
    if plan.steps:
        count = len(plan.steps)
        lines.append(f"Plan ({steps(count)}{', each committed before the next' if count > 1 else ''}):")
        for number, step in enumerate(plan.steps, 1):
            lines += [f"  {number}. {step.describe()}", f"     {step.why}"]
    elif plan.waiting is not None:
        lines.append("Plan: known once that holds")
    if plan.unregister:
        head = "Then" if plan.steps else "Plan"
        lines.append(f"{head}: unregister {controllers(plan.unregister)} ({UNREGISTER_WHY})")
    lines += [f"Note: {note}" for note in plan.notes]
    return "\n".join(lines) + "\n"


def nothing_to_do_text(plan: VoterPlan) -> str:
    return f"Nothing to do: the voters are already {voter_names(plan.current)}\n"


OTHERS = "made meanwhile by another client or by a controller itself (controller.quorum.auto.join.enable)"


def done_text(result: ReconcileResult) -> str:
    """The last line of a run: the voters it left and how long its steps took. The run ends once the
    voters are as desired; changes it planned but did not make were made by someone else."""
    unregistered = f"Unregistered {controllers(result.unregistered)}\n" if result.unregistered else ""
    return _done_line(result) + unregistered


def _done_line(result: ReconcileResult) -> str:
    completed = result.completed
    final = result.final.current if result.final is not None else result.plan.desired
    if not completed:
        needed = not result.plan.steps and result.plan.waiting is None
        why = "no step was needed" if needed else f"no step was sent: the changes were {OTHERS}"
        return f"Done: the voters are now {voter_names(final)} ({why})\n"
    last = completed[-1].step
    seconds = sum(outcome.seconds for outcome in completed)
    committed = f"{steps(len(completed))} committed in {seconds:.2f} s"
    if result.final is not None and last.voters_after != final:
        return f"Done: the voters are now {voter_names(final)} ({committed}, the others {OTHERS})\n"
    return (
        f"Done: the voters are now {voter_names(last.voters_after)}, fault tolerance "
        f"{last.fault_tolerance_after} ({committed})\n"
    )


def completed_text(completed: Sequence[StepOutcome]) -> str:
    if not completed:
        return "no step was completed"
    return "completed: " + "; ".join(outcome.step.describe() for outcome in completed)


def _voters_json(keys: Collection[VoterKey]) -> list[dict[str, Any]]:
    from kafka_admin_kraft.values import voter_order

    return [{"node_id": node_id, "directory_id": str(directory)}
            for node_id, directory in sorted(keys, key=voter_order)]


def _step_json(step: VoterStep) -> dict[str, Any]:
    return {"action": step.action, "node_id": step.node_id, "directory_id": str(step.directory_id)}


def plan_json(plan: VoterPlan) -> dict[str, Any]:
    return {
        "current_voters": _voters_json(plan.current),
        "desired_voters": _voters_json(plan.desired),
        "fault_tolerance": plan.fault_tolerance,
        "waiting": plan.waiting,
        "notes": list(plan.notes),
        "unregister": list(plan.unregister),
        "steps": [
            {**_step_json(step), "why": step.why, "fault_tolerance_after": step.fault_tolerance_after}
            for step in plan.steps
        ],
    }


def result_json(
    plan: VoterPlan | None,
    completed: Sequence[StepOutcome],
    dry_run: bool,
    error: str | None = None,
    unregistered: Sequence[int] = (),
) -> dict[str, Any]:
    """``{plan: {current_voters, desired_voters, fault_tolerance, waiting, notes, unregister: [node
    id], steps: [{action, node_id, directory_id, why, fault_tolerance_after}]} or null (refused before
    planning), completed: [{action, node_id, directory_id, seconds}], unregistered: [node id], changed,
    dry_run, error (null on success)}``."""
    return {
        "plan": plan_json(plan) if plan is not None else None,
        "completed": [{**_step_json(o.step), "seconds": round(o.seconds, 3)} for o in completed],
        "unregistered": list(unregistered),
        "changed": bool(completed or unregistered),
        "dry_run": dry_run,
        "error": error,
    }


def failure_text(exc: Exception, completed: Sequence[StepOutcome]) -> str:
    """One line: what went wrong, and which steps were committed before it."""
    from kafka_admin_kraft.errors import VoterChangeError, VoterChangeRefusedError, VoterChangeTimeoutError

    if isinstance(exc, VoterChangeRefusedError):
        return f"Voter change refused: {exc}"
    if isinstance(exc, VoterChangeTimeoutError):
        return f"Voter change timed out: {exc}"
    if isinstance(exc, VoterChangeError):  # its message names the completed steps already
        return f"Voter change failed: {exc}"
    return f"{error_text(exc)} ({completed_text(completed)})"
