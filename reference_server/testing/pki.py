"""Certificates for a test quorum: a CA made for the test and one server key store it signs.

PEM files, the only key store type the reference server reads: ``ca.pem`` (the trust store clients
and nodes verify against) and ``server.pem`` (private key, certificate, CA certificate), valid for
``localhost`` and ``127.0.0.1`` for two days. Made with the ``cryptography`` package, which the
``pytest`` extra of the distribution installs; without it, asking for TLS says so in one line.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..local import HOST

VALID_FOR = datetime.timedelta(days=2)


@dataclass(frozen=True)
class Certificates:
    """The trust store and key store files of one test quorum."""

    truststore: Path
    keystore: Path


def _crypto() -> Any:
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID
    except ImportError:
        raise RuntimeError("a TLS test quorum needs the cryptography package to make its certificates: "
                           "pip install 'kafka-admin-kraft[pytest]'") from None
    return x509, hashes, serialization, ec, NameOID


def make_certificates(directory: Path) -> Certificates:
    """A CA and a server key store signed by it, written under ``directory``."""
    x509, hashes, serialization, ec, NameOID = _crypto()  # noqa: N806 (module-like names)

    def name(common_name: str) -> Any:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])

    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (x509.CertificateBuilder().subject_name(name("kraft_quorum test CA"))
          .issuer_name(name("kraft_quorum test CA")).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + VALID_FOR)
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False,
                                       key_encipherment=False, data_encipherment=False, key_agreement=False,
                                       key_cert_sign=True, crl_sign=True, encipher_only=False,
                                       decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address(HOST))]
    server = (x509.CertificateBuilder().subject_name(name("localhost")).issuer_name(ca.subject)
              .public_key(key.public_key()).serial_number(x509.random_serial_number())
              .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + VALID_FOR)
              .add_extension(x509.SubjectAlternativeName(names), critical=False)
              .sign(ca_key, hashes.SHA256()))
    pem = serialization.Encoding.PEM
    directory.mkdir(parents=True, exist_ok=True)
    truststore, keystore = directory / "ca.pem", directory / "server.pem"
    truststore.write_bytes(ca.public_bytes(pem))
    private = key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    keystore.write_bytes(private + server.public_bytes(pem) + ca.public_bytes(pem))
    return Certificates(truststore, keystore)
