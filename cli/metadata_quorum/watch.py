"""`kafka-metadata-quorum watch`: check the quorum's health again and again, report what changes, and
alert webhooks when the status does.

Each check is ``Admin.check_quorum``, fed the previous result so that a pending voter change is timed
across checks; ``events`` turns consecutive results into events. A failover or an unreachable
quorum is just more events: the loop goes on until ``--count`` checks are done, Ctrl-C or SIGTERM,
and then exits 0.
"""

from __future__ import annotations

import queue
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING, Any, Protocol

import click

from .. import output
from .._click import KafkaCommand
from ..admin_options import connect, target
from .health_options import HEALTH_OPTIONS, threshold_options, thresholds

if TYPE_CHECKING:
    from rich.live import Live

    from kafka_admin_kraft.admin import Admin
    from kafka_admin_kraft.health import HealthThresholds, QuorumHealth

    from .alerts import WebhookSender
    from .events import Event

EXACT_ONLY = ["--interval-ms", "--webhook", "--webhook-timeout-ms", "--count", "--output", *HEALTH_OPTIONS]
RECENT_EVENTS = 10
"""Events the live view lists."""
STOP_GRACE_S = 3.0
"""How long alerts still queued at the stop may take to go out."""
CHECK_SLACK_MS = 1000
"""A check may take this much longer than the probe timeout (DescribeQuorum and DescribeCluster)."""


class View(Protocol):
    def show(self, health: QuorumHealth) -> None: ...

    def emit(self, event: Event) -> None: ...


class JsonLines:
    """One JSON object per event and line, flushed at once (for log shipping)."""

    def show(self, health: QuorumHealth) -> None:
        pass

    def emit(self, event: Event) -> None:
        import json  # on use: the tool's other commands load this module too

        output.write(json.dumps(event) + "\n")


class TextLines:
    """One line per event for people, when ``--output text`` is asked for without a terminal."""

    def show(self, health: QuorumHealth) -> None:
        pass

    def emit(self, event: Event) -> None:
        from .events import describe, timestamp

        output.write(f"{timestamp(event['time_ms'])} {event['event']}: {describe(event)}\n")


class LiveView:
    """The latest check and the recent events, redrawn in place on the terminal."""

    def __init__(self, live: Live) -> None:
        self.live = live
        self.health: QuorumHealth | None = None
        self.recent: deque[Event] = deque(maxlen=RECENT_EVENTS)

    def show(self, health: QuorumHealth) -> None:
        self.health = health
        self._draw()

    def emit(self, event: Event) -> None:
        self.recent.append(event)
        self._draw()

    def _draw(self) -> None:
        from .events import live_view

        if self.health is not None:
            self.live.update(live_view(self.health, list(self.recent)), refresh=True)


@contextmanager
def _view(output_format: str | None) -> Iterator[View]:
    """A live view on a terminal unless ``--output json``; otherwise lines (JSON unless ``--output text``)."""
    if output_format != "json" and sys.stdout.isatty():
        from rich.console import Console
        from rich.live import Live
        from rich.text import Text

        with Live(Text("Checking the quorum..."), console=Console(), auto_refresh=False) as live:
            yield LiveView(live)
    elif output_format == "text":
        yield TextLines()
    else:
        yield JsonLines()


