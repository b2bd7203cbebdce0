"""TLS and SASL for the listeners (controller and broker alike): what Kafka's ``ChannelBuilders`` and
``SaslServerAuthenticator`` do, for PEM keystores and the PLAIN and SCRAM-SHA-256/512 mechanisms.

Settings (each looked up first with the listener prefix ``listener.name.<listener lower case>.``,
then without it):

* ``listener.security.protocol.map`` decides per listener: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL.
* TLS (SSL, SASL_SSL): ``ssl.keystore.type=PEM`` (the only type supported) with either
  ``ssl.keystore.location`` (one PEM file holding the private key and the certificate chain) or
  ``ssl.keystore.certificate.chain`` + ``ssl.keystore.key`` (PEM text); ``ssl.key.password`` for an
  encrypted key; ``ssl.truststore.type=PEM`` with ``ssl.truststore.location`` or
  ``ssl.truststore.certificates``; ``ssl.client.auth`` = none (default), requested or required.
* SASL (SASL_PLAINTEXT, SASL_SSL): ``sasl.enabled.mechanisms`` (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512,
  Kafka's default GSSAPI as ``kafka_admin_kraft_server.kerberos`` sets it up, and OAUTHBEARER, whose
  settings ``kafka_admin_kraft_server.oauth`` describes). Users of the others come from
  ``listener.name.<listener>.<mechanism lower case>.sasl.jaas.config`` (else ``sasl.jaas.config``),
  Kafka's PLAIN server convention, for SCRAM too::

      org.apache.kafka.common.security.plain.PlainLoginModule required
          username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";
      org.apache.kafka.common.security.scram.ScramLoginModule required
          username="admin" password="admin-secret" user_admin="admin-secret";

  Kafka keeps SCRAM credentials in the metadata log (out of scope here): every ``user_<name>`` of a
  ScramLoginModule config gets a credential derived at start-up with 4096 iterations and a random salt.
  ``username`` / ``password`` are what this controller itself logs in with when it connects to the
  other voters, with ``sasl.mechanism.controller.protocol`` (required when the first controller
  listener uses SASL).

The inter-controller client side reuses the SDK: ``ClientConfig.ssl_context`` for TLS (hostname
verification unless ``ssl.endpoint.identification.algorithm`` is empty) and
``kafka_admin_kraft.client.sasl`` for the mechanisms, whose SCRAM primitives the server side here
shares.

A connection's principal is Kafka's default: ``User:<name>`` with the SASL authorization id, else
the TLS client certificate's distinguished name (RFC 2253, as Java prints it), else ``ANONYMOUS``.
A broker forwards it to the controller in the Envelope.

On a SASL listener only ApiVersions, SaslHandshake (v0 refused: raw tokens are not supported, the
connection is closed) and SaslAuthenticate are served before authentication; anything else closes
the connection, as Kafka does. A failed authentication is answered with SASL_AUTHENTICATION_FAILED
and Kafka's message, then the connection is closed. After authentication, and on listeners without
SASL, the two SASL APIs are answered by ``handlers.sasl``.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import logging
import os
import secrets
import ssl
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from kafka_admin_kraft.client.config import KNOWN, ClientConfig, SaslSettings
from kafka_admin_kraft.client.principal import rfc2253
from kafka_admin_kraft.client.sasl import (
    SCRAM_HASHES,
    SaslFailure,
    ScramKeys,
    hmac_digest,
    parse_attributes,
    scram_keys,
    unescape_saslname,
)
from kafka_admin_kraft.config.security import PLAIN_MODULE, SCRAM_MODULE
from kafka_admin_kraft.config.server import ConfigError, ServerConfig
from kafka_admin_kraft.errors import ConfigError as ClientConfigError
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.api_keys import ApiKey
from kafka_admin_kraft.protocol.error_codes import ErrorCode
from kafka_admin_kraft.protocol.message import Struct

from .sasl_base import SCRAM_FAILED, AuthenticationFailed, SaslServer, jaas_options

log = logging.getLogger("kafka.security.authenticator.SaslServerAuthenticator")

PASSWORD_MECHANISMS: Final = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
"""The mechanisms whose users and passwords are the listener's JAAS ``user_<name>`` options."""
SUPPORTED_MECHANISMS: Final = ("GSSAPI", *PASSWORD_MECHANISMS, "OAUTHBEARER")
SCRAM_ITERATIONS: Final = 4096

