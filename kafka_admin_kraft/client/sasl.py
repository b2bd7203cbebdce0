"""SASL client mechanisms, sans-I/O: PLAIN (RFC 4616) and SCRAM-SHA-256/512 (RFC 5802, RFC 7677), and
``mechanism_for``, which also picks GSSAPI (``kafka_admin_kraft.client.kerberos``, loaded only then;
its login may wait for the KDC) and OAUTHBEARER (``kafka_admin_kraft.client.oauth``, likewise; its token
may come from an HTTP endpoint).

A mechanism produces the first client message, then answers each server message until it is done.
The connection layer carries the messages in SaslAuthenticate requests after a SaslHandshake v1.
The SCRAM primitives (``scram_keys``, ``hmac_digest``, ``parse_attributes``, ``escape_saslname``) are
shared with the reference server's SCRAM server side.

The ``*_failure`` functions turn what went wrong into the :class:`AuthenticationError` the client
raises: the exception class and message of Kafka's ``SaslClientAuthenticator`` (its
``handleSaslHandshakeResponse`` and ``receiveToken``), then, in brackets, the setting to change. Where
Kafka's client has no words for a case (a listener that wants SASL from a client without it), the
class is the one Kafka documents for it (``IllegalSaslStateException``: unexpected requests before
SASL authentication, as when PLAINTEXT reaches a SASL endpoint).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kafka_admin_kraft.client.sasl_base import PASSWORD_FIX, SaslFailure, SaslMechanism, escape_saslname
from kafka_admin_kraft.errors import AuthenticationError, ErrorCode, error_for_code

if TYPE_CHECKING:
    from kafka_admin_kraft.client.config import SaslSettings

__all__ = [
    "SCRAM_HASHES",
    "PlainMechanism",
    "SaslFailure",
    "SaslMechanism",
    "ScramKeys",
    "ScramMechanism",
    "escape_saslname",
    "exchange_failure",
    "handshake_failure",
    "hmac_digest",
    "listener_failure",
    "mechanism_for",
    "parse_attributes",
    "scram_keys",
    "unescape_saslname",
]

SCRAM_MIN_ITERATIONS = 4096
"""Kafka's ScramMechanism minimum iteration count for SHA-256 and SHA-512."""
SCRAM_HASHES = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512", "SCRAM-SHA-1": "sha1"}
"""SCRAM mechanism name -> hashlib name."""


class PlainMechanism(SaslMechanism):
    """PLAIN: ``authzid NUL authcid NUL password`` in one message (authzid empty, as Kafka sends)."""

    name = "PLAIN"

    def __init__(self, username: str, password: str) -> None:
        self.username = username
        self.password = password

    def initial(self) -> bytes:
        return b"\0" + self.username.encode() + b"\0" + self.password.encode()

    def respond(self, challenge: bytes) -> bytes | None:
        self.complete = True
        return None


def unescape_saslname(name: str) -> str:
    """The inverse of ``escape_saslname``; SaslFailure for a stray ``=``."""
    if re.search(r"=(?!3D|2C)", name):
        raise SaslFailure(f"invalid SCRAM user name {name!r}")
    return name.replace("=2C", ",").replace("=3D", "=")


def parse_attributes(message: str) -> dict[str, str]:
    """``a=1,b=2`` SCRAM attributes; SaslFailure when malformed."""
    out: dict[str, str] = {}
    for part in message.split(","):
        if len(part) < 2 or part[1] != "=":
            raise SaslFailure(f"malformed SCRAM message {message!r}")
        out[part[0]] = part[2:]
    return out


def hmac_digest(hash_name: str, key: bytes, data: bytes) -> bytes:
    return hmac.new(key, data, hash_name).digest()


@dataclass(frozen=True)
class ScramKeys:
    """What SCRAM derives from a password: the client key and what a server stores."""

    client_key: bytes
    stored_key: bytes
    server_key: bytes


