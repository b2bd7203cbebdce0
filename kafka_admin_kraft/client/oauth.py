"""SASL/OAUTHBEARER client side (RFC 7628, Kafka's KIP-255 and KIP-768): the mechanism, the tokens it
logs in with and the JWT reading both sides share.

The exchange is Kafka's ``OAuthBearerSaslClient``: one initial response in the form of
``OAuthBearerClientInitialResponse`` (GS2 header ``n,,``, ``auth=Bearer <token>``, the SASL extensions,
each key/value pair closed by ``\\x01``, and one final ``\\x01``); an empty server answer means success,
anything else is the server's JSON error (``{"status":"invalid_token"}``), which the client acknowledges
with a lone ``\\x01`` before the server fails the exchange with SASL_AUTHENTICATION_FAILED.

Where the token comes from, as Kafka's client decides it from ``sasl.login.callback.handler.class``:

* unset (Kafka's default, ``OAuthBearerUnsecuredLoginCallbackHandler``): an unsigned (``alg: none``) JWT
  built from the ``unsecuredLogin*`` JAAS options;
* ``org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler`` (Kafka 3.x also
  accepts it under ``...oauthbearer.secured.``): ``sasl.oauthbearer.token.endpoint.url``, either an
  ``https``/``http`` token endpoint asked with the OAuth client credentials grant (Kafka's
  ``ClientCredentialsJwtRetriever``; the client id, secret and scope come from
  ``sasl.oauthbearer.client.credentials.client.id|client.secret`` and ``sasl.oauthbearer.scope``, else
  from the JAAS options ``clientId``, ``clientSecret`` and ``scope``) or a ``file:`` URL naming a file
  that holds the token (``FileJwtRetriever``). An ``https`` endpoint is verified with the ``ssl.*``
  options of the JAAS configuration, not the client's own ``ssl.*`` properties (Kafka's
  ``JaasOptionsUtils``); without any, the system's CAs;
* the SDK's ``oauth_token_provider`` callable, which returns the token text.

A token is checked as Kafka's ``ClientJwtValidator`` does (three sections, a numeric ``exp``, a string
principal claim named by ``sasl.oauthbearer.sub.claim.name``, ``iat`` numeric when present), kept per
configuration in the process (as Kafka's ``LoginManager`` shares one login between clients of the same
JAAS configuration) and fetched anew once its refresh time has come, computed as
``ExpiringCredentialRefreshingLogin`` does from ``sasl.login.refresh.window.factor``, ``.jitter``,
``.min.period.seconds`` and ``.buffer.seconds``. Kafka refreshes in a background thread; here the
refresh happens when a connection next needs the token, in the driver's blocking step (a worker
thread under asyncio): a connection never authenticates with a token past its refresh time.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import decimal
import json
import math
import random
import re
import threading
import time
import urllib.parse
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from kafka_admin_kraft.client.sasl_base import SaslFailure, SaslMechanism, escape_saslname
from kafka_admin_kraft.errors import ConfigError

if TYPE_CHECKING:
    import ssl

    from kafka_admin_kraft.client.config import SaslSettings

_PACKAGE: Final = "org.apache.kafka.common.security.oauthbearer"
LOGIN_HANDLERS: Final = (
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
    "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler",
)
"""The secured login callback handler: Kafka 4.x's name first, then Kafka 3.x's."""
UNSECURED_LOGIN_HANDLER: Final = (
    "org.apache.kafka.common.security.oauthbearer.internals.unsecured.OAuthBearerUnsecuredLoginCallbackHandler"
)
SEPARATOR: Final = "\x01"
"""RFC 7628's ``kvsep``."""
EXTENSION_KEY: Final = re.compile(r"[A-Za-z]+")
EXTENSION_VALUE: Final = re.compile(r"[\x21-\x7E \t\r\n]+")
"""The extension key and value syntax of RFC 7628 section 3.1, as ``OAuthBearerClientInitialResponse``
checks it."""
RESERVED_CLAIMS: Final = ("iat", "exp")
DEFAULT_TIMEOUT: Final = 10.0
"""Seconds for connecting to and reading from a token endpoint when ``sasl.login.connect.timeout.ms`` or
``sasl.login.read.timeout.ms`` is unset (Kafka then waits as long as the JVM's HTTP client does, without
limit; a bound keeps a call within its deadline)."""


class JwtError(ValueError):
    """A token that is not a well-formed JWT, or lacks what a token must carry; the message says what."""


# --------------------------------------------------------------------------- JWT reading


def b64url_decode(text: str) -> bytes:
    """Base64URL without padding (RFC 7515 section 2); JwtError for anything else."""
    if not re.fullmatch(r"[A-Za-z0-9_-]*", text) or len(text) % 4 == 1:
        raise JwtError("a section is not Base64URL-encoded")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise JwtError("a section is not Base64URL-encoded") from None