PLAIN_FAILED: Final = "Authentication failed: Invalid username or password"
"""``PlainSaslServer``'s message for a wrong user name or password."""

SASL_CLIENT_PROPERTIES: Final = frozenset(
    key for key in KNOWN if key.startswith("sasl.") and key not in ("sasl.mechanism", "sasl.jaas.config"))
"""The client's ``sasl.*`` settings besides the mechanism and JAAS: what the voters' client takes from the
listener's settings (``sasl.kerberos.service.name``, OAUTHBEARER's ``sasl.oauthbearer.*``, ...)."""
_SSL_KEYS: Final = ("ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.certificate.chain",
                    "ssl.keystore.key", "ssl.key.password", "ssl.keystore.password", "ssl.truststore.type",
                    "ssl.truststore.location", "ssl.truststore.certificates", "ssl.client.auth",
                    "ssl.endpoint.identification.algorithm")


# --------------------------------------------------------------------------- SASL mechanisms


class PlainServer(SaslServer):
    """RFC 4616: ``[authzid] NUL authcid NUL passwd``, checked against the configured users."""

    name = "PLAIN"

    def __init__(self, users: Mapping[str, str]) -> None:
        self.users = users

    def evaluate(self, token: bytes) -> bytes:
        parts = token.decode("utf-8", "replace").split("\0")
        if len(parts) != 3:
            raise AuthenticationFailed("Invalid SASL/PLAIN response: expected 3 tokens, got "
                                       f"{len(parts)}")
        authzid, username, password = parts
        if not username:
            raise AuthenticationFailed("Authentication failed: username not specified")
        if not password:
            raise AuthenticationFailed("Authentication failed: password not specified")
        expected = self.users.get(username)
        if expected is None or not hmac.compare_digest(expected.encode(), password.encode()):
            raise AuthenticationFailed(PLAIN_FAILED)
        if authzid and authzid != username:
            raise AuthenticationFailed("Authentication failed: Client requested an authorization id "
                                       "that is different from username")
        self.authorization_id = username
        self.complete = True
        return b""


@dataclass(frozen=True)
class ScramCredential:
    """What a SCRAM server stores per user."""

    salt: bytes
    iterations: int
    stored_key: bytes
    server_key: bytes

    @classmethod
    def derive(cls, mechanism: str, password: str, iterations: int = SCRAM_ITERATIONS) -> ScramCredential:
        salt = secrets.token_bytes(16)
        keys: ScramKeys = scram_keys(SCRAM_HASHES[mechanism], password, salt, iterations)
        return cls(salt, iterations, keys.stored_key, keys.server_key)


