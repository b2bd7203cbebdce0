"""`kafka-metadata-quorum reconcile`, `scale` and `replace-controller`: guided voter changes.

Each command plans first (``Admin.reconcile_voters`` / ``Admin.replace_controller`` with ``dry_run``),
prints the plan, asks before changing anything, then carries it out one committed change at a time
in the order ``kafka_admin_kraft.voters`` plans. A run that stops half-way says which steps were
committed; run the same command again to finish (it plans from what the quorum then is).

Voter entries (``--voters``, ``--add``): ``id``, ``id@directory-id``, or ``id@host:port:directory-id``
(Kafka's ``--initial-controllers`` syntax; the endpoint is named after ``--controller-listener``,
by default the first listener of the voters' endpoints). ``--controller-config FILE`` describes a new
controller by its properties file instead (node id, directory id, endpoints, as ``add-controller``
reads them); without either, the executor takes the endpoint of a registered controller.

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
step); ``--dry-run`` ends with ``Dry run: no change made.``; a quorum already as desired prints only
``Nothing to do: the voters are already 1, 2, 3``.

Progress goes to stderr: a spinner on a terminal, else one line per step, begun when it is sent and
finished when it commits, ``Step 1/2: Add voter 2 (directory id <id>) ... committed in 0.41 s``, and
``Step 1/2: waiting: <reason>`` each time the reason changes. Without ``--yes`` the command asks on
a terminal and refuses without one. Every failure is one line on stderr naming the committed steps,
exit status 1 (130 on Ctrl-C). ``--output json`` prints one document instead of the text (see
``result_json``).

Nothing here imports the SDK at module level (the tool's start-up stays fast).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from .. import output
from .._click import KafkaCommand
from ..admin_options import JAVA_INT, connect, error_text, read_properties_file, target
from .controller_identity import controller_identity
from .health_options import HEALTH_OPTIONS, threshold_options, thresholds

if TYPE_CHECKING:
    from rich.status import Status

    from kafka_admin_kraft.admin import Admin
    from kafka_admin_kraft.models import QuorumInfo
    from kafka_admin_kraft.voters import (
        DesiredVoter,
        Progress,
        ReconcileResult,
        StepOutcome,
        VoterKey,
        VoterPlan,
        VoterStep,
    )

    Execute = Callable[[bool, Callable[[Progress], None] | None], ReconcileResult]
    """Plan (``True``: dry run) or carry out the change, reporting to the progress callback."""

F = TypeVar("F", bound=Callable[..., object])
SYNTAX = "<id>, <id>@<directory-id> or <id>@<host>:<port>:<directory-id>"
THRESHOLDS = [option for option in HEALTH_OPTIONS if option != "--no-probe"]
"""A voter change always probes the nodes: an unreachable voter counts as failed when planning."""
COMMON = ["--dry-run", "--yes", "--output", "--step-timeout-ms", *THRESHOLDS]


class VoterSpecError(ValueError):
    """A voter entry or list that cannot be used; the message is the whole error line."""


@dataclass(frozen=True)
class VoterEntry:
    """One voter as given on the command line."""

    node_id: int
    directory_id: str | None = None
    host: str | None = None
    port: int | None = None


def _node_id(text: str, entry: str, option: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) >= 2**31:
        raise VoterSpecError(
            f"Invalid {option} entry '{entry}': '{text}' is not a node id; expected {SYNTAX}"
        )
    return int(text)


def _directory_id(text: str, entry: str, option: str) -> str:
    from kafka_admin_kraft.protocol.primitives import Uuid

    try:
        directory = Uuid.from_string(text)
    except ValueError:
        raise VoterSpecError(
            f"Invalid {option} entry '{entry}': '{text}' is not a directory id (22 base64 characters, "
            "directory.id in the controller's meta.properties)"
        ) from None
    if directory.is_reserved():
        raise VoterSpecError(f"Invalid {option} entry '{entry}': {text} is a reserved directory id")
    return str(directory)


def parse_entry(text: str, option: str = "--voters") -> VoterEntry:
    """``id``, ``id@directory-id`` or ``id@host:port:directory-id`` (the endpoint form is parsed as
    ``kafka-storage format --initial-controllers`` parses it)."""
    entry = text.strip()
    head, at, rest = entry.partition("@")
    node_id = _node_id(head, entry, option)
    if not at:
        return VoterEntry(node_id)
    if ":" not in rest and not rest.startswith("["):
        return VoterEntry(node_id, _directory_id(rest, entry, option))
    from kafka_admin_kraft.storage import parse_initial_controllers

    try:
        (parsed,) = parse_initial_controllers(entry)
    except ValueError as exc:
        raise VoterSpecError(f"Invalid {option} entry '{entry}': {exc} Expected {SYNTAX}") from None
    return VoterEntry(node_id, str(parsed.directory_id), parsed.host, parsed.port)


def parse_entries(values: Iterable[str], option: str = "--voters") -> list[VoterEntry]:
    """The entries of a repeatable, comma-separated option; an id may appear once."""
    entries = [parse_entry(item, option) for value in values for item in value.split(",") if item.strip()]
    ids = [entry.node_id for entry in entries]
    twice = sorted({node_id for node_id in ids if ids.count(node_id) > 1})
    if twice:
        raise VoterSpecError(
            f"Invalid {option}: node id {', '.join(map(str, twice))} is given more than once"
        )
    return entries


def scaled(
    current: Sequence[int], add: Sequence[VoterEntry], remove: Sequence[VoterEntry]
) -> list[VoterEntry]:
    """The current voters plus ``add`` (an added id that votes already keeps its place, with the
    directory id given) minus ``remove`` (node ids of current voters)."""
    for entry in remove:
        if entry.directory_id is not None:
            raise VoterSpecError(f"Invalid --remove entry '{entry.node_id}@...': --remove takes node ids")
        if entry.node_id not in current:
            voters = ", ".join(map(str, current)) or "none"
            raise VoterSpecError(f"Node {entry.node_id} is not a voter (the voters are {voters})")
    both = sorted({e.node_id for e in add} & {e.node_id for e in remove})
    if both:
        raise VoterSpecError(f"Node id {', '.join(map(str, both))} is given to both --add and --remove")
    added = {entry.node_id: entry for entry in add}
    removed = {entry.node_id for entry in remove}
    kept = [added.pop(node_id, VoterEntry(node_id)) for node_id in current if node_id not in removed]
    return kept + list(added.values())


def desired_voters(entries: Sequence[VoterEntry], listener: str | None) -> list[DesiredVoter]:
    """What the SDK takes; ``listener`` names the endpoints given (needed only when one is)."""
    from kafka_admin_kraft.models import Endpoint
    from kafka_admin_kraft.voters import DesiredVoter

    voters = []
    for entry in entries:
        endpoints: tuple[Endpoint, ...] = ()
        if entry.host is not None and entry.port is not None:
            if listener is None:
                raise VoterSpecError(
                    "The voters' listener name is not known (the quorum lists no endpoints): give "
                    "--controller-listener"
                )
            try:
                endpoints = (Endpoint(listener=listener, host=entry.host, port=entry.port),)
            except ValueError as exc:
                raise VoterSpecError(f"Invalid endpoint of voter {entry.node_id}: {exc}") from None
        voters.append(DesiredVoter(entry.node_id, entry.directory_id, endpoints))
    return voters


# --------------------------------------------------------------------------- rendering


def voter_names(keys: Collection[VoterKey], other: Collection[VoterKey] = ()) -> str:
    """``1, 2, 3``; an id that ``other`` holds under another directory id as ``3@<directory id>``."""
    moved = {node_id for node_id, directory in keys} & {node_id for node_id, _ in other}
    moved -= {node_id for node_id, directory in keys if (node_id, directory) in other}
    names = [
        f"{node_id}@{directory}" if node_id in moved else str(node_id) for node_id, directory in sorted(keys)
    ]
    return ", ".join(names) or "none"


def steps(count: int) -> str:
    return f"{count} step{'' if count == 1 else 's'}"


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
    return "\n".join(lines) + "\n"


def nothing_to_do_text(plan: VoterPlan) -> str:
    return f"Nothing to do: the voters are already {voter_names(plan.current)}\n"


def done_text(result: ReconcileResult) -> str:
    """The last line of a run: the voters it left and how long the steps took."""
    completed = result.completed
    if not completed:
        return f"Done: the voters are now {voter_names(result.plan.desired)} (no step was needed)\n"
    last = completed[-1].step
    seconds = sum(outcome.seconds for outcome in completed)
    return (
        f"Done: the voters are now {voter_names(last.voters_after)}, fault tolerance "
        f"{last.fault_tolerance_after} ({steps(len(completed))} committed in {seconds:.2f} s)\n"
    )


def completed_text(completed: Sequence[StepOutcome]) -> str:
    if not completed:
        return "no step was completed"
    return "completed: " + "; ".join(outcome.step.describe() for outcome in completed)


def _voters_json(keys: Collection[VoterKey]) -> list[dict[str, Any]]:
    return [{"node_id": node_id, "directory_id": directory} for node_id, directory in sorted(keys)]


def _step_json(step: VoterStep) -> dict[str, Any]:
    return {"action": step.action, "node_id": step.node_id, "directory_id": step.directory_id}


def plan_json(plan: VoterPlan) -> dict[str, Any]:
    return {
        "current_voters": _voters_json(plan.current),
        "desired_voters": _voters_json(plan.desired),
        "fault_tolerance": plan.fault_tolerance,
        "waiting": plan.waiting,
        "steps": [
            {**_step_json(step), "why": step.why, "fault_tolerance_after": step.fault_tolerance_after}
            for step in plan.steps
        ],
    }


def result_json(
    plan: VoterPlan | None, completed: Sequence[StepOutcome], dry_run: bool, error: str | None = None
) -> dict[str, Any]:
    """``{plan: {current_voters, desired_voters, fault_tolerance, waiting, steps: [{action, node_id,
    directory_id, why, fault_tolerance_after}]} or null (refused before planning), completed:
    [{action, node_id, directory_id, seconds}], changed, dry_run, error (null on success)}``."""
    return {
        "plan": plan_json(plan) if plan is not None else None,
        "completed": [{**_step_json(o.step), "seconds": round(o.seconds, 3)} for o in completed],
        "changed": bool(completed),
        "dry_run": dry_run,
        "error": error,
    }


class StepReporter:
    """The progress callback: a spinner on a terminal, else a line per committed step (and per new
    reason to wait), written to ``stream``. Also records the steps committed so far."""

    def __init__(self, stream: IO[str], *, terminal: bool) -> None:
        self.stream = stream
        self.terminal = terminal
        self.committed: list[tuple[VoterStep, float]] = []
        self._status: Status | None = None
        self._started = 0.0
        self._waiting = ""
        self._open_line = False

    def __call__(self, event: Progress) -> None:
        done = len(self.committed)
        number = f"Step {done + 1}/{done + max(1, len(event.plan.steps))}"
        if event.kind == "waiting":
            if event.message != self._waiting:
                self._waiting = event.message
                self._show(f"{number}: waiting: {event.message}", line=True)
        elif event.kind == "step" and event.step is not None:
            self._waiting = ""
            self._show(f"{number}: {event.step.describe()} ...", line=False)
            self._started = time.monotonic()
        elif event.kind == "committed" and event.step is not None:
            seconds = time.monotonic() - self._started
            self.committed.append((event.step, seconds))
            text = f"committed in {seconds:.2f} s"
            if self.terminal or not self._open_line:
                self._print(f"{number}: {event.step.describe()} ... {text}")
            else:
                self.stream.write(f" {text}\n")
                self.stream.flush()
                self._open_line = False

    def _show(self, text: str, *, line: bool) -> None:
        if self.terminal:
            if self._status is None:
                from rich.console import Console

                self._status = Console(file=self.stream).status(text)
                self._status.start()
            else:
                self._status.update(text)
            return
        self.end_line()
        self.stream.write(text + ("\n" if line else ""))
        self.stream.flush()
        self._open_line = not line

    def _print(self, text: str) -> None:
        if self._status is not None:
            self._status.console.print(text, markup=False, highlight=False, soft_wrap=True)
        else:
            self.end_line()
            self.stream.write(text + "\n")
            self.stream.flush()

    def end_line(self) -> None:
        """Finish a step line left open by a step that did not commit."""
        if self._open_line:
            self.stream.write("\n")
            self.stream.flush()
            self._open_line = False

    def close(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None
        self.end_line()


# --------------------------------------------------------------------------- the shared flow


def _stop(
    error: str,
    plan: VoterPlan | None,
    completed: Sequence[StepOutcome],
    dry_run: bool,
    output_format: str,
    code: int = 1,
) -> NoReturn:
    if output_format == "json":
        output.write_json(result_json(plan, completed, dry_run, error))
    output.fail(error, code)


def _outcomes(reporter: StepReporter) -> list[StepOutcome]:
    from kafka_admin_kraft.voters import StepOutcome

    return [StepOutcome(step, seconds) for step, seconds in reporter.committed]


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


def _confirmed(plan: VoterPlan, output_format: str) -> str | None:
    """None when the change may go ahead, else why not (no terminal to ask on, or the answer)."""
    if not sys.stdin.isatty():
        return "No terminal to confirm on: add --yes to change voters from a script (no change made)"
    if output_format == "json":
        sys.stderr.write(plan_text(plan))
    count = len(plan.steps)
    question = f"Change the voters in {steps(count)}?" if count else "Change the voters?"
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
        output.write_json(result_json(plan, result.completed, False))
    else:
        output.write(done_text(result))


def voter_options(command: F) -> F:
    """``--dry-run``, ``--yes``, ``--output``, ``--step-timeout-ms`` and the health thresholds."""
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
    ]
    for option in reversed(options):
        command = option(command)
    return threshold_options(command)


def without_no_probe(command: click.Command) -> click.Command:
    """Drop ``threshold_options``' ``--no-probe`` (see ``THRESHOLDS``)."""
    command.params = [param for param in command.params if param.name != "no_probe"]
    return command


