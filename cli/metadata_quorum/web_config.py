"""The exporter's ``--web-config-file``: the web configuration file of the Prometheus exporter toolkit
(its ``docs/web-configuration.md``), which node_exporter and the other exporters read, checked whole
before the exporter listens.

What is read, as the toolkit reads it (YAML, unknown and repeated keys refused, relative file names
taken from the file's folder):

* ``tls_server_config``: ``cert_file``/``key_file`` (or ``cert``/``key`` inline), ``client_auth_type``
  with ``client_ca_file`` (or ``client_ca``) for mutual TLS, ``client_allowed_sans``, ``min_version`` and
  ``max_version`` (``TLS10`` to ``TLS13``, TLS 1.2 to 1.3 by default), ``cipher_suites`` (Go's names,
  which are IANA's, for TLS 1.2 and below), ``prefer_server_cipher_suites``. Any key of it turns TLS on.
* ``basic_auth_users``: user name -> bcrypt hash (``htpasswd -nBC 10 "" | tr -d ':\\n'``).
* ``http_server_config``: ``headers`` (the five the toolkit allows, with its allowed values), ``http2``
  (accepted; this server speaks HTTP/1.1 only, which Prometheus scrapes as well).
* ``rate_limit``: ``interval`` (a Go duration) and ``burst``: requests over it are answered 429.

Where Python's ``ssl`` module cannot do what Go's ``crypto/tls`` does, the file is refused with a line
saying so, never half applied: ``client_auth_type`` RequestClientCert and RequireAnyClientCert (Python
verifies every client certificate it asks for), and ``curve_preferences``. A client CA is needed to
verify client certificates (Go would fall back on the system's). Everything else a bad file holds is
one :class:`WebConfigError` line naming the key and what to write instead.
"""

from __future__ import annotations

import os
import re
import ssl
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["TlsSettings", "WebConfig", "WebConfigError", "load_web_config", "parse_web_config",
           "server_context"]


class WebConfigError(Exception):
    """A web configuration file that cannot be used; the message is one line."""


TLS_VERSIONS = {"TLS10": ssl.TLSVersion.TLSv1, "TLS11": ssl.TLSVersion.TLSv1_1,
                "TLS12": ssl.TLSVersion.TLSv1_2, "TLS13": ssl.TLSVersion.TLSv1_3}
"""The toolkit's names of TLS versions."""
CIPHER_SUITES = {
    "TLS_RSA_WITH_AES_128_CBC_SHA": "AES128-SHA",
    "TLS_RSA_WITH_AES_256_CBC_SHA": "AES256-SHA",
    "TLS_RSA_WITH_AES_128_GCM_SHA256": "AES128-GCM-SHA256",
    "TLS_RSA_WITH_AES_256_GCM_SHA384": "AES256-GCM-SHA384",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA": "ECDHE-ECDSA-AES128-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA": "ECDHE-ECDSA-AES256-SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA": "ECDHE-RSA-AES128-SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA": "ECDHE-RSA-AES256-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": "ECDHE-ECDSA-AES128-GCM-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": "ECDHE-ECDSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256": "ECDHE-RSA-AES128-GCM-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": "ECDHE-RSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-RSA-CHACHA20-POLY1305",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
}
"""Go's ``tls.CipherSuites()`` for TLS 1.2 and below, by their IANA names, to OpenSSL's names (as
``openssl ciphers -stdname`` pairs them)."""
TLS13_SUITES = ("TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256")
"""Accepted and, as in Go, not configurable: TLS 1.3 always offers them."""
CLIENT_AUTH = {"": ssl.CERT_NONE, "NoClientCert": ssl.CERT_NONE, "VerifyClientCertIfGiven": ssl.CERT_OPTIONAL,
               "RequireAndVerifyClientCert": ssl.CERT_REQUIRED}
UNVERIFIED_CLIENT_AUTH = ("RequestClientCert", "RequireAnyClientCert", "RequireClientCert")
HEADERS: dict[str, tuple[str, ...]] = {
    "Strict-Transport-Security": (),
    "X-Content-Type-Options": ("nosniff",),
    "X-Frame-Options": ("deny", "sameorigin"),
    "X-XSS-Protection": (),
    "Content-Security-Policy": (),
}
"""The headers the toolkit lets a file set, and their allowed values (any, when none are listed)."""
BCRYPT_HASH = re.compile(r"\$2[abxy]?\$(\d\d)\$[./A-Za-z0-9]{53}")
_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}

