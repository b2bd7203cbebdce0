"""The exporter's web server: a WSGI app served under a :class:`~.web_config.WebConfig`, as the Prometheus
exporter toolkit's ``web`` package serves its exporters.

Each request goes through the same steps as the toolkit's handler: the rate limit (429), then the
configured headers (on every answer, refusals included), then, when users are configured, HTTP basic
authentication against their bcrypt hashes (401 with ``WWW-Authenticate: Basic``). An unknown user is
checked against a decoy hash of the same cost, so that the time taken does not tell which users exist,
and the outcome of each (user, hash, password) is remembered, as bcrypt is slow on purpose; checks run
one at a time. With TLS, a client certificate must also carry one of ``client_allowed_sans`` when the
file lists them. bcrypt is imported only when users are configured. Connections, their timeouts and
bounds are ``http_server``'s.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import ipaddress
import socket
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from .http_server import App, HttpServer, Limits, StartResponse
from .web_config import BCRYPT_HASH, WebConfig, server_context

CACHE_SIZE = 100
"""Outcomes of password checks remembered."""


class RateLimit:
    """A token bucket: ``burst`` requests at once, one more each ``interval`` seconds (Go's
    ``rate.NewLimiter(rate.Every(interval), burst)``)."""

    def __init__(self, interval: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self._interval = interval
        self._burst = burst
        self._clock = clock
        self._tokens = float(burst)
        self._at = clock()
        self._lock = threading.Lock()

    def allow(self) -> bool:
        with self._lock:
            now = self._clock()
            self._tokens = min(self._burst, self._tokens + (now - self._at) / self._interval)
            self._at = now
            if self._tokens < 1:
                return False
            self._tokens -= 1
            return True


class BasicAuth:
    """Checks ``Authorization: Basic`` headers against bcrypt hashes (see the module docstring)."""

    def __init__(self, users: Mapping[str, str]) -> None:
        import bcrypt

        self._bcrypt = bcrypt
        self._users = {name: hashed.encode() for name, hashed in users.items()}
        costs = [BCRYPT_HASH.fullmatch(hashed) for hashed in users.values()]
        cost = max(int(match.group(1)) for match in costs if match is not None)
        self._decoy = bcrypt.hashpw(b"not a password of any user", bcrypt.gensalt(rounds=cost))
        self._lock = threading.Lock()
        self._outcomes: OrderedDict[bytes, bool] = OrderedDict()

    def check(self, header: str | None) -> bool:
        credentials = _basic_credentials(header)
        if credentials is None:
            return False
        user, password = credentials
        known = user in self._users
        hashed = self._users.get(user, self._decoy)
        key = hashlib.sha256(b"\0".join((user.encode(), hashed, password))).digest()
        with self._lock:
            outcome = self._outcomes.get(key)
            if outcome is None:
                try:
                    outcome = bool(self._bcrypt.checkpw(password, hashed)) and known
                except ValueError:  # a password bcrypt refuses (longer than 72 bytes)
                    outcome = False
                self._outcomes[key] = outcome
                if len(self._outcomes) > CACHE_SIZE:
                    self._outcomes.popitem(last=False)
        return outcome


def _basic_credentials(header: str | None) -> tuple[str, bytes] | None:
    """(user, password) of an ``Authorization: Basic`` header, as Go's ``Request.BasicAuth`` reads it."""
    if header is None or header[:6].lower() != "basic ":
        return None
    try:
        decoded = base64.b64decode(header[6:], validate=True)
        user, colon, password = decoded.partition(b":")
        return (user.decode(), password) if colon else None
    except (binascii.Error, UnicodeDecodeError):
        return None


class Guard:
    """The WSGI middleware that applies the rate limit, the headers and basic authentication."""

    def __init__(self, app: App, config: WebConfig) -> None:
        self._app = app
        self._headers = list(config.headers.items())
        self._limit = RateLimit(config.rate_interval, config.rate_burst) if config.rate_interval > 0 else None
        self._auth = BasicAuth(config.users) if config.users else None

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        if self._limit is not None and not self._limit.allow():
            return self._refuse(start_response, "429 Too Many Requests", [])
        if self._auth is not None and not self._auth.check(environ.get("HTTP_AUTHORIZATION")):
            return self._refuse(start_response, "401 Unauthorized", [("WWW-Authenticate", "Basic")])

        def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            return start_response(status, self._with_headers(headers), exc_info)

        return self._app(environ, start)

    def _with_headers(self, headers: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
        configured = {name.lower() for name, _ in self._headers}
        return [h for h in headers if h[0].lower() not in configured] + self._headers

    def _refuse(self, start_response: StartResponse, status: str,
                extra: list[tuple[str, str]]) -> Iterable[bytes]:
        body = f"{status.split(' ', 1)[1]}\n".encode()
        start_response(status, self._with_headers([("Content-Type", "text/plain; charset=utf-8"),
                                                   ("X-Content-Type-Options", "nosniff"),
                                                   ("Content-Length", str(len(body))), *extra]))
        return [body]


def san_allowed(certificate: Mapping[str, Any] | None, allowed: Sequence[str]) -> bool:
    """Whether the client certificate names one of ``allowed`` among its subject alternative names
    (DNS, IP, email or URI), IP addresses compared as addresses."""
    names = [str(value).strip() for _, value in (certificate or {}).get("subjectAltName", ())]
    return any(_same_name(name, wanted) for name in names for wanted in allowed)


def _same_name(name: str, wanted: str) -> bool:
    if name == wanted:
        return True
    try:
        return ipaddress.ip_address(name) == ipaddress.ip_address(wanted)
    except ValueError:
        return False


def make_server(host: str, port: int, app: App, config: WebConfig | None,
                limits: Limits | None = None) -> HttpServer:
    """A server bound to ``host:port`` (IPv6 when the host is), serving ``app`` under ``config``
    (plain HTTP, no checks, when it is None) within ``limits`` (the defaults when None)."""
    family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
    context = None
    peer_check = None
    if config is not None:
        app = Guard(app, config)
        if config.tls is not None:
            context = server_context(config.tls)
            sans = config.tls.client_allowed_sans
            if sans:
                peer_check = functools.partial(san_allowed, allowed=sans)
    return HttpServer((host, port), family, app, context=context, peer_check=peer_check, limits=limits)
