"""SASL/OAUTHBEARER client side: the initial response bytes, unsecured tokens, the exchange and its
errors against an in-memory server, token refresh, and the client credentials grant against a real
HTTPS token endpoint."""

from __future__ import annotations

import asyncio
import base64
import json
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from kafka_admin_kraft import Admin, AsyncAdmin
from kafka_admin_kraft.client import oauth
from kafka_admin_kraft.client.config import ClientConfig
from kafka_admin_kraft.client.oauth import (
    RefreshPolicy,
    TokenLogin,
    initial_response,
    java_double,
    unsecured_token,
)
from kafka_admin_kraft.client.principal import configured_principal
from kafka_admin_kraft.client.sasl import SaslFailure, mechanism_for
from kafka_admin_kraft.errors import AuthenticationError, ConfigError
from kafka_admin_kraft.protocol import messages
from unit.client.fake import AsyncFakeNetwork, FakeNetwork, FakeNode

MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
PACKAGE = "org.apache.kafka.common.security.oauthbearer"
HANDLER = f"{PACKAGE}.OAuthBearerLoginCallbackHandler"


@pytest.fixture(autouse=True)
def fresh_logins() -> None:
    """Each test starts without the process's cached logins."""
    oauth._LOGINS.clear()
    oauth._PROVIDED.clear()


def b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).rstrip(b"=").decode()


# --------------------------------------------------------------------------- bytes


def test_initial_response_golden_bytes() -> None:
    # OAuthBearerClientInitialResponse: "n," authzid "," ^A "auth=Bearer " token (^A key=value)* ^A ^A
    assert initial_response("abc.def.") == b"n,,\x01auth=Bearer abc.def.\x01\x01"
    assert initial_response("t.u.v", extensions={"traceId": "123", "x": "y z"}) == (
        b"n,,\x01auth=Bearer t.u.v\x01traceId=123\x01x=y z\x01\x01"
    )
    assert initial_response("t.u.v", authzid="al=i,ce") == b"n,a=al=3Di=2Cce,\x01auth=Bearer t.u.v\x01\x01"


def test_java_double_prints_as_java() -> None:
    assert [java_double(v) for v in (3600.0, 1.0, 1700000060.5, 0.001, 0.0001, 1e7, 9999999.0, -2.5)] == [
        "3600.0", "1.0", "1.7000000605E9", "0.001", "1.0E-4", "1.0E7", "9999999.0", "-2.5"]


def test_unsecured_token_is_kafkas_alg_none_jwt() -> None:
    options = {
        "unsecuredLoginStringClaim_sub": "alice",
        "unsecuredLoginLifetimeSeconds": "60",
        "unsecuredLoginNumberClaim_level": "2",
        "unsecuredLoginListClaim_scope": "|a|b",
        "unsecuredLoginListClaim_empty": "|a||b",
        "unsecuredLoginExtension_traceId": "123",
    }
    token = unsecured_token(options, 1700000000.5)
    header = b64('{"alg":"none"}')
    payload = b64('{"exp":1.7000000605E9,"iat":1.7000000005E9,"sub":"alice","level":2.0,'
                  '"scope":["a","b"],"empty":["a","","b",""]}')
    assert token == f"{header}.{payload}."