_TLS_KEYS = ("cert", "key", "client_ca", "cert_file", "key_file", "client_auth_type", "client_ca_file",
             "client_allowed_sans", "min_version", "max_version", "cipher_suites",
             "prefer_server_cipher_suites", "curve_preferences")


@dataclass(frozen=True)
class TlsSettings:
    """``tls_server_config``, checked; file names are absolute."""

    cert_file: str | None = None
    key_file: str | None = None
    cert: str | None = None
    key: str | None = None
    client_ca_file: str | None = None
    client_ca: str | None = None
    client_auth: ssl.VerifyMode = ssl.CERT_NONE
    client_allowed_sans: tuple[str, ...] = ()
    min_version: ssl.TLSVersion = ssl.TLSVersion.TLSv1_2
    max_version: ssl.TLSVersion = ssl.TLSVersion.TLSv1_3
    ciphers: tuple[str, ...] = ()
    """OpenSSL names, in the file's order (empty: OpenSSL's defaults)."""
    prefer_server_ciphers: bool = True


@dataclass(frozen=True)
class WebConfig:
    """The whole file, checked: what the exporter's web server applies to every request."""

    tls: TlsSettings | None = None
    users: Mapping[str, str] = field(default_factory=dict)
    """User name -> bcrypt hash; empty: no password asked."""
    headers: Mapping[str, str] = field(default_factory=dict)
    rate_interval: float = 0.0
    """Seconds between two requests the rate limit lets through (0: no limit)."""
    rate_burst: int = 0


# --------------------------------------------------------------------------- reading


def _loader() -> type[Any]:
    """A safe YAML loader that refuses a key given twice (as the toolkit's strict YAML decoding does)."""
    import yaml

    class Loader(yaml.SafeLoader):
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: set[Any] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"key {key!r} is given twice", key_node.start_mark)
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    return Loader


