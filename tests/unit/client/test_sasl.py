"""SASL PLAIN and SCRAM client side: RFC test vectors and an in-memory server doing the exchange."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import os
from typing import Any

import pytest

from kafka_admin_kraft import Admin, AsyncAdmin
from kafka_admin_kraft.client.sasl import PlainMechanism, SaslFailure, ScramMechanism
from kafka_admin_kraft.errors import AuthenticationError
from kafka_admin_kraft.protocol import messages
from unit.client.fake import DROP, AsyncFakeNetwork, FakeNetwork, FakeNode, admin, describe_cluster


def test_rfc5802_scram_sha1_vector() -> None:
    client = ScramMechanism("SCRAM-SHA-1", "user", "pencil", nonce="fyko+d2lbbFgONRv9qkxdawL")
    assert client.initial() == b"n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL"
    final = client.respond(b"r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096")
    assert final == b"c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts="
    assert client.respond(b"v=rmF9pqV8S7suAoZWja4dJRkFsKQ=") is None and client.complete


def test_rfc7677_scram_sha256_vector() -> None:
    client = ScramMechanism("SCRAM-SHA-256", "user", "pencil", nonce="rOprNGfwEbeRWgbNEkqO")
    assert client.initial() == b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
    final = client.respond(
        b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    )
    assert final == (
        b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
        b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
    )
    assert client.respond(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=") is None


def test_scram_refuses_a_wrong_server_signature_and_weak_parameters() -> None:
    client = ScramMechanism("SCRAM-SHA-256", "user", "pencil", nonce="rOprNGfwEbeRWgbNEkqO")
    client.initial()
    client.respond(b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
    with pytest.raises(SaslFailure, match="signature"):
        client.respond(b"v=AAAATRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
    with pytest.raises(SaslFailure, match="iteration"):
        ScramMechanism("SCRAM-SHA-512", "u", "p", nonce="abc").respond(b"r=abcdef,s=AAAA,i=100")
    with pytest.raises(SaslFailure, match="nonce"):
        ScramMechanism("SCRAM-SHA-512", "u", "p", nonce="abc").respond(b"r=xyz,s=AAAA,i=4096")
    assert ScramMechanism("SCRAM-SHA-256", "a=b,c", "p", nonce="n").initial() == b"n,,n=a=3Db=2Cc,r=n"


def test_plain_message() -> None:
    assert PlainMechanism("alice", "secret").initial() == b"\0alice\0secret"


class FakeSaslServer:
    """Kafka's server side of SaslHandshake v1 + SaslAuthenticate for one user."""

    def __init__(self, mechanisms: list[str], user: str, password: str) -> None:
        self.mechanisms = mechanisms
        self.user = user
        self.password = password
        self.state: dict[int, Any] = {}

    def install(self, node: FakeNode) -> None:
        node.handlers[17] = self.handshake
        node.handlers[36] = self.authenticate

    def handshake(self, node: FakeNode, version: int, body: Any) -> Any:
        self.state[node.node_id] = {"mechanism": body.mechanism, "step": 0}
        code = 0 if body.mechanism in self.mechanisms else 33
        return messages.SaslHandshakeResponse(error_code=code, mechanisms=self.mechanisms)

    def authenticate(self, node: FakeNode, version: int, body: Any) -> Any:
        r = messages.SaslAuthenticateResponse
        st = self.state[node.node_id]
        fail = r(
            error_code=58,
            error_message="Authentication failed during authentication due to invalid "
            "credentials with SASL mechanism " + st["mechanism"],
        )
        if st["mechanism"] == "PLAIN":
            _, user, password = body.auth_bytes.split(b"\0")
            return r() if (user.decode(), password.decode()) == (self.user, self.password) else fail
        algo = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}[st["mechanism"]]
        if st["step"] == 0:
            bare = body.auth_bytes.decode()[3:]
            attrs = dict(p.split("=", 1) for p in bare.split(","))
            salt = os.urandom(16)
            nonce = attrs["r"] + "server"
            server_first = f"r={nonce},s={base64.b64encode(salt).decode()},i=4096"
            st.update(step=1, bare=bare, server_first=server_first, salt=salt, user=attrs["n"])
            return r(auth_bytes=server_first.encode())
        final = body.auth_bytes.decode()
        without_proof, proof = final.rsplit(",p=", 1)
        salted = hashlib.pbkdf2_hmac(algo, self.password.encode(), st["salt"], 4096)
        client_key = hmac.new(salted, b"Client Key", algo).digest()
        stored = hashlib.new(algo, client_key).digest()
        auth = f"{st['bare']},{st['server_first']},{without_proof}".encode()
        signature = hmac.new(stored, auth, algo).digest()
        expected = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
        if st["user"] != self.user or base64.b64decode(proof) != expected:
            return fail
        server_key = hmac.new(salted, b"Server Key", algo).digest()
        verifier = base64.b64encode(hmac.new(server_key, auth, algo).digest()).decode()
        return r(auth_bytes=f"v={verifier}".encode())


