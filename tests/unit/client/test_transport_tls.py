"""TLS failures as the transports report them: Kafka's SslAuthenticationException with the cause and the
setting to change, and a security protocol that does not fit the listener told at once (a plaintext
client at a TLS listener, a TLS client at a plaintext one), sync and async, against local listeners."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kafka_admin_kraft import Admin, AsyncAdmin
from kafka_admin_kraft.client.transport import (
    client_hello,
    is_probe_answer,
    is_tls_record,
    plaintext_probe,
    tls_alert,
    tls_failure,
)
from kafka_admin_kraft.errors import AuthenticationError, KafkaConnectionError, KafkaTimeoutError
from unit.client.test_config_tls import TlsKafka, pki, props

__all__ = ["pki"]  # the fixture, used by name

Run = Callable[[dict[str, str]], Any]


def run_sync(config: dict[str, str]) -> Any:
    with Admin.from_config(config) as admin:
        return admin.describe_metadata_quorum()


def run_async(config: dict[str, str]) -> Any:
    async def main() -> Any:
        async with AsyncAdmin.from_config(config) as admin:
            return await admin.describe_metadata_quorum()

    return asyncio.run(main())


DRIVERS = pytest.mark.parametrize("run", [run_sync, run_async], ids=["sync", "async"])


def failure(run: Run, config: dict[str, str]) -> AuthenticationError:
    """The AuthenticationError a call raises, checked to come at once rather than after retries."""
    started = time.monotonic()
    with pytest.raises(AuthenticationError) as caught:
        run(config)
    assert time.monotonic() - started < 2
    return caught.value


def test_the_probes_tell_tls_from_kafka() -> None:
    hello = client_hello()
    assert is_tls_record(hello) and hello[5] == 1  # a handshake record holding a ClientHello
    assert is_tls_record(b"\x15\x03\x03\x00\x02\x02\x46")  # an alert, as Java's SSLEngine sends plaintext
    assert not is_tls_record(b"\x00\x00\x00\x10") and not is_tls_record(b"\x16")
    probe = plaintext_probe()
    assert not is_tls_record(probe)
    assert is_probe_answer(probe[:4] + probe[8:12]) and not is_probe_answer(probe[:4] + b"\0\0\0\1")


@DRIVERS
def test_a_plaintext_client_at_a_tls_listener(pki: dict[str, Path], run: Run) -> None:
    with TlsKafka(pki["server"], pki["ca"]) as tls:
        error = failure(run, {**props(tls.port), "security.protocol": "PLAINTEXT"})
    assert error.java_exception == "SslAuthenticationException"
    assert error.reason == (
        f"the listener at 127.0.0.1:{tls.port} speaks TLS (it answered a TLS ClientHello) and drops "
        "plaintext requests: set security.protocol=SSL (SASL_SSL with SASL) and ssl.truststore.location to "
        "the CA of its certificate"
    )


@DRIVERS
def test_a_tls_client_at_a_plaintext_listener(pki: dict[str, Path], run: Run) -> None:
    with TlsKafka(pki["server"], pki["ca"], tls=False) as plain:
        error = failure(run, props(plain.port, **{"ssl.truststore.location": str(pki["ca"])}))
    assert error.java_exception == "SslAuthenticationException"
    assert error.reason == (
        f"SSL handshake failed: the listener at 127.0.0.1:{plain.port} does not speak TLS (it answered a "
        "plaintext ApiVersions request): set security.protocol=PLAINTEXT (SASL_PLAINTEXT with SASL) and drop "
        "the ssl.* settings"
    )


@DRIVERS
def test_an_untrusted_certificate_and_a_host_it_does_not_name(pki: dict[str, Path], run: Run) -> None:
    with TlsKafka(pki["server"], pki["ca"]) as tls:
        untrusted = failure(run, props(tls.port))
    assert untrusted.java_exception == "SslAuthenticationException"
    assert untrusted.reason == (
        "SSL handshake failed: certificate verify failed: unable to get local issuer certificate (the "
        "server's TLS certificate is not trusted: put the CA that signed it in ssl.truststore.location or "
        "ssl.truststore.certificates)"
    )
    with TlsKafka(pki["wronghost"], pki["ca"]) as tls:
        elsewhere = failure(run, props(tls.port, **{"ssl.truststore.location": str(pki["ca"])}))
    assert elsewhere.reason.startswith("SSL handshake failed: certificate verify failed: IP address mismatch")
    assert elsewhere.reason.endswith(
        f"(the server's TLS certificate does not name the host of 127.0.0.1:{tls.port}: connect by a name "
        "or address it holds, or set ssl.endpoint.identification.algorithm to empty to skip the check)"
    )


@DRIVERS
def test_a_client_certificate_the_server_wants(pki: dict[str, Path], run: Run) -> None:
    """TLS 1.3 ends the client's side of the handshake first, so the server's refusal comes with the first
    answer; an asyncio server closes without the alert: a lost connection still, with its likely cause."""
    with TlsKafka(pki["server"], pki["ca"], require_client_cert=True) as tls:
        config = props(tls.port, **{"ssl.truststore.location": str(pki["ca"]), "request.timeout.ms": "1000",
                                    "default.api.timeout.ms": "1000"})
        with pytest.raises(KafkaTimeoutError) as caught:
            run(config)
    assert str(caught.value).endswith(
        " right after the TLS handshake (a listener with "
        "ssl.client.auth=required does so when this client has no certificate it trusts: check "
        "ssl.keystore.location)"
    )


def test_a_tls_alert_is_an_authentication_failure() -> None:
    """What a Java server sends (SslTransportLayer flushes its alert): the alert's reason decides the fix."""
    def alert(reason: str, text: str) -> ssl.SSLError:
        error = ssl.SSLError(1, f"[SSL: {reason}] {text} (_ssl.c:2580)")
        error.reason = reason
        return error

    required = alert("TLSV13_ALERT_CERTIFICATE_REQUIRED", "tlsv13 alert certificate required")
    assert tls_alert(required)
    error = tls_failure("h:1", required, plaintext_kafka=False)
    assert isinstance(error, AuthenticationError) and error.java_exception == "SslAuthenticationException"
    assert error.reason == (
        "SSL handshake failed: tlsv13 alert certificate required (the server wants a client certificate it "
        "trusts: set ssl.keystore.location (or ssl.keystore.key and ssl.keystore.certificate.chain) to one "
        "signed by a CA in its truststore)"
    )
    version = tls_failure("h:1", alert("TLSV1_ALERT_PROTOCOL_VERSION", "tlsv1 alert protocol version"),
                          plaintext_kafka=False)
    assert version.args[0].endswith("(the server and this client share no TLS version or cipher suite: "
                                    "check ssl.protocol)")
    eof = ssl.SSLEOFError(8, "EOF occurred in violation of protocol")
    lost = tls_failure("h:1", eof, plaintext_kafka=False)
    assert type(lost) is KafkaConnectionError
    assert not tls_alert(ConnectionResetError(104, "Connection reset by peer"))


@DRIVERS
def test_a_listener_that_drops_everything_is_still_a_lost_connection(run: Run) -> None:
    """Neither probe is answered: the call retries until its timeout, as for any lost connection."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []

    def drop() -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = listener.accept()
                accepted.append(conn)
                conn.close()

    threading.Thread(target=drop, daemon=True).start()
    port = listener.getsockname()[1]
    try:
        for protocol in ("PLAINTEXT", "SSL"):
            config = {**props(port), "security.protocol": protocol, "default.api.timeout.ms": "1000",
                      "request.timeout.ms": "1000"}
            before = len(accepted)
            with pytest.raises((KafkaConnectionError, KafkaTimeoutError)) as caught:
                run(config)
            assert not isinstance(caught.value, AuthenticationError)
            assert len(accepted) - before >= 3  # tried again (and probed, in plaintext) until the timeout
    finally:
        listener.close()
