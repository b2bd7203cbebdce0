"""One webhook POST against real sockets on 127.0.0.1: endpoints that answer a byte at a time, and a
deadline for the whole request."""

from __future__ import annotations

import datetime
import ipaddress
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests

from kafka_admin_kraft_cli.metadata_quorum.webhook_http import BODY_BYTES, post_json

DOCUMENT = {"text": "KRaft quorum x is WARNING (was OK)", "status": "WARNING"}


@dataclass
class Endpoint:
    """A TCP server that reads each request whole, then sends ``head`` at once (a byte each ``pause``
    seconds when ``trickle_head``), then ``body`` a byte each ``pause`` seconds, or else ``body`` over
    and over until the client goes (``endless``), counting what it sent in ``sent``."""

    head: bytes
    body: bytes = b""
    pause: float = 0.0
    trickle_head: bool = False
    endless: bool = False
    tls: ssl.SSLContext | None = None
    sent: int = 0
    requests: list[bytes] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http{'s' if self.tls else ''}://127.0.0.1:{self.server.getsockname()[1]}/services/T000/secret"

    def close(self) -> None:
        self.server.close()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    def _answer(self, connection: socket.socket) -> None:
        if self.tls is not None:
            connection = self.tls.wrap_socket(connection, server_side=True)
        with connection:
            request = b""
            while b"\r\n\r\n" not in request:
                request += connection.recv(65536)
            head, _, body = request.partition(b"\r\n\r\n")
            length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length:"))
            while len(body) < length:
                body += connection.recv(65536)
            self.requests.append(head)
            try:
                self._send(connection, self.head, self.trickle_head)
                self._send(connection, self.body, True)
                while self.endless:
                    self._send(connection, self.body, True)
            except OSError:
                pass  # the client gave up

    def _send(self, connection: socket.socket, data: bytes, trickle: bool) -> None:
        if not trickle or not self.pause:
            connection.sendall(data)
            self.sent += len(data)
            return
        for byte in data:
            connection.sendall(bytes([byte]))
            self.sent += 1
            time.sleep(self.pause)


@pytest.fixture
def endpoints() -> Iterator[list[Endpoint]]:
    made: list[Endpoint] = []
    yield made
    for endpoint in made:
        endpoint.close()


def head(status: str, length: int, *extra: str) -> bytes:
    lines = [f"HTTP/1.1 {status}", f"Content-Length: {length}", *extra]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def test_an_answer_within_the_deadline_is_read(endpoints: list[Endpoint]) -> None:
    endpoints.append(endpoint := Endpoint(head("200 OK", 2), b"ok"))
    answer = post_json(endpoint.url, DOCUMENT, timeout=2)
    assert (answer.status, answer.location, answer.body) == (200, None, "ok")
    [request] = endpoint.requests
    assert request.startswith(b"POST /services/T000/secret HTTP/1.1\r\n")


@pytest.mark.parametrize("trickle_head", [False, True], ids=["body", "head"])
def test_the_timeout_is_a_deadline_for_the_whole_request_not_for_each_read(
        endpoints: list[Endpoint], trickle_head: bool) -> None:
    """A byte every 50 ms never trips a per-read timeout of 500 ms; 200 bytes would take 10 s."""
    endpoints.append(endpoint := Endpoint(head("200 OK", 200), b"x" * 200, pause=0.05,
                                          trickle_head=trickle_head))
    started = time.monotonic()
    with pytest.raises(requests.Timeout):
        post_json(endpoint.url, DOCUMENT, timeout=0.5)
    assert 0.5 <= time.monotonic() - started < 2


def test_the_deadline_holds_through_an_http_proxy(endpoints: list[Endpoint],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    endpoints.append(proxy := Endpoint(head("200 OK", 200), b"x" * 200, pause=0.05))
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.server.getsockname()[1]}")
    started = time.monotonic()
    with pytest.raises(requests.Timeout):
        post_json("http://hooks.example.invalid/services/T000", DOCUMENT, timeout=0.5)
    assert time.monotonic() - started < 2
    [request] = proxy.requests
    assert request.startswith(b"POST http://hooks.example.invalid/services/T000 HTTP/1.1\r\n")


@pytest.fixture
def tls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ssl.SSLContext:
    """A server context with a self-signed certificate for 127.0.0.1, which requests is told to trust."""
    x509 = pytest.importorskip("cryptography.x509", reason="the cryptography package makes the certificate")
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(x509.oid.NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    (certificate := tmp_path / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (private := tmp_path / "key.pem").write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(certificate, private)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(certificate))
    return context


def test_over_https_an_answer_is_read_and_the_deadline_holds(endpoints: list[Endpoint],
                                                             tls: ssl.SSLContext) -> None:
    endpoints.append(quick := Endpoint(head("200 OK", 2), b"ok", tls=tls))
    assert post_json(quick.url, DOCUMENT, timeout=2).body == "ok"
    endpoints.append(slow := Endpoint(head("200 OK", 200), b"x" * 200, pause=0.05, tls=tls))
    started = time.monotonic()
    with pytest.raises(requests.Timeout):
        post_json(slow.url, DOCUMENT, timeout=0.5)
    assert time.monotonic() - started < 2


def test_of_a_huge_answer_only_the_start_is_read(endpoints: list[Endpoint]) -> None:
    """A gigabyte error page (sent for as long as the client reads) costs a prefix, not the whole."""
    endpoints.append(endpoint := Endpoint(head("500 Internal Server Error", 1 << 30), b"e" * (1 << 20),
                                          endless=True))
    started = time.monotonic()
    answer = post_json(endpoint.url, DOCUMENT, timeout=5)
    assert time.monotonic() - started < 2
    assert (answer.status, answer.body) == (500, "e" * BODY_BYTES)
    time.sleep(0.2)
    assert endpoint.sent < 64 << 20


def test_a_redirect_is_answered_not_followed(endpoints: list[Endpoint]) -> None:
    """A 307 would re-POST the alert to wherever it points (here another endpoint; it could be
    169.254.169.254)."""
    endpoints.append(elsewhere := Endpoint(head("200 OK", 2), b"ok"))
    endpoints.append(endpoint := Endpoint(head("307 Temporary Redirect", 0, f"Location: {elsewhere.url}")))
    answer = post_json(endpoint.url, DOCUMENT, timeout=2)
    assert (answer.status, answer.location, answer.body) == (307, elsewhere.url, "")
    assert (len(endpoint.requests), elsewhere.requests) == (1, [])
