"""`kafka-metadata-quorum watch`'s loop without a server: a scripted client, a recording view and
alert sender."""

from __future__ import annotations

import queue
from typing import Any

import pytest

from kafka_admin_kraft.errors import AuthenticationError
from kafka_admin_kraft.health import HealthThresholds, QuorumHealth
from kafka_admin_kraft_cli.metadata_quorum.events import Event
from kafka_admin_kraft_cli.metadata_quorum.watch import _loop
from tools.metadata_quorum.quorum_util import NOWHERE, PROG, parse_error, run
from tools.metadata_quorum.test_events import CONNECT, NOW, check, lost


class ScriptedAdmin:
    """Stands in for ``Admin``: answers each ``check_quorum`` with the next scripted result (or error)."""

    def __init__(self, *results: QuorumHealth | Exception) -> None:
        self.results = list(results)
        self.calls: list[dict[str, Any]] = []

    def check_quorum(self, **options: Any) -> QuorumHealth:
        self.calls.append(options)
        result = self.results.pop(0)
        if isinstance(result, Exception):
            raise result
        return result


class Recorder:
    """A view that keeps what it is given."""

    def __init__(self) -> None:
        self.shown: list[QuorumHealth] = []
        self.events: list[Event] = []

    def show(self, health: QuorumHealth) -> None:
        self.shown.append(health)

    def emit(self, event: Event) -> None:
        self.events.append(event)


class Alerts:
    def __init__(self) -> None:
        self.documents: list[dict[str, Any]] = []

    def send(self, document: dict[str, Any]) -> None:
        self.documents.append(document)


def test_the_loop_alerts_once_per_status_change_and_survives_client_errors() -> None:
    script = [check(lagging=(3,), at=NOW), check(lagging=(3,), at=NOW + 1), check(at=NOW + 2),
              check(at=NOW + 3), AuthenticationError("127.0.0.1:9093", "bad password"), lost(NOW + 5)]
    admin = ScriptedAdmin(*script)
    view, alerts = Recorder(), Alerts()
    reports: queue.SimpleQueue[Event] = queue.SimpleQueue()
    delivered = {"time_ms": NOW, "event": "webhook_delivered", "url": "http://127.0.0.1:9/...", "webhook": 1,
                 "status": "WARNING", "http_status": 200, "attempts": 1}
    reports.put(delivered)
    _loop(admin, view, alerts, reports, limits=HealthThresholds(probe_timeout_ms=700),
          probe=False, fix=CONNECT, interval=0.0, count=len(script))

    assert [(d["previous_status"], d["status"]) for d in alerts.documents] == [
        (None, "WARNING"), ("WARNING", "OK"), ("OK", "UNKNOWN")]
    assert alerts.documents[1]["event"] == "recovered"
    assert [e["event"] for e in view.events] == [
        "started", "replica_lagging", "webhook_delivered", "status_changed", "replica_caught_up",
        "connection_lost", "status_changed"]
    assert view.events[2] is delivered
    assert [h.status.name for h in view.shown] == ["WARNING", "WARNING", "OK", "OK", "UNKNOWN", "UNKNOWN"]
    assert "bad password" in view.shown[4].findings[0].message
    # Each check gets the previous result, the fix commands' connection options and a bounded time.
    assert [c["previous"] for c in admin.calls] == [None, *view.shown[:-1]]
    assert all(c["connect"] == CONNECT and c["timeout"] == 1.7 and c["probe"] is False for c in admin.calls)


@pytest.mark.parametrize(("urls", "message"), [
    (["http://[::1"], "not a valid URL (Invalid IPv6 URL); expected http(s)://HOST[:PORT]/PATH"),
    (["file:///etc/passwd"], "a webhook URL must start with http:// or https://, not file:"),
    ([""], "a webhook URL must start with http:// or https://"),
    (["http://127.0.0.1:9/hook", "http://127.0.0.1:99999/hook"],
     "URL 2: not a valid URL (Port out of range 0-65535); expected http(s)://HOST[:PORT]/PATH"),
])
def test_a_webhook_url_no_alert_could_reach_is_a_parse_error_at_start(urls: list[str], message: str) -> None:
    webhooks = [arg for url in urls for arg in ("--webhook", url)]
    result = run("--bootstrap-controller", NOWHERE, "watch", "--count", "1", *webhooks)
    parse_error(result, f"Invalid value for '--webhook': {message}", f"{PROG} watch")
