"""The exporter's HTTP server over real sockets: requests read whole and refused when malformed,
keep-alive, the header, idle and write timeouts (a silent client, a slowloris client, one that does
not read its answer), the bound on connections (the longest-waiting one goes, scrapes get in), a
fixed number of threads however many clients wait, and a server out of descriptors that backs off
instead of spinning."""

from __future__ import annotations

import contextlib
import os
import resource
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any, BinaryIO

import pytest

from kafka_admin_kraft_cli.metadata_quorum.http_server import (
    MAX_BODY_BYTES,
    MAX_HEADER_BYTES,
    BadRequest,
    HttpServer,
    Limits,
    Request,
    read_request,
)

FAST = Limits(header_timeout=0.5, idle_timeout=0.5, workers=2)
BIG = 16 * 1024 * 1024
"""Bytes of /big's answer: more than the socket buffers hold."""


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
    if environ["PATH_INFO"] == "/fail":
        raise RuntimeError("the app fails")
    if environ["PATH_INFO"] == "/big":
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"x" * BIG]
    body = f"{environ['REQUEST_METHOD']} {environ['PATH_INFO']}?{environ['QUERY_STRING']} " \
           f"{environ.get('HTTP_X_TEST', '-')} {environ['wsgi.input'].read().decode()}\n".encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "999")])
    return [body]


@contextmanager
def serving(limits: Limits = FAST) -> Iterator[HttpServer]:
    server = HttpServer(("127.0.0.1", 0), socket.AF_INET, app, limits=limits)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def connect(server: HttpServer) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.server_port), timeout=10)


def answer(sock: socket.socket, reader: BinaryIO | None = None) -> bytes:
    """One whole answer (its Content-Length read), or what came before the connection closed; pass the
    same ``reader`` of ``sock`` to read answers that may arrive together."""
    stream = reader or sock.makefile("rb")
    head = b""
    while not head.endswith(b"\r\n\r\n"):
        line = stream.readline()
        if not line:
            return head
        head += line
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    return head + stream.read(length)


def closed_within(sock: socket.socket, seconds: float) -> float | None:
    """How long until the server closed ``sock`` (None if it did not within ``seconds``)."""
    started = time.monotonic()
    sock.settimeout(seconds)
    try:
        while sock.recv(65536):
            pass
    except TimeoutError:
        return None
    except ConnectionResetError:
        pass
    return time.monotonic() - started


def get(server: HttpServer, path: str = "/metrics") -> bytes:
    with connect(server) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        return answer(sock)


def test_read_request_takes_whole_requests_out_of_the_buffer() -> None:
    buffer = bytearray(b"\r\nGET /metrics?a=1 HTTP/1.1\r\nHost: x\r\nX-Test:  v \r\n\r\nPOST / HTTP/1.0\r\n"
                       b"Content-Length: 3\r\n\r\nab")
    headers = (("Host", "x"), ("X-Test", "v"))
    assert read_request(buffer) == Request("GET", "/metrics?a=1", "HTTP/1.1", headers, b"", keep_alive=True)
    assert read_request(buffer) is None  # the body is one byte short
    buffer += b"cGET"
    assert read_request(buffer) == Request("POST", "/", "HTTP/1.0", (("Content-Length", "3"),), b"abc",
                                           keep_alive=False)
    assert buffer == b"GET"
    assert read_request(bytearray(b"GET / HTTP/1.0\nConnection: keep-alive\n\n")).keep_alive  # type: ignore[union-attr]
    assert not read_request(bytearray(b"GET / HTTP/1.1\r\nConnection: x, Close\r\n\r\n")).keep_alive  # type: ignore[union-attr]


