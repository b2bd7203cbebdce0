"""The exporter's HTTP/1.1 server: one selector thread holds every connection and does all its I/O
(TLS handshake, request, answer, keep-alive), without blocking, and a fixed pool of worker threads
runs the WSGI app on whole requests, so that an idle, slow or non-reading client costs a file
descriptor, never a thread.

Its limits are those Go's ``net/http`` server offers the exporters built on it (``http.Server``'s
``ReadHeaderTimeout`` and ``IdleTimeout``, and the accept back-off of ``http.Server.Serve``), and a
bound on connections:

* a client has ``header_timeout`` seconds from its connection (or from the first byte after a
  keep-alive wait) to finish the TLS handshake and send its whole request, however it trickles the
  bytes (slowloris); past it the connection is closed without an answer;
* a keep-alive connection that waits longer than ``idle_timeout`` for its next request is closed;
* at most ``max_connections`` are open (by default below the process's descriptor limit): one more
  closes the connection that has waited longest (for its request, for the next one, or for its
  answer to be read), which a scraper never is, as it sends its request as soon as it connects and
  reads the answer at once;
* an accept that fails for want of descriptors (EMFILE) closes that longest-waiting connection and
  stops accepting for 5 ms, doubling up to 1 s while it keeps failing, instead of spinning;
* a request reaches a worker whole (a head of at most MAX_HEADER_BYTES, a body of at most
  MAX_BODY_BYTES sent with Content-Length; chunked bodies are answered 501), and a client has
  ``write_timeout`` seconds to read its answer, else the connection is closed.
"""

from __future__ import annotations

import contextlib
import errno
import io
import re
import resource
import selectors
import socket
import ssl
import sys
import threading
import time
import urllib.parse
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from email.utils import formatdate
from queue import SimpleQueue
from typing import Any

HEADER_TIMEOUT = 5.0
"""Seconds for the TLS handshake and the whole request."""
IDLE_TIMEOUT = 30.0
"""Seconds a keep-alive connection may wait for its next request."""
WRITE_TIMEOUT = 10.0
"""Seconds a client has to read its answer."""
WORKERS = 8
"""Threads that run the app: concurrent scrapes (each waits at most the scrape timeout)."""
MAX_CONNECTIONS = 1024
"""The most connections held open, whatever the descriptor limit."""
RESERVED_FDS = 64
"""Descriptors left under the limit for the Admin client's connections and the process itself."""
MAX_HEADER_BYTES = 16 * 1024
MAX_BODY_BYTES = 64 * 1024
MAX_HEADERS = 100
BACKOFF_FIRST = 0.005
BACKOFF_MAX = 1.0
ACCEPTS_PER_TURN = 64
"""Connections accepted before the loop serves the others again."""
RECV_SIZE = 64 * 1024

_OUT_OF_DESCRIPTORS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
_END_OF_HEAD = re.compile(rb"\r?\n\r?\n")
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_NO_BODY = (204, 304)
_REPLACED = ("content-length", "connection", "date", "transfer-encoding")

StartResponse = Callable[..., Any]
App = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]
PeerCheck = Callable[[Mapping[str, Any] | None], bool]