class ScramServer(SaslServer):
    """RFC 5802 / RFC 7677 server side, without channel binding (gs2 header ``n`` or ``y``)."""

    def __init__(self, mechanism: str, credentials: Mapping[str, ScramCredential]) -> None:
        self.name = mechanism
        self.hash = SCRAM_HASHES[mechanism]
        self.credentials = credentials
        self._step = 0
        self._gs2_header = ""
        self._client_first_bare = ""
        self._server_first = ""
        self._nonce = ""
        self._credential: ScramCredential | None = None

    def _failed(self) -> AuthenticationFailed:
        return AuthenticationFailed(SCRAM_FAILED.format(mechanism=self.name))

    def evaluate(self, token: bytes) -> bytes:
        try:
            message = token.decode()
            if self._step == 0:
                return self._client_first(message)
            if self._step == 1:
                return self._client_final(message)
        except (UnicodeDecodeError, SaslFailure, ValueError):
            raise self._failed() from None
        raise self._failed()

    def _client_first(self, message: str) -> bytes:
        gs2_flag, authzid, bare = message.split(",", 2)
        if gs2_flag not in ("n", "y"):
            raise SaslFailure("channel binding is not supported")
        attrs = parse_attributes(bare)
        username = unescape_saslname(attrs["n"])
        credential = self.credentials.get(username)
        if credential is None or "r" not in attrs:
            raise SaslFailure(f"unknown user {username!r}")
        if authzid and authzid != f"a={attrs['n']}":
            raise SaslFailure("authorization id differs from the user name")
        self._gs2_header = f"{gs2_flag},{authzid},"
        self.authorization_id = username
        self._client_first_bare = bare
        self._credential = credential
        self._nonce = attrs["r"] + base64.b64encode(secrets.token_bytes(18)).decode()
        self._server_first = (f"r={self._nonce},s={base64.b64encode(credential.salt).decode()},"
                              f"i={credential.iterations}")
        self._step = 1
        return self._server_first.encode()

    def _client_final(self, message: str) -> bytes:
        assert self._credential is not None
        without_proof, _, proof_part = message.rpartition(",")
        attrs = parse_attributes(message)
        if not proof_part.startswith("p=") or attrs.get("r") != self._nonce:
            raise SaslFailure("invalid client-final message")
        if base64.b64decode(attrs["c"]) != self._gs2_header.encode():
            raise SaslFailure("channel binding does not match")
        auth_message = f"{self._client_first_bare},{self._server_first},{without_proof}".encode()
        signature = hmac_digest(self.hash, self._credential.stored_key, auth_message)
        proof = base64.b64decode(attrs["p"])
        client_key = bytes(a ^ b for a, b in zip(proof, signature, strict=False))
        stored_key = hashlib.new(self.hash, client_key).digest()
        if len(proof) != len(signature) or not hmac.compare_digest(stored_key, self._credential.stored_key):
            raise SaslFailure("invalid client proof")
        server_signature = hmac_digest(self.hash, self._credential.server_key, auth_message)
        self._step = 2
        self.complete = True
        return f"v={base64.b64encode(server_signature).decode()}".encode()



# --------------------------------------------------------------------------- per connection


@dataclass
class SaslOutcome:
    """What to do with a request on a connection not authenticated yet: the response to send (None:
    none) and whether to close the connection afterwards."""

    response: Struct | None
    version: int = 0
    close: bool = False


@dataclass
class SaslSession:
    """The authentication state of one connection on a SASL listener."""

    listener: ListenerSecurity
    peer: str
    authenticated: bool = False
    principal: str = ""
    _server: SaslServer | None = None

    def handle(self, api_key: int, version: int, body: Struct | None) -> SaslOutcome:
        """A request other than ApiVersions before authentication is complete."""
        if api_key == ApiKey.SASL_HANDSHAKE and self._server is None:
            assert isinstance(body, messages.SaslHandshakeRequest)
            outcome = self._handshake(body, version)
        elif api_key == ApiKey.SASL_AUTHENTICATE and self._server is not None:
            assert isinstance(body, messages.SaslAuthenticateRequest)
            outcome = self._authenticate(self._server, body)
        elif api_key in (ApiKey.SASL_HANDSHAKE, ApiKey.SASL_AUTHENTICATE):
            log.info("Closing connection from %s: unexpected %s request in the SASL exchange", self.peer,
                     "SaslHandshake" if api_key == ApiKey.SASL_HANDSHAKE else "SaslAuthenticate")
            outcome = SaslOutcome(_illegal_state(api_key), close=True)
        else:
            log.info("Closing connection from %s on listener %s: request api key %d before SASL "
                     "authentication", self.peer, self.listener.name, api_key)
            return SaslOutcome(None, close=True)
        outcome.version = version
        return outcome

    def _handshake(self, body: messages.SaslHandshakeRequest, version: int) -> SaslOutcome:
        enabled = list(self.listener.mechanisms)
        mechanism = body.mechanism
        if mechanism not in self.listener.mechanisms:
            log.info("Unsupported SASL mechanism %s from %s (enabled: %s)", mechanism, self.peer, enabled)
            return SaslOutcome(messages.SaslHandshakeResponse(error_code=ErrorCode.UNSUPPORTED_SASL_MECHANISM,
                                                              mechanisms=enabled), close=True)
        if version == 0:  # raw SASL tokens would follow: not supported here
            log.info("Closing connection from %s: SaslHandshake v0 (raw SASL tokens) is not supported",
                     self.peer)
            return SaslOutcome(messages.SaslHandshakeResponse(error_code=ErrorCode.ILLEGAL_SASL_STATE,
                                                              mechanisms=enabled), close=True)
        self._server = self.listener.new_server(mechanism)
        return SaslOutcome(messages.SaslHandshakeResponse(error_code=ErrorCode.NONE, mechanisms=enabled))

    def _authenticate(self, server: SaslServer, body: messages.SaslAuthenticateRequest) -> SaslOutcome:
        try:
            challenge = server.evaluate(body.auth_bytes)
        except AuthenticationFailed as exc:
            log.info("Failed authentication with %s (%s)", self.peer, exc)
            return SaslOutcome(messages.SaslAuthenticateResponse(
                error_code=ErrorCode.SASL_AUTHENTICATION_FAILED, error_message=str(exc), auth_bytes=b""),
                close=True)
        if server.complete:
            self.authenticated = True
            self.principal = server.authorization_id
            log.debug("Authenticated %s with %s", self.peer, server.name)
        return SaslOutcome(messages.SaslAuthenticateResponse(error_code=ErrorCode.NONE, auth_bytes=challenge,
                                                             session_lifetime_ms=0))


