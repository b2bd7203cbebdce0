"""The exporter's web configuration file: what a good file turns into, the one line a bad one gets, and
any text at all giving one or the other (fuzzed)."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_admin_kraft_cli.metadata_quorum.web_config import (
    WebConfig,
    WebConfigError,
    load_web_config,
    parse_web_config,
)

pytest.importorskip("cryptography.x509", reason="the cryptography package makes the test certificates")
from integration_sdk.pki import Pki  # noqa: E402

HASH = "$2y$10$X0h1gDsPszWURQaxFh.zoubFi6DXncSjhoQNJgRrnGs7EsimhC7zG"
"""The toolkit's documented example hash."""
TLS = "tls_server_config: {cert_file: server.crt, key_file: server.key, "


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    pki = Pki(tmp_path_factory.mktemp("pki"))
    pki.keystore_with_key_apart("server", ["localhost"], ["127.0.0.1"])
    return pki


def parse(pki: Pki, text: str) -> WebConfig:
    return parse_web_config(text, pki.root)


def refused(pki: Pki, text: str) -> str:
    with pytest.raises(WebConfigError) as caught:
        parse(pki, text)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_an_empty_file_asks_for_nothing(pki: Pki) -> None:
    assert parse(pki, "") == WebConfig()
    assert parse(pki, "basic_auth_users: {}\nhttp_server_config: {http2: false}\n") == WebConfig()


def test_a_full_file(pki: Pki) -> None:
    config = parse(pki, f"""
tls_server_config:
  cert_file: server.crt
  key_file: server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: {pki.truststore}
  client_allowed_sans: [prometheus.example, 10.0.0.9]
  min_version: TLS13
  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_AES_128_GCM_SHA256]
  prefer_server_cipher_suites: false
http_server_config:
  http2: true
  headers:
    X-Frame-Options: deny
    Strict-Transport-Security: max-age=31536000
basic_auth_users:
  prometheus: '{HASH}'
rate_limit:
  interval: 1m30s
  burst: 5
""")
    assert config.tls is not None
    assert config.tls.cert_file == str(pki.root / "server.crt")  # relative to the file's folder
    assert config.tls.client_auth == ssl.CERT_REQUIRED
    assert config.tls.client_allowed_sans == ("prometheus.example", "10.0.0.9")
    assert config.tls.min_version == config.tls.max_version == ssl.TLSVersion.TLSv1_3
    assert config.tls.ciphers == ("ECDHE-RSA-AES128-GCM-SHA256",) and not config.tls.prefer_server_ciphers
    assert config.users == {"prometheus": HASH}
    assert config.headers == {"X-Frame-Options": "deny", "Strict-Transport-Security": "max-age=31536000"}
    assert (config.rate_interval, config.rate_burst) == (90.0, 5)


def test_inline_pem(pki: Pki) -> None:
    cert = (pki.root / "server.crt").read_text()
    key = (pki.root / "server.key").read_text()
    config = parse(pki, yaml.safe_dump({"tls_server_config": {"cert": cert, "key": key,
                                                              "client_auth_type": "VerifyClientCertIfGiven",
                                                              "client_ca": pki.truststore.read_text()}}))
    assert config.tls is not None and config.tls.cert == cert and config.tls.client_auth == ssl.CERT_OPTIONAL