def default_max_connections() -> int:
    """MAX_CONNECTIONS, or fewer when the soft RLIMIT_NOFILE would run out first."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS
    return max(8, min(MAX_CONNECTIONS, soft - RESERVED_FDS))


@dataclass(frozen=True)
class Limits:
    """What one connection may take (the module docstring); ``max_connections`` None: derived from the
    descriptor limit when the server starts."""

    header_timeout: float = HEADER_TIMEOUT
    idle_timeout: float = IDLE_TIMEOUT
    write_timeout: float = WRITE_TIMEOUT
    workers: int = WORKERS
    max_connections: int | None = None


class BadRequest(Exception):
    """A request answered with ``status`` (``"400 Bad Request"``) and the connection closed."""

    def __init__(self, status: str) -> None:
        super().__init__(status)
        self.status = status


@dataclass(frozen=True)
class Request:
    method: str
    target: str
    version: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    keep_alive: bool


def read_request(buffer: bytearray) -> Request | None:
    """The first whole request in ``buffer``, taken out of it; None while it is incomplete. Empty lines
    before it are skipped (RFC 9112, section 2.2)."""
    skipped = len(buffer) - len(buffer.lstrip(b"\r\n"))
    del buffer[:skipped]
    end = _END_OF_HEAD.search(buffer, 0, MAX_HEADER_BYTES + 4)
    if end is None:
        if len(buffer) > MAX_HEADER_BYTES:
            raise BadRequest("431 Request Header Fields Too Large")
        return None
    method, target, version, headers = _head(bytes(buffer[: end.start()]))
    fields: dict[str, list[str]] = {}
    for name, value in headers:
        fields.setdefault(name.lower(), []).append(value)
    if "transfer-encoding" in fields:
        raise BadRequest("501 Not Implemented")
    lengths = set(fields.get("content-length", ["0"]))
    length = lengths.pop()
    if lengths or not (length.isascii() and length.isdigit()):
        raise BadRequest("400 Bad Request")
    if int(length) > MAX_BODY_BYTES:
        raise BadRequest("413 Content Too Large")
    stop = end.end() + int(length)
    if len(buffer) < stop:
        return None
    body = bytes(buffer[end.end() : stop])
    del buffer[:stop]
    tokens = {t.strip().lower() for value in fields.get("connection", ()) for t in value.split(",")}
    keep_alive = "close" not in tokens if version == "HTTP/1.1" else "keep-alive" in tokens
    return Request(method, target, version, tuple(headers), body, keep_alive)


def _head(head: bytes) -> tuple[str, str, str, list[tuple[str, str]]]:
    lines = [line.removesuffix("\r") for line in head.decode("latin-1").split("\n")]
    parts = lines[0].split(" ")
    if len(parts) != 3 or not _TOKEN.fullmatch(parts[0]) or not parts[1]:
        raise BadRequest("400 Bad Request")
    method, target, version = parts
    if not re.fullmatch(r"HTTP/\d\.\d", version):
        raise BadRequest("400 Bad Request")
    if version not in ("HTTP/1.0", "HTTP/1.1"):
        raise BadRequest("505 HTTP Version Not Supported")
    if len(lines) - 1 > MAX_HEADERS:
        raise BadRequest("431 Request Header Fields Too Large")
    headers = []
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon or not _TOKEN.fullmatch(name):  # also a folded line, which RFC 9112 lets a server refuse
            raise BadRequest("400 Bad Request")
        headers.append((name, value.strip(" \t")))
    return method, target, version, headers


def response_bytes(status: str, headers: Iterable[tuple[str, str]], body: bytes, *, head_only: bool,
                   keep_alive: bool, version: str) -> bytes:
    """An HTTP/1.1 answer: the app's headers, then Date, Content-Length and Connection of its own."""
    code = int(status[:3])
    lines = [f"HTTP/1.1 {status}"]
    lines += [f"{name}: {value}" for name, value in headers if name.lower() not in _REPLACED]
    lines.append(f"Date: {formatdate(usegmt=True)}")
    if code not in _NO_BODY:
        lines.append(f"Content-Length: {len(body)}")
    if not keep_alive:
        lines.append("Connection: close")
    elif version == "HTTP/1.0":
        lines.append("Connection: keep-alive")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return head if head_only or code in _NO_BODY else head + body


class Connection:
    """One client: its socket, what it has sent and not yet been answered, and where it waits."""

    __slots__ = ("sock", "address", "state", "buffer", "since", "registered", "request", "answer",
                 "keep_alive")

    def __init__(self, sock: socket.socket, address: Any, state: str) -> None:
        self.sock = sock
        self.address = address
        self.state = state
        """handshake, reading, busy (a worker has it), writing, idle (keep-alive) or closed"""
        self.buffer = bytearray()
        self.since = 0.0
        self.registered = 0
        """The selector events it waits for (0: not registered)."""
        self.request: Request | BadRequest | None = None
        self.answer = memoryview(b"")
        """What is left to write of the answer."""
        self.keep_alive = False


