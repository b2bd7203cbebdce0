"""The exporter's web server: a WSGI app served under a :class:`~.web_config.WebConfig`, as the Prometheus
exporter toolkit's ``web`` package serves its exporters.

Each request goes through the same steps as the toolkit's handler: the rate limit (429), then the
configured headers (on every answer, refusals included), then, when users are configured, HTTP basic
authentication against their bcrypt hashes (401 with ``WWW-Authenticate: Basic``). An unknown user is
checked against a decoy hash of the same cost, so that the time taken does not tell which users exist,
and the outcome of each (user, hash, password) is remembered, as bcrypt is slow on purpose; checks run
one at a time. With TLS, each connection's handshake runs on its own thread, under a timeout, so that
a client that stalls it holds up nobody; a client certificate must also carry one of
``client_allowed_sans`` when the file lists them. bcrypt is imported only when users are configured.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import ipaddress
import socket
import ssl
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

from .web_config import BCRYPT_HASH, WebConfig, server_context

HANDSHAKE_TIMEOUT = 10.0
"""Seconds a client has to complete the TLS handshake."""
REQUEST_TIMEOUT = 30.0
"""Seconds a client may stay silent while sending its request."""
CACHE_SIZE = 100
"""Outcomes of password checks remembered."""

StartResponse = Callable[..., Any]
App = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]


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


class QuietHandler(WSGIRequestHandler):
    """No access log on stderr (a scrape every few seconds would fill it)."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass


class ExporterServer(ThreadingMixIn, WSGIServer):
    """A threaded WSGI server, with TLS (handshakes on the request threads) when ``context`` is set."""

    daemon_threads = True
    context: ssl.SSLContext | None = None
    allowed_sans: tuple[str, ...] = ()

    def finish_request(self, request: Any, client_address: Any) -> None:
        connection = request
        try:
            if self.context is not None:
                request.settimeout(HANDSHAKE_TIMEOUT)
                connection = self.context.wrap_socket(request, server_side=True)
                if self.allowed_sans and not san_allowed(connection.getpeercert(), self.allowed_sans):
                    return
            connection.settimeout(REQUEST_TIMEOUT)
            super().finish_request(connection, client_address)
        except OSError:
            return  # a failed handshake, a silent or vanished client: that connection's end
        finally:
            if connection is not request:
                connection.close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """An error past the WSGI handler's own handling ends that connection quietly."""


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


def make_server(host: str, port: int, app: App, config: WebConfig | None) -> ExporterServer:
    """A server bound to ``host:port`` (IPv6 when the host is), serving ``app`` under ``config``
    (plain HTTP, no checks, when it is None)."""

    class Server(ExporterServer):
        address_family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]

    server = Server((host, port), QuietHandler)
    if config is not None:
        app = Guard(app, config)
        if config.tls is not None:
            server.context = server_context(config.tls)
            server.allowed_sans = config.tls.client_allowed_sans
    server.set_app(app)
    return server