def _timeout(step_timeout_ms: int | None) -> float | None:
    return None if step_timeout_ms is None else step_timeout_ms / 1000


def _listener(admin: Admin, given: str | None, entries: Sequence[VoterEntry]) -> str | None:
    """``--controller-listener``, or the voters' first listener when an entry has an endpoint."""
    if given is not None:
        return given.strip().upper()
    if not any(entry.host is not None for entry in entries):
        return None
    from kafka_admin_kraft.voters import voter_listener

    return voter_listener(_describe(admin))


def _describe(admin: Admin) -> QuorumInfo:
    from kafka_admin_kraft.errors import KafkaAdminError

    try:
        return admin.describe_metadata_quorum()
    except KafkaAdminError as exc:
        output.fail(f"{error_text(exc)} (no step was completed)")


def configured_voters(paths: Sequence[str]) -> dict[int, DesiredVoter]:
    """The controllers described by ``--controller-config`` files, by node id: node id, directory id
    and endpoints read as ``add-controller`` reads its ``--command-config``."""
    from kafka_admin_kraft.voters import DesiredVoter

    found: dict[int, DesiredVoter] = {}
    for path in paths:
        identity = controller_identity(read_properties_file(path))
        if identity.node_id in found:
            output.fail(f"Controller {identity.node_id} is described by more than one --controller-config")
        found[identity.node_id] = DesiredVoter(identity.node_id, identity.directory_id, identity.endpoints)
    return found


