"""Webhook alerts of `kafka-metadata-quorum watch`: the document, and its delivery from a background
thread (fake HTTP with ``responses``, and once a real HTTP server on 127.0.0.1)."""

from __future__ import annotations

import json
import queue
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import requests
import responses

from kafka_admin_kraft.health import (
    HealthStatus,
    HealthThresholds,
    NodeProbe,
    QuorumHealth,
    Severity,
    assess,
    unreachable,
)
from kafka_admin_kraft.models import QuorumInfo, ReplicaState
from kafka_admin_kraft_cli.metadata_quorum.alerts import WebhookSender, alert_document, redact, url_problem
from kafka_admin_kraft_cli.metadata_quorum.health_options import health_json

NOW = 1_700_000_000_000
HOOK = "http://127.0.0.1:9/services/T000/B000/secret"
OTHER = "http://127.0.0.1:10/hook?token=secret"
DOCUMENT = {"text": "KRaft quorum x is WARNING (was OK)", "status": "WARNING"}


def quorum_health(*, down: tuple[int, ...] = (), even: bool = False) -> QuorumHealth:
    ids = (1, 2, 3, 4) if even else (1, 2, 3)
    states = tuple(ReplicaState(replica_id=v, replica_directory_id=f"{v}UPGy7wTRKuPIQbwYvvj6A",
                                log_end_offset=100, last_fetch_timestamp=NOW, last_caught_up_timestamp=NOW)
                   for v in ids)
    quorum = QuorumInfo(leader_id=1, leader_epoch=4, high_watermark=100, voters=states, observers=(),
                        nodes={}, api_version=3, committed_voters=states)
    probes = [NodeProbe(node_id=v, address=f"127.0.0.1:{9090 + v}", error="connection refused" if v in down
                        else None) for v in ids]
    return assess(quorum, probes, thresholds=HealthThresholds(), checked_at_ms=NOW,
                  connect="--bootstrap-controller 127.0.0.1:9091", cluster_id="MkU3OEVBNTcwNTJENDM2Qk")


class Reports:
    """The sender's ``report`` callback: events from its thread, waited for with a deadline."""

    def __init__(self) -> None:
        self.events: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()

    def __call__(self, event: dict[str, Any]) -> None:
        self.events.put(event)

    def next(self, timeout: float = 10) -> dict[str, Any]:
        return self.events.get(timeout=timeout)

    def none_left(self) -> bool:
        return self.events.empty()


def sender(reports: Reports, *urls: str, timeout: float = 2.0, backoff: float = 0.01) -> WebhookSender:
    return WebhookSender(urls or (HOOK,), timeout=timeout, report=reports, backoff=backoff)


def test_the_document_is_the_check_with_text_for_chats() -> None:
    health = quorum_health(down=(3,))
    document = alert_document(health, HealthStatus.OK)
    assert list(document)[:3] == ["text", "event", "previous_status"]
    assert (document["event"], document["previous_status"]) == ("status_changed", "OK")
    assert {k: v for k, v in document.items() if k not in ("text", "event", "previous_status")} == \
        health_json(health)
    assert document["text"].splitlines() == [
        "KRaft quorum MkU3OEVBNTcwNTJENDM2Qk is WARNING (was OK): leader 1, epoch 4, fault tolerance 0",
        "- VOTER_UNREACHABLE: voter 3 does not answer ApiVersions at 127.0.0.1:9093: connection refused",
        "- NO_FAULT_TOLERANCE: 2 of 3 voters are healthy: losing one more stops the quorum",
    ]
    json.dumps(document)


def test_recovery_first_sight_and_many_findings() -> None:
    recovered = alert_document(quorum_health(), HealthStatus.CRITICAL)
    assert recovered["event"] == "recovered" and recovered["status"] == "OK"
    assert recovered["text"] == ("KRaft quorum MkU3OEVBNTcwNTJENDM2Qk recovered: OK (was CRITICAL): "
                                 "leader 1, epoch 4, fault tolerance 1")
    first = alert_document(quorum_health(down=(3, 4), even=True), None)
    assert first["event"] == "status_changed" and first["previous_status"] is None
    lines = first["text"].splitlines()
    assert lines[0] == "KRaft quorum MkU3OEVBNTcwNTJENDM2Qk is CRITICAL: leader 1, epoch 4, fault tolerance 0"
    assert [line.split(":")[0] for line in lines[1:]] == [
        "- NO_MAJORITY", "- VOTER_UNREACHABLE", "- VOTER_UNREACHABLE", "- and 1 more finding"]
    lost = alert_document(unreachable("QUORUM_UNREACHABLE", "cannot read the quorum: refused", NOW,
                                      Severity.UNKNOWN), HealthStatus.OK)
    assert lost["text"] == ("KRaft quorum (cluster id unknown) is UNKNOWN (was OK)\n"
                            "- QUORUM_UNREACHABLE: cannot read the quorum: refused")