class HttpServer:
    """Serves ``app`` on ``address`` (see the module docstring); ``context`` turns TLS on, and
    ``peer_check`` then judges each client certificate. The socketserver-like ``serve_forever``,
    ``shutdown`` and ``server_close`` run and stop it."""

    def __init__(self, address: tuple[str, int], family: int, app: App, *,
                 context: ssl.SSLContext | None = None, peer_check: PeerCheck | None = None,
                 limits: Limits | None = None) -> None:
        self._listener = socket.socket(family, socket.SOCK_STREAM)
        try:
            self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self._listener.bind(address)
            self._listener.listen(socket.SOMAXCONN)
            self._listener.setblocking(False)
        except OSError:
            self._listener.close()
            raise
        self.server_address = self._listener.getsockname()
        self.server_port: int = self.server_address[1]
        self._app = app
        self._context = context
        self._peer_check = peer_check
        self.limits = limits or Limits()
        self.max_connections = self.limits.max_connections or default_max_connections()
        self._selector = selectors.DefaultSelector()
        self._wake_in, self._wake_out = socket.socketpair()
        for end in (self._wake_in, self._wake_out):
            end.setblocking(False)
        self._reading: OrderedDict[Connection, None] = OrderedDict()
        """Connections in their handshake or request, oldest first (the header timeout)."""
        self._idle: OrderedDict[Connection, None] = OrderedDict()
        """Keep-alive connections between requests, oldest first (the idle timeout)."""
        self._writing: OrderedDict[Connection, None] = OrderedDict()
        """Connections whose client has not read all of its answer yet, oldest first (the write timeout)."""
        self._busy: set[Connection] = set()
        self._open = 0
        self._jobs: SimpleQueue[Connection | None] = SimpleQueue()
        self._returned: deque[Connection] = deque()
        self._workers: list[threading.Thread] = []
        self._stop = threading.Event()
        self._done = threading.Event()
        self._done.set()
        self._paused_until = 0.0
        self._backoff = 0.0

    # ------------------------------------------------------------------ running and stopping

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        """Serve until :meth:`shutdown`; the calling thread runs the selector loop."""
        self._done.clear()
        try:
            self._start_workers()
            self._selector.register(self._listener, selectors.EVENT_READ)
            self._selector.register(self._wake_out, selectors.EVENT_READ)
            while not self._stop.is_set():
                self._turn(poll_interval)
        finally:
            self._done.set()

    def shutdown(self) -> None:
        """Stop the loop and wait until it has stopped."""
        self._stop.set()
        self._wake()
        self._done.wait()

    def server_close(self) -> None:
        """Close the listener and every connection, and let the workers go."""
        self._stop.set()
        self._listener.close()
        for conn in [*self._reading, *self._writing, *self._idle, *self._busy]:
            self._close(conn)
        for _ in self._workers:
            self._jobs.put(None)
        self._selector.close()
        self._wake_in.close()
        self._wake_out.close()

    def _start_workers(self) -> None:
        while len(self._workers) < self.limits.workers:
            name = f"exporter-http-{len(self._workers)}"
            worker = threading.Thread(target=self._work, name=name, daemon=True)
            worker.start()
            self._workers.append(worker)

    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # full (a wake-up is pending anyway) or closed
            self._wake_in.send(b"\0")

    # ------------------------------------------------------------------ the selector loop

    def _turn(self, poll_interval: float) -> None:
        now = time.monotonic()
        deadlines = [now + poll_interval, *self._deadlines()]
        if self._paused_until:
            deadlines.append(self._paused_until)
        for key, _ in self._selector.select(max(0.0, min(deadlines) - now)):
            if key.fileobj is self._listener:
                self._accept()
            elif key.fileobj is self._wake_out:
                self._drain_wake()
            elif key.data.state != "closed":  # an earlier event of this turn may have evicted it
                self._ready(key.data)
        self._take_back()
        now = time.monotonic()
        self._expire(now)
        if self._paused_until and now >= self._paused_until:
            self._paused_until = 0.0
            self._selector.register(self._listener, selectors.EVENT_READ)

    def _deadlines(self) -> list[float]:
        return [next(iter(where)).since + timeout for where, timeout in self._queues() if where]

    def _queues(self) -> tuple[tuple[OrderedDict[Connection, None], float], ...]:
        """The connections that wait, oldest first, with how long they may."""
        return ((self._reading, self.limits.header_timeout), (self._writing, self.limits.write_timeout),
                (self._idle, self.limits.idle_timeout))

    def _drain_wake(self) -> None:
        try:
            while self._wake_out.recv(4096):
                pass
        except OSError:
            pass

    def _accept(self) -> None:
        for _ in range(ACCEPTS_PER_TURN):
            try:
                sock, address = self._listener.accept()
            except BlockingIOError:
                return
            except OSError as exc:
                if exc.errno in _OUT_OF_DESCRIPTORS:
                    self._evict()
                    self._pause()
                    return
                continue  # the client left before its connection was accepted (ECONNABORTED)
            self._backoff = 0.0
            if self._open >= self.max_connections and not self._evict():
                sock.close()
                continue
            self._admit(sock, address)

    def _pause(self) -> None:
        """Stop accepting for a while (the listener stays readable, and would be reported at once)."""
        self._backoff = min(BACKOFF_MAX, self._backoff * 2) if self._backoff else BACKOFF_FIRST
        self._paused_until = time.monotonic() + self._backoff
        self._selector.unregister(self._listener)

    def _evict(self) -> bool:
        """Close the connection that has waited longest; False if there is none (all are with workers)."""
        heads = [next(iter(where)) for where, _ in self._queues() if where]
        if not heads:
            return False
        self._close(min(heads, key=lambda conn: conn.since))
        return True

    def _admit(self, sock: socket.socket, address: Any) -> None:
        sock.setblocking(False)
        self._open += 1
        conn = Connection(sock, address, "reading")
        if self._context is not None:
            try:
                conn.sock = self._context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
            except (OSError, ValueError):
                conn.sock = sock
                self._close(conn)
                return
            conn.state = "handshake"
        self._wait(conn, self._reading, selectors.EVENT_READ)

    def _wait(self, conn: Connection, where: OrderedDict[Connection, None], events: int) -> None:
        conn.since = time.monotonic()
        where[conn] = None
        self._listen(conn, events)

    def _listen(self, conn: Connection, events: int) -> None:
        if conn.registered == events:
            return
        if conn.registered:
            self._selector.modify(conn.sock, events, conn)
        else:
            self._selector.register(conn.sock, events, conn)
        conn.registered = events

    def _ready(self, conn: Connection) -> None:
        if conn.state == "handshake":
            self._handshake(conn)
            return
        if conn.state == "writing":
            self._write(conn)
            return
        if conn.state == "idle":  # the next request begins: the header timeout from now
            del self._idle[conn]
            conn.state = "reading"
            self._wait(conn, self._reading, selectors.EVENT_READ)
        self._receive(conn)

    def _handshake(self, conn: Connection) -> None:
        assert isinstance(conn.sock, ssl.SSLSocket)
        try:
            conn.sock.do_handshake()
        except ssl.SSLWantReadError:
            self._listen(conn, selectors.EVENT_READ)
            return
        except ssl.SSLWantWriteError:
            self._listen(conn, selectors.EVENT_WRITE)
            return
        except (OSError, ValueError):  # not TLS, a refused certificate, a vanished client
            self._close(conn)
            return
        if self._peer_check is not None and not self._peer_check(conn.sock.getpeercert()):
            self._close(conn)
            return
        conn.state = "reading"
        self._listen(conn, selectors.EVENT_READ)
        self._receive(conn)  # the handshake's last record may have carried the request

    def _receive(self, conn: Connection) -> None:
        while len(conn.buffer) <= MAX_HEADER_BYTES + MAX_BODY_BYTES:
            try:
                chunk = conn.sock.recv(RECV_SIZE)
            except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
                break
            except OSError:
                self._close(conn)
                return
            if not chunk:
                self._close(conn)
                return
            conn.buffer += chunk
            if not isinstance(conn.sock, ssl.SSLSocket) or not conn.sock.pending():
                break  # what TLS decrypted and holds is never reported by the selector: drain it
        self._parse(conn)

    def _parse(self, conn: Connection) -> None:
        try:
            conn.request = read_request(conn.buffer)
        except BadRequest as exc:
            conn.request = exc
        if conn.request is None:
            return
        del self._reading[conn]
        self._selector.unregister(conn.sock)
        conn.registered = 0
        conn.state = "busy"
        self._busy.add(conn)
        self._jobs.put(conn)

    def _take_back(self) -> None:
        """Connections the workers have answered: their answers go out."""
        while self._returned:
            conn = self._returned.popleft()
            self._busy.discard(conn)
            conn.state = "writing"
            self._wait(conn, self._writing, selectors.EVENT_WRITE)
            self._write(conn)

    def _write(self, conn: Connection) -> None:
        """Send what the socket takes of the answer; once all is sent, close the connection or wait for
        its next request."""
        while conn.answer:
            try:
                sent = conn.sock.send(conn.answer)
            except (BlockingIOError, ssl.SSLWantWriteError, ssl.SSLWantReadError):
                return
            except OSError:
                self._close(conn)
                return
            conn.answer = conn.answer[sent:]
        del self._writing[conn]
        if not conn.keep_alive or self._stop.is_set():
            self._close(conn)
            return
        conn.state = "idle"
        self._wait(conn, self._idle, selectors.EVENT_READ)
        if conn.buffer:  # a pipelined request
            self._ready(conn)

    def _expire(self, now: float) -> None:
        for where, timeout in self._queues():
            while where:
                conn = next(iter(where))
                if conn.since + timeout > now:
                    break
                self._close(conn)

    def _close(self, conn: Connection) -> None:
        for where, _ in self._queues():
            where.pop(conn, None)
        if conn.registered:
            with contextlib.suppress(KeyError, ValueError):
                self._selector.unregister(conn.sock)
            conn.registered = 0
        with contextlib.suppress(OSError):
            conn.sock.close()
        conn.state = "closed"
        self._open -= 1

    # ------------------------------------------------------------------ the workers

    def _work(self) -> None:
        while True:
            conn = self._jobs.get()
            if conn is None:
                return
            request, conn.request = conn.request, None
            assert request is not None
            answer, conn.keep_alive = self._answer(request, conn)
            conn.answer = memoryview(answer)
            self._returned.append(conn)
            self._wake()

    def _answer(self, request: Request | BadRequest, conn: Connection) -> tuple[bytes, bool]:
        """The answer to ``request``, and whether the connection stays open after it."""
        if isinstance(request, BadRequest):
            body = f"{request.status.split(' ', 1)[1]}\n".encode()
            return response_bytes(request.status, [("Content-Type", "text/plain; charset=utf-8")], body,
                                  head_only=False, keep_alive=False, version="HTTP/1.1"), False
        keep_alive = request.keep_alive and not self._stop.is_set()
        try:
            status, headers, body = self._call(request, conn)
        except Exception:  # noqa: BLE001 - the app failed: 500, as a Go handler's panic ends its connection
            status, body = "500 Internal Server Error", b"Internal Server Error\n"
            headers = [("Content-Type", "text/plain; charset=utf-8")]
            keep_alive = False
        head_only = request.method == "HEAD"
        return response_bytes(status, headers, body, head_only=head_only, keep_alive=keep_alive,
                              version=request.version), keep_alive

    def _call(self, request: Request, conn: Connection) -> tuple[str, list[tuple[str, str]], bytes]:
        """Run the WSGI app (PEP 3333) on ``request``; its answer, whole."""
        started: list[Any] = []
        chunks: list[bytes] = []

        def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            if started and exc_info is None:
                raise AssertionError("start_response called twice without exc_info")
            started[:] = [status, list(headers)]
            return chunks.append

        result = self._app(self._environ(request, conn), start_response)
        try:
            chunks.extend(result)
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()
        if not started:
            raise AssertionError("the app did not call start_response")
        return started[0], started[1], b"".join(chunks)

    def _environ(self, request: Request, conn: Connection) -> dict[str, Any]:
        path, _, query = request.target.partition("?")
        if not path.startswith("/"):  # the absolute form, http://host/metrics
            absolute = urllib.parse.urlsplit(request.target)
            path, query = absolute.path, absolute.query
        environ: dict[str, Any] = {
            "REQUEST_METHOD": request.method,
            "SCRIPT_NAME": "",
            "PATH_INFO": urllib.parse.unquote(path, "iso-8859-1"),
            "QUERY_STRING": query,
            "SERVER_NAME": str(self.server_address[0]),
            "SERVER_PORT": str(self.server_port),
            "SERVER_PROTOCOL": request.version,
            "REMOTE_ADDR": str(conn.address[0]) if isinstance(conn.address, tuple) else "",
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": "https" if self._context is not None else "http",
            "wsgi.input": io.BytesIO(request.body),
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": True,
            "wsgi.multiprocess": False,
            "wsgi.run_once": False,
        }
        if self._context is not None:
            environ["HTTPS"] = "on"
        for name, value in request.headers:
            if "_" in name:  # CGI names cannot tell it from a dash: dropped, as wsgiref drops it
                continue
            key = name.upper().replace("-", "_")
            if key not in ("CONTENT_TYPE", "CONTENT_LENGTH"):
                key = f"HTTP_{key}"
            environ[key] = f"{environ[key]},{value}" if key in environ else value
        return environ
