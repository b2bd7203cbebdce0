"""TLS and SASL end to end: reference quorums whose controller listener (and the voters' own
connections to each other) use SSL, SASL_SSL or SASL_PLAINTEXT, described through the Admin SDK."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from integration.client import ConnectionClosed
from integration.harness import FAST_ELECTIONS, HOST, Cluster

from integration_sdk.secured import describe_replicated
from kafka_admin_kraft import Admin, AsyncAdmin
from kafka_admin_kraft.errors import AuthenticationError
from kafka_admin_kraft.protocol import messages

pytest.importorskip("cryptography.x509", reason="the cryptography package makes the test certificates")
from integration_sdk.pki import Pki, pki_fixture  # noqa: E402, F401 (the fixture)

Make = Callable[..., Cluster]
ADMIN_PASSWORD = "admin-secret"
PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"


def _ssl_properties(pki: Pki, keystore: Path) -> dict[str, str]:
    return {
        "ssl.keystore.type": "PEM",
        "listener.name.controller.ssl.keystore.location": str(keystore),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(pki.truststore),
    }


def _jaas(module: str, users: dict[str, str]) -> str:
    entries = " ".join(f'user_{name}="{password}"' for name, password in users.items())
    return f'{module} required username="admin" password="{ADMIN_PASSWORD}" {entries};'


MECHANISMS = {"PLAIN": PLAIN, "SCRAM-SHA-256": SCRAM, "SCRAM-SHA-512": SCRAM}


def _sasl_properties(inter_controller: str, users: dict[str, str]) -> dict[str, str]:
    """A controller listener enabling every mechanism, the voters using ``inter_controller``."""
    properties = {"sasl.enabled.mechanisms": ",".join(MECHANISMS),
                  "sasl.mechanism.controller.protocol": inter_controller}
    for mechanism, module in MECHANISMS.items():
        properties[f"listener.name.controller.{mechanism.lower()}.sasl.jaas.config"] = _jaas(module, users)
    return properties


def _cluster(make_cluster: Make, protocol: str, extra: dict[str, str], size: int = 3) -> Cluster:
    properties = dict(FAST_ELECTIONS)
    properties["listener.security.protocol.map"] = f"CONTROLLER:{protocol}"
    properties.update(extra)
    return make_cluster(size, properties=properties)


def test_ssl_quorum(make_cluster: Make, pki: Pki) -> None:
    keystore = pki.keystore("server.pem", ["localhost"], [HOST])
    cluster = _cluster(make_cluster, "SSL", _ssl_properties(pki, keystore))
    describe_replicated(cluster, "TLS", security_protocol="SSL",
                        ssl_truststore_location=str(pki.truststore))

    # A plaintext client against the TLS listener gets nowhere, and the node carries on.
    node = cluster.nodes[1]
    started = time.monotonic()
    with pytest.raises((OSError, ConnectionClosed)), node.client(timeout=2) as client:
        client.api_versions()
    assert time.monotonic() - started < 10
    cluster.assert_running()
    describe_replicated(cluster, "TLS", security_protocol="SSL",
                        ssl_truststore_location=str(pki.truststore))

    # No CA to check the certificate against: a TLS failure, reported as an authentication error.
    with Admin(bootstrap_controllers=cluster.bootstrap_servers(), default_api_timeout_ms=10000,
               request_timeout_ms=5000,
               security_protocol="SSL") as admin, pytest.raises(AuthenticationError, match="TLS"):
        admin.describe_metadata_quorum()


def test_ssl_hostname_verification(make_cluster: Make, pki: Pki) -> None:
    keystore = pki.keystore("localhost-only.pem", ["localhost"], [])
    cluster = _cluster(make_cluster, "SSL", _ssl_properties(pki, keystore), size=1)
    port = cluster.nodes[1].port
    started = time.monotonic()
    with Admin(bootstrap_controllers=f"{HOST}:{port}", default_api_timeout_ms=10000,
               request_timeout_ms=5000,
               security_protocol="SSL", ssl_truststore_location=str(pki.truststore)) as admin, \
            pytest.raises(AuthenticationError, match="(?i)hostname|IP address mismatch"):
        admin.describe_metadata_quorum()
    assert time.monotonic() - started < 8
    cluster.assert_running()


def test_sasl_ssl_quorum_with_every_mechanism(make_cluster: Make, pki: Pki) -> None:
    keystore = pki.keystore("server.pem", ["localhost"], [HOST])
    extra = _ssl_properties(pki, keystore)
    extra.update(_sasl_properties("SCRAM-SHA-512", {"admin": ADMIN_PASSWORD, "alice": "alice-secret"}))
    cluster = _cluster(make_cluster, "SASL_SSL", extra)
    tls = {"security_protocol": "SASL_SSL", "ssl_truststore_location": str(pki.truststore)}
    for mechanism, module in MECHANISMS.items():
        describe_replicated(cluster, "SASL_SSL", **tls, sasl_mechanism=mechanism,
                            sasl_jaas_config=f'{module} required username="alice" password="alice-secret";')

    started = time.monotonic()
    with Admin(bootstrap_controllers=cluster.bootstrap_servers(), default_api_timeout_ms=20000,
               request_timeout_ms=5000, **tls, sasl_mechanism="SCRAM-SHA-512",
               sasl_jaas_config=f'{SCRAM} required username="alice" password="wrong";') as admin, \
            pytest.raises(AuthenticationError, match="invalid credentials with SASL mechanism SCRAM-SHA-512"):
        admin.describe_metadata_quorum()
    assert time.monotonic() - started < 5
    cluster.assert_running()


def test_sasl_plaintext_quorum_with_every_mechanism(make_cluster: Make) -> None:
    users = {"admin": ADMIN_PASSWORD, "bob": "bob-secret"}
    cluster = _cluster(make_cluster, "SASL_PLAINTEXT", _sasl_properties("PLAIN", users))
    for mechanism, module in MECHANISMS.items():
        describe_replicated(cluster, "SASL_PLAINTEXT", security_protocol="SASL_PLAINTEXT",
                            sasl_mechanism=mechanism,
                            sasl_jaas_config=f'{module} required username="bob" password="bob-secret";')

    started = time.monotonic()
    with Admin(bootstrap_controllers=cluster.bootstrap_servers(), default_api_timeout_ms=20000,
               request_timeout_ms=5000,
               security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN",
               sasl_jaas_config=f'{PLAIN} required username="bob" password="wrong";') as admin, \
            pytest.raises(AuthenticationError, match="Invalid username or password"):
        admin.describe_metadata_quorum()
    assert time.monotonic() - started < 5

    node = cluster.nodes[1]
    # A mechanism the listener does not enable: UNSUPPORTED_SASL_MECHANISM, listing the enabled ones.
    with node.client(timeout=2) as client:
        answer = client.request(messages.SaslHandshakeRequest(mechanism="OAUTHBEARER"), 1)
        assert (answer.error_code, answer.mechanisms) == (33, list(MECHANISMS))

    # Without authenticating, only ApiVersions is answered: DescribeQuorum closes the connection.
    with node.client(timeout=2) as client:
        assert client.api_versions().error_code == 0
        with pytest.raises((OSError, ConnectionClosed)):
            client.describe_quorum(2)
    cluster.assert_running()


# --------------------------------------------------------------------------- each failure, as Kafka names it


def _failure(cluster: Cluster, **settings: str) -> AuthenticationError:
    """The AuthenticationError a describe raises, within seconds: none of these is retried."""
    started = time.monotonic()
    with Admin(bootstrap_controllers=cluster.bootstrap_servers(), default_api_timeout_ms=30000,
               request_timeout_ms=10000, **settings) as admin, pytest.raises(AuthenticationError) as caught:
        admin.describe_metadata_quorum()
    assert time.monotonic() - started < 5
    return caught.value


def test_each_sasl_failure_names_kafkas_exception_and_the_setting(make_cluster: Make) -> None:
    users = {"admin": ADMIN_PASSWORD, "bob": "bob-secret"}
    extra = {"sasl.enabled.mechanisms": "SCRAM-SHA-512,PLAIN", "sasl.mechanism.controller.protocol": "PLAIN",
             "listener.name.controller.scram-sha-512.sasl.jaas.config": _jaas(SCRAM, users),
             "listener.name.controller.plain.sasl.jaas.config": _jaas(PLAIN, users)}
    cluster = _cluster(make_cluster, "SASL_PLAINTEXT", extra, size=1)
    where = cluster.bootstrap_servers()

    def client(mechanism: str, user: str, password: str) -> dict[str, str]:
        module = PLAIN if mechanism == "PLAIN" else SCRAM
        return {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": mechanism,
                "sasl_jaas_config": f'{module} required username="{user}" password="{password}";'}

    scram_refused = ("Authentication failed during authentication due to invalid credentials with SASL "
                     "mechanism SCRAM-SHA-512 (check the username and password in sasl.jaas.config)")
    # A wrong password and an unknown user read the same: SaslServerAuthenticator does not tell them apart.
    for user, password in (("bob", "wrong"), ("mallory", "bob-secret")):
        error = _failure(cluster, **client("SCRAM-SHA-512", user, password))
        assert (error.java_exception, error.reason, error.node) == (
            "SaslAuthenticationException", scram_refused, where)
    error = _failure(cluster, **client("PLAIN", "bob", "wrong"))
    assert (error.java_exception, error.reason) == (
        "SaslAuthenticationException",
        "Authentication failed: Invalid username or password (check the username and password in "
        "sasl.jaas.config)")

    error = _failure(cluster, **client("SCRAM-SHA-256", "bob", "bob-secret"))
    assert (error.java_exception, error.reason) == (
        "UnsupportedSaslMechanismException",
        "Client SASL mechanism 'SCRAM-SHA-256' not enabled in the server, enabled mechanisms are "
        "[SCRAM-SHA-512, PLAIN] (set sasl.mechanism to one of them)")

    # No SASL settings at all: the listener answers ApiVersions, then closes at DescribeCluster.
    error = _failure(cluster)
    assert (error.java_exception, error.reason) == (
        "IllegalSaslStateException",
        f"the listener at {where} wants SASL authentication (enabled mechanisms are [SCRAM-SHA-512, PLAIN]) "
        "and closed the connection at the first request sent without it: set "
        "security.protocol=SASL_PLAINTEXT, sasl.mechanism=<one of them> and sasl.jaas.config")

    async def without_sasl() -> None:
        async with AsyncAdmin(bootstrap_controllers=where, default_api_timeout_ms=30000) as admin:
            await admin.describe_metadata_quorum()

    with pytest.raises(AuthenticationError, match="wants SASL authentication"):
        asyncio.run(without_sasl())
    cluster.assert_running()


def test_each_tls_mismatch_names_the_setting(make_cluster: Make, pki: Pki) -> None:
    keystore = pki.keystore("server.pem", ["localhost"], [HOST])
    tls = _cluster(make_cluster, "SSL", _ssl_properties(pki, keystore), size=1)
    at_tls = tls.bootstrap_servers()
    error = _failure(tls)
    assert (error.java_exception, error.reason) == (
        "SslAuthenticationException",
        f"the listener at {at_tls} speaks TLS (it answered a TLS ClientHello) and drops plaintext requests: "
        "set security.protocol=SSL (SASL_SSL with SASL) and ssl.truststore.location to the CA of its "
        "certificate")
    error = _failure(tls, security_protocol="SSL")
    assert (error.java_exception, error.reason) == (
        "SslAuthenticationException",
        "SSL handshake failed: certificate verify failed: self-signed certificate in certificate chain (the "
        "server's TLS certificate is not trusted: put the CA that signed it in ssl.truststore.location or "
        "ssl.truststore.certificates)")
    error = _failure(tls, security_protocol="SASL_SSL", ssl_truststore_location=str(pki.truststore),
                     sasl_mechanism="PLAIN", sasl_jaas_config=f'{PLAIN} required username="a" password="b";')
    assert (error.java_exception, error.reason) == (
        "IllegalSaslStateException",
        "Unexpected handshake request with client mechanism PLAIN, enabled mechanisms are [] (the listener "
        f"at {at_tls} does not use SASL: set security.protocol=SSL and drop sasl.mechanism and "
        "sasl.jaas.config)")

    plain = make_cluster(1)
    at_plain = plain.bootstrap_servers()
    error = _failure(plain, security_protocol="SSL", ssl_truststore_location=str(pki.truststore))
    assert (error.java_exception, error.reason) == (
        "SslAuthenticationException",
        f"SSL handshake failed: the listener at {at_plain} does not speak TLS (it answered a plaintext "
        "ApiVersions request): set security.protocol=PLAINTEXT (SASL_PLAINTEXT with SASL) and drop the "
        "ssl.* settings")
    tls.assert_running()
    plain.assert_running()
