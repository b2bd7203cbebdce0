"""SASL/OAUTHBEARER server side: the initial response parser, the unsecured validator against the SDK's
client, RS256/384/512 tokens checked against a JWKS served over HTTPS, and malformed input of every kind
(hypothesis) answered without a crash."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_admin_kraft.client import oauth as client_oauth
from kafka_admin_kraft.client.config import SaslSettings
from kafka_admin_kraft.client.oauth import JwtError, parse_jwt
from kafka_admin_kraft.client.sasl import mechanism_for
from kafka_admin_kraft.config.security import OAUTHBEARER_MODULE as MODULE
from kafka_admin_kraft.config.server import ConfigError
from kafka_admin_kraft_server.oauth import (
    FAILED,
    VALIDATOR_HANDLERS,
    Jwks,
    JwtValidator,
    OAuthBearerServer,
    Refusal,
    RsaKey,
    UnsecuredValidator,
    parse_initial_response,
    parse_jwks,
    rsa_verify,
    server_factory,
)
from kafka_admin_kraft_server.sasl_base import AuthenticationFailed

pytest.importorskip("cryptography.x509", reason="the cryptography package makes the test keys")
import contextlib

from cryptography.hazmat.primitives.asymmetric import rsa  # noqa: E402
from integration_sdk.pki import Pki, pki_fixture  # noqa: E402, F401 (the fixture)

from unit.client.oauth_idp import IdentityProvider, b64url, idp_fixture, jwt  # noqa: E402, F401 (the fixture)


def _client_exchange(server: OAuthBearerServer, options: dict[str, str]) -> bytes:
    """The SDK's client mechanism with unsecured-token JAAS options against ``server``: what the server
    answered to the initial response."""
    client_oauth._LOGINS.clear()
    client = mechanism_for(SaslSettings("OAUTHBEARER", MODULE, options), "localhost")
    client.prepare()
    return server.evaluate(client.initial())


# --------------------------------------------------------------------------- the initial response


def test_initial_response_parsing() -> None:
    assert parse_initial_response(b"n,,\x01auth=Bearer a.b.c\x01\x01") == ("", "a.b.c", {})
    assert parse_initial_response(
        b"n,a=al=3Di=2Cce,\x01auth=bearer  x_-.9\x01traceId=1 2\x01k=v\x01\x01"
    ) == ("al=i,ce", "x_-.9", {"traceId": "1 2", "k": "v"})
    for bad in (
        b"",
        b"n,,\x01auth=Bearer a.b.c\x01",
        b"y,,\x01auth=Bearer t\x01\x01",
        b"n,,\x01auth=Basic dXNlcg==\x01\x01",
        b"n,,\x01k=v\x01\x01",
        b"n,,\x01auth=Bearer t!\x01\x01",
        b"n,a=x=y,\x01auth=Bearer t\x01\x01",
        b"n,,\x01auth=Bearer t\x01k1=v\x01\x01",
        b"\xff\xfe",
    ):
        with pytest.raises(AuthenticationFailed) as caught:
            parse_initial_response(bad)
        assert str(caught.value) == FAILED


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(
        st.binary(max_size=200),
        st.lists(
            st.sampled_from(
                [b"n", b",", b"a=", b"\x01", b"auth=", b"Bearer ", b"=2C", b"x", b".", b"=", b" ", b"\xc3"]
            ),
            max_size=30,
        ).map(b"".join),
    )
)
def test_any_bytes_parse_or_fail_as_kafka_says(data: bytes) -> None:
    try:
        authzid, token, extensions = parse_initial_response(data)
    except AuthenticationFailed as exc:
        assert str(exc) == FAILED
    else:
        assert token and all(key.isalpha() for key in extensions)


@pytest.fixture(scope="module")
def file_keys(tmp_path_factory: pytest.TempPathFactory) -> Jwks:
    """A JWKS file with one RSA key."""
    from unit.client.oauth_idp import jwk

    path = tmp_path_factory.mktemp("jwks") / "jwks.json"
    path.write_text(
        json.dumps({"keys": [jwk("k1", rsa.generate_private_key(public_exponent=65537, key_size=2048))]})
    )
    return Jwks(path.as_uri())


_SECTION = st.one_of(
    st.text(alphabet="ABCDEFabcdef0123456789-_=+/", max_size=40),
    st.recursive(
        st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=5),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
        max_leaves=8,
    ).map(lambda v: b64url(json.dumps(v).encode())),
    st.dictionaries(
        st.sampled_from(["alg", "kid", "exp", "iat", "sub", "aud", "iss", "nbf", "scope"]),
        st.one_of(
            st.none(),
            st.booleans(),
            st.integers(),
            st.floats(),
            st.text(max_size=5),
            st.lists(st.text(max_size=3), max_size=2),
        ),
        max_size=6,
    ).map(lambda v: b64url(json.dumps(v).encode())),
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_SECTION, min_size=1, max_size=4).map(".".join))
def test_any_token_is_read_or_refused_never_crashes(file_keys: Jwks, token: str) -> None:
    with contextlib.suppress(JwtError):
        parse_jwt(token)
    unsecured = OAuthBearerServer(UnsecuredValidator({}, "jaas"))
    signed = OAuthBearerServer(JwtValidator(file_keys, audience=("kafka",)))
    for server in (unsecured, signed):
        try:
            answer = server.evaluate(f"n,,\x01auth=Bearer {token}\x01\x01".encode())
        except AuthenticationFailed:
            continue
        assert answer == b"" or json.loads(answer)["status"] in ("invalid_token", "insufficient_scope")


@settings(max_examples=200)
@given(
    st.one_of(
        st.binary(max_size=100),
        st.recursive(
            st.none() | st.integers() | st.text(max_size=4),
            lambda inner: (
                st.lists(inner, max_size=3)
                | st.dictionaries(st.sampled_from(["keys", "kty", "kid", "n", "e", "use"]), inner, max_size=4)
            ),
            max_leaves=10,
        ).map(lambda v: json.dumps(v).encode()),
    )
)
def test_any_jwks_document_is_read_or_refused(data: bytes) -> None:
    with contextlib.suppress(ValueError):
        parse_jwks(data)


# --------------------------------------------------------------------------- unsecured tokens


def test_the_sdks_unsecured_token_is_accepted() -> None:
    server = OAuthBearerServer(UnsecuredValidator({}, "jaas"))
    assert _client_exchange(server, {"unsecuredLoginStringClaim_sub": "alice"}) == b""
    assert server.complete and server.authorization_id == "alice"


def test_an_expired_unsecured_token_gets_kafkas_json_then_fails_at_the_clients_ack() -> None:
    server = OAuthBearerServer(UnsecuredValidator({}, "jaas", clock=lambda: time.time() + 7200))
    challenge = _client_exchange(server, {"unsecuredLoginStringClaim_sub": "alice"})
    assert challenge == b'{"status":"invalid_token"}' and not server.complete
    with pytest.raises(AuthenticationFailed) as caught:
        server.evaluate(b"\x01")
    assert str(caught.value) == '{"status":"invalid_token"}'


def test_a_missing_required_scope() -> None:
    validator = UnsecuredValidator({"unsecuredValidatorRequiredScope": "read admin"}, "jaas")
    server = OAuthBearerServer(validator)
    challenge = _client_exchange(
        server, {"unsecuredLoginStringClaim_sub": "al", "unsecuredLoginListClaim_scope": ",read"}
    )
    assert challenge == b'{"status":"insufficient_scope", "scope":"[read, admin]"}'
    server = OAuthBearerServer(validator)
    assert (
        _client_exchange(
            server, {"unsecuredLoginStringClaim_sub": "al", "unsecuredLoginListClaim_scope": ",read,admin"}
        )
        == b""
    )


@pytest.mark.parametrize(
    ("header", "claims", "signature", "words"),
    [
        ({"alg": "RS256"}, {"sub": "a", "exp": 2e9}, "", "'none' for its algorithm"),
        ({"alg": "none"}, {"sub": "a", "exp": 2e9}, "c2ln", "must not carry a signature"),
        ({"alg": "none"}, {"exp": 2e9}, "", "no principal name in its 'sub' claim"),
        ({"alg": "none"}, {"sub": "a"}, "", "no exp claim"),
        ({"alg": "none"}, {"sub": "a", "exp": 2e9, "iat": 1.9e9}, "", "issued at 1900000000.0 s, after now"),
        ({"alg": "none"}, {"sub": "a", "exp": 1.5e9, "iat": 1.4e9}, "", "expired at 1500000000.0 s"),
        ({"alg": "none"}, {"sub": "a", "exp": "soon"}, "", "exp claim is not a number"),
    ],
)
def test_unsecured_refusals(
    header: dict[str, Any], claims: dict[str, Any], signature: str, words: str
) -> None:
    token = f"{b64url(json.dumps(header).encode())}.{b64url(json.dumps(claims).encode())}.{signature}"
    validator = UnsecuredValidator({}, "jaas", clock=lambda: 1.6e9)
    with pytest.raises(Refusal, match=words):
        validator(token)


def test_the_allowed_clock_skew() -> None:
    token = client_oauth.unsecured_token(
        {"unsecuredLoginStringClaim_sub": "a", "unsecuredLoginLifetimeSeconds": "10"}, 1000.0
    )
    assert UnsecuredValidator({"unsecuredValidatorAllowableClockSkewMs": "5000"}, "j", clock=lambda: 1014.0)(
        token
    )
    with pytest.raises(Refusal):
        UnsecuredValidator({}, "j", clock=lambda: 1010.0)(token)
    with pytest.raises(ConfigError, match="non-negative integer"):
        UnsecuredValidator({"unsecuredValidatorAllowableClockSkewMs": "-1"}, "j")


def test_an_authorization_id_other_than_the_principal() -> None:
    token = client_oauth.unsecured_token({"unsecuredLoginStringClaim_sub": "alice"}, time.time())
    with pytest.raises(
        AuthenticationFailed,
        match=r"authorization id \(bob\) that is different from the "
        r"token's principal name \(alice\)",
    ):
        OAuthBearerServer(UnsecuredValidator({}, "j")).evaluate(client_oauth.initial_response(token, "bob"))


# --------------------------------------------------------------------------- signatures


@pytest.mark.parametrize("algorithm", ["RS256", "RS384", "RS512"])
def test_rsa_verification_agrees_with_cryptography(algorithm: str) -> None:
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    numbers = private.public_key().public_numbers()
    key = RsaKey(numbers.n, numbers.e)
    token = jwt({"alg": algorithm}, {"sub": "a"}, private)
    parsed = parse_jwt(token)
    assert rsa_verify(key, algorithm, parsed.signing_input, parsed.signature)
    assert not rsa_verify(key, algorithm, parsed.signing_input + b"x", parsed.signature)
    other = "RS512" if algorithm != "RS512" else "RS256"
    assert not rsa_verify(key, other, parsed.signing_input, parsed.signature)
    assert not rsa_verify(key, algorithm, parsed.signing_input, parsed.signature[1:])


def _signed_server(idp: IdentityProvider, **extra: str) -> OAuthBearerServer:
    props = {
        "listener.name.controller.oauthbearer.sasl.server.callback.handler.class": VALIDATOR_HANDLERS[0],
        "listener.name.controller.oauthbearer.sasl.oauthbearer.jwks.endpoint.url": idp.jwks_url,
        "sasl.oauthbearer.expected.audience": "other,kafka",
        "sasl.oauthbearer.expected.issuer": idp.issuer,
        **extra,
    }
    jaas = ("sasl.jaas.config", f'{MODULE} required ssl.truststore.location="{idp.truststore}";')
    used: set[str] = set()
    server = server_factory(props, "CONTROLLER", used, jaas)()
    assert isinstance(server, OAuthBearerServer)
    assert used == {key for key in props if "oauthbearer" in key}
    return server


def _answer(server: OAuthBearerServer, token: str) -> bytes:
    return server.evaluate(client_oauth.initial_response(token))


def test_a_valid_rs256_token(idp: IdentityProvider) -> None:
    server = _signed_server(idp)
    assert _answer(server, idp.token()) == b"" and server.authorization_id == "alice"


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        ({"exp": int(time.time()) - 60}, "expired at"),
        ({"aud": "billing"}, r"audience \[billing\] is none of the expected \[other, kafka\]"),
        ({"iss": "https://evil.example"}, "issuer 'https://evil.example' is not the expected"),
        ({"iat": None}, "no iat claim"),
        ({"sub": ""}, "no principal name"),
        ({"nbf": int(time.time()) + 3600}, "not valid before"),
    ],
)
def test_refused_tokens(
    idp: IdentityProvider, overrides: dict[str, Any], words: str, caplog: pytest.LogCaptureFixture
) -> None:
    claims = {key: value for key, value in idp.claims(**overrides).items() if value is not None}
    token = jwt({"alg": "RS256", "kid": "k1"}, claims, idp.keys["k1"])
    server = _signed_server(idp)
    with caplog.at_level("INFO"):
        assert _answer(server, token) == b'{"status":"invalid_token"}'
    assert any(
        record.getMessage().startswith("Refused an OAUTHBEARER token: ")
        and __import__("re").search(words, record.getMessage())
        for record in caplog.records
    )
    with pytest.raises(AuthenticationFailed, match='^{"status":"invalid_token"}$'):
        server.evaluate(b"\x01")


def test_the_clock_skew_allowance(idp: IdentityProvider) -> None:
    token = idp.token(exp=int(time.time()) - 10)
    assert _answer(_signed_server(idp), token) == b""  # within the default 30 s
    assert _answer(_signed_server(idp, **{"sasl.oauthbearer.clock.skew.seconds": "0"}), token) != b""


def test_signed_by_another_key_or_algorithm(idp: IdentityProvider, caplog: pytest.LogCaptureFixture) -> None:
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    server = _signed_server(idp)
    with caplog.at_level("INFO"):
        assert _answer(server, idp.token(key=stranger)) == b'{"status":"invalid_token"}'
        assert (
            _answer(_signed_server(idp), jwt({"alg": "ES256", "kid": "k1"}, idp.claims(), None) + "c2ln")
            != b""
        )
        assert _answer(_signed_server(idp), jwt({"alg": "none"}, idp.claims(), None)) != b""
    messages = " ".join(record.getMessage() for record in caplog.records)
    assert "signature does not verify with the key 'k1'" in messages
    assert "signed with ES256, which this server does not verify: use RS256, RS384, RS512" in messages
    assert "the token is not signed" in messages
    for algorithm in ("RS384", "RS512"):
        assert _answer(_signed_server(idp), idp.token(alg=algorithm)) == b""


def test_an_audience_without_an_expected_audience(idp: IdentityProvider) -> None:
    server = _signed_server(idp, **{"sasl.oauthbearer.expected.audience": ""})
    assert _answer(server, idp.token()) == b'{"status":"invalid_token"}'
    claims = {key: value for key, value in idp.claims().items() if key != "aud"}
    server = _signed_server(idp, **{"sasl.oauthbearer.expected.audience": ""})
    assert _answer(server, jwt({"alg": "RS256", "kid": "k1"}, claims, idp.keys["k1"])) == b""


def test_an_unknown_kid_refetches_the_rotated_jwks(idp: IdentityProvider) -> None:
    server_factory_made = _signed_server(idp)
    validator = server_factory_made.validate
    assert isinstance(validator, JwtValidator)
    fetches = validator.keys.fetches
    idp.rotate("k2")  # the provider signs with a key the server has not seen yet
    token = idp.token()
    assert _answer(OAuthBearerServer(validator), token) == b'{"status":"invalid_token"}'
    deadline = time.monotonic() + 10
    while validator.keys.fetches == fetches and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.1)
    assert _answer(OAuthBearerServer(validator), token) == b""
    # the same unknown kid does not make it fetch again within a minute
    fetches = validator.keys.fetches
    assert _answer(OAuthBearerServer(validator), idp.token(kid="k9", key=idp.keys["k1"])) != b""
    assert _answer(OAuthBearerServer(validator), idp.token(kid="k9", key=idp.keys["k1"])) != b""
    time.sleep(0.3)
    assert validator.keys.fetches == fetches + 1


def test_the_jwks_is_refreshed_on_its_period(idp: IdentityProvider) -> None:
    server = _signed_server(idp, **{"sasl.oauthbearer.jwks.endpoint.refresh.ms": "100"})
    assert isinstance(server.validate, JwtValidator)
    idp.rotate("k2")
    deadline = time.monotonic() + 10
    while "k2" not in server.validate.keys.by_kid and time.monotonic() < deadline:
        time.sleep(0.02)
    assert "k2" in server.validate.keys.by_kid


def test_a_jwks_file(idp: IdentityProvider, tmp_path: Path) -> None:
    from unit.client.oauth_idp import jwk

    path = tmp_path / "jwks.json"
    path.write_text(
        json.dumps(
            {
                "keys": [
                    jwk("k1", idp.keys["k1"]),
                    {"kty": "EC", "kid": "e1", "crv": "P-256", "x": "AA", "y": "AA"},
                ]
            }
        )
    )
    key = "listener.name.controller.oauthbearer.sasl.oauthbearer.jwks.endpoint.url"
    server = _signed_server(idp, **{key: path.as_uri()})
    assert _answer(server, idp.token()) == b""
    assert isinstance(server.validate, JwtValidator) and not server.validate.keys.refreshing
    with pytest.raises(Refusal, match="a EC key, which this server cannot verify with"):
        server.validate.keys.key("e1")


def test_a_full_exchange_with_a_token_from_the_token_endpoint(idp: IdentityProvider) -> None:
    client_oauth._LOGINS.clear()
    settings = SaslSettings(
        "OAUTHBEARER",
        MODULE,
        {"ssl.truststore.location": str(idp.truststore)},
        {
            "sasl.login.callback.handler.class": "org.apache.kafka.common.security.oauthbearer."
            "OAuthBearerLoginCallbackHandler",
            "sasl.oauthbearer.token.endpoint.url": idp.token_url,
            "sasl.oauthbearer.client.credentials.client.id": idp.client_id,
            "sasl.oauthbearer.client.credentials.client.secret": idp.client_secret,
        },
    )
    client = mechanism_for(settings, "localhost")
    client.prepare()
    server = _signed_server(idp)
    assert client.respond(server.evaluate(client.initial())) is None
    assert client.complete and server.authorization_id == "alice"


@pytest.mark.parametrize(
    ("props", "jaas", "words"),
    [
        ({}, "org.apache.kafka.common.security.plain.PlainLoginModule required;", "OAUTHBEARER needs"),
        (
            {"sasl.server.callback.handler.class": "com.example.Validator"},
            None,
            "is not supported on listener",
        ),
        ({"sasl.server.callback.handler.class": VALIDATOR_HANDLERS[1]}, None, "needs sasl.oauthbearer.jwks"),
        (
            {
                "sasl.server.callback.handler.class": VALIDATOR_HANDLERS[0],
                "sasl.oauthbearer.jwt.validator.class": "com.example.Validator",
            },
            None,
            "sasl.oauthbearer.jwt.validator.class=com.example.Validator is not supported",
        ),
        (
            {
                "sasl.server.callback.handler.class": VALIDATOR_HANDLERS[0],
                "sasl.oauthbearer.jwks.endpoint.url": "ldap://x",
            },
            None,
            r"not an http\(s\) or file URL",
        ),
        (
            {
                "sasl.server.callback.handler.class": VALIDATOR_HANDLERS[0],
                "sasl.oauthbearer.jwks.endpoint.url": "https://127.0.0.1:1/jwks",
                "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms": "50",
            },
            None,
            "Cannot read the JWKS at",
        ),
    ],
)
def test_settings_the_server_refuses(props: dict[str, str], jaas: str | None, words: str) -> None:
    text = jaas or f"{MODULE} required;"
    with pytest.raises(ConfigError, match=words):
        server_factory(props, "CONTROLLER", set(), ("sasl.jaas.config", text))


def test_ec_keys_are_not_usable_here() -> None:
    by_kid, anonymous, unusable = parse_jwks(
        b'{"keys":[{"kty":"EC","kid":"e"},{"kty":"RSA","kid":"r","n":"AQ","e":"AQAB"}]}'
    )
    assert by_kid == {} and anonymous == [] and set(unusable) == {"e", "r"}
    assert "below 2048" in unusable["r"]


@pytest.mark.parametrize(
    "payload",
    [
        '{"sub":"a","exp":' + "9" * 5000 + "}",  # beyond Python's integer parsing limit
        '{"sub":"a","exp":' + "9" * 400 + "}",  # beyond a float
        '{"sub":"a","exp":1e999}',
        '{"sub":"a","exp":NaN}',
        "[" * 100000 + "]" * 100000,
    ],
)
def test_extreme_numbers_and_nesting_are_refused(payload: str, file_keys: Jwks) -> None:
    header = b64url(json.dumps({"alg": "none"}).encode())
    token = f"{header}.{b64url(payload.encode())}."
    for validate in (UnsecuredValidator({}, "jaas"), JwtValidator(file_keys)):
        server = OAuthBearerServer(validate)
        assert _answer(server, token) == b'{"status":"invalid_token"}'
