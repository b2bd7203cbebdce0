"""The exporter's web server under a web configuration, in process over real sockets and real TLS:
basic authentication (401 with WWW-Authenticate, a wrong password, an unknown user), configured
headers, the rate limit, client certificates and their SANs, keep-alive and the header timeout over
TLS."""

from __future__ import annotations

import base64
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import bcrypt
import pytest
import requests

from kafka_admin_kraft_cli.metadata_quorum.http_server import Limits
from kafka_admin_kraft_cli.metadata_quorum.web_config import parse_web_config
from kafka_admin_kraft_cli.metadata_quorum.web_server import RateLimit, make_server, san_allowed

pytest.importorskip("cryptography.x509", reason="the cryptography package makes the test certificates")
from integration_sdk.pki import Pki  # noqa: E402

PASSWORD = "s3cret"


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
    start_response("200 OK", [("Content-Type", "text/plain"), ("X-Frame-Options", "sameorigin")])
    return [b"metrics\n"]


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    pki = Pki(tmp_path_factory.mktemp("pki"))
    pki.keystore_with_key_apart("server", ["localhost"], ["127.0.0.1"])
    pki.keystore("prometheus.pem", ["prometheus.example"], [])
    pki.keystore("stranger.pem", ["stranger.example"], [])
    other = Pki(pki.root / "other")
    other.keystore("forged.pem", ["prometheus.example"], [])
    return pki


@pytest.fixture(scope="module")
def hashed() -> str:
    return bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(rounds=4)).decode()


@contextmanager
def serving(pki: Pki, text: str, limits: Limits | None = None) -> Iterator[str]:
    """The server on a free port under the config ``text``; yields its base URL."""
    config = parse_web_config(text, pki.root)
    server = make_server("127.0.0.1", 0, app, config, limits)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    scheme = "https" if config.tls is not None else "http"
    try:
        yield f"{scheme}://127.0.0.1:{server.server_port}/metrics"
    finally:
        server.shutdown()
        server.server_close()


def test_basic_auth_over_tls(pki: Pki, hashed: str) -> None:
    text = f"""
tls_server_config: {{cert_file: server.crt, key_file: server.key}}
basic_auth_users: {{prometheus: '{hashed}'}}
http_server_config: {{headers: {{X-Frame-Options: deny, Strict-Transport-Security: max-age=60}}}}
"""
    with serving(pki, text) as url:
        ca = str(pki.truststore)
        for auth in (None, ("prometheus", "wrong"), ("mallory", PASSWORD), ("prometheus", "x" * 100)):
            refused = requests.get(url, verify=ca, auth=auth, timeout=10)
            assert refused.status_code == 401
            assert refused.headers["WWW-Authenticate"] == "Basic"
            assert refused.text == "Unauthorized\n"
            assert refused.headers["X-Frame-Options"] == "deny"  # configured headers go on refusals too
        answered = requests.get(url, verify=ca, auth=("prometheus", PASSWORD), timeout=10)
        assert (answered.status_code, answered.text) == (200, "metrics\n")
        assert answered.headers["X-Frame-Options"] == "deny"  # the file's value over the app's
        assert answered.headers["Strict-Transport-Security"] == "max-age=60"
        # twice more: the outcome is remembered, and stays the same
        assert requests.get(url, verify=ca, auth=("prometheus", PASSWORD), timeout=10).status_code == 200
        assert requests.get(url, verify=ca, auth=("prometheus", "wrong"), timeout=10).status_code == 401
        # TLS only: plain HTTP on the same port gets no answer, and an unverified client gets no further
        with pytest.raises(requests.ConnectionError):
            requests.get(url.replace("https", "http"), timeout=10)
        with pytest.raises(requests.exceptions.SSLError):
            requests.get(url, auth=("prometheus", PASSWORD), timeout=10)


def test_mutual_tls_and_allowed_sans(pki: Pki) -> None:
    text = f"""
tls_server_config:
  cert_file: server.crt
  key_file: server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: {pki.truststore}
  client_allowed_sans: [prometheus.example]
"""
    with serving(pki, text) as url:
        ca = str(pki.truststore)
        ok = requests.get(url, verify=ca, cert=str(pki.root / "prometheus.pem"), timeout=10)
        assert (ok.status_code, ok.text) == (200, "metrics\n")
        for client in (None, pki.root / "stranger.pem", pki.root / "other" / "forged.pem"):
            with pytest.raises(requests.ConnectionError):  # no certificate, not allowed, not from the CA
                requests.get(url, verify=ca, cert=str(client) if client else None, timeout=10)


