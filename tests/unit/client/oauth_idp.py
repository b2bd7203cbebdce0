"""A test identity provider: an OAuth token endpoint (client credentials grant) and a JWKS endpoint served
over HTTPS on 127.0.0.1 by ``http.server`` in a thread, with RS256 tokens signed by keys made with the
``cryptography`` package (a dev dependency) and a certificate from the test CA."""

from __future__ import annotations

import base64
import json
import ssl
import threading
import time
from collections.abc import Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from integration_sdk.pki import Pki

HASHES = {"RS256": hashes.SHA256(), "RS384": hashes.SHA384(), "RS512": hashes.SHA512()}


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwt(header: Mapping[str, Any], claims: Mapping[str, Any], key: rsa.RSAPrivateKey | None) -> str:
    """A compact JWS: signed with ``key`` by the header's RS* algorithm, unsigned without a key."""
    signing_input = f"{b64url(json.dumps(header).encode())}.{b64url(json.dumps(claims).encode())}"
    if key is None:
        return signing_input + "."
    signature = key.sign(signing_input.encode(), padding.PKCS1v15(), HASHES[header["alg"]])
    return f"{signing_input}.{b64url(signature)}"


def jwk(kid: str, key: rsa.RSAPrivateKey) -> dict[str, str]:
    numbers = key.public_key().public_numbers()

    def raw(value: int) -> str:
        return b64url(value.to_bytes((value.bit_length() + 7) // 8, "big"))

    return {"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256", "n": raw(numbers.n), "e": raw(numbers.e)}


class IdentityProvider:
    """Issues RS256 tokens to one client (``client_id``/``client_secret``) at ``token_url`` and publishes
    the public keys of ``published`` at ``jwks_url``. ``failures`` are HTTP statuses answered, one per
    request, before the token endpoint answers normally; ``requests`` records what it was sent."""

    def __init__(self, pki: Pki, directory: Path, *, client_id: str = "admin-app",
                 client_secret: str = "app-secret", issuer: str = "https://idp.example",
                 audience: str = "kafka", subject: str = "alice", lifetime: int = 3600) -> None:
        self.client_id, self.client_secret = client_id, client_secret
        self.issuer, self.audience, self.subject, self.lifetime = issuer, audience, subject, lifetime
        self.keys = {"k1": rsa.generate_private_key(public_exponent=65537, key_size=2048)}
        self.signing_kid = "k1"
        self.published = ["k1"]
        self.failures: list[int] = []
        self.requests: list[tuple[str, dict[str, str], str]] = []
        self.extra_claims: dict[str, Any] = {}
        self.issued = 0
        keystore = pki.keystore(f"{directory.name}-idp.pem", ["localhost"], ["127.0.0.1"])
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(str(keystore))
        self.truststore = pki.truststore
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                provider.requests.append((self.path, dict(self.headers), ""))
                if self.path != "/jwks":
                    self._answer(404, {"error": "not_found"})
                    return
                self._answer(200, {"keys": [jwk(kid, provider.keys[kid]) for kid in provider.published]})

            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
                provider.requests.append((self.path, dict(self.headers), body))
                if provider.failures:
                    self._answer(provider.failures.pop(0), {"error": "server_error"})
                    return
                pair = f"{provider.client_id}:{provider.client_secret}"
                expected = base64.b64encode(pair.encode()).decode()
                if self.headers.get("Authorization") != f"Basic {expected}":
                    self._answer(401, {"error": "invalid_client"})
                    return
                self._answer(200, {"access_token": provider.token(), "token_type": "Bearer",
                                   "expires_in": provider.lifetime})

            def _answer(self, status: int, document: Any) -> None:
                data = json.dumps(document).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def token_url(self) -> str:
        return f"https://localhost:{self.port}/token"

    @property
    def jwks_url(self) -> str:
        return f"https://localhost:{self.port}/jwks"

    def claims(self, **overrides: Any) -> dict[str, Any]:
        now = int(time.time())
        claims: dict[str, Any] = {"iss": self.issuer, "aud": self.audience, "sub": self.subject, "iat": now,
                                  "exp": now + self.lifetime, "scope": "kafka"}
        claims.update(self.extra_claims)
        claims.update(overrides)
        return claims

    def token(self, *, kid: str | None = None, key: rsa.RSAPrivateKey | None = None, alg: str = "RS256",
              **overrides: Any) -> str:
        kid = kid or self.signing_kid
        self.issued += 1
        return jwt({"alg": alg, "typ": "JWT", "kid": kid}, self.claims(**overrides),
                   key if key is not None else self.keys[kid])

    def rotate(self, kid: str) -> None:
        """A new signing key, published beside the old ones."""
        self.keys[kid] = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.signing_kid = kid
        self.published.append(kid)

    def __enter__(self) -> IdentityProvider:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(name="idp")
def idp_fixture(pki: Pki, tmp_path: Path) -> Iterator[IdentityProvider]:
    """An identity provider for one test (import the fixture, with ``pki_fixture``, to use it)."""
    with IdentityProvider(pki, tmp_path) as provider:
        yield provider
