"""The principal a node sees this client as (``client/principal.py``): the SASL user, the subject of the
TLS client certificate in RFC 2253 form as Java prints it, or ANONYMOUS."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from kafka_admin_kraft.client.config import ClientConfig
from kafka_admin_kraft.client.principal import certificate_subject, configured_principal, rfc2253

x509 = pytest.importorskip("cryptography.x509", reason="the cryptography package makes the test certificates")
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import NameOID  # noqa: E402

SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"


def certificate(name: x509.Name) -> tuple[str, str]:
    """(certificate PEM, key PEM), self-signed."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now)
            .not_valid_after(now + datetime.timedelta(days=1)).sign(key, hashes.SHA256()))
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    return cert.public_bytes(serialization.Encoding.PEM).decode(), key_pem.decode()


def test_the_subject_as_java_prints_it() -> None:
    name = x509.Name([x509.NameAttribute(NameOID.COUNTRY_NAME, "US"),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Acme, Inc"),
                      x509.NameAttribute(NameOID.COMMON_NAME, "client+1")])
    pem, _ = certificate(name)
    assert certificate_subject(pem) == "CN=client\\+1,O=Acme\\, Inc,C=US"


def test_attributes_without_a_keyword_print_as_their_oid_and_der_bytes() -> None:
    name = x509.Name([x509.NameAttribute(NameOID.EMAIL_ADDRESS, "a@b"),
                      x509.NameAttribute(NameOID.COMMON_NAME, "x")])
    pem, _ = certificate(name)
    assert certificate_subject(pem) == "CN=x,1.2.840.113549.1.9.1=#1603614062"


def test_unreadable_certificates() -> None:
    assert certificate_subject("no certificate here") is None
    assert certificate_subject("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----") is None


def test_rfc2253_escapes_and_multi_valued_rdns() -> None:
    assert rfc2253([[("C", "US")], [("O", " lead"), ("OU", "trail ")], [("CN", "#x;y")]]) == \
        "CN=\\#x\\;y,O=\\ lead+OU=trail\\ ,C=US"


def test_configured_principals(tmp_path: Path) -> None:
    base = {"bootstrap.servers": "localhost:9092"}
    assert configured_principal(ClientConfig.from_properties(base)) == "User:ANONYMOUS"
    sasl = {**base, "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-256",
            "sasl.jaas.config": f'{SCRAM} required username="alice" password="x";'}
    assert configured_principal(ClientConfig.from_properties(sasl)) == "User:alice"
    pem, key = certificate(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "ops")]))
    keystore = tmp_path / "client.pem"
    keystore.write_text(key + pem)
    tls = {**base, "security.protocol": "SSL", "ssl.keystore.location": str(keystore)}
    assert configured_principal(ClientConfig.from_properties(tls)) == "User:CN=ops"
    inline = {**base, "security.protocol": "SSL", "ssl.keystore.certificate.chain": pem,
              "ssl.keystore.key": key}
    assert configured_principal(ClientConfig.from_properties(inline)) == "User:CN=ops"
    assert configured_principal(ClientConfig.from_properties({**base, "security.protocol": "SSL"})) == \
        "User:ANONYMOUS"
