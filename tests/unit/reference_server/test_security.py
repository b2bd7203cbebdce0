"""The SASL server side against the SDK's client mechanisms, in memory."""

from __future__ import annotations

import pytest

from kafka_admin_kraft.client.config import SaslSettings
from kafka_admin_kraft.client.sasl import mechanism_for
from kafka_admin_kraft.config.security import PLAIN_MODULE, SCRAM_MODULE
from kafka_admin_kraft_server.security import (
    PLAIN_FAILED,
    AuthenticationFailed,
    ListenerSecurity,
    PlainServer,
    SaslServer,
    SaslSession,
    ScramCredential,
    ScramServer,
    principal_name,
)

LOGIN_MODULE = {"PLAIN": PLAIN_MODULE, "SCRAM-SHA-256": SCRAM_MODULE, "SCRAM-SHA-512": SCRAM_MODULE}


def _exchange(server: SaslServer, mechanism: str, user: str, password: str) -> None:
    settings = SaslSettings(mechanism, LOGIN_MODULE[mechanism], {"username": user, "password": password})
    client = mechanism_for(settings, "localhost")
    token: bytes | None = client.initial()
    while token is not None:
        token = client.respond(server.evaluate(token))
    assert server.complete and client.complete
    assert server.authorization_id == user


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


def test_principal_names() -> None:
    """SASL: the authorization id; TLS with a client certificate: its subject in RFC 2253 order (last
    attribute first) with special characters escaped; otherwise ANONYMOUS."""
    session = SaslSession(ListenerSecurity("BROKER", "SASL_SSL"), "/127.0.0.1:5000",
                          authenticated=True, principal="alice")
    subject = ((("countryName", "US"),), (("organizationName", "Acme, Inc"),), (("commonName", "client"),))
    assert principal_name(session, {"subject": subject}) == "alice"
    assert principal_name(None, {"subject": subject}) == "CN=client,O=Acme\\, Inc,C=US"
    unauthenticated = SaslSession(ListenerSecurity("BROKER", "SASL_SSL"), "/127.0.0.1:5000")
    assert principal_name(unauthenticated, None) == principal_name(None, {}) == "ANONYMOUS"
