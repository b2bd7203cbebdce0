"""SASL client mechanisms, sans-I/O: PLAIN (RFC 4616) and SCRAM-SHA-256/512 (RFC 5802, RFC 7677).

A mechanism produces the first client message, then answers each server message until it is done.
The connection layer carries the messages in SaslAuthenticate requests after a SaslHandshake v1.
The SCRAM primitives (``scram_keys``, ``hmac_digest``, ``parse_attributes``, ``escape_saslname``) are
shared with the reference server's SCRAM server side.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

__all__ = [
    "SCRAM_HASHES",
    "PlainMechanism",
    "SaslFailure",
    "SaslMechanism",
    "ScramKeys",
    "ScramMechanism",
    "escape_saslname",
    "hmac_digest",
    "mechanism_for",
    "parse_attributes",
    "scram_keys",
    "unescape_saslname",
]

SCRAM_MIN_ITERATIONS = 4096
"""Kafka's ScramMechanism minimum iteration count for SHA-256 and SHA-512."""
SCRAM_HASHES = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512", "SCRAM-SHA-1": "sha1"}
"""SCRAM mechanism name -> hashlib name."""


class SaslFailure(Exception):
    """The exchange failed on the client side (bad server message or server signature)."""


class SaslMechanism:
    """One SASL exchange; create a new instance per connection."""

    name = ""
    complete = False

    def initial(self) -> bytes:
        """The client's first message."""
        raise NotImplementedError

    def respond(self, challenge: bytes) -> bytes | None:
        """Answer a server message; None when the exchange is over (``complete`` is then True)."""
        raise NotImplementedError


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


def escape_saslname(name: str) -> str:
    """RFC 5802 ``saslname``: ``=`` and ``,`` escaped as ``=3D`` and ``=2C``."""
    return name.replace("=", "=3D").replace(",", "=2C")


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


def mechanism_for(name: str, username: str, password: str) -> SaslMechanism:
    """A fresh mechanism instance for ``sasl.mechanism``."""
    if name == "PLAIN":
        return PlainMechanism(username, password)
    return ScramMechanism(name, username, password)