def with_configured(
    desired: Sequence[DesiredVoter], configured: dict[int, DesiredVoter], option: str
) -> list[DesiredVoter]:
    """``desired`` with each configured controller's directory id and endpoints; a controller given
    both ways, or configured but not asked for, is an error."""
    ids = {wanted.node_id for wanted in desired}
    stray = sorted(set(configured) - ids)
    if stray:
        raise VoterSpecError(
            f"--controller-config describes controller {', '.join(map(str, stray))}, which {option} "
            "does not name"
        )
    merged = []
    for wanted in desired:
        config = configured.get(wanted.node_id)
        if config is not None and (wanted.directory_id is not None or wanted.endpoints):
            raise VoterSpecError(
                f"Controller {wanted.node_id} is given both in {option} and by --controller-config"
            )
        merged.append(config or wanted)
    return merged


def _reconcile_to(
    admin: Admin,
    entries: Sequence[VoterEntry],
    listener: str | None,
    options: dict[str, Any],
    configured: dict[int, DesiredVoter],
    option: str,
) -> None:
    limits = thresholds(options)
    try:
        desired = with_configured(desired_voters(entries, listener), configured, option)
    except VoterSpecError as exc:
        output.fail(str(exc))
    timeout = _timeout(options["step_timeout_ms"])

    def execute(dry_run: bool, progress: Callable[[Progress], None] | None) -> ReconcileResult:
        return admin.reconcile_voters(
            desired, dry_run=dry_run, thresholds=limits, progress=progress, timeout=timeout
        )

    change_voters(
        execute,
        [e.node_id for e in entries],
        dry_run=options["dry_run"],
        yes=options["yes"],
        output_format=options["output_format"],
    )