def scram_keys(hash_name: str, password: str, salt: bytes, iterations: int) -> ScramKeys:
    """``SaltedPassword = Hi(password, salt, i)`` and the keys derived from it (RFC 5802 section 3)."""
    salted = hashlib.pbkdf2_hmac(hash_name, password.encode(), salt, iterations)
    client_key = hmac_digest(hash_name, salted, b"Client Key")
    return ScramKeys(
        client_key=client_key,
        stored_key=hashlib.new(hash_name, client_key).digest(),
        server_key=hmac_digest(hash_name, salted, b"Server Key"),
    )


class ScramMechanism(SaslMechanism):
    """SCRAM-SHA-256 / SCRAM-SHA-512 client (no channel binding: gs2 header ``n,,``)."""

    HASHES = SCRAM_HASHES

    def __init__(
        self,
        name: str,
        username: str,
        password: str,
        *,
        nonce: str | None = None,
        min_iterations: int = SCRAM_MIN_ITERATIONS,
    ) -> None:
        if name not in self.HASHES:
            raise ValueError(f"unknown SCRAM mechanism {name}")
        self.name = name
        self.hash = self.HASHES[name]
        self.username = username
        self.password = password
        self.nonce = nonce if nonce is not None else base64.b64encode(secrets.token_bytes(24)).decode()
        self.min_iterations = min_iterations
        self.client_first_bare = f"n={escape_saslname(username)},r={self.nonce}"
        self._server_signature: bytes | None = None
        self._step = 0

    def initial(self) -> bytes:
        return ("n,," + self.client_first_bare).encode()

    def respond(self, challenge: bytes) -> bytes | None:
        if self._step == 0:
            self._step = 1
            return self._client_final(challenge.decode())
        if self._step == 1:
            self._verify_server_final(challenge.decode())
            self._step = 2
            self.complete = True
            return None
        raise SaslFailure("SCRAM exchange is already complete")

    def _client_final(self, server_first: str) -> bytes:
        attrs = parse_attributes(server_first)
        if "e" in attrs:
            raise SaslFailure(f"server error: {attrs['e']}")
        try:
            nonce, salt, iterations = attrs["r"], base64.b64decode(attrs["s"]), int(attrs["i"])
        except (KeyError, ValueError) as exc:
            raise SaslFailure(f"malformed SCRAM server-first message {server_first!r}") from exc
        if not nonce.startswith(self.nonce) or len(nonce) == len(self.nonce):
            raise SaslFailure("server nonce does not extend the client nonce")
        if iterations < self.min_iterations:
            raise SaslFailure(f"iteration count {iterations} is below {self.min_iterations}")
        keys = scram_keys(self.hash, self.password, salt, iterations)
        without_proof = f"c={base64.b64encode(b'n,,').decode()},r={nonce}"
        auth_message = f"{self.client_first_bare},{server_first},{without_proof}".encode()
        signature = hmac_digest(self.hash, keys.stored_key, auth_message)
        proof = bytes(a ^ b for a, b in zip(keys.client_key, signature, strict=False))
        self._server_signature = hmac_digest(self.hash, keys.server_key, auth_message)
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    def _verify_server_final(self, server_final: str) -> None:
        attrs = parse_attributes(server_final)
        if "e" in attrs:
            raise SaslFailure(f"server error: {attrs['e']}")
        if "v" not in attrs or self._server_signature is None:
            raise SaslFailure(f"malformed SCRAM server-final message {server_final!r}")
        if not hmac.compare_digest(base64.b64decode(attrs["v"]), self._server_signature):
            raise SaslFailure("the server's SCRAM signature is wrong: it does not know the password")


def mechanism_for(settings: SaslSettings, host: str) -> SaslMechanism:
    """A fresh mechanism instance for one connection to ``host`` (the name a mechanism that
    authenticates the server by its host name needs)."""
    if settings.mechanism == "PLAIN":
        return PlainMechanism(settings.username, settings.password)
    if settings.mechanism == "GSSAPI":
        from kafka_admin_kraft.client.kerberos import GssapiMechanism

        return GssapiMechanism(settings.options, settings.properties, host)
    if settings.mechanism == "OAUTHBEARER":
        from kafka_admin_kraft.client import oauth

        return oauth.mechanism(settings)
    return ScramMechanism(settings.mechanism, settings.username, settings.password)


