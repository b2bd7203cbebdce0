"""One webhook POST, bounded in time and size, for ``alerts``.

requests' ``timeout`` bounds each socket operation, not the request: an endpoint that sends a byte a
second never trips it. Here the timeout is a deadline for the whole request: every socket the request
opens (to the endpoint or to an HTTP proxy) is registered with a timer that shuts it down when the
time is up, which ends a read in progress at once. SOCKS proxies keep requests' own per-read timeout.

Redirects are never followed: a 307 or 308 would POST the alert again, contents and all, to wherever
the endpoint points (a cloud metadata address included); the caller reports the redirect instead. Of
the answer only the first ``BODY_BYTES`` are read, so a huge body costs nothing.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import requests
import urllib3.exceptions
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

BODY_BYTES = 4096
"""How much of an answer is read (enough for the part of an error body a failure reason quotes)."""


@dataclass(frozen=True)
class Answer:
    status: int
    location: str | None
    """The ``Location`` header of a redirect."""
    body: str
    """The first ``BODY_BYTES`` of the body, decoded leniently."""


class _Deadline:
    """Shuts down the sockets registered with it once ``seconds`` have passed since it was entered.

    It keeps a duplicate of each socket: TLS wrapping detaches the socket object urllib3 made, but a
    shutdown through any descriptor of a socket ends the connection."""

    def __init__(self, seconds: float) -> None:
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self.expired = False
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> _Deadline:
        _current.deadline = self
        self._timer.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self._timer.cancel()
        _current.deadline = None
        with self._lock:
            for sock in self._sockets:
                sock.close()
            self._sockets.clear()

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(duplicate := sock.dup())
            if self.expired:
                _shut(duplicate)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                _shut(sock)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed, or not connected yet
        sock.shutdown(socket.SHUT_RDWR)


_current = threading.local()
"""The deadline of the request running on this thread, if any (requests runs it on the caller's)."""


class _WatchedConnection(HTTPConnection):
    """A connection whose new socket is handed to the current thread's deadline."""

    def _new_conn(self) -> socket.socket:
        sock = super()._new_conn()
        deadline: _Deadline | None = getattr(_current, "deadline", None)
        if deadline is not None:
            deadline.watch(sock)
        return sock


class _WatchedTlsConnection(_WatchedConnection, HTTPSConnection):
    pass


class _Pool(HTTPConnectionPool):
    ConnectionCls = _WatchedConnection


class _TlsPool(HTTPSConnectionPool):
    ConnectionCls = _WatchedTlsConnection


_POOLS: dict[str, type[HTTPConnectionPool]] = {"http": _Pool, "https": _TlsPool}


class _Adapter(HTTPAdapter):
    """requests' adapter, with connections that the deadline watches."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = _POOLS

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        if not proxy.lower().startswith("socks"):
            manager.pool_classes_by_scheme = _POOLS
        return manager


def post_json(url: str, document: Any, *, timeout: float) -> Answer:
    """POST ``document`` as JSON and read the answer's head and the start of its body, all within
    ``timeout`` seconds. Raises ``requests.Timeout`` when the time is up, other
    ``requests.RequestException`` errors as requests does (for the body too)."""
    with requests.Session() as session, _Deadline(timeout) as deadline:
        adapter = _Adapter()
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        try:
            with session.post(url, json=document, timeout=timeout, stream=True,
                              allow_redirects=False) as response:
                body = response.raw.read(BODY_BYTES, decode_content=True)
                return Answer(response.status_code, response.headers.get("Location"),
                              body.decode("utf-8", "replace"))
        except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
            if deadline.expired or isinstance(exc, urllib3.exceptions.TimeoutError):
                raise requests.Timeout(f"no complete answer within {timeout:.3g} s") from exc
            if isinstance(exc, requests.RequestException):
                raise
            raise requests.ConnectionError(exc) from exc