def b64url_encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _reject_constant(name: str) -> Any:
    raise JwtError(f"{name} is not a JSON number")


def _json_object(section: str, what: str) -> dict[str, Any]:
    try:
        value = json.loads(b64url_decode(section).decode("utf-8"), parse_constant=_reject_constant)
    except JwtError:
        raise
    except (ValueError, RecursionError):  # bad UTF-8 or JSON, or an integer of thousands of digits
        raise JwtError(f"the {what} is not JSON") from None
    if not isinstance(value, dict):
        raise JwtError(f"the {what} is not a JSON object")
    return value


@dataclass(frozen=True)
class Jwt:
    """A JWS in compact serialization, read but not verified."""

    value: str
    header: dict[str, Any]
    claims: dict[str, Any]
    signing_input: bytes
    signature: bytes

    def number(self, name: str, *, required: bool) -> float | None:
        """A numeric claim (seconds since the epoch for ``exp``, ``iat``, ``nbf``)."""
        value = self.claims.get(name)
        if value is None:
            if required:
                raise JwtError(f"the token has no {name} claim")
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise JwtError(f"the {name} claim is not a number")
        try:
            number = float(value)
        except OverflowError:
            number = math.inf
        if not math.isfinite(number):
            raise JwtError(f"the {name} claim is not a finite number")
        return number

    def string(self, name: str) -> str:
        """A required, non-blank string claim (the principal)."""
        value = self.claims.get(name)
        if not isinstance(value, str) or not value.strip():
            raise JwtError(f"the token has no principal name in its {name!r} claim")
        return value

    def scope(self, name: str) -> frozenset[str]:
        """The scope claim: a string (one scope, as Kafka reads it) or a list of strings."""
        value = self.claims.get(name)
        if value is None:
            return frozenset()
        items = [value] if isinstance(value, str) else value if isinstance(value, list) else None
        if items is None or not all(isinstance(item, str) for item in items):
            raise JwtError(f"the {name} claim is neither a string nor a list of strings")
        return frozenset(item.strip() for item in items if item.strip())

    def audience(self) -> tuple[str, ...]:
        value = self.claims.get("aud")
        if isinstance(value, str):
            return (value,)
        if isinstance(value, list):
            return tuple(item for item in value if isinstance(item, str))
        return ()


def parse_jwt(value: str) -> Jwt:
    """Read a compact JWS (``header.payload.signature``); JwtError, never another exception, for
    anything malformed (the server reads what unauthenticated peers send)."""
    parts = value.split(".")
    if len(parts) != 3:
        raise JwtError("a JWT has three dot-separated sections (header, payload, signature)")
    header = _json_object(parts[0], "header")
    claims = _json_object(parts[1], "payload")
    return Jwt(value, header, claims, f"{parts[0]}.{parts[1]}".encode("ascii"), b64url_decode(parts[2]))


# --------------------------------------------------------------------------- the initial response


def initial_response(token: str, authzid: str = "", extensions: Mapping[str, str] | None = None) -> bytes:
    """The client's first (and only) message, as ``OAuthBearerClientInitialResponse.toBytes`` lays it
    out; the authorization id, which Kafka's client leaves empty, is escaped as an RFC 5802 saslname."""
    gs2 = f"n,a={escape_saslname(authzid)}," if authzid else "n,,"
    pairs = "".join(f"{key}={value}{SEPARATOR}" for key, value in (extensions or {}).items())
    return f"{gs2}{SEPARATOR}auth=Bearer {token}{SEPARATOR}{pairs}{SEPARATOR}".encode()


def check_extensions(extensions: Mapping[str, str], source: str) -> dict[str, str]:
    for key, value in extensions.items():
        if not EXTENSION_KEY.fullmatch(key) or key == "auth":
            raise ConfigError(f"{source}: the SASL extension name {key!r} is invalid (letters only, not "
                              "'auth')", ["sasl.jaas.config"])
        if not EXTENSION_VALUE.fullmatch(value):
            raise ConfigError(f"{source}: the value of the SASL extension {key} is invalid (printable "
                              "ASCII, space, tab, CR or LF)", ["sasl.jaas.config"])
    return dict(extensions)


# --------------------------------------------------------------------------- unsecured tokens