def jaas(mechanism: str, user: str, password: str) -> str:
    module = (
        "org.apache.kafka.common.security.plain.PlainLoginModule"
        if mechanism == "PLAIN"
        else "org.apache.kafka.common.security.scram.ScramLoginModule"
    )
    return f'{module} required username="{user}" password="{password}";'


def sasl_admin(net: FakeNetwork, mechanism: str, password: str) -> Admin:
    return Admin.from_config(
        {
            "bootstrap.controllers": net.controllers(),
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": mechanism,
            "sasl.jaas.config": jaas(mechanism, "alice", password),
            "default.api.timeout.ms": "5000",
            "request.timeout.ms": "5000",
        },
        transport=net,
    )


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_each_mechanism_authenticates_before_requests(mechanism: str) -> None:
    net = FakeNetwork(2, leader=2)
    server = FakeSaslServer(["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"], "alice", "s3cret")
    for node in net.nodes.values():
        server.install(node)
    with sasl_admin(net, mechanism, "s3cret") as admin:
        assert admin.describe_metadata_quorum().leader_id == 2
    apis = [(n, api) for n, api, _, _ in net.requests]
    assert apis[:3] == [(1, "ApiVersions"), (1, "SaslHandshake"), (1, "SaslAuthenticate")]
    assert net.sent("SaslHandshake")[0][1] == 1 and net.sent("SaslAuthenticate")[0][1] == 2


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_a_wrong_password_is_an_authentication_error_not_a_retry(mechanism: str) -> None:
    net = FakeNetwork(1, leader=1)
    FakeSaslServer(["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"], "alice", "s3cret").install(net.nodes[1])
    with (
        sasl_admin(net, mechanism, "wrong") as admin,
        pytest.raises(AuthenticationError, match="invalid credentials"),
    ):
        admin.describe_metadata_quorum()
    assert net.sleeps == []


def test_a_mechanism_the_server_does_not_enable() -> None:
    net = FakeNetwork(1, leader=1)
    FakeSaslServer(["PLAIN", "SCRAM-SHA-256"], "alice", "s3cret").install(net.nodes[1])
    with sasl_admin(net, "SCRAM-SHA-512", "s3cret") as admin, pytest.raises(AuthenticationError) as caught:
        admin.describe_metadata_quorum()
    # SaslClientAuthenticator.handleSaslHandshakeResponse's class and words, then the setting to change
    assert caught.value.java_exception == "UnsupportedSaslMechanismException"
    assert caught.value.reason == (
        "Client SASL mechanism 'SCRAM-SHA-512' not enabled in the server, enabled mechanisms are "
        "[PLAIN, SCRAM-SHA-256] (set sasl.mechanism to one of them)"
    )
    assert net.sleeps == []


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-512"])
def test_a_refused_password_is_kafkas_sasl_authentication_exception(mechanism: str) -> None:
    net = FakeNetwork(1, leader=1)
    FakeSaslServer(["PLAIN", "SCRAM-SHA-512"], "alice", "s3cret").install(net.nodes[1])
    with sasl_admin(net, mechanism, "wrong") as admin, pytest.raises(AuthenticationError) as caught:
        admin.describe_metadata_quorum()
    assert caught.value.java_exception == "SaslAuthenticationException"
    assert caught.value.reason == (
        "Authentication failed during authentication due to invalid credentials with SASL mechanism "
        f"{mechanism} (check the username and password in sasl.jaas.config)"
    )
    assert caught.value.node == "10.0.0.1:9091"


def test_a_server_signature_the_client_refuses() -> None:
    net = FakeNetwork(1, leader=1)
    FakeSaslServer(["SCRAM-SHA-512"], "alice", "s3cret").install(net.nodes[1])
    authenticate = net.nodes[1].handlers[36]

    def forged(node: FakeNode, version: int, body: Any) -> Any:
        answer = authenticate(node, version, body)
        if answer.auth_bytes.startswith(b"v="):
            answer.auth_bytes = b"v=" + base64.b64encode(bytes(64))
        return answer

    net.nodes[1].handlers[36] = forged
    with sasl_admin(net, "SCRAM-SHA-512", "s3cret") as admin, pytest.raises(AuthenticationError) as caught:
        admin.describe_metadata_quorum()
    assert caught.value.java_exception == "SaslAuthenticationException"
    assert caught.value.reason == (
        "SCRAM-SHA-512: the server's SCRAM signature is wrong: it does not know the password")