@pytest.mark.parametrize(("url", "shown"), [
    ("https://hooks.slack.com/services/T000/B000/XXXX", "https://hooks.slack.com/..."),
    ("http://user:pw@127.0.0.1:8080/hook", "http://127.0.0.1:8080/..."),
    ("http://[::1]:8080?token=x", "http://[::1]:8080/..."),
    ("https://alerts.example/", "https://alerts.example"),
])
def test_urls_are_shown_without_their_secret_part(url: str, shown: str) -> None:
    assert redact(url) == shown


@pytest.mark.parametrize(("url", "problem"), [
    ("http://[::1", "not a valid URL (Invalid IPv6 URL); expected http(s)://HOST[:PORT]/PATH"),
    ("file:///etc/passwd", "a webhook URL must start with http:// or https://, not file:"),
    ("ftp://127.0.0.1/hook", "a webhook URL must start with http:// or https://, not ftp:"),
    ("gopher://127.0.0.1:70/_x", "a webhook URL must start with http:// or https://, not gopher:"),
    ("javascript:alert(1)", "a webhook URL must start with http:// or https://, not javascript:"),
    ("", "a webhook URL must start with http:// or https://"),
    ("hooks.slack.com/services/T000", "a webhook URL must start with http:// or https://"),
    ("http://127.0.0.1:99999/hook", "not a valid URL (Port out of range 0-65535); expected http(s)://HOST[:PORT]/PATH"),
    ("http://127.0.0.1:0/hook", "a webhook URL's port must be from 1 to 65535"),
    ("http://127.0.0.1:x/hook", "not a valid URL (Port could not be cast to integer value as 'x'); "
                                "expected http(s)://HOST[:PORT]/PATH"),
    ("https:///services/T000", "a webhook URL needs a host: http(s)://HOST[:PORT]/PATH"),
    ("http://hooks example/x", "a webhook URL may not hold spaces or control characters"),
    ("https://hooks.slack.com/services/T000/B000/XXXX", None),
    ("http://[::1]:8080/hook", None),
])
def test_urls_no_alert_could_reach_are_refused_when_the_sender_is_made(url: str, problem: str | None) -> None:
    assert url_problem(url) == problem
    if problem is not None:
        with pytest.raises(ValueError, match=re.escape(problem)):
            WebhookSender([HOOK, url], timeout=1, report=Reports())


def test_an_unparsable_url_is_redacted_without_an_error() -> None:
    assert redact("http://[::1") == "(not a valid URL)"


@responses.activate
def test_each_document_goes_to_each_url_as_json() -> None:
    responses.add(responses.POST, HOOK, body="ok")
    responses.add(responses.POST, OTHER, json={"ok": True}, status=201)
    reports = Reports()
    webhooks = sender(reports, HOOK, OTHER)
    webhooks.send(DOCUMENT)
    first, second = sorted((reports.next(), reports.next()), key=lambda event: event["webhook"])
    webhooks.close(5)
    assert sorted((c.request.url, json.loads(c.request.body or b"")) for c in responses.calls) == [
        (OTHER, DOCUMENT), (HOOK, DOCUMENT)]
    assert all(c.request.headers["Content-Type"] == "application/json" for c in responses.calls)
    assert {k: v for k, v in first.items() if k != "time_ms"} == {
        "event": "webhook_delivered", "url": "http://127.0.0.1:9/...", "webhook": 1, "status": "WARNING",
        "http_status": 200, "attempts": 1}
    assert (second["webhook"], second["http_status"]) == (2, 201)
    assert abs(first["time_ms"] - time.time() * 1000) < 10_000
    assert reports.none_left()


