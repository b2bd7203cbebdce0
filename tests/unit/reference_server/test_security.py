"""The SASL server side against the SDK's client mechanisms, in memory."""

from __future__ import annotations

import pytest

from kafka_admin_kraft.client.sasl import mechanism_for
from reference_server.security import (
    PLAIN_FAILED,
    AuthenticationFailed,
    PlainServer,
    SaslServer,
    ScramCredential,
    ScramServer,
)


def _exchange(server: SaslServer, mechanism: str, user: str, password: str) -> None:
    client = mechanism_for(mechanism, user, password)
    token: bytes | None = client.initial()
    while token is not None:
        token = client.respond(server.evaluate(token))
    assert server.complete and client.complete


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_server(mechanism: str) -> None:
    users = {"a=b,c": ScramCredential.derive(mechanism, "secret")}
    _exchange(ScramServer(mechanism, users), mechanism, "a=b,c", "secret")
    for user, password in (("a=b,c", "wrong"), ("nobody", "secret")):
        with pytest.raises(AuthenticationFailed, match=f"invalid credentials.* {mechanism}"):
            _exchange(ScramServer(mechanism, users), mechanism, user, password)


def test_plain_server() -> None:
    _exchange(PlainServer({"alice": "secret"}), "PLAIN", "alice", "secret")
    with pytest.raises(AuthenticationFailed, match=PLAIN_FAILED):
        PlainServer({"alice": "secret"}).evaluate(b"\0alice\0wrong")
    with pytest.raises(AuthenticationFailed, match="different from username"):
        PlainServer({"alice": "secret"}).evaluate(b"bob\0alice\0secret")
