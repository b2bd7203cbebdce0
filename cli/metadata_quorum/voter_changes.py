"""What `reconcile`, `scale` and `replace-controller` share: their options and the run of a change.

Each command plans first (``Admin.reconcile_voters`` / ``Admin.replace_controller`` with ``dry_run``),
prints the plan (``voter_text``), asks before changing anything, then carries it out one committed
change at a time in the order ``kafka_admin_kraft.voters`` plans, its progress on stderr
(``voter_progress``), and unregisters the stopped controllers the plan lists once the voters are as
wanted (its rule 7; ``--keep-registrations`` keeps them). A run that stops half-way says which steps
were committed; run the same command again to finish (it plans from what the quorum then is). Without
``--yes`` the command asks on a terminal and refuses without one. Every failure is one line on stderr
naming the committed steps, exit status 1 (130 on Ctrl-C).

Nothing here imports the SDK at module level, nor the text and progress modules a run alone needs (the
tool's start-up stays fast).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from .. import output
from ..admin_options import error_text
from .health_options import HEALTH_OPTIONS, threshold_options, thresholds
from .voter_entries import ConfiguredController, VoterEntry, VoterSpecError, desired_voters, with_configured

if TYPE_CHECKING:
    from kafka_admin_kraft.admin import Admin
    from kafka_admin_kraft.models import QuorumInfo
    from kafka_admin_kraft.voters import Progress, ReconcileResult, StepOutcome, VoterPlan

    from .voter_progress import StepReporter

    Execute = Callable[[bool, Callable[[Progress], None] | None], ReconcileResult]
    """Plan (``True``: dry run) or carry out the change, reporting to the progress callback."""

F = TypeVar("F", bound=Callable[..., object])
UNPLANNED = ("--no-probe", "--fenced-broker-ms")
"""Health options the planner has no use for: a voter change always probes the nodes (an unreachable
voter counts as failed when planning), and it judges no brokers."""
THRESHOLDS = [option for option in HEALTH_OPTIONS if option not in UNPLANNED]
COMMON = ["--dry-run", "--yes", "--output", "--step-timeout-ms", "--keep-registrations", *THRESHOLDS]


def voter_options(command: F) -> F:
    """``--dry-run``, ``--yes``, ``--output``, ``--step-timeout-ms``, ``--keep-registrations`` and the
    health thresholds."""
    options = [
        click.option("--dry-run", is_flag=True, help="Print the plan and change nothing."),
        click.option(
            "--yes", is_flag=True, help="Do not ask before changing the voters (needed without a terminal)."
        ),
        output.output_option,
        click.option(
            "--step-timeout-ms",
            type=click.IntRange(min=1),
            help="How long each step may take, waiting for a new controller to catch up included "
            "[default: the client's default.api.timeout.ms, 60000]",
        ),
        click.option(
            "--keep-registrations",
            is_flag=True,
            help="Keep the registrations of the controllers that leave for good. By default, once the voters "
            "are as wanted, each stopped controller that is no voter (and not wanted) is unregistered, from "
            "metadata.version 4.4-IV2 on, so that its supported feature levels no longer hold back upgrades.",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return threshold_options(command)


def planning_thresholds(command: click.Command) -> click.Command:
    """Drop the ``threshold_options`` of ``UNPLANNED``."""
    unplanned = {option.removeprefix("--").replace("-", "_") for option in UNPLANNED}
    command.params = [param for param in command.params if param.name not in unplanned]
    return command


CONFIG_OPTION = click.option(
    "--controller-config",
    "controller_configs",
    multiple=True,
    metavar="FILE",
    help="A controller's properties file (repeatable): its node id, its directory id from the "
    "meta.properties of its metadata.log.dir, and its controller endpoints, read as add-controller "
    "reads --command-config. It may describe a voter being removed: one configured with "
    "controller.quorum.auto.join.enable=true would add itself back, and is refused while it runs.",
)
LISTENER_OPTION = click.option(
    "--controller-listener",
    metavar="NAME",
    help="Listener name of the endpoints given as id@host:port:directory-id [default: the listener of "
    "the voters' endpoints]",
)


def step_timeout(step_timeout_ms: int | None) -> float | None:
    """``--step-timeout-ms`` in seconds, as the SDK takes it (None: the client's default)."""
    return None if step_timeout_ms is None else step_timeout_ms / 1000


# --------------------------------------------------------------------------- the run


def _stop(
    error: str,
    plan: VoterPlan | None,
    completed: Sequence[StepOutcome],
    dry_run: bool,
    output_format: str,
    code: int = 1,
) -> NoReturn:
    from .voter_text import result_json

    if output_format == "json":
        output.write_json(result_json(plan, completed, dry_run, error))
    output.fail(error, code)


def _outcomes(reporter: StepReporter) -> list[StepOutcome]:
    from kafka_admin_kraft.voters import StepOutcome

    return [StepOutcome(step, seconds) for step, seconds in reporter.committed]


def _confirmed(plan: VoterPlan, output_format: str) -> str | None:
    """None when the change may go ahead, else why not (no terminal to ask on, or the answer)."""
    from .voter_text import controllers, plan_text, steps

    if not sys.stdin.isatty():
        return "No terminal to confirm on: add --yes to change voters from a script (no change made)"
    if output_format == "json":
        sys.stderr.write(plan_text(plan))
    count = len(plan.steps)
    question = f"Change the voters in {steps(count)}?" if count else "Change the voters?"
    if not count and plan.unregister:
        question = f"Unregister {controllers(plan.unregister)}?"
    try:
        if click.confirm(question, err=True):
            return None
    except click.Abort:
        sys.stderr.write("\n")
    return "Aborted: no change made"


def change_voters(
    execute: Execute, requested: Sequence[int], *, dry_run: bool, yes: bool, output_format: str
) -> None:
    """Plan, print, confirm, carry out, report: what the three commands share."""
    from kafka_admin_kraft.errors import KafkaAdminError, VoterChangeError
    from kafka_admin_kraft.voters import StepOutcome

    from .voter_progress import StepReporter
    from .voter_text import (
        completed_text,
        done_text,
        failure_text,
        nothing_to_do_text,
        plan_text,
        result_json,
    )

    try:
        plan = execute(True, None).plan
    except KafkaAdminError as exc:
        _stop(failure_text(exc, ()), None, (), dry_run, output_format)
    if plan.done:
        if output_format == "json":
            output.write_json(result_json(plan, (), dry_run))
        else:
            output.write(nothing_to_do_text(plan))
        return
    if output_format == "text":
        output.write(plan_text(plan, requested))
    if dry_run:
        if output_format == "json":
            output.write_json(result_json(plan, (), True))
        else:
            output.write("Dry run: no change made.\n")
        return
    refusal = None if yes else _confirmed(plan, output_format)
    if refusal is not None:
        _stop(refusal, plan, (), False, output_format)
    reporter = StepReporter(sys.stderr, terminal=sys.stderr.isatty())
    try:
        result = execute(False, reporter)
    except VoterChangeError as exc:
        reporter.close()
        done = [o for o in exc.completed if isinstance(o, StepOutcome)]
        _stop(failure_text(exc, done), plan, done, False, output_format)
    except KafkaAdminError as exc:
        reporter.close()
        _stop(failure_text(exc, _outcomes(reporter)), plan, _outcomes(reporter), False, output_format)
    except KeyboardInterrupt:
        reporter.close()
        done = _outcomes(reporter)
        _stop(
            f"Interrupted ({completed_text(done)}): run the command again to finish",
            plan,
            done,
            False,
            output_format,
            130,
        )
    reporter.close()
    if output_format == "json":
        output.write_json(result_json(plan, result.completed, False, unregistered=result.unregistered))
    else:
        output.write(done_text(result))


def describe_quorum(admin: Admin) -> QuorumInfo:
    """The quorum as the command finds it; a failure to read it ends the command before any step."""
    from kafka_admin_kraft.errors import KafkaAdminError

    try:
        return admin.describe_metadata_quorum()
    except KafkaAdminError as exc:
        output.fail(f"{error_text(exc)} (no step was completed)")


def reconcile_to(
    admin: Admin,
    entries: Sequence[VoterEntry],
    listener: str | None,
    options: dict[str, Any],
    configured: dict[int, ConfiguredController],
    option: str,
) -> None:
    """Change the voters to ``entries`` (with the ``--controller-config`` controllers filled in, ``option``
    naming where the entries came from): what ``reconcile`` and ``scale`` both come down to. A
    configured controller that ``entries`` leaves out must be a voter the change removes; the planner
    learns each configured controller's auto-join setting."""
    limits = thresholds(options)
    leaving = set(configured) - {entry.node_id for entry in entries}
    voters = {v.replica_id for v in describe_quorum(admin).voters} if leaving else set()
    try:
        desired = with_configured(desired_voters(entries, listener), configured, option, voters)
    except VoterSpecError as exc:
        output.fail(str(exc))
    timeout = step_timeout(options["step_timeout_ms"])
    auto_join = {node_id: config.auto_join for node_id, config in configured.items()}

    def execute(dry_run: bool, progress: Callable[[Progress], None] | None) -> ReconcileResult:
        return admin.reconcile_voters(
            desired, dry_run=dry_run, thresholds=limits, progress=progress, timeout=timeout,
            auto_join=auto_join, keep_registrations=options["keep_registrations"],
        )

    change_voters(
        execute,
        [e.node_id for e in entries],
        dry_run=options["dry_run"],
        yes=options["yes"],
        output_format=options["output_format"],
    )