@responses.activate
def test_server_errors_and_throttling_are_retried_with_growing_pauses() -> None:
    calls: list[float] = []

    def answer(request: Any) -> tuple[int, dict[str, str], str]:
        calls.append(time.monotonic())
        return [(503, {}, "busy"), (429, {}, "slow down"), (200, {}, "ok")][len(calls) - 1]

    responses.add_callback(responses.POST, HOOK, callback=answer)
    reports = Reports()
    webhooks = sender(reports, backoff=0.2)
    webhooks.send(DOCUMENT)
    delivered = reports.next()
    webhooks.close(5)
    assert (delivered["event"], delivered["attempts"], delivered["http_status"]) == (
        "webhook_delivered", 3, 200)
    first_pause, second_pause = calls[1] - calls[0], calls[2] - calls[1]
    assert 0.2 <= first_pause < 1.0 and 0.4 <= second_pause < 1.5


@responses.activate
def test_when_every_attempt_fails_the_failure_is_reported() -> None:
    responses.add(responses.POST, HOOK, body=requests.ConnectionError("refused at http://127.0.0.1:9/secret"))
    responses.add(responses.POST, OTHER, status=500, body="<html>\n  Internal   error\n</html>")
    reports = Reports()
    webhooks = sender(reports, HOOK, OTHER)
    webhooks.send(DOCUMENT)
    refused, broken = sorted((reports.next(), reports.next()), key=lambda event: event["webhook"])
    webhooks.close(5)
    assert len(responses.calls) == 6
    assert {k: v for k, v in refused.items() if k != "time_ms"} == {
        "event": "webhook_failed", "url": "http://127.0.0.1:9/...", "webhook": 1, "status": "WARNING",
        "reason": "request failed: ConnectionError", "attempts": 3}
    assert (broken["reason"], broken["attempts"]) == ("HTTP 500: <html> Internal error </html>", 3)
    assert all("secret" not in json.dumps(event) for event in (refused, broken))


@responses.activate
def test_a_refusal_other_than_429_is_final() -> None:
    responses.add(responses.POST, HOOK, status=400, body="invalid_payload")
    reports = Reports()
    webhooks = sender(reports)
    webhooks.send(DOCUMENT)
    failed = reports.next()
    webhooks.close(5)
    assert (failed["event"], failed["reason"], failed["attempts"]) == (
        "webhook_failed", "HTTP 400: invalid_payload", 1)
    assert len(responses.calls) == 1


@responses.activate
def test_the_timeout_is_given_to_every_request() -> None:
    responses.add(responses.POST, HOOK, body=requests.ReadTimeout("read timed out"))
    reports = Reports()
    webhooks = sender(reports, timeout=1.5)
    webhooks.send(DOCUMENT)
    failed = reports.next()
    webhooks.close(5)
    assert [c.request.req_kwargs["timeout"] for c in responses.calls] == [1.5, 1.5, 1.5]
    assert (failed["reason"], failed["attempts"]) == ("no answer within 1500 ms", 3)


@responses.activate
def test_a_slow_endpoint_never_delays_the_caller() -> None:
    release = threading.Event()

    def slow(request: Any) -> tuple[int, dict[str, str], str]:
        release.wait(10)
        return 200, {}, "ok"

    responses.add_callback(responses.POST, HOOK, callback=slow)
    reports = Reports()
    webhooks = sender(reports)
    started = time.monotonic()
    for _ in range(5):
        webhooks.send(DOCUMENT)
    assert time.monotonic() - started < 0.1
    assert reports.none_left()
    release.set()
    assert [reports.next()["event"] for _ in range(5)] == ["webhook_delivered"] * 5
    webhooks.close(5)


@responses.activate
def test_a_hanging_endpoint_never_delays_another() -> None:
    release = threading.Event()

    def hang(request: Any) -> tuple[int, dict[str, str], str]:
        release.wait(10)
        return 200, {}, "ok"

    responses.add_callback(responses.POST, HOOK, callback=hang)
    responses.add(responses.POST, OTHER, body="ok")
    reports = Reports()
    webhooks = sender(reports, HOOK, OTHER)
    for status in ("WARNING", "CRITICAL", "OK"):
        webhooks.send({**DOCUMENT, "status": status})
    healthy = [reports.next(2) for _ in range(3)]
    assert [(e["event"], e["webhook"], e["status"]) for e in healthy] == [
        ("webhook_delivered", 2, status) for status in ("WARNING", "CRITICAL", "OK")]
    assert reports.none_left()
    release.set()
    assert sorted(reports.next()["status"] for _ in range(3)) == ["CRITICAL", "OK", "WARNING"]
    webhooks.close(5)