# --------------------------------------------------------------------------- failures


def _protocol(sasl: bool, tls: bool) -> str:
    return ("SASL_" if sasl else "") + ("SSL" if tls else "PLAINTEXT")


def handshake_failure(
    node: str, mechanism: str, error_code: int, enabled: Sequence[str], *, tls: bool
) -> AuthenticationError:
    """A SaslHandshake answered with an error code. ILLEGAL_SASL_STATE is what a listener without SASL
    answers (Kafka's ``KafkaApis`` and ``ControllerApis`` serve SaslHandshake only to say so)."""
    listed = f"[{', '.join(enabled)}]"
    if error_code == ErrorCode.UNSUPPORTED_SASL_MECHANISM:
        return AuthenticationError(
            node,
            f"Client SASL mechanism '{mechanism}' not enabled in the server, enabled mechanisms are {listed} "
            "(set sasl.mechanism to one of them)",
            java_exception="UnsupportedSaslMechanismException",
        )
    if error_code == ErrorCode.ILLEGAL_SASL_STATE:
        return AuthenticationError(
            node,
            f"Unexpected handshake request with client mechanism {mechanism}, enabled mechanisms are "
            f"{listed} ({_no_sasl_here(node, tls)})",
            java_exception="IllegalSaslStateException",
        )
    name = error_for_code(error_code).name
    return AuthenticationError(
        node,
        f"Unknown error code {name}, client mechanism is {mechanism}, enabled mechanisms are {listed}",
        java_exception="IllegalSaslStateException",
    )


def _no_sasl_here(node: str, tls: bool) -> str:
    return (
        f"the listener at {node} does not use SASL: set security.protocol={_protocol(False, tls)} "
        "and drop sasl.mechanism and sasl.jaas.config"
    )


def listener_failure(node: str, *, tls: bool, enabled: Sequence[str] | None) -> AuthenticationError:
    """The client's SASL settings do not fit the listener at ``node``: ``enabled`` lists the mechanisms
    of a SASL listener reached without SASL settings; None means a listener without SASL reached with
    them (it does not offer SaslHandshake at all)."""
    if enabled is None:
        return AuthenticationError(
            node,
            f"the server does not offer SaslHandshake: {_no_sasl_here(node, tls)}",
            java_exception="IllegalSaslStateException",
        )
    mechanism = enabled[0] if len(enabled) == 1 else "<one of them>"
    return AuthenticationError(
        node,
        f"the listener at {node} wants SASL authentication (enabled mechanisms are [{', '.join(enabled)}]) "
        f"and closed the connection at the first request sent without it: set "
        f"security.protocol={_protocol(True, tls)}, sasl.mechanism={mechanism} and sasl.jaas.config",
        java_exception="IllegalSaslStateException",
    )


def exchange_failure(
    node: str, mechanism: str, error_code: int | None, message: str | None, fix: str | None = None
) -> AuthenticationError:
    """A SaslAuthenticate answered with an error code (Kafka's client raises that code's exception with
    the server's message, to which ``fix`` adds the mechanism's advice), or, with ``error_code`` None, a
    server message this client refused or a token it could not get."""
    if error_code is None:
        return AuthenticationError(
            node, f"{mechanism}: {message}", java_exception="SaslAuthenticationException"
        )
    error = error_for_code(error_code, message)
    if fix is None:
        fix = PASSWORD_FIX if mechanism != "GSSAPI" else (
            " (the server refused the Kerberos ticket: check that the server's keytab holds its principal's "
            "current key, that the clocks agree and that sasl.kerberos.principal.to.local.rules map the "
            "client's name)")
    return AuthenticationError(
        node,
        error.message + (fix if error_code == ErrorCode.SASL_AUTHENTICATION_FAILED else ""),
        java_exception=error.java_exception,
    )