CONFIG_OPTION = click.option(
    "--controller-config",
    "controller_configs",
    multiple=True,
    metavar="FILE",
    help="A new controller's properties file (repeatable): its node id, its directory id from the "
    "meta.properties of its metadata.log.dir, and its controller endpoints, read as add-controller "
    "reads --command-config.",
)
LISTENER_OPTION = click.option(
    "--controller-listener",
    metavar="NAME",
    help="Listener name of the endpoints given as id@host:port:directory-id [default: the listener of "
    "the voters' endpoints]",
)


@without_no_probe
@click.command(
    "reconcile",
    cls=KafkaCommand,
    exact_only=["--voters", "--controller-listener", "--controller-config", *COMMON],
)
@click.option(
    "--voters",
    multiple=True,
    required=True,
    metavar="VOTERS",
    help=f"The voters wanted, comma-separated and/or repeated: {SYNTAX}.",
)
@LISTENER_OPTION
@CONFIG_OPTION
@voter_options
@click.pass_context
def reconcile(
    ctx: click.Context, /, voters: tuple[str, ...], controller_listener: str | None, **options: Any
) -> None:
    """Change the voters to exactly --voters, one committed change at a time: caught-up controllers
    are added first, then failed voters removed, healthy ones next and the leader last; a plan that
    would leave no majority to commit a change is refused. Run again after an interruption, it
    finishes what is left.

    \b
    Examples:
      kafka-metadata-quorum --bootstrap-controller localhost:9093 reconcile --voters 1,2,3 --dry-run
      kafka-metadata-quorum --bootstrap-controller localhost:9093 reconcile \\
          --voters 1,2@ctl2:9093:<directory id>,3@ctl3:9093:<directory id> --yes
    """
    try:
        entries = parse_entries(voters)
    except VoterSpecError as exc:
        output.fail(str(exc))
    configured = configured_voters(options.pop("controller_configs"))
    _, admin = connect(ctx)
    with admin:
        listener = _listener(admin, controller_listener, entries)
        _reconcile_to(admin, entries, listener, options, configured, "--voters")