def test_tls_versions(pki: Pki) -> None:
    text = "tls_server_config: {cert_file: server.crt, key_file: server.key, min_version: TLS13}\n"
    with serving(pki, text) as url:
        old = ssl.create_default_context(cafile=str(pki.truststore))
        old.maximum_version = ssl.TLSVersion.TLSv1_2
        host, port = url.split("/")[2].split(":")
        with pytest.raises(ssl.SSLError), socket.create_connection((host, int(port)), timeout=10) as raw:
            old.wrap_socket(raw, server_hostname="127.0.0.1")
        assert requests.get(url, verify=str(pki.truststore), timeout=10).status_code == 200


def test_rate_limit(pki: Pki) -> None:
    with serving(pki, "rate_limit: {interval: 1h, burst: 2}\n") as url:
        assert [requests.get(url, timeout=10).status_code for _ in range(3)] == [200, 200, 429]


def test_the_token_bucket() -> None:
    now = [0.0]
    limit = RateLimit(10.0, 2, clock=lambda: now[0])
    assert [limit.allow() for _ in range(3)] == [True, True, False]
    now[0] = 9.0
    assert not limit.allow()
    now[0] = 10.0
    assert limit.allow() and not limit.allow()


def test_without_a_config_nothing_is_asked(pki: Pki) -> None:
    with serving(pki, "") as url:
        assert requests.get(url, timeout=10).status_code == 200


def test_san_matching() -> None:
    cert = {"subjectAltName": (("DNS", "a.example"), ("IP Address", "2001:DB8:0:0:0:0:0:1\n"),
                               ("email", "ops@example.org"), ("URI", "spiffe://x/prometheus"))}
    assert san_allowed(cert, ["2001:db8::1"]) and san_allowed(cert, ["a.example"])
    assert san_allowed(cert, ["spiffe://x/prometheus"]) and san_allowed(cert, ["ops@example.org"])
    assert not san_allowed(cert, ["b.example", "2001:db8::2"]) and not san_allowed(None, ["a.example"])


def test_a_malformed_authorization_header_is_refused(pki: Pki, hashed: str) -> None:
    with serving(pki, f"basic_auth_users: {{u: '{hashed}'}}\n") as url:
        for header in ("Bearer abc", "Basic !!!", "Basic " + base64.b64encode(b"no-colon").decode(),
                       "Basic " + base64.b64encode(b"\xff:" + PASSWORD.encode()).decode()):
            assert requests.get(url, headers={"Authorization": header}, timeout=10).status_code == 401
        good = "basic " + base64.b64encode(f"u:{PASSWORD}".encode()).decode()
        assert requests.get(url, headers={"Authorization": good}, timeout=10).status_code == 200


def test_a_stalled_handshake_holds_up_nobody(pki: Pki) -> None:
    with serving(pki, "tls_server_config: {cert_file: server.crt, key_file: server.key}\n") as url:
        host, port = url.split("/")[2].split(":")
        with socket.create_connection((host, int(port)), timeout=10):  # connects, never says hello
            assert requests.get(url, verify=str(pki.truststore), timeout=10).status_code == 200


TLS = "tls_server_config: {cert_file: server.crt, key_file: server.key}\n"


def test_keep_alive_over_tls_and_a_stalled_or_slow_client_is_closed(pki: Pki) -> None:
    with serving(pki, TLS, Limits(header_timeout=0.5, idle_timeout=5)) as url:
        host, port = url.split("/")[2].split(":")
        context = ssl.create_default_context(cafile=str(pki.truststore))
        with context.wrap_socket(socket.create_connection((host, int(port)), timeout=10),
                                 server_hostname="127.0.0.1") as tls:
            reader = tls.makefile("rb")
            for _ in range(2):  # two requests on one connection
                tls.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
                assert reader.readline() == b"HTTP/1.1 200 OK\r\n"
                while reader.readline() != b"\r\n":
                    pass
                assert reader.read(len(b"metrics\n")) == b"metrics\n"
            started = time.monotonic()
            tls.sendall(b"GET /metrics HTTP/1.1\r\n")  # and never the rest
            assert reader.read() == b""
            assert time.monotonic() - started < 3
        with socket.create_connection((host, int(port)), timeout=10) as silent:  # never says hello
            started = time.monotonic()
            assert silent.recv(1) == b""
            assert time.monotonic() - started < 3
