"""`kafka-metadata-quorum check`: judge the quorum once and exit with the monitoring-plugin status.

The exit code is Nagios' (0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN), so the command drops into Nagios,
Icinga or a Kubernetes exec probe unchanged; the first line of the text is ``STATUS: summary``, which
is what those systems display. The rules themselves are ``kafka_admin_kraft.health_rules``: the command
runs them on the operation's plain answers and prints their plain result, so that it never imports
pydantic (the SDK's ``QuorumHealth`` is validated from the same result); the renderers take either.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from .. import output
from .._click import KafkaCommand
from ..admin_options import connect, target
from .health_options import HEALTH_OPTIONS, health_json, limits, threshold_options

if TYPE_CHECKING:
    from kafka_admin_kraft.health_rules import FindingView, HealthView

SEVERITY_WIDTH = len("CRITICAL")


def summary(health: HealthView) -> str:
    """The first line: ``STATUS: what the quorum looks like``, or why nothing could be read."""
    quorum = health.quorum
    if quorum is None:
        first = health.findings[0].message if health.findings else "the quorum was not read"
        return f"{health.status.name}: {first}"
    leader = f"leader {quorum.leader_id}" if quorum.leader_id >= 0 else "no leader"
    parts = [f"quorum of {len(quorum.voters)} voters", f"{leader} (epoch {quorum.leader_epoch})"]
    if quorum.high_watermark >= 0:
        parts.append(f"high watermark {quorum.high_watermark}")
    parts.append(f"fault tolerance {health.fault_tolerance}")
    return f"{health.status.name}: {', '.join(parts)}"


def _finding_lines(finding: FindingView, code_width: int) -> list[str]:
    message = finding.message
    if finding.directory_id is not None and str(finding.directory_id) not in message:
        message += f" (directory id {finding.directory_id})"
    lines = [f"{finding.severity.name:<{SEVERITY_WIDTH}}  {finding.code:<{code_width}}  {message}"]
    if finding.fix is not None:
        lines.append(" " * (SEVERITY_WIDTH + code_width + 4) + f"fix: {finding.fix}")
    return lines


def health_text(health: HealthView) -> str:
    """The summary line, then one line per finding, most severe first, each fix on the line below."""
    findings = health.findings[1:] if health.quorum is None else health.findings  # the summary says it
    width = max((len(f.code) for f in findings), default=0)
    lines = [summary(health)]
    for finding in findings:
        lines += _finding_lines(finding, width)
    return "\n".join(lines) + "\n"


@click.command("check", cls=KafkaCommand, exact_only=[*HEALTH_OPTIONS, "--timeout-ms", "--output"])
@threshold_options
@click.option(
    "--timeout-ms",
    type=click.IntRange(min=1),
    default=10_000,
    show_default=True,
    help="Deadline of the whole check; a quorum that has not answered by then is UNKNOWN.",
)
@output.output_option
@click.pass_context
def check(ctx: click.Context, /, timeout_ms: int, output_format: str, **options: Any) -> None:
    """Check the quorum's health once: leader, voters caught up and reachable, fault tolerance, stuck
    voter changes, replaced disks, feature levels, and the registrations that hold an upgrade back (a
    controller left registered after it left the voters, with --bootstrap-controller; a fenced
    broker, with --bootstrap-server). Prints one line per finding, most severe first, with the command
    that fixes it where there is one.

    \b
    Exit status (monitoring-plugin convention: Nagios, Icinga, Kubernetes probes):
      0 OK        healthy, or notices only (INFO findings)
      1 WARNING   e.g. a voter lags or is unreachable, no fault tolerance left
      2 CRITICAL  no leader, or no majority of voters caught up and reachable
      3 UNKNOWN   the quorum could not be reached at all
    Bad arguments and an unreadable --command-config exit with 1, as in Kafka's tools.

    \b
    Examples:
      kafka-metadata-quorum --bootstrap-controller localhost:9093 check
      kafka-metadata-quorum --bootstrap-server localhost:9092 check --no-probe --timeout-ms 5000
      kafka-metadata-quorum --bootstrap-controller localhost:9093 check --max-lag-ms 500 --output json
    """
    from kafka_admin_kraft.client.operations.check_quorum import check_quorum_answer

    given = limits(options)
    no_probe: bool = options.pop("no_probe")
    options_text = target(ctx).connect_options()
    _, admin = connect(ctx)
    with admin:
        health = admin.run(lambda core: check_quorum_answer(
            core, given, probe=not no_probe, previous=None, connect=options_text, timeout=timeout_ms / 1000
        ))
    if output_format == "json":
        output.write_json(health_json(health))
    else:
        output.write(health_text(health))
    raise SystemExit(health.exit_code)