def test_sasl_settings_against_a_kafka_listener_without_sasl() -> None:
    """Kafka answers SaslHandshake outside SASL with ILLEGAL_SASL_STATE (the fake's default)."""
    net = FakeNetwork(1, leader=1)
    with sasl_admin(net, "PLAIN", "s3cret") as admin, pytest.raises(AuthenticationError) as caught:
        admin.describe_metadata_quorum()
    assert caught.value.java_exception == "IllegalSaslStateException"
    assert caught.value.reason == (
        "Unexpected handshake request with client mechanism PLAIN, enabled mechanisms are [] (the listener "
        "at 10.0.0.1:9091 does not use SASL: set security.protocol=PLAINTEXT and drop sasl.mechanism and "
        "sasl.jaas.config)"
    )
    assert net.sleeps == []


def test_sasl_settings_against_a_listener_that_does_not_offer_the_handshake() -> None:
    net = FakeNetwork(1, leader=1)
    del net.nodes[1].versions[17], net.nodes[1].versions[36]
    with sasl_admin(net, "SCRAM-SHA-256", "s3cret") as admin, pytest.raises(AuthenticationError) as caught:
        admin.describe_metadata_quorum()
    assert caught.value.java_exception == "IllegalSaslStateException"
    assert caught.value.reason == (
        "the server does not offer SaslHandshake: the listener at 10.0.0.1:9091 does not use SASL: set "
        "security.protocol=PLAINTEXT and drop sasl.mechanism and sasl.jaas.config"
    )


def sasl_listener(net: FakeNetwork, mechanisms: list[str]) -> None:
    """Every node a SASL listener: SaslHandshake answered, any other request but ApiVersions closes the
    connection (Kafka's SaslServerAuthenticator before authentication)."""
    FakeSaslServer(mechanisms, "alice", "s3cret").install(net.nodes[1])
    for node in net.nodes.values():
        node.handlers[17] = net.nodes[1].handlers[17]
        for api in (55, 60, 80, 81, 57):
            node.handlers[api] = lambda *_: DROP


@pytest.mark.parametrize(("mechanisms", "named"), [(["SCRAM-SHA-512"], "SCRAM-SHA-512"),
                                                  (["PLAIN", "SCRAM-SHA-256"], "<one of them>")])
def test_a_sasl_listener_reached_without_sasl_fails_at_once(mechanisms: list[str], named: str) -> None:
    net = FakeNetwork(3, leader=2)
    sasl_listener(net, mechanisms)
    with admin(net) as client, pytest.raises(AuthenticationError) as caught:
        client.describe_metadata_quorum()
    assert caught.value.java_exception == "IllegalSaslStateException"
    assert caught.value.reason == (
        f"the listener at 10.0.0.1:9091 wants SASL authentication (enabled mechanisms are "
        f"[{', '.join(mechanisms)}]) and closed the connection at the first request sent without it: set "
        f"security.protocol=SASL_PLAINTEXT, sasl.mechanism={named} and sasl.jaas.config"
    )
    assert net.sleeps == []
    # the second connection asked the handshake, and both were closed
    assert [api for _, api, _, _ in net.requests] == ["ApiVersions", "DescribeCluster", "ApiVersions",
                                                     "SaslHandshake"]
    assert all(conn.closed for conn in net.opened)


def test_a_close_from_a_listener_without_sasl_is_still_a_lost_connection() -> None:
    """The same close from a node that refuses the handshake is retried as before."""
    net = FakeNetwork(1, leader=1)
    drops = iter([DROP])
    net.nodes[1].handlers[60] = lambda node, version, body: next(drops, None) or describe_cluster(
        node, version, body)
    with admin(net) as client:
        assert client.describe_metadata_quorum().leader_id == 1
    assert len(net.sleeps) == 1
    assert [api for _, api, _, _ in net.requests][:4] == ["ApiVersions", "DescribeCluster", "ApiVersions",
                                                         "SaslHandshake"]


def test_the_async_client_tells_the_same() -> None:
    net = FakeNetwork(1, leader=1)
    sasl_listener(net, ["PLAIN"])

    async def main() -> None:
        async with AsyncAdmin.from_config({"bootstrap.controllers": net.controllers()},
                                          transport=AsyncFakeNetwork(net)) as client:
            await client.describe_metadata_quorum()

    with pytest.raises(AuthenticationError, match="wants SASL authentication"):
        asyncio.run(main())