def load_web_config(path: str) -> WebConfig:
    """Read and check the file at ``path``; a :class:`WebConfigError` names what is wrong."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        raise WebConfigError(f"cannot read the web config file {path}: {reason}") from None
    try:
        return parse_web_config(text, Path(path).resolve().parent)
    except WebConfigError as exc:
        raise WebConfigError(f"web config file {path}: {exc}") from None


def parse_web_config(text: str, folder: Path) -> WebConfig:
    """Check a file's text; relative file names are taken from ``folder``. Every certificate and key it
    names is loaded once here, so that a bad one stops the exporter before it listens."""
    import yaml

    try:
        data = yaml.load(text, Loader=_loader())  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise WebConfigError(f"not valid YAML{where}: {problem}") from None
    top = _mapping(data if data is not None else {}, "the file")
    _known(top, ("tls_server_config", "http_server_config", "basic_auth_users", "rate_limit"), "the file")
    tls_data = _mapping(top.get("tls_server_config") or {}, "tls_server_config")
    http = _mapping(top.get("http_server_config") or {}, "http_server_config")
    _known(http, ("http2", "headers"), "http_server_config")
    if "http2" in http:
        _bool(http["http2"], "http_server_config.http2")
    config = WebConfig(
        tls=_tls(tls_data, folder) if tls_data else None,
        users=_users(top.get("basic_auth_users") or {}),
        headers=_headers(http.get("headers") or {}),
        **_rate_limit(top.get("rate_limit") or {}),
    )
    if config.tls is not None:
        server_context(config.tls)
    return config


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise WebConfigError(f"{where} must be a mapping of names to values, got {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    return {list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}.get(
        type(value), "a mapping" if isinstance(value, dict) else type(value).__name__)


def _known(section: Mapping[str, Any], keys: tuple[str, ...], where: str) -> None:
    unknown = [key for key in section if key not in keys]
    if unknown:
        raise WebConfigError(f"unknown key {unknown[0]!r} in {where} (known keys: {', '.join(keys)})")


def _string(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise WebConfigError(f"{where} must be a string, got {_kind(value)}")
    return value


def _bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise WebConfigError(f"{where} must be true or false, got {_kind(value)}")
    return value


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise WebConfigError(f"{where} must be a list of strings, got {_kind(value)}")
    return tuple(_string(item, f"an entry of {where}") for item in value)


def _file(value: Any, where: str, folder: Path) -> str:
    name = _string(value, where)
    if not name:
        raise WebConfigError(f"{where} is empty")
    path = folder / name
    if not path.is_file():
        raise WebConfigError(f"{where} {path} does not exist or is not a file")
    return str(path)


def _tls(section: dict[str, Any], folder: Path) -> TlsSettings:
    where = "tls_server_config"
    _known(section, _TLS_KEYS, where)
    if section.get("curve_preferences"):
        raise WebConfigError(f"{where}.curve_preferences is not supported: Python's ssl module cannot choose "
                             "the key exchange groups; remove it (OpenSSL's defaults apply)")
    files = {key: _file(section[key], f"{where}.{key}", folder)
             for key in ("cert_file", "key_file", "client_ca_file") if section.get(key) is not None}
    inline = {key: _string(section[key], f"{where}.{key}") for key in ("cert", "key", "client_ca")
              if section.get(key) is not None}
    for name in ("cert", "key", "client_ca"):
        if name in inline and f"{name}_file" in files:
            raise WebConfigError(f"{where}: {name} and {name}_file are both set; keep one")
    if not ({"cert", "cert_file"} & (inline.keys() | files.keys())):
        raise WebConfigError(f"{where} needs cert_file (or cert), the server's certificate in PEM")
    if not ({"key", "key_file"} & (inline.keys() | files.keys())):
        raise WebConfigError(f"{where} needs key_file (or key), the private key of its certificate in PEM")
    auth_name = _string(section.get("client_auth_type", ""), f"{where}.client_auth_type")
    if auth_name in UNVERIFIED_CLIENT_AUTH:
        raise WebConfigError(
            f"{where}.client_auth_type {auth_name} is not supported: Python's ssl module verifies every "
            "client certificate it asks for; use RequireAndVerifyClientCert (or VerifyClientCertIfGiven) "
            "with client_ca_file")
    if auth_name not in CLIENT_AUTH:
        raise WebConfigError(f"{where}.client_auth_type {auth_name!r} is not one of NoClientCert, "
                             "VerifyClientCertIfGiven, RequireAndVerifyClientCert")
    client_auth = CLIENT_AUTH[auth_name]
    has_ca = "client_ca_file" in files or "client_ca" in inline
    if has_ca and client_auth == ssl.CERT_NONE:
        raise WebConfigError(f"{where}: a client CA is set but client_auth_type is "
                             f"{auth_name or 'NoClientCert'}; set client_auth_type: "
                             "RequireAndVerifyClientCert")
    if client_auth != ssl.CERT_NONE and not has_ca:
        raise WebConfigError(f"{where}.client_auth_type {auth_name} needs client_ca_file (or client_ca), the "
                             "CA that signs the client certificates")
    sans = _strings(section["client_allowed_sans"], f"{where}.client_allowed_sans") \
        if section.get("client_allowed_sans") is not None else ()
    if sans and client_auth != ssl.CERT_REQUIRED:
        raise WebConfigError(f"{where}.client_allowed_sans needs client_auth_type: "
                             "RequireAndVerifyClientCert")
    versions = {}
    for key, default in (("min_version", "TLS12"), ("max_version", "TLS13")):
        name = _string(section.get(key, default), f"{where}.{key}")
        if name not in TLS_VERSIONS:
            raise WebConfigError(f"{where}.{key} {name!r} is not one of {', '.join(TLS_VERSIONS)}")
        versions[key] = TLS_VERSIONS[name]
    if versions["min_version"] > versions["max_version"]:
        raise WebConfigError(f"{where}: min_version is above max_version")
    ciphers = []
    for name in _strings(section.get("cipher_suites") or [], f"{where}.cipher_suites"):
        if name in CIPHER_SUITES:
            ciphers.append(CIPHER_SUITES[name])
        elif name not in TLS13_SUITES:
            raise WebConfigError(f"{where}.cipher_suites: unknown cipher suite {name!r} (Go's names, such as "
                                 "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)")
    prefer = _bool(section.get("prefer_server_cipher_suites", True), f"{where}.prefer_server_cipher_suites")
    return TlsSettings(
        cert_file=files.get("cert_file"), key_file=files.get("key_file"), cert=inline.get("cert"),
        key=inline.get("key"), client_ca_file=files.get("client_ca_file"), client_ca=inline.get("client_ca"),
        client_auth=client_auth, client_allowed_sans=sans, min_version=versions["min_version"],
        max_version=versions["max_version"], ciphers=tuple(ciphers), prefer_server_ciphers=prefer)


def _users(section: Any) -> dict[str, str]:
    users = _mapping(section, "basic_auth_users")
    for name, hashed in users.items():
        text = _string(hashed, f"the password hash of basic_auth_users {name!r}")
        match = BCRYPT_HASH.fullmatch(text)
        if match is None or not 4 <= int(match.group(1)) <= 31:
            raise WebConfigError(f"basic_auth_users {name!r}: not a bcrypt hash (make one with: "
                                 "htpasswd -nBC 10 \"\" | tr -d ':\\n')")
    return dict(users)


def _headers(section: Any) -> dict[str, str]:
    headers = _mapping(section, "http_server_config.headers")
    for name, value in headers.items():
        if name not in HEADERS:
            raise WebConfigError(f"http_server_config.headers: header {name!r} cannot be set (only "
                                 f"{', '.join(HEADERS)})")
        text = _string(value, f"http_server_config.headers.{name}")
        allowed = HEADERS[name]
        if allowed and text not in allowed:
            raise WebConfigError(f"http_server_config.headers.{name} must be one of {', '.join(allowed)}, "
                                 f"got {text!r}")
    return dict(headers)


def _rate_limit(section: Any) -> dict[str, Any]:
    limit = _mapping(section, "rate_limit")
    _known(limit, ("interval", "burst"), "rate_limit")
    interval = _duration(limit.get("interval", "0"), "rate_limit.interval")
    burst = limit.get("burst", 0)
    if not isinstance(burst, int) or isinstance(burst, bool) or burst < 0:
        raise WebConfigError(f"rate_limit.burst must be a whole number of requests, got {burst!r}")
    if interval > 0 and burst < 1:
        raise WebConfigError("rate_limit.burst must be at least 1 when rate_limit.interval is set (with 0 no "
                             "request would ever pass)")
    return {"rate_interval": interval, "rate_burst": burst}


def _duration(value: Any, where: str) -> float:
    """A Go duration (``1s``, ``500ms``, ``1m30s``; ``0`` alone needs no unit) in seconds."""
    if value in (0, "0") and not isinstance(value, bool):
        return 0.0
    if not isinstance(value, str) or not re.fullmatch(f"(?:{_DURATION.pattern})+", value):
        raise WebConfigError(f"{where} must be a duration such as 1s, 500ms or 1m30s, got {value!r}")
    return sum(float(number) * _UNITS[unit] for number, unit in _DURATION.findall(value))


# --------------------------------------------------------------------------- TLS


def server_context(tls: TlsSettings) -> ssl.SSLContext:
    """The server's SSL context; a certificate, key or CA that does not load is a WebConfigError."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = tls.min_version
    context.maximum_version = tls.max_version
    if tls.prefer_server_ciphers:
        context.options |= ssl.OP_CIPHER_SERVER_PREFERENCE
    else:
        context.options &= ~ssl.OP_CIPHER_SERVER_PREFERENCE
    try:
        if tls.ciphers:
            context.set_ciphers(":".join(tls.ciphers))
    except ssl.SSLError:
        raise WebConfigError("tls_server_config.cipher_suites: this OpenSSL offers none of them") from None
    try:
        if tls.cert_file is not None and tls.key_file is not None:
            context.load_cert_chain(tls.cert_file, tls.key_file)
        else:
            _load_inline(context, tls)
    except (OSError, ssl.SSLError) as exc:
        raise WebConfigError(f"tls_server_config: the certificate and key do not load together "
                             f"({_ssl_text(exc)}); give a PEM certificate and its unencrypted PEM key") \
            from None
    if tls.client_auth != ssl.CERT_NONE:
        try:
            context.load_verify_locations(cafile=tls.client_ca_file, cadata=tls.client_ca)
        except (OSError, ssl.SSLError, ValueError) as exc:
            raise WebConfigError(f"tls_server_config: the client CA does not load ({_ssl_text(exc)}); give "
                                 "PEM certificates") from None
        context.verify_mode = tls.client_auth
    return context


def _load_inline(context: ssl.SSLContext, tls: TlsSettings) -> None:
    """ssl loads certificates from files only: inline PEM goes through a private temporary folder."""
    with tempfile.TemporaryDirectory() as folder:
        cert, key = os.path.join(folder, "cert.pem"), os.path.join(folder, "key.pem")
        for path, text, named in ((cert, tls.cert, tls.cert_file), (key, tls.key, tls.key_file)):
            content = text if text is not None else Path(str(named)).read_text(encoding="utf-8")
            with open(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600), "w", encoding="utf-8") as out:
                out.write(content)
        context.load_cert_chain(cert, key)


def _ssl_text(exc: BaseException) -> str:
    return re.sub(r"^\[[^]]*\] | \(_ssl\.c:\d+\)$", "", str(getattr(exc, "strerror", None) or exc))