@without_no_probe
@click.command(
    "scale",
    cls=KafkaCommand,
    exact_only=["--add", "--remove", "--controller-listener", "--controller-config", *COMMON],
)
@click.option(
    "--add", multiple=True, metavar="VOTERS", help=f"Controllers to add: {SYNTAX}, comma-separated."
)
@click.option("--remove", multiple=True, metavar="IDS", help="Node ids of voters to remove, comma-separated.")
@LISTENER_OPTION
@CONFIG_OPTION
@voter_options
@click.pass_context
def scale(
    ctx: click.Context,
    /,
    add: tuple[str, ...],
    remove: tuple[str, ...],
    controller_listener: str | None,
    **options: Any,
) -> None:
    """Add and/or remove voters: reconcile to the current voters plus --add (and each
    --controller-config's controller) minus --remove.

    \b
    Examples:
      kafka-metadata-quorum --bootstrap-controller localhost:9093 scale --add 4,5 --yes
      kafka-metadata-quorum --bootstrap-controller localhost:9093 scale \\
          --controller-config config/controller-4.properties --yes
      kafka-metadata-quorum --bootstrap-controller localhost:9093 scale --remove 2 --dry-run
    """
    if not add and not remove and not options["controller_configs"]:
        raise click.UsageError("one of the arguments --add --remove --controller-config is required", ctx)
    try:
        adds, removes = parse_entries(add, "--add"), parse_entries(remove, "--remove")
    except VoterSpecError as exc:
        output.fail(str(exc))
    configured = configured_voters(options.pop("controller_configs"))
    adds += [VoterEntry(node_id) for node_id in configured if node_id not in {e.node_id for e in adds}]
    _, admin = connect(ctx)
    with admin:
        quorum = _describe(admin)
        try:
            entries = scaled([v.replica_id for v in quorum.voters], adds, removes)
        except VoterSpecError as exc:
            output.fail(str(exc))
        from kafka_admin_kraft.voters import voter_listener

        listener = controller_listener.strip().upper() if controller_listener else voter_listener(quorum)
        _reconcile_to(admin, entries, listener, options, configured, "--add")