@pytest.mark.parametrize(("text", "message"), [
    ("tls_server_config: [", "not valid YAML at line 1, column 21: expected the node content"),
    ("- a\n- b\n", "the file must be a mapping of names to values, got a list"),
    ("tls_config: {}\n", "unknown key 'tls_config' in the file (known keys: tls_server_config, "
                         "http_server_config, basic_auth_users, rate_limit)"),
    ("basic_auth_users: {a: x}\nbasic_auth_users: {}\n", "key 'basic_auth_users' is given twice"),
    ("tls_server_config: {key_file: server.key}\n",
     "tls_server_config needs cert_file (or cert), the server's certificate in PEM"),
    ("tls_server_config: {cert_file: server.crt}\n",
     "tls_server_config needs key_file (or key), the private key of its certificate in PEM"),
    ("tls_server_config: {cert_file: missing.crt, key_file: server.key}\n",
     "tls_server_config.cert_file {root}/missing.crt does not exist or is not a file"),
    ("tls_server_config: {cert_file: server.key, key_file: server.key}\n",
     "tls_server_config: the certificate and key do not load together ("),
    (TLS + "client_auth_type: RequireAnyClientCert}\n",
     "tls_server_config.client_auth_type RequireAnyClientCert is not supported: Python's ssl module verifies "
     "every client certificate it asks for; use RequireAndVerifyClientCert (or VerifyClientCertIfGiven) with "
     "client_ca_file"),
    ("tls_server_config: {cert_file: server.crt, key_file: server.key, client_auth_type: Sometimes}\n",
     "tls_server_config.client_auth_type 'Sometimes' is not one of NoClientCert, VerifyClientCertIfGiven, "
     "RequireAndVerifyClientCert"),
    ("tls_server_config: {cert_file: server.crt, key_file: server.key, client_ca_file: ca.pem}\n",
     "tls_server_config: a client CA is set but client_auth_type is NoClientCert; set client_auth_type: "
     "RequireAndVerifyClientCert"),
    ("tls_server_config: {cert_file: server.crt, key_file: server.key, "
     "client_auth_type: RequireAndVerifyClientCert}\n",
     "tls_server_config.client_auth_type RequireAndVerifyClientCert needs client_ca_file (or client_ca), "
     "the CA that signs the client certificates"),
    ("tls_server_config: {cert_file: server.crt, key_file: server.key, client_allowed_sans: [a]}\n",
     "tls_server_config.client_allowed_sans needs client_auth_type: RequireAndVerifyClientCert"),
    ("tls_server_config: {cert_file: server.crt, key_file: server.key, min_version: TLS1.2}\n",
     "tls_server_config.min_version 'TLS1.2' is not one of TLS10, TLS11, TLS12, TLS13"),
    (TLS + "min_version: TLS13, max_version: TLS12}\n",
     "tls_server_config: min_version is above max_version"),
    ("tls_server_config: {cert_file: server.crt, key_file: server.key, cipher_suites: [RC4]}\n",
     "tls_server_config.cipher_suites: unknown cipher suite 'RC4' (Go's names, such as "
     "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)"),
    ("tls_server_config: {cert_file: server.crt, key_file: server.key, curve_preferences: [X25519]}\n",
     "tls_server_config.curve_preferences is not supported: Python's ssl module cannot choose the key "
     "exchange groups; remove it (OpenSSL's defaults apply)"),
    (TLS + "prefer_server_cipher_suites: yes please}\n",
     "tls_server_config.prefer_server_cipher_suites must be true or false, got a string"),
    ("basic_auth_users: {prometheus: secret}\n",
     "basic_auth_users 'prometheus': not a bcrypt hash (make one with: htpasswd -nBC 10 \"\" | "
     "tr -d ':\\n')"),
    ("basic_auth_users: [prometheus]\n", "basic_auth_users must be a mapping of names to values, got a list"),
    ("http_server_config: {headers: {Server: x}}\n",
     "http_server_config.headers: header 'Server' cannot be set (only Strict-Transport-Security, "
     "X-Content-Type-Options, X-Frame-Options, X-XSS-Protection, Content-Security-Policy)"),
    ("http_server_config: {headers: {X-Frame-Options: allow}}\n",
     "http_server_config.headers.X-Frame-Options must be one of deny, sameorigin, got 'allow'"),
    ("http_server_config: {http3: true}\n", "unknown key 'http3' in http_server_config (known keys: http2, "
                                            "headers)"),
    ("rate_limit: {interval: 5, burst: 1}\n",
     "rate_limit.interval must be a duration such as 1s, 500ms or 1m30s, got 5"),
    ("rate_limit: {interval: 1s}\n",
     "rate_limit.burst must be at least 1 when rate_limit.interval is set (with 0 no request would ever "
     "pass)"),
])
def test_a_bad_file_is_one_line(pki: Pki, text: str, message: str) -> None:
    assert message.format(root=pki.root) in refused(pki, text)


def test_load_names_the_file(tmp_path: Path) -> None:
    missing = f"^cannot read the web config file {tmp_path}/none.yml: No such file"
    with pytest.raises(WebConfigError, match=missing):
        load_web_config(str(tmp_path / "none.yml"))
    bad = tmp_path / "web.yml"
    bad.write_text("basic_auth_users: 3\n")
    with pytest.raises(WebConfigError) as caught:
        load_web_config(str(bad))
    assert str(caught.value) == (f"web config file {bad}: basic_auth_users must be a mapping of names to "
                                 "values, got a number")


KEYS = ["tls_server_config", "cert_file", "key_file", "client_auth_type", "client_ca_file", "min_version",
        "cipher_suites", "basic_auth_users", "http_server_config", "headers", "X-Frame-Options", "rate_limit",
        "interval", "burst", "http2"]
YAML_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12)
    | st.sampled_from(["server.crt", "server.key", "TLS12", "RequireAndVerifyClientCert", HASH, "1s",
                       "deny"]),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(YAML_VALUES)
def test_any_structure_is_a_config_or_one_line(pki: Pki, value: object) -> None:
    try:
        parse(pki, yaml.safe_dump(value))
    except WebConfigError as exc:
        assert "\n" not in str(exc) and str(exc)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_any_text_is_a_config_or_one_line(pki: Pki, text: str) -> None:
    try:
        parse(pki, text)
    except WebConfigError as exc:
        assert "\n" not in str(exc) and str(exc)
