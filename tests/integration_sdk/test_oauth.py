"""SASL/OAUTHBEARER end to end: reference quorums whose controller listener and voter-to-voter
connections use OAUTHBEARER, with Kafka's unsecured tokens over SASL_PLAINTEXT and with tokens from an
OAuth token endpoint verified against its JWKS over SASL_SSL, described through the Admin SDK and
``kafka-metadata-quorum --command-config``."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from console_scripts import console_script
from integration.harness import FAST_ELECTIONS, HOST, Cluster

from integration_sdk.secured import describe_replicated
from kafka_admin_kraft import Admin
from kafka_admin_kraft.errors import AuthenticationError

pytest.importorskip("cryptography.x509", reason="the cryptography package makes the test keys")
from unit.client.oauth_idp import IdentityProvider  # noqa: E402

from integration_sdk.pki import Pki, pki_fixture  # noqa: E402, F401 (the fixture)

Make = Callable[..., Cluster]
MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
LOGIN = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"
VALIDATOR = "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"
PREFIX = "listener.name.controller.oauthbearer."


@pytest.fixture
def idp(pki: Pki, tmp_path: Path) -> Iterator[IdentityProvider]:
    with IdentityProvider(pki, tmp_path, subject="admin-app") as provider:
        yield provider


def _cluster(make_cluster: Make, protocol: str, extra: dict[str, str]) -> Cluster:
    properties = dict(FAST_ELECTIONS)
    properties.update({"listener.security.protocol.map": f"CONTROLLER:{protocol}",
                       "sasl.enabled.mechanisms": "OAUTHBEARER",
                       "sasl.mechanism.controller.protocol": "OAUTHBEARER"})
    properties.update(extra)
    return make_cluster(3, properties=properties)


def _failure(cluster: Cluster, **security: Any) -> AuthenticationError:
    started = time.monotonic()
    with Admin(bootstrap_controllers=cluster.bootstrap_servers(), default_api_timeout_ms=30000,
               request_timeout_ms=10000, **security) as admin, pytest.raises(AuthenticationError) as caught:
        admin.describe_metadata_quorum()
    assert time.monotonic() - started < 5
    return caught.value


def _tool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([console_script("kafka-metadata-quorum"), *args], capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


def test_unsecured_tokens_over_sasl_plaintext(make_cluster: Make, tmp_path: Path) -> None:
    server_jaas = (f'{MODULE} required unsecuredLoginStringClaim_sub="admin" '
                   'unsecuredLoginStringClaim_scope="kafka" unsecuredValidatorRequiredScope="kafka";')
    cluster = _cluster(make_cluster, "SASL_PLAINTEXT", {PREFIX + "sasl.jaas.config": server_jaas})

    def client(*options: str) -> dict[str, str]:
        return {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "OAUTHBEARER",
                "sasl_jaas_config": f"{MODULE} required {' '.join(options)};"}

    alice = client('unsecuredLoginStringClaim_sub="alice"', 'unsecuredLoginStringClaim_scope="kafka"')
    describe_replicated(cluster, "OAUTHBEARER", **alice)

    # kafka-metadata-quorum with the same settings in a --command-config file
    config = tmp_path / "alice.properties"
    config.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\nsasl.jaas.config="
                      f'{MODULE} required unsecuredLoginStringClaim_sub="alice" '
                      'unsecuredLoginStringClaim_scope="kafka";\n')
    status = _tool("--bootstrap-controller", cluster.bootstrap_servers(), "--command-config", str(config),
                   "describe", "--status")
    assert status.returncode == 0, status.stderr
    assert "LeaderId:" in status.stdout

    # without the scope the listener requires: Kafka's JSON error, acknowledged, then one line
    error = _failure(cluster, **client('unsecuredLoginStringClaim_sub="alice"'))
    assert error.java_exception == "SaslAuthenticationException"
    assert error.reason == (
        '{"status":"insufficient_scope", "scope":"[kafka]"} (the token\'s scope [] lacks what the server '
        "requires [kafka]: ask the identity provider for it with sasl.oauthbearer.scope)")
    config.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\nsasl.jaas.config="
                      f'{MODULE} required unsecuredLoginStringClaim_sub="alice";\n')
    refused = _tool("--bootstrap-controller", cluster.bootstrap_servers(), "--command-config", str(config),
                    "describe", "--status")
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.splitlines() == [
        "org.apache.kafka.common.errors.SaslAuthenticationException: " + error.reason]

    # an expired token is not even sent
    error = _failure(cluster, **client('unsecuredLoginStringClaim_sub="alice"',
                                       'unsecuredLoginLifetimeSeconds="-10"'))
    assert error.reason.startswith("OAUTHBEARER: the token to log in with expired at ")
    cluster.assert_running()


def test_tokens_from_a_token_endpoint_checked_against_its_jwks(make_cluster: Make, pki: Pki,
                                                               idp: IdentityProvider) -> None:
    keystore = pki.keystore("server.pem", ["localhost"], [HOST])
    trust = f'ssl.truststore.location="{idp.truststore}"'
    extra = {
        "ssl.keystore.type": "PEM", "listener.name.controller.ssl.keystore.location": str(keystore),
        "ssl.truststore.type": "PEM", "ssl.truststore.location": str(pki.truststore),
        # the voters log in to each other with the client credentials grant ...
        PREFIX + "sasl.jaas.config": f'{MODULE} required clientId="{idp.client_id}" '
                                     f'clientSecret="{idp.client_secret}" {trust};',
        PREFIX + "sasl.login.callback.handler.class": LOGIN,
        "sasl.oauthbearer.token.endpoint.url": idp.token_url,
        # ... and check every token against the provider's keys
        PREFIX + "sasl.server.callback.handler.class": VALIDATOR,
        "sasl.oauthbearer.jwks.endpoint.url": idp.jwks_url,
        "sasl.oauthbearer.expected.audience": "kafka",
        "sasl.oauthbearer.expected.issuer": idp.issuer,
    }
    cluster = _cluster(make_cluster, "SASL_SSL", extra)
    tls = {"security_protocol": "SASL_SSL", "ssl_truststore_location": str(pki.truststore)}
    describe_replicated(cluster, "OAUTHBEARER", **tls, sasl_mechanism="OAUTHBEARER",
                        sasl_jaas_config=f"{MODULE} required {trust};",
                        sasl_login_callback_handler_class=LOGIN,
                        sasl_oauthbearer_token_endpoint_url=idp.token_url,
                        sasl_oauthbearer_client_credentials_client_id=idp.client_id,
                        sasl_oauthbearer_client_credentials_client_secret=idp.client_secret)
    describe_replicated(cluster, "OAUTHBEARER", **tls, oauth_token_provider=lambda: idp.token(sub="alice"))

    error = _failure(cluster, **tls, oauth_token_provider=lambda: idp.token(aud="billing"))
    assert error.java_exception == "SaslAuthenticationException"
    assert error.reason.startswith('{"status":"invalid_token"} (the server refused the token, aud=billing '
                                   f"iss={idp.issuer} exp=")
    assert "\n" not in error.reason

    # a rotated signing key: the first token is refused, and makes the nodes fetch the JWKS again
    idp.rotate("k2")
    _failure(cluster, **tls, oauth_token_provider=lambda: idp.token(sub="alice"))
    deadline = time.monotonic() + 20
    while True:
        try:
            describe_replicated(cluster, "OAUTHBEARER", **tls,
                                oauth_token_provider=lambda: idp.token(sub="alice"))
            break
        except AuthenticationError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    cluster.assert_running()