@without_no_probe
@click.command("replace-controller", cls=KafkaCommand, exact_only=["--controller-id", *COMMON])
@click.option(
    "--controller-id", type=JAVA_INT, required=True, help="Node id of the controller whose disk was replaced."
)
@voter_options
@click.pass_context
def replace_controller(ctx: click.Context, /, controller_id: int, **options: Any) -> None:
    """Swap in a controller's new disk: --command-config names the NEW controller's properties file
    (node.id, listeners, and metadata.log.dir whose meta.properties holds the new directory id), as
    for add-controller. Waits until the new incarnation fetches and is caught up, removes the old
    directory id from the voters, then adds the new one.

    \b
    Example:
      kafka-metadata-quorum --bootstrap-controller localhost:9093 \\
          --command-config config/controller-3.properties replace-controller --controller-id 3
    """
    properties, admin = connect(ctx)
    with admin:
        if target(ctx).command_config is None:
            output.fail(
                "You must supply the configuration file of the new controller when using replace-controller."
            )
        controller = controller_identity(properties)
        if controller.node_id != controller_id:
            output.fail(
                f"--controller-id {controller_id} differs from node.id {controller.node_id} in "
                f"{target(ctx).command_config}: is it the replaced controller's file?"
            )
        limits = thresholds(options)
        timeout = _timeout(options["step_timeout_ms"])

        def execute(dry_run: bool, progress: Callable[[Progress], None] | None) -> ReconcileResult:
            return admin.replace_controller(
                controller.node_id,
                controller.directory_id,
                endpoints=controller.endpoints,
                dry_run=dry_run,
                thresholds=limits,
                progress=progress,
                timeout=timeout,
            )

        change_voters(
            execute,
            (),
            dry_run=options["dry_run"],
            yes=options["yes"],
            output_format=options["output_format"],
        )