def java_double(value: float) -> str:
    """``Double.toString`` (JDK 19+): the shortest decimal that reads back as ``value``, in plain form
    for 10^-3 <= |value| < 10^7 and as ``d.dddE<n>`` otherwise, with at least one digit after the point."""
    if value == 0:
        return "0.0"
    sign, digit_tuple, exponent = decimal.Decimal(repr(float(value))).as_tuple()
    assert isinstance(exponent, int)
    significant = "".join(map(str, digit_tuple)).lstrip("0")
    point = len(significant) + exponent  # where the decimal point falls among the significant digits
    digits = significant.rstrip("0") or "0"
    prefix = "-" if sign else ""
    if 1e-3 <= abs(value) < 1e7:
        if point <= 0:
            return f"{prefix}0.{'0' * -point}{digits}"
        if point >= len(digits):
            return f"{prefix}{digits}{'0' * (point - len(digits))}.0"
        return f"{prefix}{digits[:point]}.{digits[point:]}"
    return f"{prefix}{digits[0]}.{digits[1:] or '0'}E{point - 1}"


def _java_split(text: str, delimiter: str) -> list[str]:
    """``String.split`` with a literal delimiter: trailing empty strings are dropped."""
    if not text:
        return [""]
    parts = text.split(delimiter)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def _list_claim(value: str) -> list[str]:
    """``unsecuredLoginListClaim_<name>``: the first character is the delimiter of the rest."""
    if len(value) <= 1:
        return []
    delimiter, text = value[0], value[1:]
    items = _java_split(text, delimiter)
    if text.startswith(delimiter) or text.endswith(delimiter) or delimiter * 2 in text:
        items.append("")
    return items