ANONYMOUS: Final = "ANONYMOUS"
_RDN_NAMES: Final = {"commonName": "CN", "organizationName": "O", "organizationalUnitName": "OU",
                     "countryName": "C", "stateOrProvinceName": "ST", "localityName": "L",
                     "streetAddress": "STREET", "domainComponent": "DC", "userId": "UID"}


def principal_name(session: SaslSession | None, peer_certificate: Mapping[str, Any] | None) -> str:
    """The name of a connection's ``User`` principal (DefaultKafkaPrincipalBuilder)."""
    if session is not None and session.authenticated:
        return session.principal
    subject = (peer_certificate or {}).get("subject")
    if not subject:
        return ANONYMOUS
    return rfc2253([[(_RDN_NAMES.get(key, key), value) for key, value in rdn] for rdn in subject])


def _illegal_state(api_key: int) -> Struct:
    if api_key == ApiKey.SASL_HANDSHAKE:
        return messages.SaslHandshakeResponse(error_code=ErrorCode.ILLEGAL_SASL_STATE, mechanisms=[])
    return messages.SaslAuthenticateResponse(error_code=ErrorCode.ILLEGAL_SASL_STATE,
                                             error_message="Unexpected SaslAuthenticate request",
                                             auth_bytes=b"")


# --------------------------------------------------------------------------- per listener


@dataclass
class ListenerSecurity:
    """A listener's security protocol, its server TLS context and its SASL users per mechanism."""

    name: str
    protocol: str
    ssl_context: ssl.SSLContext | None = None
    servers: dict[str, Callable[[], SaslServer]] = field(default_factory=dict)
    """Enabled mechanism -> what makes its server side for one exchange, in ``sasl.enabled.mechanisms``
    order."""

    @property
    def mechanisms(self) -> tuple[str, ...]:
        return tuple(self.servers)

    @property
    def uses_sasl(self) -> bool:
        return self.protocol.startswith("SASL_")

    def new_session(self, peer: str) -> SaslSession | None:
        """The authentication state for a new connection; None when the listener has no SASL."""
        return SaslSession(self, peer) if self.uses_sasl else None

    def new_server(self, mechanism: str) -> SaslServer:
        return self.servers[mechanism]()


@dataclass(frozen=True)
class ClientSecurity:
    """How this controller connects to the other voters' controller listener."""

    protocol: str = "PLAINTEXT"
    ssl_context: ssl.SSLContext | None = None
    sasl: SaslSettings | None = None


@dataclass(frozen=True)
class Security:
    listeners: Mapping[str, ListenerSecurity]
    client: ClientSecurity
    keys: frozenset[str] = frozenset()
    """The settings read (with their listener prefix where one was used): they are not unknown keys."""