@responses.activate
def test_closing_waits_a_bounded_time_then_reports_what_is_left() -> None:
    release = threading.Event()

    def stuck(request: Any) -> tuple[int, dict[str, str], str]:
        release.wait(10)
        return 200, {}, "ok"

    responses.add_callback(responses.POST, HOOK, callback=stuck)
    reports = Reports()
    webhooks = sender(reports)
    webhooks.send(DOCUMENT)
    webhooks.send({**DOCUMENT, "status": "OK"})
    started = time.monotonic()
    webhooks.close(0.3)
    assert 0.3 <= time.monotonic() - started < 1.5
    abandoned = [reports.next(0), reports.next(0)]
    assert [(e["event"], e["status"], e["reason"]) for e in abandoned] == [
        ("webhook_failed", "WARNING", "the watch stopped before delivery"),
        ("webhook_failed", "OK", "the watch stopped before delivery")]
    # The request in flight that ends later is not reported a second time.
    release.set()
    with pytest.raises(queue.Empty):
        reports.next(0.5)


class Receiver(ThreadingHTTPServer):
    """A real webhook endpoint on 127.0.0.1: records each POST; ``/slow`` answers after 1 s."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.posts: queue.SimpleQueue[tuple[str, str, dict[str, Any]]] = queue.SimpleQueue()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{path}"

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that gave up on ``/slow`` is expected, not worth a traceback."""


class _Handler(BaseHTTPRequestHandler):
    server: Receiver

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.posts.put((self.path, self.headers["Content-Type"], body))
        if self.path == "/slow":
            time.sleep(1)
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_a_real_http_server_receives_the_alert_and_a_slow_one_times_out(receiver: Receiver) -> None:
    health = quorum_health(down=(2,))
    reports = Reports()
    webhooks = sender(reports, receiver.url("/hook"), receiver.url("/slow"), timeout=0.3)
    webhooks.send(alert_document(health, HealthStatus.OK))
    delivered, timed_out = reports.next(), reports.next()
    webhooks.close(5)
    posts = sorted((receiver.posts.get(timeout=1) for _ in range(4)), key=lambda post: post[0])
    path, content_type, body = posts[0]
    assert (path, content_type) == ("/hook", "application/json")
    assert body == json.loads(json.dumps(alert_document(health, HealthStatus.OK)))
    assert (delivered["event"], delivered["http_status"]) == ("webhook_delivered", 200)
    assert (timed_out["event"], timed_out["reason"], timed_out["attempts"]) == (
        "webhook_failed", "no answer within 300 ms", 3)
    assert [post[0] for post in posts[1:]] == ["/slow"] * 3


@responses.activate
@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_a_redirect_is_reported_not_followed(status: int) -> None:
    """Following a 307 or 308 would POST the alert (and whatever it says) to any host the endpoint
    names; a loop would POST it again and again."""
    responses.add(responses.POST, HOOK, status=status, headers={"Location": HOOK})
    responses.add(responses.POST, OTHER, status=status, headers={"Location": "http://169.254.169.254/latest/x"})
    reports = Reports()
    webhooks = sender(reports, HOOK, OTHER)
    webhooks.send(DOCUMENT)
    loop, metadata = sorted((reports.next(), reports.next()), key=lambda event: event["webhook"])
    webhooks.close(5)
    assert len(responses.calls) == 2
    assert (loop["event"], loop["reason"], loop["attempts"]) == (
        "webhook_failed", f"HTTP {status}: a redirect to http://127.0.0.1:9/..., not followed", 1)
    assert metadata["reason"] == f"HTTP {status}: a redirect to http://169.254.169.254/..., not followed"


def test_a_closed_port_is_reported_in_the_operating_system_words() -> None:
    with Receiver() as closed:
        url = closed.url("/hook")
    reports = Reports()
    webhooks = sender(reports, url)
    webhooks.send(DOCUMENT)
    failed = reports.next()
    webhooks.close(5)
    assert (failed["reason"], failed["attempts"]) == ("cannot connect: Connection refused", 3)