@pytest.mark.parametrize(("data", "status"), [
    (b"GET /\r\n\r\n", "400 Bad Request"),
    (b"G(T / HTTP/1.1\r\n\r\n", "400 Bad Request"),
    (b"GET / HTTP/2.0\r\n\r\n", "505 HTTP Version Not Supported"),
    (b"GET / HTTP/1.1\r\nNo colon\r\n\r\n", "400 Bad Request"),
    (b"GET / HTTP/1.1\r\nA: 1\r\n folded\r\n\r\n", "400 Bad Request"),
    (b"GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", "400 Bad Request"),
    (b"GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", "400 Bad Request"),
    (b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", "501 Not Implemented"),
    (f"POST / HTTP/1.1\r\nContent-Length: {MAX_BODY_BYTES + 1}\r\n\r\n".encode(), "413 Content Too Large"),
    (b"GET / HTTP/1.1\r\n" + b"A: b\r\n" * 101 + b"\r\n", "431 Request Header Fields Too Large"),
    (b"GET / HTTP/1.1\r\nA: " + b"b" * MAX_HEADER_BYTES, "431 Request Header Fields Too Large"),
])
def test_read_request_refusals(data: bytes, status: str) -> None:
    with pytest.raises(BadRequest) as refusal:
        read_request(bytearray(data))
    assert refusal.value.status == status


def test_keep_alive_pipelining_and_refusals_on_the_wire() -> None:
    with serving() as server, connect(server) as sock:
        sock.sendall(b"GET http://example/a?q=1 HTTP/1.1\r\nX-Test: 1\r\nX_Test: spoofed\r\n\r\n"
                     b"POST /b HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi")
        reader = sock.makefile("rb")
        first = answer(sock, reader)
        assert first.startswith(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nDate: ")
        # the app's Content-Length is replaced by the true one
        assert first.endswith(b"\r\nContent-Length: 14\r\n\r\nGET /a?q=1 1 \n")
        assert answer(sock, reader).endswith(b"\r\n\r\nPOST /b? - hi\n")
        sock.sendall(b"HEAD /c HTTP/1.1\r\nConnection: close\r\n\r\n")
        head = sock.recv(65536)
        assert b"Content-Length: 12\r\nConnection: close\r\n\r\n" in head and head.endswith(b"\r\n\r\n")
        assert closed_within(sock, 5) is not None
        assert get(server, "/fail").startswith(b"HTTP/1.1 500 Internal Server Error\r\n")
        with connect(server) as bad:
            bad.sendall(b"GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n")
            refused = answer(bad)
            assert refused.startswith(b"HTTP/1.1 501 Not Implemented\r\n")
            assert refused.endswith(b"Connection: close\r\n\r\nNot Implemented\n")
        with connect(server) as old:
            old.sendall(b"GET / HTTP/1.0\r\n\r\n")
            assert b"Connection: close" in answer(old) and closed_within(old, 5) is not None


def test_silent_slow_and_idle_clients_are_closed() -> None:
    with serving() as server, connect(server) as silent, connect(server) as slow, connect(server) as idle:
        idle.sendall(b"GET / HTTP/1.1\r\n\r\n")
        assert answer(idle).startswith(b"HTTP/1.1 200 OK")
        started = time.monotonic()
        for _ in range(20):  # slowloris: a byte every 0.1 s, the request never ending
            try:
                slow.send(b"X")
            except OSError:
                break
            time.sleep(0.1)
        took = time.monotonic() - started
        assert took < 1.5, "the slowloris client was not cut off at the header timeout"
        for sock in (silent, slow, idle):
            assert closed_within(sock, 2) is not None
        assert get(server).startswith(b"HTTP/1.1 200 OK")


def test_a_client_that_does_not_read_its_answer_holds_up_nobody() -> None:
    limits = Limits(header_timeout=5, idle_timeout=5, write_timeout=1, workers=1)
    with serving(limits) as server, connect(server) as stuck:
        stuck.sendall(b"GET /big HTTP/1.1\r\n\r\n")
        time.sleep(0.3)
        started = time.monotonic()
        assert get(server).startswith(b"HTTP/1.1 200 OK")  # the one worker is free
        assert time.monotonic() - started < 0.5
        time.sleep(1.5)
        received = 0
        with contextlib.suppress(ConnectionResetError):
            while chunk := stuck.recv(1 << 20):
                received += len(chunk)
        assert received < BIG, "the answer was not cut off at the write timeout"


def test_the_longest_waiting_connection_makes_room_and_scrapes_get_in() -> None:
    limits = Limits(header_timeout=30, idle_timeout=30, workers=2, max_connections=10)
    with serving(limits) as server, ExitStack() as stack:
        waiting = [stack.enter_context(connect(server)) for _ in range(50)]
        time.sleep(0.2)
        for _ in range(5):
            assert get(server).startswith(b"HTTP/1.1 200 OK")
        still = [sock for sock in waiting if closed_within(sock, 0.05) is None]
        assert len(still) <= 9  # the bound, less the scrape's place
        assert waiting[-1] in still  # the newest stay, the oldest went


def threads(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("Threads:"))


def test_threads_stay_fixed_however_many_clients_wait() -> None:
    wanted = 1_600
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 2 * wanted + 100:
        if hard != resource.RLIM_INFINITY and hard < 2 * wanted + 100:
            pytest.skip(f"needs {2 * wanted + 100} file descriptors, the hard limit is {hard}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (2 * wanted + 100, hard))
    try:
        limits = Limits(header_timeout=30, idle_timeout=30, workers=4, max_connections=2 * wanted)
        with serving(limits) as server, ExitStack() as stack:
            assert get(server).startswith(b"HTTP/1.1 200 OK")
            before = threads(os.getpid())
            waiting = [stack.enter_context(connect(server)) for _ in range(1_500)]
            started = time.monotonic()
            assert get(server).startswith(b"HTTP/1.1 200 OK")
            assert time.monotonic() - started < 2
            assert threads(os.getpid()) == before
            assert all(closed_within(sock, 0.001) is None for sock in waiting[::100])
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


SERVER = """
import os, socket, sys, threading
from kafka_admin_kraft_cli.metadata_quorum.http_server import HttpServer, Limits

def app(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"metrics\\n"]

server = HttpServer(("127.0.0.1", 0), socket.AF_INET, app, limits=Limits(max_connections=10_000))
threading.Thread(target=server.serve_forever, daemon=True).start()
hoard = []
try:
    while True:
        hoard.append(os.open(os.devnull, os.O_RDONLY))
except OSError:
    pass
print(server.server_port, flush=True)
sys.stdin.readline()
for fd in hoard:
    os.close(fd)
print("released", flush=True)
sys.stdin.readline()
"""


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def assert_quiet(pid: int) -> None:
    used = cpu_seconds(pid)
    time.sleep(2)
    assert cpu_seconds(pid) - used < 0.4, "the server spins while out of descriptors"


def test_out_of_descriptors_it_backs_off_and_still_answers() -> None:
    """A server with every descriptor taken: accept fails with EMFILE, first with no connection of its
    own to close (it backs off), then with idle ones (it closes the longest-waiting, and answers)."""
    def few_descriptors() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

    process = subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               text=True, preexec_fn=few_descriptors)  # noqa: PLW1509 - nothing else runs yet
    try:
        assert process.stdin is not None and process.stdout is not None
        port = int(process.stdout.readline())
        with ExitStack() as stack:
            for _ in range(5):
                stack.enter_context(socket.create_connection(("127.0.0.1", port), timeout=10))
            time.sleep(0.5)
            assert_quiet(process.pid)
        process.stdin.write("release\n")
        process.stdin.flush()
        assert process.stdout.readline() == "released\n"
        with ExitStack() as stack:
            for _ in range(200):
                stack.enter_context(socket.create_connection(("127.0.0.1", port), timeout=10))
            time.sleep(0.5)
            assert_quiet(process.pid)
            for _ in range(3):
                with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
                    sock.sendall(b"GET /metrics HTTP/1.1\r\n\r\n")
                    assert answer(sock).endswith(b"\r\n\r\nmetrics\n")
    finally:
        process.kill()
        process.wait(10)