class _Lookup:
    """Settings with Kafka's ``listener.name.<listener>.`` prefix first; ``used`` collects the keys read."""

    def __init__(self, props: Mapping[str, str], listener: str, used: set[str]) -> None:
        self.props = props
        self.prefix = f"listener.name.{listener.lower()}."
        self.used = used

    def get(self, key: str) -> str | None:
        for candidate in (self.prefix + key, key):
            value = self.props.get(candidate)
            if value is not None:
                self.used.add(candidate)
                return value
        return None

    def key_of(self, key: str) -> str:
        return self.prefix + key if self.prefix + key in self.props else key


def from_config(config: ServerConfig) -> Security:
    """Every listener's security, and the client's towards the controllers (voters to voters, brokers
    to the active controller); ConfigError when a setting is missing, unsupported or unreadable."""
    props = config.originals
    used: set[str] = set()
    listeners = {}
    for listener in config.listeners:
        protocol = config.listener_security_protocol_map.get(listener.name, "PLAINTEXT")
        listeners[listener.name] = _listener_security(props, listener.name, protocol, used)
    default = config.default_listener_name
    protocol = config.listener_security_protocol_map.get(default, "PLAINTEXT")
    return Security(listeners, _client_security(props, default, protocol, used), frozenset(used))


def _listener_security(props: Mapping[str, str], name: str, protocol: str,
                       used: set[str]) -> ListenerSecurity:
    lookup = _Lookup(props, name, used)
    security = ListenerSecurity(name, protocol)
    if protocol in ("SSL", "SASL_SSL"):
        security.ssl_context = _server_ssl_context(lookup, name)
    if protocol.startswith("SASL_"):
        raw = lookup.get("sasl.enabled.mechanisms")
        mechanisms = tuple(m.strip().upper() for m in (raw if raw is not None else "GSSAPI").split(",")
                           if m.strip())
        unsupported = [m for m in mechanisms if m not in SUPPORTED_MECHANISMS]
        if unsupported or not mechanisms:
            raise ConfigError(f"{lookup.key_of('sasl.enabled.mechanisms')}: SASL mechanism(s) "
                              f"{', '.join(unsupported) or '(none)'} not supported on listener {name}; "
                              f"use {', '.join(SUPPORTED_MECHANISMS)}")
        for mechanism in mechanisms:
            security.servers[mechanism] = _server_factory(props, name, mechanism, used)
    return security


def _server_factory(props: Mapping[str, str], listener: str, mechanism: str,
                    used: set[str]) -> Callable[[], SaslServer]:
    """What makes ``mechanism``'s server side on ``listener``, from its settings read once here."""
    if mechanism == "GSSAPI":  # gssapi loads only for a listener that enables it
        from .kerberos import server_factory

        return server_factory(*_jaas_text(props, listener, mechanism, used),
                              _Lookup(props, listener, used).get)
    if mechanism == "OAUTHBEARER":  # the OAuth code loads only for listeners that enable it
        from . import oauth

        return oauth.server_factory(props, listener, used, _jaas_text(props, listener, mechanism, used))
    users = _jaas_users(props, listener, mechanism, used)
    if mechanism == "PLAIN":
        return functools.partial(PlainServer, users)
    credentials = {user: ScramCredential.derive(mechanism, password) for user, password in users.items()}
    return functools.partial(ScramServer, mechanism, credentials)


def _jaas_text(props: Mapping[str, str], listener: str, mechanism: str, used: set[str]) -> tuple[str, str]:
    key = f"listener.name.{listener.lower()}.{mechanism.lower()}.sasl.jaas.config"
    for candidate in (key, "sasl.jaas.config"):
        if candidate in props:
            used.add(candidate)
            return candidate, props[candidate]
    raise ConfigError(f"No JAAS configuration for SASL mechanism {mechanism} on listener {listener}: "
                      f"set {key}")


def _jaas_users(props: Mapping[str, str], listener: str, mechanism: str, used: set[str]) -> dict[str, str]:
    key, text = _jaas_text(props, listener, mechanism, used)
    options = jaas_options(key, text, mechanism, PLAIN_MODULE if mechanism == "PLAIN" else SCRAM_MODULE)
    return {option[len("user_"):]: value for option, value in options.items() if option.startswith("user_")}


