"""A test certificate authority (the ``cryptography`` package) and the PEM files the tests hand to
servers and clients: keystores holding a key, its certificate and the CA's, and the CA alone as a
truststore."""

from __future__ import annotations

import datetime
import ipaddress
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


class Pki:
    """A test CA and keystores (PEM: key then certificate chain) signed by it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        self.cert = (x509.CertificateBuilder().subject_name(_name("test CA")).issuer_name(_name("test CA"))
                     .public_key(self.key.public_key()).serial_number(x509.random_serial_number())
                     .not_valid_before(now - datetime.timedelta(days=1))
                     .not_valid_after(now + datetime.timedelta(days=2))
                     .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                     .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False,
                                                  key_encipherment=False, data_encipherment=False,
                                                  key_agreement=False, key_cert_sign=True, crl_sign=True,
                                                  encipher_only=False, decipher_only=False), critical=True)
                     .sign(self.key, hashes.SHA256()))
        self.truststore = root / "ca.pem"
        self.truststore.write_bytes(self.cert.public_bytes(serialization.Encoding.PEM))

    def keystore(self, file_name: str, dns: list[str], ips: list[str]) -> Path:
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        names: list[x509.GeneralName] = [x509.DNSName(d) for d in dns]
        names += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ips]
        cert = (x509.CertificateBuilder().subject_name(_name(dns[0])).issuer_name(self.cert.subject)
                .public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(now - datetime.timedelta(days=1))
                .not_valid_after(now + datetime.timedelta(days=2))
                .add_extension(x509.SubjectAlternativeName(names), critical=False)
                .sign(self.key, hashes.SHA256()))
        path = self.root / file_name
        path.write_bytes(_pem_key(key) + cert.public_bytes(serialization.Encoding.PEM)
                         + self.cert.public_bytes(serialization.Encoding.PEM))
        return path

    def keystore_with_key_apart(self, name: str, dns: list[str], ips: list[str]) -> tuple[Path, Path]:
        """A keystore split in two files, ``<name>.crt`` (the chain) and ``<name>.key``, as most web
        servers take them."""
        both = self.keystore(f"{name}.pem", dns, ips).read_bytes()
        cut = both.index(b"-----BEGIN CERTIFICATE")
        cert, key = self.root / f"{name}.crt", self.root / f"{name}.key"
        cert.write_bytes(both[cut:])
        key.write_bytes(both[:cut])
        return cert, key


@pytest.fixture(scope="module", name="pki")
def pki_fixture(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    """A test CA for the tests of one module (import the fixture to use it)."""
    return Pki(tmp_path_factory.mktemp("pki"))
