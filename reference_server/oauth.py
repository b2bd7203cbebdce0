"""SASL/OAUTHBEARER server side: Kafka's ``OAuthBearerSaslServer`` and its two token validators.

A listener enables OAUTHBEARER in ``sasl.enabled.mechanisms``; its JAAS configuration is
``listener.name.<listener>.oauthbearer.sasl.jaas.config`` (else ``sasl.jaas.config``) with
``org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule``. The validator is chosen by
``listener.name.<listener>.oauthbearer.sasl.server.callback.handler.class``:

* unset (Kafka's default, ``OAuthBearerUnsecuredValidatorCallbackHandler``): unsigned (``alg: none``)
  tokens, checked with the JAAS options ``unsecuredValidatorPrincipalClaimName`` (default ``sub``),
  ``unsecuredValidatorScopeClaimName`` (``scope``), ``unsecuredValidatorRequiredScope`` (space-separated)
  and ``unsecuredValidatorAllowableClockSkewMs`` (0): the principal claim, ``iat`` not in the future,
  ``exp`` not past, ``exp`` after ``iat``, every required scope present. A missing scope is answered
  ``{"status":"insufficient_scope", "scope":"[<required>]"}``, anything else ``invalid_token``.
* ``org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler`` (Kafka 3.x's
  ``...oauthbearer.secured.`` name too): signed tokens as ``BrokerJwtValidator`` checks them, with keys
  from ``sasl.oauthbearer.jwks.endpoint.url`` (``https``, ``http`` or ``file``), and
  ``sasl.oauthbearer.expected.audience`` (comma-separated; a token with an ``aud`` claim is refused when
  none is configured, as jose4j's default audience check does), ``sasl.oauthbearer.expected.issuer``,
  ``sasl.oauthbearer.clock.skew.seconds`` (30), ``sasl.oauthbearer.sub.claim.name`` (``sub``) and
  ``sasl.oauthbearer.scope.claim.name`` (``scope``) (Kafka 4.1's
  ``sasl.oauthbearer.jwt.validator.class`` may name ``DefaultJwtValidator`` or ``BrokerJwtValidator``);
  ``exp`` and ``iat`` are required, ``nbf`` checked when present. Every failure is answered
  ``{"status":"invalid_token"}``; the server's log says which check failed.

Each ``sasl.oauthbearer.*`` setting is looked up as ``listener.name.<listener>.oauthbearer.<name>``, then
``listener.name.<listener>.<name>``, then ``<name>``.

Signatures: RS256, RS384 and RS512 (RSASSA-PKCS1-v1_5, RFC 7518 section 3.3), verified here in pure
Python (a modular exponentiation and the comparison with the expected DigestInfo encoding) with RSA keys
of at least 2048 bits, as jose4j requires. Kafka (jose4j) also accepts ES*, PS* and HS* tokens; those
need a cryptography library the server does not depend on, and are refused with a log line naming the
algorithm (the client is told ``invalid_token``, as Kafka tells it for any failed check).

The JWKS of an ``http(s)`` URL is fetched at start-up (failing the start when it cannot be had), then
every ``sasl.oauthbearer.jwks.endpoint.refresh.ms`` (one hour) in a background thread, retrying with
backoff from ``sasl.oauthbearer.jwks.endpoint.retry.backoff.ms`` up to ``.retry.backoff.max.ms``. A
token whose ``kid`` is unknown is refused and makes the thread fetch the JWKS at once, at most once a
minute per key id (Kafka's ``RefreshingHttpsJwks``), so the client's next attempt finds a rotated key.
An ``https`` JWKS endpoint is verified with the JAAS options' ``ssl.*`` entries (Kafka's
``JaasOptionsUtils``), else the system's CAs. A ``file`` JWKS is read at start-up.

Malformed client messages and tokens never raise anything but :class:`AuthenticationFailed` (or a
refusal), whatever their bytes.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import math
import re
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from kafka_admin_kraft.client.config import ClientConfig
from kafka_admin_kraft.client.oauth import Jwt, JwtError, b64url_decode, parse_jwt
from kafka_admin_kraft.config.security import OAUTHBEARER_MODULE
from kafka_admin_kraft.config.server import ConfigError
from kafka_admin_kraft.errors import ConfigError as ClientConfigError

from .sasl_base import SCRAM_FAILED, AuthenticationFailed, SaslServer, jaas_options

if TYPE_CHECKING:
    import ssl

log = logging.getLogger("org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler")

VALIDATOR_HANDLERS: Final = (
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
    "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerValidatorCallbackHandler",
)
UNSECURED_VALIDATOR: Final = ("org.apache.kafka.common.security.oauthbearer.internals.unsecured."
                              "OAuthBearerUnsecuredValidatorCallbackHandler")
DIGEST_INFO: Final = {
    "RS256": ("sha256", bytes.fromhex("3031300d060960864801650304020105000420")),
    "RS384": ("sha384", bytes.fromhex("3041300d060960864801650304020205000430")),
    "RS512": ("sha512", bytes.fromhex("3051300d060960864801650304020305000440")),
}
"""RFC 8017 section 9.2 note 1: the DER DigestInfo prefix of each hash, by JWS algorithm."""
MIN_RSA_BITS: Final = 2048
MISSING_KID_INTERVAL: Final = 60.0
"""Seconds before an unknown key id may make the JWKS be fetched again (``RefreshingHttpsJwks``)."""
FAILED: Final = SCRAM_FAILED.format(mechanism="OAUTHBEARER")

_SASLNAME: Final = r"(?:[\x01-\x2B\x2D-\x3C\x3E-\x7F]|=2C|=3D)+"
_INITIAL: Final = re.compile(
    rf"n,(?:a=(?P<authzid>{_SASLNAME}))?,\x01(?P<pairs>(?:[A-Za-z]+=[\x21-\x7E \t\r\n]+\x01)*)\x01")
_AUTH: Final = re.compile(r"(?P<scheme>[A-Za-z0-9_]+) +(?P<token>[-_.a-zA-Z0-9]+)")


class Refusal(Exception):
    """A token refused: ``status`` (and ``scope``) go to the client as Kafka's JSON error, the message
    to the server's log."""

    def __init__(self, message: str, status: str = "invalid_token", scope: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.scope = scope

    def json(self) -> str:
        """``OAuthBearerSaslServer``'s error document, spacing included."""
        text = f'{{"status":"{self.status}"'
        if self.scope is not None:
            text += f', "scope":"{self.scope}"'
        return text + "}"


Validator = Callable[[str], str]
"""A token in, its principal name out, or :class:`Refusal`."""


def parse_initial_response(data: bytes) -> tuple[str, str, dict[str, str]]:
    """(authorization id, token, extensions) of ``OAuthBearerClientInitialResponse``; AuthenticationFailed
    with Kafka's generic message for anything else (Kafka's server raises a ``SaslException``)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise AuthenticationFailed(FAILED) from None
    match = _INITIAL.fullmatch(text)
    if match is None:
        raise AuthenticationFailed(FAILED)
    pairs: dict[str, str] = {}
    for pair in match.group("pairs").split("\x01")[:-1]:
        key, _, value = pair.partition("=")
        pairs[key] = value
    auth = _AUTH.fullmatch(pairs.pop("auth", ""))
    if auth is None or auth.group("scheme").lower() != "bearer":
        raise AuthenticationFailed(FAILED)
    authzid = (match.group("authzid") or "").replace("=2C", ",").replace("=3D", "=")
    return authzid, auth.group("token"), pairs


class OAuthBearerServer(SaslServer):
    """``OAuthBearerSaslServer``: validate the token of the initial response; on failure send the JSON
    error and fail the exchange at the client's ``\\x01``."""

    name = "OAUTHBEARER"

    def __init__(self, validate: Validator) -> None:
        self.validate = validate
        self._error: str | None = None

    def evaluate(self, token: bytes) -> bytes:
        if token == b"\x01" and self._error is not None:
            raise AuthenticationFailed(self._error)
        self._error = None
        authzid, value, _extensions = parse_initial_response(token)
        try:
            principal = self.validate(value)
        except Refusal as refusal:
            log.info("Refused an OAUTHBEARER token: %s", refusal)
            self._error = refusal.json()
            return self._error.encode()
        if authzid and authzid != principal:
            raise AuthenticationFailed(f"Authentication failed: Client requested an authorization id "
                                       f"({authzid}) that is different from the token's principal name "
                                       f"({principal})")
        self.authorization_id = principal
        self.complete = True
        return b""


# --------------------------------------------------------------------------- unsecured tokens


class UnsecuredValidator:
    """``OAuthBearerUnsecuredValidatorCallbackHandler`` with its JAAS options."""

    def __init__(self, options: Mapping[str, str], source: str,
                 clock: Callable[[], float] = time.time) -> None:
        self.principal_claim = options.get("unsecuredValidatorPrincipalClaimName", "").strip() or "sub"
        self.scope_claim = options.get("unsecuredValidatorScopeClaimName", "").strip() or "scope"
        self.required_scope = options.get("unsecuredValidatorRequiredScope", "").split()
        skew = options.get("unsecuredValidatorAllowableClockSkewMs", "").strip() or "0"
        if not skew.isdigit():
            raise ConfigError(f"{source}: unsecuredValidatorAllowableClockSkewMs={skew} must be a "
                              "non-negative integer")
        self.skew_ms = int(skew)
        self.clock = clock

    def __call__(self, token: str) -> str:
        try:
            jwt = parse_jwt(token)
            if jwt.header.get("alg") != "none":
                raise Refusal("an unsecured token must have 'none' for its algorithm")
            if jwt.signature:
                raise Refusal("an unsecured token must not carry a signature")
            principal = jwt.string(self.principal_claim)
            expires = jwt.number("exp", required=True)
            issued = jwt.number("iat", required=False)
            scope = jwt.scope(self.scope_claim)
        except JwtError as exc:
            raise Refusal(str(exc)) from None
        assert expires is not None
        now_ms = int(self.clock() * 1000)
        if issued is not None and 1000 * issued > now_ms + self.skew_ms:
            raise Refusal(f"the token was issued at {issued} s, after now ({now_ms} ms) plus the allowed "
                          f"clock skew ({self.skew_ms} ms)")
        if now_ms - self.skew_ms >= 1000 * expires:
            raise Refusal(f"the token expired at {expires} s (now {now_ms} ms, allowed clock skew "
                          f"{self.skew_ms} ms)")
        if issued is not None and expires <= issued:
            raise Refusal("the token's expiration time is not after its issued-at time")
        missing = [item for item in self.required_scope if item not in scope]
        if missing:
            raise Refusal(f"the token's scope {sorted(scope)} lacks {missing[0]}", "insufficient_scope",
                          "[" + ", ".join(self.required_scope) + "]")
        return principal


# --------------------------------------------------------------------------- signed tokens


@dataclass(frozen=True)
class RsaKey:
    n: int
    e: int


def rsa_verify(key: RsaKey, algorithm: str, data: bytes, signature: bytes) -> bool:
    """RSASSA-PKCS1-v1_5 verification (RFC 8017 section 8.2.2): ``signature^e mod n`` must be exactly
    the EMSA-PKCS1-v1_5 encoding of the DigestInfo of ``data``."""
    hash_name, prefix = DIGEST_INFO[algorithm]
    size = (key.n.bit_length() + 7) // 8
    value = int.from_bytes(signature, "big")
    if len(signature) != size or value >= key.n:
        return False
    digest_info = prefix + hashlib.new(hash_name, data).digest()
    expected = b"\x00\x01" + b"\xff" * (size - len(digest_info) - 3) + b"\x00" + digest_info
    return hmac.compare_digest(pow(value, key.e, key.n).to_bytes(size, "big"), expected)


def parse_jwks(data: bytes) -> tuple[dict[str, RsaKey], list[RsaKey], dict[str, str]]:
    """(RSA keys by kid, keys without a kid, kid -> why it is unusable) of a JWKS document; ValueError
    when the document is not a JWKS."""
    try:
        document = json.loads(data)
    except (ValueError, RecursionError):
        raise ValueError("not JSON") from None
    keys = document.get("keys") if isinstance(document, dict) else None
    if not isinstance(keys, list):
        raise ValueError("no \"keys\" array")
    by_kid: dict[str, RsaKey] = {}
    anonymous: list[RsaKey] = []
    unusable: dict[str, str] = {}
    for entry in keys:
        if not isinstance(entry, dict):
            continue
        kid = entry.get("kid") if isinstance(entry.get("kid"), str) else None
        if entry.get("use", "sig") != "sig":
            continue
        if entry.get("kty") != "RSA":
            if kid is not None:
                unusable[kid] = f"a {entry.get('kty')} key, which this server cannot verify with"
            continue
        try:
            key = RsaKey(int.from_bytes(b64url_decode(str(entry["n"])), "big"),
                         int.from_bytes(b64url_decode(str(entry["e"])), "big"))
        except (KeyError, JwtError):
            if kid is not None:
                unusable[kid] = "an RSA key without a readable n and e"
            continue
        if key.n.bit_length() < MIN_RSA_BITS or key.e < 3:
            if kid is not None:
                unusable[kid] = f"an RSA key of {key.n.bit_length()} bits, below {MIN_RSA_BITS}"
            continue
        if kid is None:
            anonymous.append(key)
        else:
            by_kid[kid] = key
    return by_kid, anonymous, unusable


class Jwks:
    """The verification keys of one JWKS URL, refreshed in the background for ``http(s)`` URLs."""

    def __init__(self, url: str, *, refresh: float = 3600.0, backoff: float = 0.1, backoff_max: float = 10.0,
                 ssl_context: ssl.SSLContext | None = None, timeout: float = 10.0) -> None:
        self.url = url
        self.refresh = refresh
        self.backoff, self.backoff_max = backoff, backoff_max
        self.ssl_context = ssl_context
        self.timeout = timeout
        self.by_kid: dict[str, RsaKey] = {}
        self.anonymous: list[RsaKey] = []
        self.unusable: dict[str, str] = {}
        self._missing: dict[str, float] = {}
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self.fetches = 0
        self._load(self._fetch_with_retries())
        self.refreshing = urllib.parse.urlsplit(url).scheme in ("http", "https")
        if self.refreshing:
            threading.Thread(target=self._refresh_loop, name="jwks-refresh", daemon=True).start()

    def _fetch(self) -> bytes:
        import urllib.request

        self.fetches += 1
        with urllib.request.urlopen(self.url, timeout=self.timeout, context=self.ssl_context) as answer:
            data: bytes = answer.read(1 << 20)
            return data

    def _fetch_with_retries(self) -> bytes:
        deadline = time.monotonic() + self.backoff_max
        attempt = 0
        while True:
            try:
                data = self._fetch()
                parse_jwks(data)
                return data
            except (OSError, ValueError) as exc:
                attempt += 1
                wait = min(self.backoff * 2 ** (attempt - 1), deadline - time.monotonic())
                if wait <= 0:
                    raise ConfigError(f"Cannot read the JWKS at {self.url} (sasl.oauthbearer.jwks.endpoint"
                                      f".url): {exc}") from None
                time.sleep(wait)

    def _load(self, data: bytes) -> None:
        by_kid, anonymous, unusable = parse_jwks(data)
        with self._lock:
            self.by_kid, self.anonymous, self.unusable = by_kid, anonymous, unusable

    def _refresh_loop(self) -> None:
        while True:
            self._wake.wait(self.refresh)
            self._wake.clear()
            try:
                self._load(self._fetch_with_retries())
            except ConfigError as exc:
                log.warning("%s; keeping the keys fetched before", exc)

    def key(self, kid: str | None) -> RsaKey:
        """The key for ``kid``; Refusal when there is none, which (for a new unknown kid) wakes the
        refresh thread."""
        with self._lock:
            if kid is None:
                if len(self.anonymous) + len(self.by_kid) == 1:
                    return (self.anonymous or list(self.by_kid.values()))[0]
                raise Refusal("the token has no kid header and the JWKS does not hold exactly one key")
            if kid in self.by_kid:
                return self.by_kid[kid]
            if kid in self.unusable:
                raise Refusal(f"the key {kid!r} of the JWKS is {self.unusable[kid]}")
        now = time.monotonic()
        if self.refreshing and len(kid) <= 1000 and now >= self._missing.get(kid, 0.0):
            self._missing[kid] = now + MISSING_KID_INTERVAL
            if len(self._missing) > 16:
                self._missing.pop(next(iter(self._missing)))
            self._wake.set()
        raise Refusal(f"no key with kid {kid!r} in the JWKS at {self.url}")


class JwtValidator:
    """``BrokerJwtValidator``: signature by a JWKS key, then ``exp``, ``iat``, ``nbf``, audience, issuer
    and the principal and scope claims."""

    def __init__(self, keys: Jwks, *, audience: tuple[str, ...] = (), issuer: str | None = None,
                 skew: float = 30.0, sub_claim: str = "sub", scope_claim: str = "scope",
                 clock: Callable[[], float] = time.time) -> None:
        self.keys = keys
        self.audience, self.issuer, self.skew = audience, issuer, skew
        self.sub_claim, self.scope_claim = sub_claim, scope_claim
        self.clock = clock

    def __call__(self, token: str) -> str:
        try:
            jwt = parse_jwt(token)
        except JwtError as exc:
            raise Refusal(str(exc)) from None
        self._verify(jwt)
        try:
            expires = jwt.number("exp", required=True)
            issued = jwt.number("iat", required=True)
            not_before = jwt.number("nbf", required=False)
            principal = jwt.string(self.sub_claim)
            jwt.scope(self.scope_claim)
        except JwtError as exc:
            raise Refusal(str(exc)) from None
        assert expires is not None and issued is not None
        now = self.clock()
        if now - self.skew >= expires:
            raise Refusal(f"the token expired at {_when(expires)} (allowed clock skew {self.skew:g} s)")
        if not_before is not None and now + self.skew < not_before:
            raise Refusal(f"the token is not valid before {_when(not_before)}")
        audience = jwt.audience()
        if "aud" in jwt.claims and not self.audience:
            raise Refusal(f"the token names an audience ({', '.join(audience)}) but "
                          "sasl.oauthbearer.expected.audience is not set")
        if self.audience and not set(audience) & set(self.audience):
            raise Refusal(f"the token's audience [{', '.join(audience)}] is none of the expected "
                          f"[{', '.join(self.audience)}]")
        if self.issuer is not None and jwt.claims.get("iss") != self.issuer:
            raise Refusal(f"the token's issuer {jwt.claims.get('iss')!r} is not the expected {self.issuer!r}")
        return principal

    def _verify(self, jwt: Jwt) -> None:
        algorithm = jwt.header.get("alg")
        if algorithm == "none" or not isinstance(algorithm, str):
            raise Refusal("the token is not signed")
        if algorithm not in DIGEST_INFO:
            raise Refusal(f"the token is signed with {algorithm}, which this server does not verify: "
                          f"use {', '.join(DIGEST_INFO)}")
        kid = jwt.header.get("kid")
        key = self.keys.key(kid if isinstance(kid, str) else None)
        if not rsa_verify(key, algorithm, jwt.signing_input, jwt.signature):
            raise Refusal(f"the token's signature does not verify with the key {kid!r}")


def _when(epoch: float) -> str:
    if not math.isfinite(epoch) or abs(epoch) > 1e11:
        return f"{epoch} s"
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


# --------------------------------------------------------------------------- settings


class _Settings:
    """A listener's OAUTHBEARER settings, looked up with the mechanism and listener prefixes."""

    def __init__(self, props: Mapping[str, str], listener: str, used: set[str]) -> None:
        self.props = props
        name = listener.lower()
        self.prefixes = (f"listener.name.{name}.oauthbearer.", f"listener.name.{name}.", "")
        self.used = used

    def get(self, key: str) -> str | None:
        for prefix in self.prefixes:
            value = self.props.get(prefix + key)
            if value is not None:
                self.used.add(prefix + key)
                return value.strip()
        return None

    def number(self, key: str, default: float, scale: float = 1.0) -> float:
        text = self.get(key)
        if text is None:
            return default
        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if not math.isfinite(value) or value < 0:
            raise ConfigError(f"{key}={text} must be a non-negative number")
        return value / scale


def server_factory(props: Mapping[str, str], listener: str, used: set[str],
                   jaas: tuple[str, str]) -> Callable[[], SaslServer]:
    """What makes the OAUTHBEARER server side of ``listener`` (``jaas``: the JAAS setting's key and text);
    ConfigError for settings Kafka refuses or this server does not support."""
    key, text = jaas
    options = jaas_options(key, text, "OAUTHBEARER", OAUTHBEARER_MODULE)
    settings = _Settings(props, listener, used)
    handler = settings.get("sasl.server.callback.handler.class")
    validate: Validator
    if handler in (None, "", UNSECURED_VALIDATOR):
        validate = UnsecuredValidator(options, key)
    elif handler in VALIDATOR_HANDLERS:
        validate = _jwt_validator(settings, options)
    else:
        raise ConfigError(f"sasl.server.callback.handler.class={handler} is not supported on listener "
                          f"{listener}: use {VALIDATOR_HANDLERS[0]} (or leave it unset for unsecured tokens)")

    def make() -> SaslServer:
        return OAuthBearerServer(validate)

    return make


def _jwt_validator(settings: _Settings, options: Mapping[str, str]) -> JwtValidator:
    package = "org.apache.kafka.common.security.oauthbearer"
    validator = settings.get("sasl.oauthbearer.jwt.validator.class")
    if validator not in (None, "", f"{package}.DefaultJwtValidator", f"{package}.BrokerJwtValidator"):
        raise ConfigError(f"sasl.oauthbearer.jwt.validator.class={validator} is not supported: use "
                          f"{package}.DefaultJwtValidator or BrokerJwtValidator (Kafka 4.1)")
    url = settings.get("sasl.oauthbearer.jwks.endpoint.url")
    if not url:
        raise ConfigError("OAuthBearerValidatorCallbackHandler needs sasl.oauthbearer.jwks.endpoint.url")
    scheme = urllib.parse.urlsplit(url).scheme.lower()
    if scheme not in ("http", "https", "file"):
        raise ConfigError(f"sasl.oauthbearer.jwks.endpoint.url={url} is not an http(s) or file URL")
    context = None
    if scheme == "https":
        ssl_options = {name: value for name, value in options.items() if name.startswith("ssl.")}
        try:
            context = ClientConfig(bootstrap=(), bootstrap_controllers=False, security_protocol="SSL",
                                   ssl_options=ssl_options).ssl_context()
        except ClientConfigError as exc:
            raise ConfigError(f"The JWKS endpoint's TLS settings (ssl.* in the JAAS options): "
                              f"{exc}") from None
    jwks = "sasl.oauthbearer.jwks.endpoint."
    keys = Jwks(url, refresh=settings.number(jwks + "refresh.ms", 3600.0, 1000),
                backoff=settings.number(jwks + "retry.backoff.ms", 0.1, 1000),
                backoff_max=settings.number(jwks + "retry.backoff.max.ms", 10.0, 1000),
                ssl_context=context)
    expected = settings.get("sasl.oauthbearer.expected.audience") or ""
    audience = tuple(item.strip() for item in expected.split(",") if item.strip())
    issuer = settings.get("sasl.oauthbearer.expected.issuer") or None
    return JwtValidator(keys, audience=audience, issuer=issuer,
                        skew=settings.number("sasl.oauthbearer.clock.skew.seconds", 30.0),
                        sub_claim=settings.get("sasl.oauthbearer.sub.claim.name") or "sub",
                        scope_claim=settings.get("sasl.oauthbearer.scope.claim.name") or "scope")


__all__ = [
    "DIGEST_INFO",
    "VALIDATOR_HANDLERS",
    "Jwks",
    "JwtValidator",
    "OAuthBearerServer",
    "Refusal",
    "RsaKey",
    "UnsecuredValidator",
    "parse_initial_response",
    "parse_jwks",
    "rsa_verify",
    "server_factory",
]