def _json_text(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def unsecured_token(options: Mapping[str, str], now: float) -> str:
    """The unsigned JWT ``OAuthBearerUnsecuredLoginCallbackHandler`` makes from the JAAS options: header
    ``{"alg":"none"}``, claims ``exp`` and ``iat`` (seconds, as Java doubles) then the
    ``unsecuredLoginStringClaim_``/``NumberClaim_``/``ListClaim_`` options in order, and an empty
    signature. ConfigError for an option Kafka refuses."""
    now_ms = int(now * 1000)
    try:
        lifetime = int(options.get("unsecuredLoginLifetimeSeconds", "3600").strip())
    except ValueError:
        raise ConfigError("sasl.jaas.config: unsecuredLoginLifetimeSeconds must be an integer",
                          ["sasl.jaas.config"]) from None
    claims = [f'"exp":{java_double(now_ms / 1000.0 + lifetime)}', f'"iat":{java_double(now_ms / 1000.0)}']
    prefixes = ("unsecuredLoginStringClaim_", "unsecuredLoginNumberClaim_", "unsecuredLoginListClaim_")
    for key, value in options.items():
        prefix = next((p for p in prefixes if key.startswith(p) and len(key) > len(p)), None)
        if prefix is None:
            continue
        name = key[len(prefix):]
        if name in RESERVED_CLAIMS:
            raise ConfigError(f"sasl.jaas.config: {key}: the {name} claim is computed and cannot be set",
                              ["sasl.jaas.config"])
        if prefix == prefixes[0]:
            text = _json_text(value)
        elif prefix == prefixes[1]:
            try:
                number = float(value.strip())
            except ValueError:
                number = math.nan
            if not math.isfinite(number):
                raise ConfigError(f"sasl.jaas.config: {key}={value!r} is not a number", ["sasl.jaas.config"])
            text = java_double(number)
        else:
            text = "[" + ",".join(_json_text(item) for item in _list_claim(value)) + "]"
        claims.append(f"{_json_text(name)}:{text}")
    header = b64url_encode(b'{"alg":"none"}')
    payload = b64url_encode(("{" + ",".join(claims) + "}").encode())
    return f"{header}.{payload}."


# --------------------------------------------------------------------------- tokens and their refresh


@dataclass(frozen=True)
class Token:
    """A token checked as Kafka's client checks the tokens it logs in with."""

    value: str
    principal: str
    expires_at: float
    issued_at: float | None
    jwt: Jwt


def read_token(value: str, sub_claim: str = "sub", scope_claim: str = "scope") -> Token:
    """``ClientJwtValidator``: three sections, numeric ``exp`` (and ``iat`` if present), a principal."""
    jwt = parse_jwt(value.strip())
    expires_at = jwt.number("exp", required=True)
    assert expires_at is not None
    issued_at = jwt.number("iat", required=False)
    jwt.scope(scope_claim)
    return Token(jwt.value, jwt.string(sub_claim), expires_at, issued_at, jwt)


@dataclass(frozen=True)
class RefreshPolicy:
    """``ExpiringCredentialRefreshConfig``: when a token is fetched again, relative to its lifetime."""

    window_factor: float = 0.8
    window_jitter: float = 0.05
    min_period: float = 60.0
    buffer: float = 300.0

    def refresh_at(self, fetched_at: float, expires_at: float, rng: Callable[[], float]) -> float:
        """``ExpiringCredentialRefreshingLogin``: at the window factor (plus jitter) of the remaining
        lifetime, moved to keep at least ``min_period`` after the fetch and ``buffer`` before expiry,
        both ignored when the lifetime cannot hold them together."""
        share = self.window_factor + self.window_jitter * rng()
        proposed = fetched_at + (expires_at - fetched_at) * share
        if fetched_at + self.min_period + self.buffer > expires_at:
            return proposed
        return min(max(proposed, fetched_at + self.min_period), expires_at - self.buffer)


class TokenLogin:
    """The token one configuration logs in with: fetched on first use and again after its refresh time.
    A failed refresh keeps the current token while it has not expired (Kafka's refresh thread retries
    too), and says why once it has."""

    def __init__(
        self,
        fetch: Callable[[], str],
        *,
        sub_claim: str = "sub",
        scope_claim: str = "scope",
        policy: RefreshPolicy | None = None,
        clock: Callable[[], float] = time.time,
        rng: Callable[[], float] = random.random,
    ) -> None:
        self.fetch = fetch
        self.sub_claim = sub_claim
        self.scope_claim = scope_claim
        self.policy = policy or RefreshPolicy()
        self.clock = clock
        self.rng = rng
        self.current: Token | None = None
        self.refresh_time = 0.0
        self._lock = threading.Lock()

    def token(self) -> Token:
        """The current token; blocking when it has to be fetched. SaslFailure when no token can be had."""
        with self._lock:
            now = self.clock()
            if self.current is not None and now < self.refresh_time:
                return self.current
            try:
                fetched = self.fetch()
                if not isinstance(fetched, str):
                    raise SaslFailure(f"the token provider returned {type(fetched).__name__}, not the token "
                                      "text: make it return the JWT as a str")
                token = read_token(fetched, self.sub_claim, self.scope_claim)
            except JwtError as exc:
                failure = SaslFailure(f"the token to log in with is malformed: {exc} (check what the token "
                                      "endpoint or provider returns; sasl.oauthbearer.sub.claim.name names "
                                      "the principal claim)")
                return self._keep_or_raise(now, failure)
            except SaslFailure as exc:
                return self._keep_or_raise(now, exc)
            if token.expires_at <= now:
                failure = SaslFailure(f"the token to log in with expired at {_when(token.expires_at)}: the "
                                      "token source hands out stale tokens (check its clock and the token)")
                return self._keep_or_raise(now, failure)
            self.current = token
            self.refresh_time = self.policy.refresh_at(now, token.expires_at, self.rng)
            return token

    def _keep_or_raise(self, now: float, failure: SaslFailure) -> Token:
        if self.current is not None and now < self.current.expires_at:
            return self.current
        raise failure


def _when(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


# --------------------------------------------------------------------------- token sources


@dataclass(frozen=True)
class HttpSettings:
    """How a token endpoint is asked (``sasl.login.*`` timeouts and retry backoff, in seconds)."""

    connect_timeout: float = DEFAULT_TIMEOUT
    read_timeout: float = DEFAULT_TIMEOUT
    retry_backoff: float = 0.1
    retry_backoff_max: float = 10.0
    ssl_context: ssl.SSLContext | None = None


class _Retriable(Exception):
    """A failure worth another attempt (no connection, a 5xx answer)."""


def client_credentials(
    url: str, client_id: str, client_secret: str, scope: str | None, http: HttpSettings,
    *, urlencode_header: bool = False,
) -> str:
    """One token from ``url`` by the OAuth client credentials grant (RFC 6749 section 4.4), as Kafka's
    ``ClientCredentialsRequestFormatter`` asks and ``JwtHttpClient`` retries: HTTP Basic authentication
    with the client id and secret, the scope in the form body, the ``access_token`` of the JSON answer;
    connection failures and 5xx answers retried with exponential backoff from ``sasl.login.retry.backoff.ms``
    for at most ``sasl.login.retry.backoff.max.ms``, 4xx answers not retried."""
    def encode(text: str) -> str:
        return urllib.parse.quote_plus(text) if urlencode_header else text

    credentials = base64.b64encode(f"{encode(client_id)}:{encode(client_secret)}".encode()).decode()
    body = "grant_type=client_credentials"
    if scope:
        body += "&scope=" + urllib.parse.quote_plus(scope)
    headers = {"Accept": "application/json", "Authorization": f"Basic {credentials}",
               "Cache-Control": "no-cache", "Content-Type": "application/x-www-form-urlencoded"}
    deadline = time.monotonic() + http.retry_backoff_max
    attempt = 0
    while True:
        try:
            answer = _post(url, body.encode(), headers, http)
            break
        except _Retriable as exc:
            attempt += 1
            wait = min(http.retry_backoff * 2 ** (attempt - 1), deadline - time.monotonic())
            if wait <= 0:
                raise SaslFailure(str(exc)) from None
            time.sleep(wait)
    try:
        document = json.loads(answer)
    except (ValueError, RecursionError):
        document = None
    token = document.get("access_token") if isinstance(document, dict) else None
    if not isinstance(token, str) or not token.strip():
        raise SaslFailure(f"the token endpoint {url} answered without an access_token ({_snippet(answer)}): "
                          "check that sasl.oauthbearer.token.endpoint.url is the provider's token endpoint")
    return token


def _snippet(data: bytes) -> str:
    text = " ".join(data.decode("utf-8", "replace").split())
    return text[:200] + ("..." if len(text) > 200 else "")


def _post(url: str, body: bytes, headers: Mapping[str, str], settings: HttpSettings) -> bytes:
    import http.client
    import socket
    import ssl

    parts = urllib.parse.urlsplit(url)
    secure = parts.scheme == "https"
    host = parts.hostname or ""
    connection: http.client.HTTPConnection
    if secure:
        context = settings.ssl_context or ssl.create_default_context()
        connection = http.client.HTTPSConnection(host, parts.port, timeout=settings.connect_timeout,
                                                 context=context)
    else:
        connection = http.client.HTTPConnection(host, parts.port, timeout=settings.connect_timeout)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        connection.connect()
        assert connection.sock is not None
        connection.sock.settimeout(settings.read_timeout)
        connection.request("POST", target, body=body, headers=dict(headers))
        response = connection.getresponse()
        data: bytes = response.read(1 << 20)
        status = response.status
    except ssl.SSLCertVerificationError as exc:
        raise SaslFailure(f"cannot verify the TLS certificate of the token endpoint {url}: "
                          f"{exc.verify_message or exc} (give its CA as ssl.truststore.location in "
                          "sasl.jaas.config: Kafka reads the token endpoint's trust store from the JAAS "
                          "options)") from None
    except (OSError, http.client.HTTPException) as exc:
        reason = "timed out" if isinstance(exc, socket.timeout) else str(exc) or type(exc).__name__
        raise _Retriable(f"cannot reach the token endpoint {url}: {reason} (check sasl.oauthbearer"
                         ".token.endpoint.url and that the identity provider is up)") from None
    finally:
        connection.close()
    if 200 <= status < 300:
        return data
    if status >= 500:
        raise _Retriable(f"the token endpoint {url} failed with HTTP {status} ({_snippet(data)}): the "
                         "identity provider is failing, try again later")
    fix = "check sasl.oauthbearer.token.endpoint.url"
    if status in (400, 401, 403):
        fix = ("check sasl.oauthbearer.client.credentials.client.id and .client.secret (or the JAAS options "
               "clientId and clientSecret)")
    raise SaslFailure(f"the token endpoint {url} refused the request with HTTP {status} ({_snippet(data)}): "
                      f"{fix}")


def _file_token(url: str) -> Callable[[], str]:
    """A ``file:`` token endpoint: the file holds the token (Kafka's ``FileJwtRetriever``), read anew at
    each refresh."""
    import urllib.request

    path = urllib.request.url2pathname(urllib.parse.urlsplit(url).path)

    def read() -> str:
        try:
            with open(path, encoding="utf-8") as source:
                return source.read().strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise SaslFailure(f"cannot read the token file {path} (sasl.oauthbearer.token.endpoint.url): "
                              f"{getattr(exc, 'strerror', None) or exc}") from None

    return read


# --------------------------------------------------------------------------- settings -> login


def _number(props: Mapping[str, str], name: str, default: float, low: float, high: float) -> float:
    text = props.get(name)
    if text is None:
        return default
    try:
        value = float(str(text).strip())
    except ValueError:
        value = math.nan
    if not low <= value <= high:
        raise ConfigError(f"{name}={text} is out of range: use a number from {low:g} to {high:g}", [name])
    return value


def _ms(props: Mapping[str, str], name: str, default: float) -> float:
    return _number(props, name, default * 1000, 0, 2**63 - 1) / 1000


def _option_or_property(settings: SaslSettings, prop: str, option: str) -> str | None:
    """Kafka's ``ConfigOrJaas``: the client property when set, else the JAAS option."""
    value = settings.properties.get(prop)
    if value is None:
        value = settings.options.get(option)
    return value.strip() if value is not None and value.strip() else None


def _endpoint_context(options: Mapping[str, str]) -> ssl.SSLContext:
    """The token endpoint's TLS context from the JAAS options' ``ssl.*`` entries (Kafka's
    ``JaasOptionsUtils``), built as the client's own."""
    from kafka_admin_kraft.client.config import ClientConfig

    ssl_options = {key: value for key, value in options.items() if key.startswith("ssl.")}
    config = ClientConfig(bootstrap=(), bootstrap_controllers=False, security_protocol="SSL",
                          ssl_options=ssl_options)
    return config.ssl_context()


def plan(settings: SaslSettings) -> tuple[Callable[[], str], dict[str, str]]:
    """What fetches this configuration's token, and its SASL extensions; ConfigError for settings Kafka
    refuses or this client does not support. No I/O happens here."""
    props = settings.properties
    handler = (props.get("sasl.login.callback.handler.class") or "").strip() or None
    url = (props.get("sasl.oauthbearer.token.endpoint.url") or "").strip() or None
    options = settings.options
    if settings.token_provider is not None:
        _refuse_unused(props, "with a token provider")
        extensions = check_extensions(_extensions(options, "extension_"), "sasl.jaas.config")
        return settings.token_provider, extensions
    if handler in LOGIN_HANDLERS:
        extensions = check_extensions(_extensions(options, "extension_"), "sasl.jaas.config")
        if url is None:
            raise ConfigError(f"sasl.login.callback.handler.class={handler} needs "
                              "sasl.oauthbearer.token.endpoint.url", ["sasl.oauthbearer.token.endpoint.url"])
        scheme = urllib.parse.urlsplit(url).scheme.lower()
        _check_classes(props, scheme)
        if scheme == "file":
            return _file_token(url), extensions
        if scheme not in ("http", "https") or not urllib.parse.urlsplit(url).hostname:
            raise ConfigError(f"sasl.oauthbearer.token.endpoint.url={url} is not an http(s) or file URL",
                              ["sasl.oauthbearer.token.endpoint.url"])
        client_id = _option_or_property(settings, "sasl.oauthbearer.client.credentials.client.id",
                                        "clientId")
        secret = _option_or_property(settings, "sasl.oauthbearer.client.credentials.client.secret",
                                     "clientSecret")
        if client_id is None or secret is None:
            raise ConfigError("the client credentials grant needs sasl.oauthbearer.client.credentials"
                              ".client.id and .client.secret (or the JAAS options clientId and clientSecret)",
                              ["sasl.oauthbearer.client.credentials.client.id",
                               "sasl.oauthbearer.client.credentials.client.secret"])
        scope = _option_or_property(settings, "sasl.oauthbearer.scope", "scope")
        http = HttpSettings(
            connect_timeout=_ms(props, "sasl.login.connect.timeout.ms", DEFAULT_TIMEOUT),
            read_timeout=_ms(props, "sasl.login.read.timeout.ms", DEFAULT_TIMEOUT),
            retry_backoff=_ms(props, "sasl.login.retry.backoff.ms", 0.1),
            retry_backoff_max=_ms(props, "sasl.login.retry.backoff.max.ms", 10.0),
            ssl_context=_endpoint_context(options) if scheme == "https" else None,
        )
        urlencode = (props.get("sasl.oauthbearer.header.urlencode") or "false").strip().lower()
        if urlencode not in ("true", "false"):
            raise ConfigError(f"sasl.oauthbearer.header.urlencode={urlencode}: use true or false",
                              ["sasl.oauthbearer.header.urlencode"])

        def fetch() -> str:
            return client_credentials(url, client_id, secret, scope, http,
                                      urlencode_header=urlencode == "true")

        return fetch, extensions
    if handler not in (None, UNSECURED_LOGIN_HANDLER):
        raise ConfigError(f"sasl.login.callback.handler.class={handler} is not supported: use "
                          f"{LOGIN_HANDLERS[0]} (or leave it unset for unsecured tokens)",
                          ["sasl.login.callback.handler.class"])
    _refuse_unused(props, f"without sasl.login.callback.handler.class={LOGIN_HANDLERS[0]}: set it")
    extensions = check_extensions(_extensions(options, "unsecuredLoginExtension_"), "sasl.jaas.config")
    principal_claim = options.get("unsecuredLoginPrincipalClaimName", "").strip() or "sub"
    probe = parse_jwt(unsecured_token(options, time.time()))
    try:
        probe.string(principal_claim)
    except JwtError:
        raise ConfigError(f"sasl.jaas.config: unsecured OAUTHBEARER tokens need the principal: set "
                          f'unsecuredLoginStringClaim_{principal_claim}="<user>"',
                          ["sasl.jaas.config"]) from None
    return (lambda: unsecured_token(options, time.time())), extensions


TOKEN_ENDPOINT_PROPERTIES: Final = (
    "sasl.oauthbearer.token.endpoint.url", "sasl.oauthbearer.client.credentials.client.id",
    "sasl.oauthbearer.client.credentials.client.secret", "sasl.oauthbearer.scope",
    "sasl.oauthbearer.header.urlencode", "sasl.login.connect.timeout.ms", "sasl.login.read.timeout.ms",
    "sasl.login.retry.backoff.ms", "sasl.login.retry.backoff.max.ms", "sasl.oauthbearer.jwt.retriever.class",
)
"""The properties only the token endpoint login reads."""


def _refuse_unused(props: Mapping[str, str], when: str) -> None:
    """Kafka ignores the token endpoint's settings when another login is configured; refusing them keeps
    a setting from silently doing nothing."""
    unused = [name for name in TOKEN_ENDPOINT_PROPERTIES if name in props]
    if unused:
        verb = "is" if len(unused) == 1 else "are"
        raise ConfigError(f"{', '.join(unused)} {verb} not used {when}", unused)


def _check_classes(props: Mapping[str, str], scheme: str) -> None:
    """Kafka 4.1's ``sasl.oauthbearer.jwt.retriever.class`` and ``.jwt.validator.class``: the default
    retriever picks the file or the client credentials retriever by the URL's scheme, as this client does;
    naming one of those two must fit the URL; others are not supported."""
    retriever = (props.get("sasl.oauthbearer.jwt.retriever.class") or "").strip()
    wanted = {"": None, f"{_PACKAGE}.DefaultJwtRetriever": None, f"{_PACKAGE}.FileJwtRetriever": "file",
              f"{_PACKAGE}.ClientCredentialsJwtRetriever": "http"}
    if retriever not in wanted:
        raise ConfigError(f"sasl.oauthbearer.jwt.retriever.class={retriever} is not supported: use "
                          f"{_PACKAGE}.DefaultJwtRetriever, ClientCredentialsJwtRetriever or "
                          "FileJwtRetriever",
                          ["sasl.oauthbearer.jwt.retriever.class"])
    kind = wanted[retriever]
    if kind is not None and (scheme == "file") != (kind == "file"):
        raise ConfigError(f"sasl.oauthbearer.jwt.retriever.class={retriever} does not fit "
                          f"sasl.oauthbearer.token.endpoint.url ({scheme}:)",
                          ["sasl.oauthbearer.jwt.retriever.class", "sasl.oauthbearer.token.endpoint.url"])
    validator = (props.get("sasl.oauthbearer.jwt.validator.class") or "").strip()
    if validator not in ("", f"{_PACKAGE}.DefaultJwtValidator", f"{_PACKAGE}.ClientJwtValidator"):
        raise ConfigError(f"sasl.oauthbearer.jwt.validator.class={validator} is not supported on a client: "
                          f"use {_PACKAGE}.DefaultJwtValidator or ClientJwtValidator",
                          ["sasl.oauthbearer.jwt.validator.class"])


def _extensions(options: Mapping[str, str], prefix: str) -> dict[str, str]:
    return {key[len(prefix):]: value for key, value in options.items() if key.startswith(prefix)}


def claim_names(settings: SaslSettings) -> tuple[str, str]:
    """The principal and scope claim names the client reads its token with."""
    if settings.token_provider is None and (settings.properties.get("sasl.login.callback.handler.class")
                                            or "").strip() not in LOGIN_HANDLERS:
        return (settings.options.get("unsecuredLoginPrincipalClaimName", "").strip() or "sub",
                settings.options.get("unsecuredLoginScopeClaimName", "").strip() or "scope")
    props = settings.properties
    return ((props.get("sasl.oauthbearer.sub.claim.name") or "sub").strip(),
            (props.get("sasl.oauthbearer.scope.claim.name") or "scope").strip())


def check_settings(settings: SaslSettings) -> None:
    """Refuse OAUTHBEARER settings Kafka refuses, when the configuration is read."""
    plan(settings)
    _policy(settings.properties)


def _policy(props: Mapping[str, str]) -> RefreshPolicy:
    return RefreshPolicy(
        window_factor=_number(props, "sasl.login.refresh.window.factor", 0.8, 0.5, 1.0),
        window_jitter=_number(props, "sasl.login.refresh.window.jitter", 0.05, 0.0, 0.25),
        min_period=_number(props, "sasl.login.refresh.min.period.seconds", 60, 0, 900),
        buffer=_number(props, "sasl.login.refresh.buffer.seconds", 300, 0, 3600),
    )


_LOGINS: dict[Any, TokenLogin] = {}
_PROVIDED: weakref.WeakKeyDictionary[Callable[[], str], TokenLogin] = weakref.WeakKeyDictionary()
_LOGINS_LOCK = threading.Lock()


def login_for(settings: SaslSettings) -> tuple[TokenLogin, dict[str, str]]:
    """The process's login for these settings (one per JAAS configuration and ``sasl.*`` properties, as
    Kafka's ``LoginManager`` keeps them; one per token provider, for as long as the provider lives), and
    the extensions to send."""
    fetch, extensions = plan(settings)
    provider = settings.token_provider
    key = (tuple(settings.options.items()), tuple(sorted(settings.properties.items())))
    with _LOGINS_LOCK:
        try:
            login = _PROVIDED.get(provider) if provider is not None else _LOGINS.get(key)
        except TypeError:  # a provider that cannot be weakly referenced: a login of its own
            login = None
        if login is None:
            sub_claim, scope_claim = claim_names(settings)
            login = TokenLogin(fetch, sub_claim=sub_claim, scope_claim=scope_claim,
                               policy=_policy(settings.properties))
            if provider is None:
                _LOGINS[key] = login
            else:
                with contextlib.suppress(TypeError):
                    _PROVIDED[provider] = login
    return login, extensions


def cached_principal(settings: SaslSettings) -> str | None:
    """The principal of the token these settings log in with, when it is known without fetching one:
    an unsecured token's principal option, else the token already fetched."""
    sub_claim, _ = claim_names(settings)
    if settings.token_provider is None and (settings.properties.get("sasl.login.callback.handler.class")
                                            or "").strip() not in LOGIN_HANDLERS:
        value = settings.options.get(f"unsecuredLoginStringClaim_{sub_claim}")
        return value if value else None
    try:
        login, _ = login_for(settings)
    except ConfigError:
        return None
    return login.current.principal if login.current is not None else None


# --------------------------------------------------------------------------- the mechanism


class OAuthBearerMechanism(SaslMechanism):
    """Kafka's ``OAuthBearerSaslClient``: send the token, then either an empty answer (success) or the
    server's JSON error, acknowledged with ``\\x01``."""

    name = "OAUTHBEARER"
    blocking_prepare = True

    def __init__(self, login: TokenLogin, extensions: Mapping[str, str] | None = None) -> None:
        self.login = login
        self.extensions = dict(extensions or {})
        self.token: Token | None = None
        self.server_error: str | None = None

    def prepare(self) -> None:
        self.token = self.login.token()

    def initial(self) -> bytes:
        if self.token is None:
            self.prepare()
        assert self.token is not None
        return initial_response(self.token.value, "", self.extensions)

    def respond(self, challenge: bytes) -> bytes | None:
        if self.server_error is not None:
            raise SaslFailure("the server went on after its error message")
        if not challenge:
            self.complete = True
            return None
        self.server_error = challenge.decode("utf-8", "replace")
        return SEPARATOR.encode()

    def failure_fix(self, message: str | None) -> str:
        """What to change, from the server's JSON error and what this client knows of its own token."""
        status, scope = _status(self.server_error or message or "")
        token = self.token
        if status == "insufficient_scope":
            have = ", ".join(sorted(token.jwt.scope(self.login.scope_claim))) if token else ""
            return (f" (the token's scope [{have}] lacks what the server requires {scope or ''}: ask the "
                    "identity provider for it with sasl.oauthbearer.scope)")
        if token is None:
            return " (check the OAUTHBEARER token settings in sasl.jaas.config)"
        if token.expires_at <= time.time():
            return (f" (the token expired at {_when(token.expires_at)}: check the clocks of this host, "
                    "the server and the identity provider)")
        aud = ",".join(token.jwt.audience()) or "none"
        iss = token.jwt.claims.get("iss", "none")
        return (f" (the server refused the token, aud={aud} iss={iss} exp={_when(token.expires_at)}; its "
                "log names the check that failed: the audience or issuer it expects "
                "(sasl.oauthbearer.expected.audience/issuer), the signing key in its JWKS, or an unsigned "
                "token sent to a listener that wants a signed one)")


def _status(message: str) -> tuple[str | None, str | None]:
    try:
        document = json.loads(message)
    except (ValueError, RecursionError):
        return None, None
    if not isinstance(document, dict):
        return None, None
    status, scope = document.get("status"), document.get("scope")
    return (status if isinstance(status, str) else None, scope if isinstance(scope, str) else None)


def mechanism(settings: SaslSettings) -> OAuthBearerMechanism:
    login, extensions = login_for(settings)
    return OAuthBearerMechanism(login, extensions)


__all__ = [
    "LOGIN_HANDLERS",
    "Jwt",
    "JwtError",
    "OAuthBearerMechanism",
    "RefreshPolicy",
    "Token",
    "TokenLogin",
    "b64url_decode",
    "b64url_encode",
    "cached_principal",
    "check_settings",
    "client_credentials",
    "initial_response",
    "java_double",
    "login_for",
    "mechanism",
    "parse_jwt",
    "plan",
    "read_token",
    "unsecured_token",
]