@contextmanager
def _sigterm_stops() -> Iterator[None]:
    """SIGTERM stops the watch as Ctrl-C does (a KeyboardInterrupt), while the loop runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _check(admin: Admin, limits: HealthThresholds, probe: bool, previous: QuorumHealth | None, connect: str,
           timeout: float) -> QuorumHealth:
    """One check; a client error the SDK lets through is an unreadable quorum, not the end of the watch."""
    from kafka_admin_kraft.errors import KafkaAdminError
    from kafka_admin_kraft.health import FindingCode, Severity, unreachable

    try:
        return admin.check_quorum(thresholds=limits, probe=probe, previous=previous, connect=connect,
                                  timeout=timeout)
    except KafkaAdminError as exc:
        return unreachable(FindingCode.QUORUM_UNREACHABLE, f"cannot read the quorum: {exc}",
                           int(time.time() * 1000), Severity.UNKNOWN)


def _emit_reports(reports: queue.SimpleQueue[Event], view: View, until: float | None = None) -> None:
    """Show the webhook outcomes already in, then those that come in until the monotonic time ``until``."""
    while True:
        left = 0.0 if until is None else until - time.monotonic()
        try:
            event = reports.get(timeout=left) if left > 0 else reports.get_nowait()
        except queue.Empty:
            return
        view.emit(event)


def _loop(admin: Admin, view: View, sender: WebhookSender | None, reports: queue.SimpleQueue[Event], *,
          limits: HealthThresholds, probe: bool, fix: str, interval: float, count: int | None) -> None:
    """Check every ``interval`` seconds (``count`` times, or until interrupted); alert on the first check
    when it is not OK, then on every status change."""
    from kafka_admin_kraft.health import HealthStatus

    from .alerts import alert_document
    from .events import first_events, next_events

    timeout = max(interval, (limits.probe_timeout_ms + CHECK_SLACK_MS) / 1000)
    due = time.monotonic()
    health = _check(admin, limits, probe, None, fix, timeout)
    facts, events = first_events(health)
    _show(view, health, events)
    if sender is not None and health.status is not HealthStatus.OK:
        sender.send(alert_document(health, None))
    checks = 1
    while count is None or checks < count:
        due = max(due + interval, time.monotonic())
        _emit_reports(reports, view, until=due)
        previous = health
        health = _check(admin, limits, probe, previous, fix, timeout)
        checks += 1
        facts, events = next_events(facts, health)
        _show(view, health, events)
        if sender is not None and health.status is not previous.status:
            sender.send(alert_document(health, previous.status))


def _show(view: View, health: QuorumHealth, events: list[Event]) -> None:
    view.show(health)
    for event in events:
        view.emit(event)


def _webhook_urls(ctx: click.Context, param: click.Parameter, urls: tuple[str, ...]) -> tuple[str, ...]:
    """Refuse a URL no alert could reach at start, not at the first delivery."""
    if urls:
        from .alerts import url_problem

        for number, url in enumerate(urls, start=1):
            problem = url_problem(url)
            if problem is not None:
                raise click.BadParameter(f"URL {number}: {problem}" if len(urls) > 1 else problem, ctx, param)
    return urls


@click.command("watch", cls=KafkaCommand, exact_only=EXACT_ONLY)
@threshold_options
@click.option(
    "--interval-ms",
    type=click.IntRange(min=100),
    default=2_000,
    show_default=True,
    help="How often to check. A check may take up to this long (at least the probe timeout plus a "
    "second); a late one is followed at once by the next.",
)
@click.option(
    "--webhook",
    "webhooks",
    multiple=True,
    metavar="URL",
    callback=_webhook_urls,
    help="POST a JSON alert here on every status change, recovery included (repeatable). Its 'text' "
    "field suits Slack-compatible incoming webhooks.",
)
@click.option(
    "--webhook-timeout-ms",
    type=click.IntRange(min=1),
    default=5_000,
    show_default=True,
    help="How long each webhook request may take in all, from connecting to the end of the answer; a "
    "failed one is tried up to 3 times in all.",
)
@click.option(
    "--count",
    type=click.IntRange(min=1),
    default=None,
    help="Stop after this many checks (default: run until Ctrl-C or SIGTERM).",
)
@click.option(
    "--output",
    "output_format",
    type=click.Choice(output.OUTPUT_FORMATS),
    default=None,
    help="json: one JSON event per line; text: the live view on a terminal, else one line per event. "
    "Default: the live view on a terminal, else JSON lines.",
)
@click.pass_context
def watch(
    ctx: click.Context,
    /,
    interval_ms: int,
    webhooks: tuple[str, ...],
    webhook_timeout_ms: int,
    count: int | None,
    output_format: str | None,
    **options: Any,
) -> None:
    """Watch the quorum's health: report each change (status, leader, voters, lagging voters, lost
    connection) as it happens, and alert webhooks when the status changes. Exits 0 when stopped
    (Ctrl-C, SIGTERM, or after --count checks), whatever the quorum's status.

    \b
    Examples:
      kafka-metadata-quorum --bootstrap-controller localhost:9093 watch
      kafka-metadata-quorum --bootstrap-controller localhost:9093 watch --output json >> quorum-events.log
      kafka-metadata-quorum --bootstrap-controller localhost:9093 watch \\
          --webhook https://hooks.slack.com/services/T000/B000/XXXX
    """
    fix = target(ctx).connect_options()
    limits = thresholds(options)
    probe = not options.pop("no_probe")
    _, admin = connect(ctx)
    reports: queue.SimpleQueue[Event] = queue.SimpleQueue()
    try:
        with _sigterm_stops(), admin, _view(output_format) as view:
            sender = None
            if webhooks:
                from .alerts import WebhookSender

                sender = WebhookSender(webhooks, timeout=webhook_timeout_ms / 1000, report=reports.put)
            try:
                _loop(admin, view, sender, reports, limits=limits, probe=probe, fix=fix,
                      interval=interval_ms / 1000, count=count)
            finally:
                if sender is not None:
                    sender.close(STOP_GRACE_S)
                _emit_reports(reports, view)
    except KeyboardInterrupt:
        pass
