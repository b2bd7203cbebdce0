"""TLS client side (the SSL context of ``client/config.py``, used by the transports) against a local TLS
server speaking Kafka's protocol (self-signed CA made here)."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafka_admin_kraft import Admin, AsyncAdmin
from kafka_admin_kraft.errors import AuthenticationError, ConfigError
from kafka_admin_kraft.protocol import framing
from unit.client.fake import FakeNetwork

x509 = pytest.importorskip("cryptography.x509")
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import NameOID  # noqa: E402


def _cert(subject: str, issuer_key: Any, issuer: Any, key: Any, *, ca: bool, sans: list[Any]) -> Any:
    now = datetime.datetime.now(datetime.timezone.utc)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(issuer or name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def _pem(key: Any) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("pki")
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = _cert("test-ca", ca_key, None, ca_key, ca=True, sans=[])
    out = {"ca": root / "ca.pem"}
    out["ca"].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    for name, sans in (
        ("server", [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]),
        ("wronghost", [x509.DNSName("elsewhere.example")]),
        ("client", []),
    ):
        key = ec.generate_private_key(ec.SECP256R1())
        cert = _cert(name, ca_key, ca.subject, key, ca=False, sans=sans)
        path = root / f"{name}.pem"
        path.write_bytes(_pem(key) + cert.public_bytes(serialization.Encoding.PEM))
        out[name] = path
    return out


class TlsKafka:
    """A TLS listener on 127.0.0.1 answering as node 1 of a fake one-node quorum."""

    def __init__(self, cert: Path, ca: Path, require_client_cert: bool = False, *, tls: bool = True) -> None:
        self.net = FakeNetwork(1, leader=1)
        self.net.host = "127.0.0.1"
        self.context: ssl.SSLContext | None = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER) if tls else None
        if self.context is not None:
            self.context.load_cert_chain(str(cert))
        if self.context is not None and require_client_cert:
            self.context.load_verify_locations(str(ca))
            self.context.verify_mode = ssl.CERT_REQUIRED
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.port = 0

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.server = self.loop.run_until_complete(
            asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.context)
        )
        self.port = self.server.sockets[0].getsockname()[1]
        node = self.net.nodes[1]
        self.net.nodes = {1: node}
        node.port = self.port
        node.versions = {k: v for k, v in node.versions.items() if k not in (17, 36)}
        self.ready.set()
        self.loop.run_forever()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                size = int.from_bytes(await reader.readexactly(4), "big")
                if size > framing.DEFAULT_MAX_FRAME_BYTES:  # Kafka's socket.request.max.bytes
                    break
                request = framing.decode_request(await reader.readexactly(size))
                key, version = request.header.request_api_key, request.header.request_api_version
                response = self.net.nodes[1].answer(key, version, request.body)
                writer.write(framing.encode_response(response, version, request.header.correlation_id))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
            pass
        writer.close()

    def __enter__(self) -> TlsKafka:
        self.thread.start()
        self.ready.wait(5)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._shutdown(), self.loop).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()

    async def _shutdown(self) -> None:
        """Connections still being served or still in their TLS handshake end here, not in a garbage
        collection later (whose finalizers would run in whatever code is running then)."""
        self.server.close()
        tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def props(port: int, **extra: str) -> dict[str, str]:
    return {
        "bootstrap.controllers": f"127.0.0.1:{port}",
        "security.protocol": "SSL",
        "default.api.timeout.ms": "3000",
        "request.timeout.ms": "3000",
        **extra,
    }


@pytest.fixture
def server(pki: dict[str, Path]) -> Iterator[TlsKafka]:
    with TlsKafka(pki["server"], pki["ca"]) as tls:
        yield tls


def test_tls_with_a_ca_file(server: TlsKafka, pki: dict[str, Path]) -> None:
    with Admin.from_config(props(server.port, **{"ssl.truststore.location": str(pki["ca"])})) as admin:
        assert admin.describe_metadata_quorum().leader_id == 1


def test_tls_with_inline_ca_certificates_and_async(server: TlsKafka, pki: dict[str, Path]) -> None:
    config = props(server.port, **{"ssl.truststore.certificates": pki["ca"].read_text()})

    async def main() -> None:
        async with AsyncAdmin.from_config(config) as admin:
            assert (await admin.describe_cluster()).controller is not None

    asyncio.run(main())


def test_an_untrusted_server_certificate_is_an_authentication_error(
    server: TlsKafka, pki: dict[str, Path]
) -> None:
    with (
        Admin.from_config(props(server.port, **{"ssl.truststore.location": str(pki["client"])})) as admin,
        pytest.raises(AuthenticationError, match="certificate verify failed"),
    ):
        admin.describe_metadata_quorum()


def test_hostname_verification_is_on_by_default(pki: dict[str, Path]) -> None:
    with TlsKafka(pki["wronghost"], pki["ca"]) as tls:
        base = props(tls.port, **{"ssl.truststore.location": str(pki["ca"])})
        with Admin.from_config(base) as admin, pytest.raises(AuthenticationError, match="(?i)mismatch|match"):
            admin.describe_metadata_quorum()
        relaxed = {**base, "ssl.endpoint.identification.algorithm": ""}
        with Admin.from_config(relaxed) as admin:
            assert admin.describe_metadata_quorum().leader_id == 1


def test_client_certificate_from_a_pem_keystore(pki: dict[str, Path]) -> None:
    with TlsKafka(pki["server"], pki["ca"], require_client_cert=True) as tls:
        base = props(tls.port, **{"ssl.truststore.location": str(pki["ca"])})
        with Admin.from_config({**base, "ssl.keystore.location": str(pki["client"])}) as admin:
            assert admin.describe_metadata_quorum().leader_id == 1
        with Admin.from_config(base) as admin, pytest.raises((AuthenticationError, Exception)):
            admin.describe_metadata_quorum(timeout=2)
        text = pki["client"].read_text()
        key = text[: text.index("-----BEGIN CERTIFICATE")]
        chain = text[text.index("-----BEGIN CERTIFICATE") :]
        inline = {**base, "ssl.keystore.key": key, "ssl.keystore.certificate.chain": chain}
        with Admin.from_config(inline) as admin:
            assert admin.describe_metadata_quorum().leader_id == 1


def test_unreadable_certificates_are_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="ssl.truststore.location"):
        Admin.from_config(props(1, **{"ssl.truststore.location": str(tmp_path / "missing.pem")}))
