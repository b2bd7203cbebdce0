"""Kafka client properties: parsing, validation and what they turn into (addresses, TLS, SASL).

The names and defaults are those of Kafka's ``AdminClientConfig``. Only what this client implements
is accepted; anything else is refused with a :class:`~kafka_admin_kraft.errors.ConfigError` naming
the properties, so that a setting never silently does nothing.

Files are read by :mod:`kafka_admin_kraft.config.properties`, the reader of server files too, and the
security protocols are those of :mod:`kafka_admin_kraft.config.security`. The settings themselves stay
with the client: they become its TLS context and SASL credentials, and a mapping given to the SDK is
checked as every other SDK argument is.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kafka_admin_kraft.client import arguments
from kafka_admin_kraft.config.security import (
    KERBEROS_MODULE,
    OAUTHBEARER_MODULE,
    PLAIN_MODULE,
    SCRAM_MODULE,
    SECURITY_PROTOCOLS,
    TLS_PROTOCOLS,
)
from kafka_admin_kraft.errors import ConfigError

if TYPE_CHECKING:
    import ssl

Address = tuple[str, int]

DEFAULTS: dict[str, str] = {
    "client.id": "kafka-admin-kraft",
    "request.timeout.ms": "30000",
    "default.api.timeout.ms": "60000",
    "retry.backoff.ms": "100",
    "retry.backoff.max.ms": "1000",
    "socket.connection.setup.timeout.ms": "10000",
    "security.protocol": "PLAINTEXT",
    "ssl.truststore.type": "PEM",
    "ssl.keystore.type": "PEM",
    "ssl.endpoint.identification.algorithm": "https",
    "retries": "2147483647",
}
OAUTHBEARER_PROPERTIES = frozenset({
    "sasl.login.callback.handler.class", "sasl.oauthbearer.token.endpoint.url",
    "sasl.oauthbearer.client.credentials.client.id", "sasl.oauthbearer.client.credentials.client.secret",
    "sasl.oauthbearer.scope", "sasl.oauthbearer.sub.claim.name", "sasl.oauthbearer.scope.claim.name",
    "sasl.oauthbearer.header.urlencode", "sasl.login.connect.timeout.ms", "sasl.login.read.timeout.ms",
    "sasl.login.retry.backoff.ms", "sasl.login.retry.backoff.max.ms", "sasl.login.refresh.window.factor",
    "sasl.login.refresh.window.jitter", "sasl.login.refresh.min.period.seconds",
    "sasl.login.refresh.buffer.seconds", "sasl.oauthbearer.jwt.retriever.class",
    "sasl.oauthbearer.jwt.validator.class",
})
"""The client properties of SASL/OAUTHBEARER (Kafka's ``SaslConfigs``), read by ``client/oauth.py``."""
KNOWN = frozenset(DEFAULTS) | {
    "bootstrap.servers",
    "bootstrap.controllers",
    "ssl.truststore.location",
    "ssl.truststore.certificates",
    "ssl.keystore.location",
    "ssl.keystore.key",
    "ssl.keystore.certificate.chain",
    "ssl.key.password",
    "ssl.keystore.password",
    "ssl.protocol",
    "sasl.mechanism",
    "sasl.jaas.config",
    "sasl.kerberos.service.name",
} | OAUTHBEARER_PROPERTIES
SASL_MECHANISMS = ("GSSAPI", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
LOGIN_MODULES = {
    PLAIN_MODULE: ("PLAIN",),
    SCRAM_MODULE: ("SCRAM-SHA-256", "SCRAM-SHA-512"),
    KERBEROS_MODULE: ("GSSAPI",),
    OAUTHBEARER_MODULE: ("OAUTHBEARER",),
}
"""JAAS login module -> the mechanisms it logs in with."""
REQUIRED_JAAS_OPTIONS: dict[str, tuple[str, ...]] = {
    "PLAIN": ("username", "password"),
    "SCRAM-SHA-256": ("username", "password"),
    "SCRAM-SHA-512": ("username", "password"),
}
"""Mechanism -> the ``sasl.jaas.config`` options it cannot do without."""


def parse_address(text: str, setting: str = "bootstrap.servers") -> Address:
    """``host:port`` or ``[ipv6]:port``, with a valid host name or IP literal and a port of 1-65535."""
    from kafka_admin_kraft.hosts import host_problem

    text = text.strip()
    match = re.fullmatch(r"\[([^\]]+)\]:([0-9]+)|([^:\s]+):([0-9]+)", text)
    if not match:
        raise ConfigError(
            f"invalid address {text!r} in {setting}: expected host:port or [ipv6]:port", [setting]
        )
    host = match.group(1) or match.group(3)
    problem = host_problem(host)
    if problem is not None:
        raise ConfigError(f"invalid address {text!r} in {setting}: the host {host!r} {problem}", [setting])
    port = int(match.group(2) or match.group(4))
    if not 0 < port < 65536:
        raise ConfigError(f"invalid address {text!r} in {setting}: the port must be 1-65535", [setting])
    return host, port


def format_address(address: Address) -> str:
    host, port = address
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def parse_jaas(text: str) -> tuple[str, dict[str, str]]:
    """Parse ``<LoginModule class> required key="value" ...;`` (Kafka's ``sasl.jaas.config``)."""
    pattern = re.compile(
        r"\s*([A-Za-z0-9_.$]+)\s+(required|requisite|sufficient|optional)\s*(.*?)\s*;\s*$", re.S
    )
    match = pattern.fullmatch(text)
    if not match:
        raise ConfigError(
            "sasl.jaas.config must look like '<LoginModule> required key=\"value\" ...;'",
            ["sasl.jaas.config"],
        )
    module, _flag, rest = match.groups()
    options: dict[str, str] = {}
    option = re.compile(r'\s*([A-Za-z0-9_.\-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s";]+))')
    pos = 0
    while pos < len(rest):
        found = option.match(rest, pos)
        if not found:
            raise ConfigError(
                f"sasl.jaas.config: cannot parse options at {rest[pos:]!r}", ["sasl.jaas.config"]
            )
        key, quoted, bare = found.groups()
        options[key] = re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else bare
        pos = found.end()
        while pos < len(rest) and rest[pos].isspace():
            pos += 1
    return module, options


def load_properties(path: str | os.PathLike[str]) -> dict[str, str]:
    """Read a Kafka client ``.properties`` file as Kafka does (``Properties.load(InputStream)``: ISO-8859-1
    with ``\\uXXXX`` escapes); every error names the file."""
    from kafka_admin_kraft.config.properties import read_properties

    name = arguments.path(path)
    try:
        return read_properties(name)
    except OSError as exc:
        raise ConfigError(f"cannot read the properties file {name}: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise ConfigError(f"cannot parse the properties file {name}: {exc}") from None


def client_settings(properties: Mapping[str, str]) -> dict[str, str]:
    """The settings this client uses out of a whole properties file, such as the controller's own
    configuration that ``add-controller`` reads: the known keys, ``ssl.*`` only when
    ``security.protocol`` uses TLS and ``sasl.*`` only when it uses SASL. The Java client ignores what
    it does not use; :meth:`ClientConfig.from_properties` refuses it, so a file meant for both goes
    through here first."""
    kept = {key: value for key, value in properties.items() if key in KNOWN}
    protocol = kept.get("security.protocol", DEFAULTS["security.protocol"]).strip().upper()
    if protocol not in TLS_PROTOCOLS:
        kept = {key: value for key, value in kept.items() if not key.startswith("ssl.")}
    if not protocol.startswith("SASL_"):
        kept = {key: value for key, value in kept.items() if not key.startswith("sasl.")}
    return kept


def _int(props: Mapping[str, str], name: str, minimum: int = 0) -> int:
    try:
        value = int(str(props[name]).strip())
    except ValueError:
        raise ConfigError(f"{name} must be an integer, got {props[name]!r}", [name]) from None
    if value < minimum:
        raise ConfigError(f"{name} must be at least {minimum}, got {value}", [name])
    return value


@dataclass(frozen=True)
class SaslSettings:
    """The SASL mechanism, its JAAS login module and options (``sasl.jaas.config``) and every other
    ``sasl.*`` client property: what a mechanism needs to log in."""

    mechanism: str
    module: str
    options: Mapping[str, str]
    properties: Mapping[str, str] = field(default_factory=dict)
    token_provider: Callable[[], str] | None = field(default=None, compare=False)
    """OAUTHBEARER: what returns the token, given to the SDK (``oauth_token_provider``)."""

    @property
    def username(self) -> str:
        return self.options.get("username", "")

    @property
    def password(self) -> str:
        return self.options.get("password", "")


@dataclass(frozen=True)
class ClientConfig:
    """Validated client settings (durations in seconds)."""

    bootstrap: tuple[Address, ...]
    bootstrap_controllers: bool
    client_id: str = "kafka-admin-kraft"
    request_timeout: float = 30.0
    default_api_timeout: float = 60.0
    retry_backoff: float = 0.1
    retry_backoff_max: float = 1.0
    connection_setup_timeout: float = 10.0
    retries: int = 2147483647
    security_protocol: str = "PLAINTEXT"
    sasl: SaslSettings | None = None
    ssl_options: dict[str, str] = field(default_factory=dict)

    @property
    def bootstrap_setting(self) -> str:
        return "bootstrap.controllers" if self.bootstrap_controllers else "bootstrap.servers"

    @property
    def uses_tls(self) -> bool:
        return self.security_protocol in TLS_PROTOCOLS

    @classmethod
    def from_properties(
        cls, properties: Mapping[str, Any], *, token_provider: Callable[[], str] | None = None
    ) -> ClientConfig:
        """Validate Kafka client properties: a mapping of property names to strings or ints (a bool or
        any other type is a ``TypeError``); bootstrap lists may also be lists of addresses.
        ``token_provider`` returns the token of ``sasl.mechanism=OAUTHBEARER``."""
        props = {
            key: arguments.property_value(key, value)
            for key, value in arguments.properties(properties).items()
            if value is not None
        }
        unknown = sorted(set(props) - KNOWN)
        if unknown:
            hints = []
            for name in unknown:
                if name.startswith("sasl.") or name.startswith("ssl."):
                    hints.append(f"{name} (not supported by this client)")
                else:
                    hints.append(name)
            raise ConfigError("unknown or unsupported client properties: " + ", ".join(hints), unknown)
        has_servers = bool(props.get("bootstrap.servers", "").strip())
        has_controllers = bool(props.get("bootstrap.controllers", "").strip())
        if has_servers and has_controllers:
            raise ConfigError(
                "You cannot set both bootstrap.servers and bootstrap.controllers",
                ["bootstrap.servers", "bootstrap.controllers"],
            )
        if not has_servers and not has_controllers:
            raise ConfigError(
                "You must set either bootstrap.servers or bootstrap.controllers",
                ["bootstrap.servers", "bootstrap.controllers"],
            )
        setting = "bootstrap.controllers" if has_controllers else "bootstrap.servers"
        addresses = tuple(parse_address(part, setting) for part in props[setting].split(",") if part.strip())
        if not addresses:
            raise ConfigError(
                f"{setting} lists no address ({props[setting]!r}): expected host:port[,host:port...]",
                [setting],
            )
        merged = {**DEFAULTS, **props}
        request_timeout = _int(merged, "request.timeout.ms", 1)
        api_timeout = _int(merged, "default.api.timeout.ms", 1)
        if api_timeout < request_timeout:
            if "default.api.timeout.ms" in props:
                raise ConfigError(
                    f"default.api.timeout.ms ({api_timeout}) must be at least request.timeout.ms "
                    f"({request_timeout})",
                    ["default.api.timeout.ms", "request.timeout.ms"],
                )
            api_timeout = request_timeout
        backoff = _int(merged, "retry.backoff.ms")
        backoff_max = max(_int(merged, "retry.backoff.max.ms"), backoff)
        protocol = merged["security.protocol"].strip().upper()
        if protocol not in SECURITY_PROTOCOLS:
            raise ConfigError(
                f"security.protocol {merged['security.protocol']!r} is not one of "
                f"{', '.join(SECURITY_PROTOCOLS)}",
                ["security.protocol"],
            )
        ssl_options = {k: v for k, v in props.items() if k.startswith("ssl.")}
        for kind in ("ssl.truststore.type", "ssl.keystore.type"):
            if merged[kind].strip().upper() != "PEM":
                raise ConfigError(
                    f"{kind}={merged[kind]} is not supported: only PEM is (convert the store "
                    f"with keytool/openssl to PEM files)",
                    [kind],
                )
        if "ssl.keystore.password" in props and "ssl.keystore.location" not in props:
            raise ConfigError("ssl.keystore.password needs ssl.keystore.location", ["ssl.keystore.password"])
        if ("ssl.keystore.key" in props) != ("ssl.keystore.certificate.chain" in props):
            raise ConfigError(
                "ssl.keystore.key and ssl.keystore.certificate.chain go together",
                ["ssl.keystore.key", "ssl.keystore.certificate.chain"],
            )
        if ssl_options and protocol not in TLS_PROTOCOLS:
            raise ConfigError(
                f"ssl.* properties are set but security.protocol is {protocol}", sorted(ssl_options)
            )
        sasl = None
        if protocol.startswith("SASL_"):
            sasl = _sasl_settings(props, token_provider)
        elif any(key.startswith("sasl.") for key in props):
            raise ConfigError(
                f"sasl.* properties are set but security.protocol is {protocol}",
                sorted(k for k in props if k.startswith("sasl.")),
            )
        if token_provider is not None and (sasl is None or sasl.mechanism != "OAUTHBEARER"):
            raise ConfigError("a token provider needs security.protocol=SASL_SSL (or SASL_PLAINTEXT) and "
                              "sasl.mechanism=OAUTHBEARER", ["sasl.mechanism"])
        return cls(
            bootstrap=addresses,
            bootstrap_controllers=has_controllers,
            client_id=merged["client.id"],
            request_timeout=request_timeout / 1000,
            default_api_timeout=api_timeout / 1000,
            retry_backoff=backoff / 1000,
            retry_backoff_max=backoff_max / 1000,
            connection_setup_timeout=_int(merged, "socket.connection.setup.timeout.ms", 1) / 1000,
            retries=_int(merged, "retries"),
            security_protocol=protocol,
            sasl=sasl,
            ssl_options=ssl_options,
        )

    def ssl_context(self) -> ssl.SSLContext:
        """An SSLContext from the ``ssl.*`` properties: the truststore as CA certificates (system CAs
        when none is given), the keystore as client certificate and key, hostname verification unless
        ``ssl.endpoint.identification.algorithm`` is empty."""
        import ssl

        opts = self.ssl_options
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        if opts.get("ssl.protocol", "").upper() in ("TLSV1.3",):
            context.minimum_version = ssl.TLSVersion.TLSv1_3
        else:
            context.minimum_version = ssl.TLSVersion.TLSv1_2
        try:
            if "ssl.truststore.location" in opts or "ssl.truststore.certificates" in opts:
                if "ssl.truststore.location" in opts:
                    context.load_verify_locations(cafile=opts["ssl.truststore.location"])
                if "ssl.truststore.certificates" in opts:
                    context.load_verify_locations(cadata=opts["ssl.truststore.certificates"])
            else:
                context.load_default_certs()
            password = opts.get("ssl.key.password") or opts.get("ssl.keystore.password")
            if "ssl.keystore.location" in opts:
                context.load_cert_chain(opts["ssl.keystore.location"], password=password)
            elif "ssl.keystore.key" in opts:
                # Only for inline PEM keystores: kept off the tools' start-up path.
                import tempfile
                from pathlib import Path

                with tempfile.TemporaryDirectory() as tmp:
                    cert = Path(tmp) / "cert.pem"
                    key = Path(tmp) / "key.pem"
                    cert.write_text(opts["ssl.keystore.certificate.chain"])
                    key.write_text(opts["ssl.keystore.key"])
                    context.load_cert_chain(str(cert), str(key), password=password)
        except (OSError, ssl.SSLError) as exc:
            names = sorted(k for k in opts if k.startswith(("ssl.truststore", "ssl.keystore", "ssl.key")))
            raise ConfigError(
                f"cannot load the TLS certificates or key ({', '.join(names)}): {exc}", names
            ) from exc
        verify_host = opts.get("ssl.endpoint.identification.algorithm", "https").strip()
        context.check_hostname = bool(verify_host)
        context.verify_mode = ssl.CERT_REQUIRED
        return context


def _sasl_settings(props: Mapping[str, str], token_provider: Callable[[], str] | None = None) -> SaslSettings:
    mechanism = props.get("sasl.mechanism", "GSSAPI").strip().upper()
    if mechanism not in SASL_MECHANISMS:
        raise ConfigError(
            f"sasl.mechanism {mechanism} is not supported: use one of {', '.join(SASL_MECHANISMS)}",
            ["sasl.mechanism"],
        )
    if "sasl.jaas.config" not in props:
        raise ConfigError(f"sasl.jaas.config is needed for {mechanism}", ["sasl.jaas.config"])
    module, options = parse_jaas(props["sasl.jaas.config"])
    mechanisms = LOGIN_MODULES.get(module)
    if mechanisms is None:
        raise ConfigError(
            f"sasl.jaas.config: login module {module} is not supported (use {' or '.join(LOGIN_MODULES)})",
            ["sasl.jaas.config"],
        )
    if mechanism not in mechanisms:
        raise ConfigError(
            f"sasl.jaas.config: {module.rsplit('.', 1)[-1]} does not provide {mechanism}",
            ["sasl.jaas.config", "sasl.mechanism"],
        )
    missing = [k for k in REQUIRED_JAAS_OPTIONS.get(mechanism, ()) if k not in options]
    if missing:
        raise ConfigError(f"sasl.jaas.config lacks {' and '.join(missing)}", ["sasl.jaas.config"])
    others = {key: value for key, value in props.items()
              if key.startswith("sasl.") and key not in ("sasl.mechanism", "sasl.jaas.config")}
    if mechanism == "GSSAPI":  # its checks, and the gssapi package, load only when it is configured
        from kafka_admin_kraft.client.kerberos import check_settings

        check_settings(options, others)
    return SaslSettings(mechanism, module, options, others, token_provider)


def options_to_properties(options: Mapping[str, Any]) -> dict[str, Any]:
    """Keyword options (``request_timeout_ms=5000``) to property names (``request.timeout.ms``)."""
    return {key.replace("_", "."): value for key, value in options.items()}
