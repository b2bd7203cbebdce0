"""Webhook alerts of `kafka-metadata-quorum watch`: one JSON POST per status change, delivered off the
watch loop.

The document is the check's JSON (``health_json``) plus ``text``, ``event`` and ``previous_status``:
``text`` is a few lines for people, so that Slack-compatible incoming webhooks (Slack, Mattermost,
Rocket.Chat, Teams workflows) post it as it is. Each URL has a background daemon thread and queue of
its own (a slow endpoint never holds up another), which delivers each document in turn
(``webhook_http``: the timeout is a deadline for the whole request, no redirects followed), retrying
connection errors, timeouts, HTTP 429 and 5xx with exponential backoff; redirects and other HTTP
errors are final. Every outcome is handed to a ``report`` callback (on that URL's thread) as a
``webhook_delivered`` or ``webhook_failed`` event. URLs are checked when the sender is made
(``url_problem``): http or https with a host.

Webhook URLs usually carry their secret in the path, so events name a URL by scheme, host and port
only, plus its position among the ``--webhook`` options, and failure reasons never quote the URL.
"""

from __future__ import annotations

import queue
import threading
import time
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .health_options import health_json

if TYPE_CHECKING:
    from kafka_admin_kraft.health import HealthStatus, QuorumHealth

Event = dict[str, Any]

ATTEMPTS = 3
BACKOFF_S = 0.5
"""Wait before the second attempt; it doubles for each further one."""
TEXT_FINDINGS = 3
"""Findings spelled out in ``text``; the rest are counted."""
BODY_CHARS = 200
"""How much of an error response's body a failure reason quotes."""


def alert_text(health: QuorumHealth, previous: HealthStatus | None) -> str:
    """The lines a chat shows: status (and what it was), leader, fault tolerance, top findings."""
    from kafka_admin_kraft.health import HealthStatus

    cluster = health.cluster_id or "(cluster id unknown)"
    was = f" (was {previous.name})" if previous is not None else ""
    if previous is not None and health.status is HealthStatus.OK:
        head = f"KRaft quorum {cluster} recovered: OK{was}"
    else:
        head = f"KRaft quorum {cluster} is {health.status.name}{was}"
    quorum = health.quorum
    if quorum is not None and quorum.leader_id >= 0:
        head += (f": leader {quorum.leader_id}, epoch {quorum.leader_epoch}, "
                 f"fault tolerance {health.fault_tolerance}")
    lines = [head]
    lines += [f"- {f.code}: {f.message}" for f in health.findings[:TEXT_FINDINGS]]
    more = len(health.findings) - TEXT_FINDINGS
    if more > 0:
        lines.append(f"- and {more} more finding{'s' if more > 1 else ''}")
    return "\n".join(lines)


def alert_document(health: QuorumHealth, previous: HealthStatus | None) -> dict[str, Any]:
    """The POST body: ``text`` first, then ``event`` (``recovered`` when the status went back to OK,
    else ``status_changed``), ``previous_status`` (null for the first check) and the check's JSON."""
    from kafka_admin_kraft.health import HealthStatus

    recovered = previous is not None and health.status is HealthStatus.OK
    return {
        "text": alert_text(health, previous),
        "event": "recovered" if recovered else "status_changed",
        "previous_status": previous.name if previous is not None else None,
        **health_json(health),
    }


def url_problem(url: str) -> str | None:
    """What makes ``url`` unfit for a webhook (None when it is fit): it must be http or https with a
    host and, if any, a port from 1 to 65535. Worded without the URL, which may hold a secret."""
    if any(c.isspace() or not c.isprintable() for c in url):
        return "a webhook URL may not hold spaces or control characters"
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return f"not a valid URL ({exc}); expected http(s)://HOST[:PORT]/PATH"
    if parts.scheme not in ("http", "https"):
        given = f", not {parts.scheme}:" if parts.scheme else ""
        return f"a webhook URL must start with http:// or https://{given}"
    if not parts.hostname:
        return "a webhook URL needs a host: http(s)://HOST[:PORT]/PATH"
    if port == 0:
        return "a webhook URL's port must be from 1 to 65535"
    return None


def redact(url: str) -> str:
    """``scheme://host:port`` of a URL, with ``/...`` when it had a path or query (the secret part)."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return "(not a valid URL)"
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    rest = "/..." if parts.path.strip("/") or parts.query else ""
    return f"{parts.scheme}://{host}{f':{port}' if port is not None else ''}{rest}"


def _root_cause(exc: BaseException) -> str | None:
    """The operating system's words (``Connection refused``) from deep inside a requests error."""
    seen: set[int] = set()
    pending: list[BaseException] = [exc]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, OSError) and current.strerror:
            return current.strerror
        linked = [current.__cause__, current.__context__, getattr(current, "reason", None),
                  *(arg for arg in current.args if isinstance(arg, BaseException))]
        pending += [e for e in linked if isinstance(e, BaseException)]
    return None