def _server_ssl_context(lookup: _Lookup, listener: str) -> ssl.SSLContext:
    for kind in ("ssl.keystore.type", "ssl.truststore.type"):
        value = (lookup.get(kind) or "PEM").strip().upper()
        if value != "PEM":
            raise ConfigError(f"{lookup.key_of(kind)}={value} is not supported on listener {listener}: "
                              "only PEM keystores and truststores are (convert with keytool/openssl)")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    password = lookup.get("ssl.key.password") or lookup.get("ssl.keystore.password")
    location, chain, key = (lookup.get("ssl.keystore.location"), lookup.get("ssl.keystore.certificate.chain"),
                            lookup.get("ssl.keystore.key"))
    try:
        if location is not None:
            context.load_cert_chain(location, password=password)
        elif chain is not None and key is not None:
            _load_inline_chain(context, chain, key, password)
        else:
            raise ConfigError(f"Listener {listener} uses TLS but has no keystore: set "
                              f"{lookup.prefix}ssl.keystore.location (PEM key and certificate chain) or "
                              "ssl.keystore.certificate.chain and ssl.keystore.key")
        if lookup.get("ssl.truststore.location") is not None:
            context.load_verify_locations(cafile=lookup.get("ssl.truststore.location"))
        if lookup.get("ssl.truststore.certificates") is not None:
            context.load_verify_locations(cadata=lookup.get("ssl.truststore.certificates"))
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(f"Cannot load the TLS keystore or truststore of listener {listener}: "
                          f"{exc}") from None
    client_auth = (lookup.get("ssl.client.auth") or "none").strip().lower()
    modes = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}
    if client_auth not in modes:
        raise ConfigError(f"{lookup.key_of('ssl.client.auth')}={client_auth}: use none, requested or "
                          "required")
    context.verify_mode = modes[client_auth]
    return context


def _load_inline_chain(context: ssl.SSLContext, chain: str, key: str, password: str | None) -> None:
    """``load_cert_chain`` only reads files: write the PEM text to a private temporary file."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "keystore.pem")
        with open(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600), "w") as out:
            out.write(key.strip() + "\n" + chain.strip() + "\n")
        context.load_cert_chain(path, password=password)


def _client_security(props: Mapping[str, str], listener: str, protocol: str,
                     used: set[str]) -> ClientSecurity:
    """The inter-controller client for the default controller listener, built by the SDK's config."""
    if protocol == "PLAINTEXT":
        return ClientSecurity()
    lookup = _Lookup(props, listener, used)
    client_props: dict[str, str] = {"bootstrap.controllers": "localhost:1", "security.protocol": protocol}
    if protocol in ("SSL", "SASL_SSL"):
        for key in _SSL_KEYS:
            value = lookup.get(key)
            if value is not None and key != "ssl.client.auth":
                client_props[key] = value
    if protocol.startswith("SASL_"):
        if "sasl.mechanism.controller.protocol" in props:
            used.add("sasl.mechanism.controller.protocol")
        mechanism = props.get("sasl.mechanism.controller.protocol", "GSSAPI").strip().upper()
        if mechanism not in SUPPORTED_MECHANISMS:
            raise ConfigError(f"sasl.mechanism.controller.protocol={mechanism} is not supported: use one of "
                              f"{', '.join(SUPPORTED_MECHANISMS)}")
        client_props["sasl.mechanism"] = mechanism
        client_props["sasl.jaas.config"] = _jaas_text(props, listener, mechanism, used)[1]
        for key in sorted(SASL_CLIENT_PROPERTIES):  # the mechanism's own prefix first, as for its JAAS
            value = lookup.get(f"{mechanism.lower()}.{key}") or lookup.get(key)
            if value is not None:
                client_props[key] = value
    try:
        client = ClientConfig.from_properties(client_props)
        context = client.ssl_context() if client.uses_tls else None
        if client.sasl is not None and client.sasl.mechanism == "OAUTHBEARER":
            from kafka_admin_kraft.client.oauth import check_settings

            check_settings(client.sasl)
    except ClientConfigError as exc:
        raise ConfigError(f"The controller-to-controller client of listener {listener}: {exc}") from None
    return ClientSecurity(protocol, context, client.sasl)