@pytest.mark.parametrize(("options", "words"), [
    ({}, 'set unsecuredLoginStringClaim_sub="<user>"'),
    ({"unsecuredLoginStringClaim_sub": "a", "unsecuredLoginNumberClaim_exp": "1"}, "exp claim is computed"),
    ({"unsecuredLoginStringClaim_sub": "a", "unsecuredLoginExtension_auth": "x"}, "extension name 'auth'"),
    ({"unsecuredLoginStringClaim_sub": "a", "unsecuredLoginExtension_k": "\x00"}, "extension k is invalid"),
    ({"unsecuredLoginStringClaim_sub": "a", "unsecuredLoginLifetimeSeconds": "x"}, "must be an integer"),
    ({"unsecuredLoginPrincipalClaimName": "user", "unsecuredLoginStringClaim_sub": "a"},
     'unsecuredLoginStringClaim_user="<user>"'),
])
def test_unsecured_options_kafka_refuses(options: dict[str, str], words: str) -> None:
    jaas = f"{MODULE} required " + " ".join(f'{k}="{v}"' for k, v in options.items()) + ";"
    with pytest.raises(ConfigError, match="sasl.jaas.config") as caught:
        _config(jaas)
    assert words in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize(("extra", "words"), [
    ({"sasl.login.callback.handler.class": HANDLER}, "needs sasl.oauthbearer.token.endpoint.url"),
    ({"sasl.oauthbearer.token.endpoint.url": "https://idp/token"},
     f"sasl.oauthbearer.token.endpoint.url is not used without sasl.login.callback.handler.class={HANDLER}"),
    ({"sasl.oauthbearer.scope": "x", "sasl.login.read.timeout.ms": "5"},
     "sasl.oauthbearer.scope, sasl.login.read.timeout.ms are not used without"),
    ({"sasl.login.callback.handler.class": "com.example.Handler"}, "is not supported"),
    ({"sasl.login.callback.handler.class": HANDLER, "sasl.oauthbearer.token.endpoint.url": "https://idp/t"},
     "needs sasl.oauthbearer.client.credentials.client.id and .client.secret"),
    ({"sasl.login.callback.handler.class": HANDLER, "sasl.oauthbearer.token.endpoint.url": "ftp://idp/t"},
     "not an http(s) or file URL"),
    ({"sasl.login.refresh.window.factor": "0.3"}, "use a number from 0.5 to 1"),
    ({"sasl.login.callback.handler.class": HANDLER, "sasl.oauthbearer.token.endpoint.url": "file:/t",
      "sasl.oauthbearer.jwt.retriever.class": f"{PACKAGE}.JwtBearerJwtRetriever"}, "is not supported: use"),
    ({"sasl.login.callback.handler.class": HANDLER, "sasl.oauthbearer.token.endpoint.url": "file:/t",
      "sasl.oauthbearer.jwt.retriever.class": f"{PACKAGE}.ClientCredentialsJwtRetriever"}, "does not fit"),
    ({"sasl.login.callback.handler.class": HANDLER, "sasl.oauthbearer.token.endpoint.url": "file:/t",
      "sasl.oauthbearer.jwt.validator.class": f"{PACKAGE}.BrokerJwtValidator"}, "not supported on a client"),
])
def test_oauth_properties_kafka_refuses(extra: dict[str, str], words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _config(f'{MODULE} required unsecuredLoginStringClaim_sub="alice";', **extra)
    assert words in str(caught.value)


def test_oauth_properties_need_a_sasl_protocol() -> None:
    with pytest.raises(ConfigError, match="sasl.* properties are set but security.protocol is PLAINTEXT"):
        ClientConfig.from_properties({"bootstrap.controllers": "h:9093", "sasl.oauthbearer.scope": "x"})


def _config(jaas: str, **extra: str) -> ClientConfig:
    """The settings as Admin checks them when it is made."""
    properties = {"bootstrap.controllers": "h:9093", "security.protocol": "SASL_SSL",
                  "sasl.mechanism": "OAUTHBEARER", "sasl.jaas.config": jaas, **extra}
    config = ClientConfig.from_properties(properties)
    assert config.sasl is not None
    oauth.check_settings(config.sasl)
    with Admin.from_config(properties) as admin:
        assert admin._config == config
    return config


def test_the_principal_is_the_tokens() -> None:
    config = _config(f'{MODULE} required unsecuredLoginStringClaim_sub="alice";')
    assert configured_principal(config) == "User:alice"
    config = _config(f'{MODULE} required unsecuredLoginStringClaim_user="bob" '
                     'unsecuredLoginPrincipalClaimName="user";')
    assert configured_principal(config) == "User:bob"


# --------------------------------------------------------------------------- the exchange


class FakeOAuthServer:
    """Kafka's OAuthBearerSaslServer, in memory: accepts tokens whose payload names ``user``, else
    answers ``error`` and fails the exchange at the client's ^A."""

    def __init__(self, user: str, error: str = '{"status":"invalid_token"}') -> None:
        self.user, self.error = user, error
        self.received: list[bytes] = []
        self.failed: set[int] = set()

    def install(self, node: FakeNode) -> None:
        node.handlers[17] = lambda node, v, body: messages.SaslHandshakeResponse(mechanisms=["OAUTHBEARER"])
        node.handlers[36] = self.authenticate

    def authenticate(self, node: FakeNode, version: int, body: Any) -> Any:
        self.received.append(body.auth_bytes)
        answer = messages.SaslAuthenticateResponse
        if body.auth_bytes == b"\x01" and node.node_id in self.failed:
            return answer(error_code=58, error_message=self.error)
        token = body.auth_bytes.split(b"auth=Bearer ")[1].split(b"\x01")[0].decode()
        claims = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
        if claims.get("sub") == self.user:
            return answer()
        self.failed.add(node.node_id)
        return answer(auth_bytes=self.error.encode())


def oauth_admin(net: FakeNetwork, user: str, **extra: Any) -> Admin:
    return Admin(bootstrap_controllers=net.controllers(), transport=net, security_protocol="SASL_PLAINTEXT",
                 sasl_mechanism="OAUTHBEARER", default_api_timeout_ms=5000, request_timeout_ms=5000,
                 sasl_jaas_config=f'{MODULE} required unsecuredLoginStringClaim_sub="{user}" '
                                  'unsecuredLoginExtension_traceId="42";', **extra)


def test_an_accepted_token() -> None:
    net = FakeNetwork(1, leader=1)
    server = FakeOAuthServer("alice")
    server.install(net.nodes[1])
    with oauth_admin(net, "alice") as admin:
        assert admin.describe_metadata_quorum().leader_id == 1
    first = server.received[0]
    assert first.startswith(b"n,,\x01auth=Bearer eyJhbGciOiJub25lIn0.")
    assert first.endswith(b".\x01traceId=42\x01\x01")


def test_a_refused_token_is_acknowledged_then_named() -> None:
    net = FakeNetwork(1, leader=1)
    server = FakeOAuthServer("alice")
    server.install(net.nodes[1])
    with oauth_admin(net, "mallory") as admin, pytest.raises(AuthenticationError) as caught:
        admin.describe_metadata_quorum()
    assert server.received[1] == b"\x01"  # OAuthBearerSaslClient's answer to an error challenge
    assert caught.value.java_exception == "SaslAuthenticationException"
    reason = caught.value.reason
    assert reason.startswith('{"status":"invalid_token"} (the server refused the token, aud=none iss=none')
    assert "sasl.oauthbearer.expected.audience/issuer" in reason and "\n" not in reason
    assert net.sleeps == []


def test_insufficient_scope_names_the_scope() -> None:
    net = FakeNetwork(1, leader=1)
    FakeOAuthServer("alice", '{"status":"insufficient_scope", "scope":"[admin]"}').install(net.nodes[1])
    with oauth_admin(net, "bob") as admin, pytest.raises(AuthenticationError) as caught:
        admin.describe_metadata_quorum()
    assert "lacks what the server requires [admin]: ask the identity provider for it with " \
           "sasl.oauthbearer.scope" in caught.value.reason


def test_an_expired_token_says_so() -> None:
    now = time.time()
    login = TokenLogin(lambda: _token({"sub": "alice", "exp": now + 100}), clock=lambda: now)
    mechanism = oauth.OAuthBearerMechanism(login)
    mechanism.prepare()
    assert mechanism.respond(b'{"status":"invalid_token"}') == b"\x01"
    mechanism.token = oauth.read_token(_token({"sub": "alice", "exp": now - 5}))
    assert "the token expired at" in mechanism.failure_fix('{"status":"invalid_token"}')
    with pytest.raises(SaslFailure):
        mechanism.respond(b"more")


def test_the_sdk_token_provider_and_async_runs_it_in_a_thread() -> None:
    calls: list[int] = []

    def provider() -> str:
        calls.append(threading.get_ident())
        return _token({"sub": "alice", "exp": time.time() + 3600})

    net = FakeNetwork(1, leader=1)
    FakeOAuthServer("alice").install(net.nodes[1])
    with Admin(bootstrap_controllers=net.controllers(), transport=net, security_protocol="SASL_PLAINTEXT",
               oauth_token_provider=provider) as admin:
        admin.describe_metadata_quorum()
        assert configured_principal(admin._config) == "User:alice"

    anet = FakeNetwork(1, leader=1)
    FakeOAuthServer("alice").install(anet.nodes[1])

    async def run() -> int:
        async with AsyncAdmin(bootstrap_controllers=anet.controllers(), transport=AsyncFakeNetwork(anet),
                              security_protocol="SASL_SSL", oauth_token_provider=lambda: provider()) as admin:
            await admin.describe_metadata_quorum()
        return threading.get_ident()

    loop_thread = asyncio.run(run())
    assert len(calls) == 2 and calls[1] != loop_thread
    with pytest.raises(ConfigError, match="needs security.protocol=SASL_SSL"):
        Admin(bootstrap_controllers="h:9093", oauth_token_provider=provider)
    with pytest.raises(ConfigError, match="sasl.oauthbearer.scope is not used with a token provider"):
        Admin(bootstrap_controllers="h:9093", security_protocol="SASL_SSL", oauth_token_provider=provider,
              sasl_oauthbearer_scope="kafka")
    with pytest.raises(TypeError, match="oauth_token_provider must be a callable"):
        Admin(bootstrap_controllers="h:9093", security_protocol="SASL_SSL", oauth_token_provider="tok")  # type: ignore[arg-type]


def test_a_provider_returning_garbage() -> None:
    net = FakeNetwork(1, leader=1)
    FakeOAuthServer("alice").install(net.nodes[1])
    with Admin(bootstrap_controllers=net.controllers(), transport=net, security_protocol="SASL_PLAINTEXT",
               default_api_timeout_ms=5000, request_timeout_ms=5000,
               oauth_token_provider=lambda: "not-a-jwt") as admin, \
            pytest.raises(AuthenticationError) as caught:
        admin.describe_metadata_quorum()
    assert caught.value.reason == (
        "OAUTHBEARER: the token to log in with is malformed: a JWT has three dot-separated sections (header, "
        "payload, signature) (check what the token endpoint or provider returns; "
        "sasl.oauthbearer.sub.claim.name names the principal claim)")


def _token(claims: dict[str, Any]) -> str:
    return f"{b64(json.dumps({'alg': 'none'}))}.{b64(json.dumps(claims))}."


# --------------------------------------------------------------------------- refresh


def test_refresh_times_follow_expiring_credential_refreshing_login() -> None:
    policy = RefreshPolicy(window_factor=0.8, window_jitter=0.05, min_period=60, buffer=300)
    no_jitter = lambda: 0.0  # noqa: E731
    assert policy.refresh_at(0, 3600, no_jitter) == 2880  # 80 % of the lifetime
    assert policy.refresh_at(0, 3600, lambda: 1.0) == pytest.approx(3060)  # plus at most 5 % jitter
    assert policy.refresh_at(0, 600, no_jitter) == 300  # kept 300 s before expiry
    assert policy.refresh_at(0, 300, no_jitter) == 240  # too short for both: the factor alone
    assert RefreshPolicy(min_period=200, buffer=10).refresh_at(0, 220, no_jitter) == 200  # min period
    assert RefreshPolicy(window_factor=0.5, min_period=600, buffer=10).refresh_at(0, 1000, no_jitter) == 600


def test_a_token_is_reused_until_its_refresh_time_then_fetched_again() -> None:
    now = [1000.0]
    fetched: list[float] = []

    def fetch() -> str:
        fetched.append(now[0])
        return _token({"sub": "alice", "iat": now[0], "exp": now[0] + 3600})

    login = TokenLogin(fetch, clock=lambda: now[0], rng=lambda: 0.0)
    first = login.token()
    now[0] += 2879
    assert login.token() is first and fetched == [1000.0]
    now[0] += 1
    second = login.token()
    assert second is not first and fetched == [1000.0, 3880.0]
    # a failed refresh keeps the unexpired token; once it has expired, the failure is the answer
    login.fetch = lambda: (_ for _ in ()).throw(SaslFailure("endpoint down"))
    now[0] += 2880
    assert login.token() is second
    now[0] += 3600
    with pytest.raises(SaslFailure, match="endpoint down"):
        login.token()


def test_one_login_per_configuration_and_per_provider() -> None:
    config = _config(f'{MODULE} required unsecuredLoginStringClaim_sub="alice";')
    assert config.sasl is not None
    first = mechanism_for(config.sasl, "h")
    second = mechanism_for(config.sasl, "h")
    assert isinstance(first, oauth.OAuthBearerMechanism) and isinstance(second, oauth.OAuthBearerMechanism)
    assert first.login is second.login

    def login_of(provider: Any) -> oauth.TokenLogin:
        assert config.sasl is not None
        settings = replace(config.sasl, token_provider=provider)
        return oauth.login_for(settings)[0]

    def one() -> str:
        return "one"

    def two() -> str:
        return "two"

    assert login_of(one) is login_of(one) and login_of(one) is not login_of(two)
    assert login_of(one).fetch is one and login_of(two).fetch is two


# --------------------------------------------------------------------------- the token endpoint


pytest.importorskip("cryptography.x509", reason="the cryptography package makes the test certificates")
from integration_sdk.pki import Pki, pki_fixture  # noqa: E402, F401 (the fixture)

from unit.client.oauth_idp import IdentityProvider, idp_fixture  # noqa: E402, F401 (the fixture)


def _oidc(idp: IdentityProvider, jaas: str = "", **extra: str) -> ClientConfig:
    trust = f'ssl.truststore.location="{idp.truststore}" ssl.truststore.type="PEM"'
    properties = {"sasl.login.callback.handler.class": HANDLER,
                  "sasl.oauthbearer.token.endpoint.url": idp.token_url,
                  "sasl.oauthbearer.client.credentials.client.id": idp.client_id,
                  "sasl.oauthbearer.client.credentials.client.secret": idp.client_secret,
                  "sasl.login.retry.backoff.ms": "10", "sasl.login.retry.backoff.max.ms": "200", **extra}
    return _config(f"{MODULE} required {jaas or trust};", **properties)


def _login(config: ClientConfig) -> oauth.TokenLogin:
    assert config.sasl is not None
    return oauth.login_for(config.sasl)[0]


def test_client_credentials_over_https(idp: IdentityProvider) -> None:
    token = _login(_oidc(idp, **{"sasl.oauthbearer.scope": "kafka admin"})).token()
    assert token.principal == "alice"
    path, headers, body = idp.requests[-1]
    assert path == "/token" and body == "grant_type=client_credentials&scope=kafka+admin"
    assert headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert headers["Authorization"] == "Basic " + base64.b64encode(b"admin-app:app-secret").decode()


def test_the_older_jaas_options_and_the_sub_claim_name(idp: IdentityProvider) -> None:
    idp.extra_claims = {"client_id": "svc"}
    jaas = (f'clientId="{idp.client_id}" clientSecret="{idp.client_secret}" scope="kafka" '
            f'ssl.truststore.location="{idp.truststore}"')
    config = _config(f"{MODULE} required {jaas};", **{"sasl.login.callback.handler.class": HANDLER,
                                                       "sasl.oauthbearer.token.endpoint.url": idp.token_url,
                                                       "sasl.oauthbearer.sub.claim.name": "client_id"})
    assert _login(config).token().principal == "svc"
    assert idp.requests[-1][2] == "grant_type=client_credentials&scope=kafka"


def test_server_errors_are_retried_with_backoff(idp: IdentityProvider) -> None:
    idp.failures = [503, 500]
    assert _login(_oidc(idp)).token().principal == "alice"
    assert len(idp.requests) == 3


def test_a_401_from_the_token_endpoint(idp: IdentityProvider) -> None:
    config = _oidc(idp, **{"sasl.oauthbearer.client.credentials.client.secret": "wrong"})
    with pytest.raises(SaslFailure) as caught:
        _login(config).token()
    assert str(caught.value) == (
        f"the token endpoint {idp.token_url} refused the request with HTTP 401 "
        '({"error": "invalid_client"}): '
        "check sasl.oauthbearer.client.credentials.client.id and .client.secret (or the JAAS options "
        "clientId and clientSecret)")
    assert len(idp.requests) == 1  # a 4xx is not retried


def test_an_untrusted_token_endpoint_names_the_jaas_trust_store(idp: IdentityProvider) -> None:
    with pytest.raises(SaslFailure) as caught:
        _login(_oidc(idp, jaas='unused="x"')).token()
    assert "cannot verify the TLS certificate of the token endpoint" in str(caught.value)
    assert "ssl.truststore.location in sasl.jaas.config" in str(caught.value)


def test_an_unreachable_token_endpoint(idp: IdentityProvider) -> None:
    url = idp.token_url
    idp.server.shutdown()
    idp.server.server_close()
    start = time.monotonic()
    with pytest.raises(SaslFailure) as caught:
        _login(_oidc(idp)).token()
    assert str(caught.value).startswith(f"cannot reach the token endpoint {url}: ")
    assert "check sasl.oauthbearer.token.endpoint.url" in str(caught.value)
    assert time.monotonic() - start < 5


def test_a_malformed_access_token(idp: IdentityProvider) -> None:
    idp.token = lambda **_: "abc"  # type: ignore[method-assign]
    with pytest.raises(SaslFailure, match="the token to log in with is malformed: a JWT has three"):
        _login(_oidc(idp)).token()


def test_an_expired_access_token(idp: IdentityProvider) -> None:
    idp.extra_claims = {"exp": int(time.time()) - 10}
    with pytest.raises(SaslFailure, match="the token to log in with expired at .*: the token source hands"):
        _login(_oidc(idp)).token()


def test_a_file_token_endpoint(tmp_path: Path) -> None:
    path = tmp_path / "token.jwt"
    path.write_text(_token({"sub": "carol", "exp": time.time() + 600}) + "\n")
    config = _config(f"{MODULE} required;", **{
        "sasl.login.callback.handler.class": HANDLER, "sasl.oauthbearer.token.endpoint.url": path.as_uri(),
        "sasl.oauthbearer.jwt.retriever.class": f"{PACKAGE}.FileJwtRetriever"})
    assert _login(config).token().principal == "carol"
    path.unlink()
    with pytest.raises(SaslFailure, match="cannot read the token file"):
        oauth.plan(config.sasl)[0]()  # type: ignore[arg-type]


def test_a_token_from_the_endpoint_is_fetched_again_before_it_expires(idp: IdentityProvider) -> None:
    idp.lifetime = 600
    refresh = {"sasl.login.refresh.window.jitter": "0", "sasl.login.refresh.buffer.seconds": "60"}
    config = _oidc(idp, **refresh)
    assert config.sasl is not None
    login = _login(config)
    offset = [0.0]
    login.clock = lambda: time.time() + offset[0]
    first = login.token()
    offset[0] = 470  # before 80 % of the 600 s lifetime: the same token
    assert login.token() is first and idp.issued == 1
    offset[0] = 490  # past it, still 110 s before expiry: a new one
    second = login.token()
    assert second is not first and idp.issued == 2 and len(idp.requests) == 2