@dataclass(frozen=True)
class _Delivery:
    number: int
    webhook: int
    """Position of the URL among the webhooks, from 1."""
    url: str
    document: dict[str, Any]


class WebhookSender:
    """POSTs documents to every URL, each URL from a daemon thread and queue of its own, so that a
    slow endpoint never holds up another; ``send`` never waits for the network."""

    def __init__(self, urls: Sequence[str], *, timeout: float, report: Callable[[Event], None],
                 attempts: int = ATTEMPTS, backoff: float = BACKOFF_S) -> None:
        for url in urls:
            problem = url_problem(url)
            if problem is not None:
                raise ValueError(problem)
        self.urls = tuple(urls)
        self.timeout = timeout
        self.attempts = attempts
        self.backoff = backoff
        self._report = report
        self._queues: list[queue.SimpleQueue[_Delivery | None]] = [queue.SimpleQueue() for _ in self.urls]
        self._pending: dict[int, _Delivery] = {}
        self._lock = threading.Lock()
        self._numbers = 0
        self._threads = [threading.Thread(target=self._run, args=(deliveries,), name=f"webhook-{number}",
                                          daemon=True)
                         for number, deliveries in enumerate(self._queues, start=1)]
        for thread in self._threads:
            thread.start()

    def send(self, document: dict[str, Any]) -> None:
        """Queue ``document`` for every URL."""
        with self._lock:
            for webhook, (url, deliveries) in enumerate(zip(self.urls, self._queues, strict=True), start=1):
                self._numbers += 1
                delivery = _Delivery(self._numbers, webhook, url, document)
                self._pending[delivery.number] = delivery
                deliveries.put(delivery)

    def close(self, grace: float) -> None:
        """Let queued deliveries finish for up to ``grace`` seconds; report the rest as failed."""
        until = time.monotonic() + grace
        for deliveries in self._queues:
            deliveries.put(None)
        for thread in self._threads:
            thread.join(max(0.0, until - time.monotonic()))
        with self._lock:
            abandoned = sorted(self._pending.values(), key=lambda d: d.number)
            self._pending.clear()
        for delivery in abandoned:
            self._report(self._event(delivery, "webhook_failed", reason="the watch stopped before delivery"))

    def _run(self, deliveries: queue.SimpleQueue[_Delivery | None]) -> None:
        while (delivery := deliveries.get()) is not None:
            self._finish(delivery, self._deliver(delivery))

    def _finish(self, delivery: _Delivery, event: Event) -> None:
        with self._lock:
            if self._pending.pop(delivery.number, None) is None:
                return  # already reported as abandoned by close()
        self._report(event)

    def _event(self, delivery: _Delivery, name: str, **fields: Any) -> Event:
        return {"time_ms": int(time.time() * 1000), "event": name, "url": redact(delivery.url),
                "webhook": delivery.webhook, "status": delivery.document.get("status"), **fields}

    def _deliver(self, delivery: _Delivery) -> Event:
        import requests

        from .webhook_http import post_json

        reason = ""
        for attempt in range(1, self.attempts + 1):
            if attempt > 1:
                time.sleep(self.backoff * 2 ** (attempt - 2))
            try:
                answer = post_json(delivery.url, delivery.document, timeout=self.timeout)
            except requests.Timeout:
                reason = f"no answer within {self.timeout * 1000:.0f} ms"
                continue
            except requests.RequestException as exc:
                cause = _root_cause(exc)
                reason = f"cannot connect: {cause}" if cause else f"request failed: {type(exc).__name__}"
                continue
            if 300 <= answer.status < 400:
                target = f" to {redact(answer.location)}" if answer.location else ""
                return self._event(delivery, "webhook_failed", attempts=attempt,
                                   reason=f"HTTP {answer.status}: a redirect{target}, not followed")
            if answer.status < 300:
                return self._event(delivery, "webhook_delivered", http_status=answer.status, attempts=attempt)
            body = " ".join(answer.body.split())[:BODY_CHARS]
            reason = f"HTTP {answer.status}" + (f": {body}" if body else "")
            if answer.status != 429 and answer.status < 500:
                return self._event(delivery, "webhook_failed", reason=reason, attempts=attempt)
        return self._event(delivery, "webhook_failed", reason=reason, attempts=self.attempts)
