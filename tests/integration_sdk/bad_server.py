"""A TCP server on 127.0.0.1 that is not Kafka: it answers each request with bytes that are not a
response, for tests that list it before a real controller."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from integration.harness import HOST

Answer = Callable[[bytes], bytes]
"""The bytes sent back for the first bytes of a request."""

ANSWERS: dict[str, Answer] = {
    # a size prefix of 2^31-1: more than any client accepts
    "huge-frame": lambda request: b"\x7f\xff\xff\xff" + b"\x00" * 16,
    # a negative size prefix
    "negative-frame": lambda request: b"\xff\xff\xff\xfe",
    # what an HTTP server says: its first four bytes read as a size of about 1.2 GB
    "http": lambda request: b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n",
    # a well-framed answer to the right correlation id whose body decodes as nothing Kafka sends
    "bad-body": lambda request: b"\x00\x00\x00\x07" + request[8:12] + b"\xff\xff\xff",
}


@contextmanager
def garbage_server(answer: Answer) -> Iterator[str]:
    """``host:port`` of a server answering every request with ``answer(request)``; stopped on exit."""
    listener = socket.socket()
    listener.bind((HOST, 0))
    listener.listen(16)
    listener.settimeout(0.1)
    stop = threading.Event()
    accepted: list[socket.socket] = []

    def serve(conn: socket.socket) -> None:
        conn.settimeout(0.1)
        while not stop.is_set():
            try:
                request = conn.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                return
            if not request:
                return
            try:
                conn.sendall(answer(request))
            except OSError:
                return

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            accepted.append(conn)
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"{HOST}:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(2)
        for conn in accepted:
            conn.close()
        listener.close()
