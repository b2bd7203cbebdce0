"""A Kafka node's configuration: its ``server.properties`` parsed into a typed ``ServerConfig``.

What ``kraft-server`` runs with and what ``kafka-storage`` formats for, as Kafka's ``KafkaConfig``
serves both its server and its storage tool.

The file is read the way ``kafka-server-start`` reads it, by
:func:`~kafka_admin_kraft.config.properties.read_properties` (``java.util.Properties.load`` on a byte
stream). Values are then parsed like Kafka's ``ConfigDef``: they are trimmed, numbers are Java ints or
longs, booleans are ``true``/``false`` in any case, lists are comma separated with the blanks around
commas ignored. Bad values raise :class:`ConfigError` with Kafka's message (``Invalid value abc for
configuration node.id: Not a number of type INT``); the checks ``KafkaConfig.validateValues`` makes
for KRaft nodes follow (listeners versus ``controller.listener.names``, the voters or bootstrap
servers a controller needs, ...). The grammars of single settings (``parse_listener``,
``parse_voters``, ``parse_bootstrap_servers``, ``parse_list``, ``csv_list``) are public for the tools
that read a server's file without validating all of it, as ``kafka-metadata-quorum add-controller``
does.

Keys this module does not know are kept in ``ServerConfig.originals`` and listed in
``unknown_keys``; Kafka's server ignores unknown configurations with a warning, and so does
``kraft-server``.

Sources: ``KafkaConfig.scala`` (``validateValues``, listeners), ``KRaftConfigs``, ``QuorumConfig``,
``MetadataLogConfig``, ``SocketServerConfigs.listenerListToEndPoints``, ``ConfigDef.parseType``.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from kafka_admin_kraft.config.properties import read_properties
from kafka_admin_kraft.config.security import SECURITY_PROTOCOLS
from kafka_admin_kraft.java_text import parse_java_int

log = logging.getLogger(__name__)

# Keys, as Kafka spells them.
PROCESS_ROLES: Final = "process.roles"
NODE_ID: Final = "node.id"
LISTENERS: Final = "listeners"
ADVERTISED_LISTENERS: Final = "advertised.listeners"
CONTROLLER_LISTENER_NAMES: Final = "controller.listener.names"
LISTENER_SECURITY_PROTOCOL_MAP: Final = "listener.security.protocol.map"
QUORUM_VOTERS: Final = "controller.quorum.voters"
QUORUM_BOOTSTRAP_SERVERS: Final = "controller.quorum.bootstrap.servers"
QUORUM_ELECTION_TIMEOUT_MS: Final = "controller.quorum.election.timeout.ms"
QUORUM_FETCH_TIMEOUT_MS: Final = "controller.quorum.fetch.timeout.ms"
QUORUM_ELECTION_BACKOFF_MAX_MS: Final = "controller.quorum.election.backoff.max.ms"
QUORUM_REQUEST_TIMEOUT_MS: Final = "controller.quorum.request.timeout.ms"
QUORUM_RETRY_BACKOFF_MS: Final = "controller.quorum.retry.backoff.ms"
QUORUM_APPEND_LINGER_MS: Final = "controller.quorum.append.linger.ms"
QUORUM_AUTO_JOIN_ENABLE: Final = "controller.quorum.auto.join.enable"
METADATA_LOG_DIR: Final = "metadata.log.dir"
LOG_DIRS: Final = "log.dirs"
LOG_DIR: Final = "log.dir"
METADATA_MAX_IDLE_INTERVAL_MS: Final = "metadata.max.idle.interval.ms"
METADATA_LOG_SEGMENT_BYTES: Final = "metadata.log.segment.bytes"
INTERNAL_METADATA_LOG_SEGMENT_BYTES: Final = "internal.metadata.log.segment.bytes"
METADATA_LOG_SEGMENT_MS: Final = "metadata.log.segment.ms"
METADATA_SNAPSHOT_MAX_NEW_RECORD_BYTES: Final = "metadata.log.max.record.bytes.between.snapshots"
METADATA_SNAPSHOT_MAX_INTERVAL_MS: Final = "metadata.log.max.snapshot.interval.ms"
METADATA_MAX_RETENTION_BYTES: Final = "metadata.max.retention.bytes"
METADATA_MAX_RETENTION_MS: Final = "metadata.max.retention.ms"
INTERNAL_METADATA_MAX_BATCH_SIZE: Final = "internal.metadata.max.batch.size.in.bytes"
INTERNAL_METADATA_MAX_FETCH_SIZE: Final = "internal.metadata.max.fetch.size.in.bytes"
SOCKET_REQUEST_MAX_BYTES: Final = "socket.request.max.bytes"
UNSTABLE_FEATURE_VERSIONS_ENABLE: Final = "unstable.feature.versions.enable"
BROKER_HEARTBEAT_INTERVAL_MS: Final = "broker.heartbeat.interval.ms"
BROKER_SESSION_TIMEOUT_MS: Final = "broker.session.timeout.ms"
MAX_CONNECTIONS: Final = "max.connections"
MAX_CONNECTIONS_PER_IP: Final = "max.connections.per.ip"
MAX_CONNECTIONS_PER_IP_OVERRIDES: Final = "max.connections.per.ip.overrides"
CONNECTIONS_MAX_IDLE_MS: Final = "connections.max.idle.ms"

DEFAULT_LISTENERS: Final = "PLAINTEXT://:9092"
DEFAULT_LOG_DIR: Final = "/tmp/kafka-logs"
DEFAULT_SECURITY_PROTOCOL_MAP: Final = ("SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,"
                                        "SASL_PLAINTEXT:SASL_PLAINTEXT")
"""Kafka's default ``listener.security.protocol.map``: every protocol under its own name."""
NON_ROUTABLE_HOST: Final = "0.0.0.0"
MIN_METADATA_LOG_SEGMENT_BYTES: Final = 8 * 1024 * 1024
LOG_OVERHEAD: Final = 12
INT32_MAX: Final = (1 << 31) - 1
INT64_MAX: Final = (1 << 63) - 1


class ConfigError(ValueError):
    """A configuration Kafka would refuse; the message is Kafka's."""


# --------------------------------------------------------------------------- value parsing (ConfigDef)

_COMMA: Final = re.compile(r"\s*,\s*")


def _invalid(key: str, value: object, message: str) -> ConfigError:
    """``new ConfigException(name, value, message)``."""
    return ConfigError(f"Invalid value {value} for configuration {key}: {message}")


def _parse_number(key: str, raw: str, bits: int) -> int:
    try:
        return parse_java_int(raw.strip(), bits)
    except ValueError:
        raise _invalid(key, raw, f"Not a number of type {'INT' if bits == 32 else 'LONG'}") from None


def parse_list(raw: str) -> list[str]:
    """``ConfigDef`` LIST: trimmed, split on commas with surrounding blanks; empty means none."""
    text = raw.strip()
    return _COMMA.split(text) if text else []


def csv_list(raw: str) -> list[str]:
    """``Csv.parseCsvList``: the list without empty entries."""
    return [item for item in parse_list(raw) if item]


class _Props:
    """The loaded properties plus the keys read so far (everything else is unknown)."""

    def __init__(self, props: Mapping[str, str]) -> None:
        self.props = dict(props)
        self.used: set[str] = set()

    def raw(self, key: str) -> str | None:
        self.used.add(key)
        return self.props.get(key)

    def required(self, key: str) -> str:
        value = self.raw(key)
        if value is None:
            raise ConfigError(f'Missing required configuration "{key}" which has no default value.')
        return value

    def integer(self, key: str, default: int, *, at_least: int | None = None, bits: int = 32) -> int:
        raw = self.raw(key)
        value = default if raw is None else _parse_number(key, raw, bits)
        if at_least is not None and value < at_least:
            raise _invalid(key, value, f"Value must be at least {at_least}")
        return value

    def optional_int(self, key: str) -> int | None:
        raw = self.raw(key)
        return None if raw is None else _parse_number(key, raw, 32)

    def boolean(self, key: str, default: bool) -> bool:
        raw = self.raw(key)
        if raw is None:
            return default
        text = raw.strip().lower()
        if text not in ("true", "false"):
            raise _invalid(key, raw, "Expected value to be either true or false")
        return text == "true"

    def string(self, key: str) -> str | None:
        raw = self.raw(key)
        return None if raw is None else raw.strip()


# --------------------------------------------------------------------------- listeners

_LISTENER: Final = re.compile(r"(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)")
_HOST_PORT: Final = re.compile(r"^(?:[0-9a-zA-Z\-%._]*://)?\[?([0-9a-zA-Z\-%._:]*)]?:([0-9]+)$")
_VALID_HOST: Final = re.compile(r"[0-9a-zA-Z\-%._:]*")


@dataclass(frozen=True)
class Listener:
    """One ``listeners`` / ``advertised.listeners`` entry, e.g. ``CONTROLLER://127.0.0.1:9093``.

    ``name`` is upper-cased as Kafka normalises listener names. An empty ``host`` means every
    interface (Kafka stores it as null).
    """

    name: str
    host: str
    port: int
    security_protocol: str = "PLAINTEXT"

    @property
    def bind_host(self) -> str | None:
        """The host to bind: None (every interface) for an empty host, as ``asyncio.start_server``
        takes it."""
        return self.host or None

    @property
    def is_wildcard(self) -> bool:
        return self.host in ("", NON_ROUTABLE_HOST)

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.name}://{host}:{self.port}"


def parse_listener(entry: str) -> Listener:
    """One ``listeners`` / ``advertised.listeners`` entry, matched as
    ``SocketServerConfigs.listenerListToEndPoints`` matches it: any name (upper-cased), a host of
    letters, digits and ``-%._:`` optionally in brackets, a signed port, not range-checked here. The
    security protocol is left PLAINTEXT: it comes from the protocol map, which not every reader has."""
    match = _LISTENER.fullmatch(entry)
    if match is None:
        raise ConfigError(f"Unable to parse {entry} to a broker endpoint")
    return Listener(match.group(1).upper(), match.group(2), int(match.group(3)))


def _csv_map(key: str, raw: str, form: str) -> list[tuple[str, str, str]]:
    """``Csv.parseCsvMap``: ``name:value`` entries, split at the last colon, both sides trimmed, as
    (entry, name, value)."""
    pairs = []
    for entry in parse_list(raw):
        cut = entry.rfind(":")
        if cut < 0:
            raise ConfigError(f"Error parsing configuration property '{key}': {entry!r} is not of the form "
                              f"{form}")
        pairs.append((entry, entry[:cut].strip(), entry[cut + 1:].strip()))
    return pairs


def _parse_security_protocol_map(raw: str) -> dict[str, str]:
    """``Csv.parseCsvMap`` then ``SecurityProtocol.forName`` on each value."""
    mapping: dict[str, str] = {}
    for _, name, protocol in _csv_map(LISTENER_SECURITY_PROTOCOL_MAP, raw, "LISTENER_NAME:SECURITY_PROTOCOL"):
        if protocol not in SECURITY_PROTOCOLS:
            raise ConfigError(f"Invalid security protocol `{protocol}` defined in "
                              f"{LISTENER_SECURITY_PROTOCOL_MAP}")
        mapping[name.upper()] = protocol
    return mapping


def _parse_listeners(key: str, raw: str, protocols: Mapping[str, str], *,
                     require_distinct_ports: bool) -> tuple[Listener, ...]:
    """``CoreUtils.listenerListToEndPoints``: parse each entry, then the name and port checks."""
    listeners: list[Listener] = []
    for entry in parse_list(raw):
        try:
            listener = parse_listener(entry)
        except ConfigError as exc:
            raise ConfigError(f"Error creating broker listeners from '{raw.strip()}': {exc}") from None
        if not 0 <= listener.port <= 65535:
            raise ConfigError(f"Error creating broker listeners from '{raw.strip()}': port out of "
                              f"range:{listener.port}")
        protocol = protocols.get(listener.name)
        if protocol is None:
            raise ConfigError(f"Error creating broker listeners from '{raw.strip()}': No security protocol "
                              f"defined for listener {listener.name}")
        listeners.append(dataclasses.replace(listener, security_protocol=protocol))
    names = [listener.name for listener in listeners]
    if len(set(names)) != len(names):
        raise ConfigError(f"Each listener must have a different name, {key}: {raw.strip()}")
    if require_distinct_ports:
        ports = [listener.port for listener in listeners if listener.port != 0]
        for port in sorted({port for port in ports if ports.count(port) > 1}):
            raise ConfigError("Each listener must have a different port unless exactly one listener has an "
                              f"IPv4 address and the other IPv6 address, {key}: {raw.strip()}, port: {port}")
    return tuple(listeners)


def _parse_connection_overrides(raw: str) -> dict[str, int]:
    """``max.connections.per.ip.overrides``: ``Csv.parseCsvMap`` (``host:count`` entries, the last
    colon splits, a repeated host keeps its last count), counts as Java ints, hosts checked with
    ``Utils.validHostPattern`` (``KafkaConfig.validateValues``)."""
    key = MAX_CONNECTIONS_PER_IP_OVERRIDES
    overrides: dict[str, int] = {}
    for entry, host, count in _csv_map(key, raw, "HOST:MAX_CONNECTIONS"):
        try:
            overrides[host] = parse_java_int(count)
        except ValueError:
            raise ConfigError(f"Error parsing configuration property '{key}': the count {count!r} of "
                              f"{entry!r} is not a number of type INT") from None
    invalid = [host for host in overrides if not _VALID_HOST.fullmatch(host)]
    if invalid:
        raise ConfigError(f"{key} contains invalid addresses : {','.join(invalid)}")
    return overrides


# --------------------------------------------------------------------------- quorum voters and servers


@dataclass(frozen=True)
class StaticVoter:
    """One ``controller.quorum.voters`` entry: ``<id>@<host>:<port>``."""

    node_id: int
    host: str
    port: int


_VOTER_FORM: Final = "Each entry should be in the form `{id}@{host}:{port}`."


def _java_split_at(text: str) -> list[str]:
    """``String.split("@")``: trailing empty strings are dropped."""
    parts = text.split("@")
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def parse_voters(raw: str) -> tuple[StaticVoter, ...]:
    """``QuorumConfig.parseVoterConnections`` with routable addresses required, as at server start.

    A repeated id keeps its last address (Kafka fills a map).
    """
    voters: dict[int, StaticVoter] = {}
    for entry in parse_list(raw):
        parts = _java_split_at(entry)
        if len(parts) != 2:
            raise ConfigError(f"Invalid configuration value for {QUORUM_VOTERS}. {_VOTER_FORM}")
        id_text, address = parts
        try:
            voter_id = parse_java_int(id_text)
        except ValueError:
            raise ConfigError(f"Failed to parse voter ID as an integer from {id_text}") from None
        match = _HOST_PORT.match(address)
        if match is None or not match.group(1) or not _VALID_HOST.fullmatch(match.group(1)):
            raise ConfigError(f"Failed to parse host name from entry {entry} for the configuration "
                              f"{QUORUM_VOTERS}. {_VOTER_FORM}")
        host, port = match.group(1), int(match.group(2))
        if port > 65535:
            raise ConfigError(f"Failed to parse host port from entry {entry} for the configuration "
                              f"{QUORUM_VOTERS}. {_VOTER_FORM}")
        if host == NON_ROUTABLE_HOST:
            raise ConfigError(f"Host string ({host}) is not routeable")
        voters.pop(voter_id, None)
        voters[voter_id] = StaticVoter(voter_id, host, port)
    return tuple(voters.values())


_SERVER_FORM: Final = 'Each entry should be in the form "{host}:{port}"'


def parse_bootstrap_servers(raw: str) -> tuple[tuple[str, int], ...]:
    """``QuorumConfig.parseBootstrapServers``: ``host:port`` entries, as (host, port)."""
    servers: list[tuple[str, int]] = []
    for entry in parse_list(raw):
        match = _HOST_PORT.match(entry)
        if match is None or not match.group(1) or not _VALID_HOST.fullmatch(match.group(1)):
            raise ConfigError(f"Failed to parse host name from {entry} for the configuration "
                              f"{QUORUM_BOOTSTRAP_SERVERS}. {_SERVER_FORM}")
        port = int(match.group(2))
        if port > 65535:
            raise ConfigError(f"Failed to parse host port from {entry} for the configuration "
                              f"{QUORUM_BOOTSTRAP_SERVERS}. {_SERVER_FORM}")
        servers.append((match.group(1), port))
    return tuple(servers)


# --------------------------------------------------------------------------- the configuration


@dataclass(frozen=True)
class ServerConfig:
    """A parsed and validated server configuration.

    ``listeners`` are what the node binds; ``advertised_controller_listeners`` what it tells others
    (``advertised.listeners`` entry for each controller listener name, else the ``listeners`` one).
    """

    process_roles: tuple[str, ...]
    node_id: int
    listeners: tuple[Listener, ...]
    advertised_listeners: tuple[Listener, ...] | None
    """``advertised.listeners`` as given, None when unset (then ``listeners`` are advertised)."""
    controller_listener_names: tuple[str, ...]
    listener_security_protocol_map: Mapping[str, str]
    """Effective map, with Kafka's KRaft default for controller listeners."""
    quorum_voters: tuple[StaticVoter, ...]
    quorum_bootstrap_servers: tuple[tuple[str, int], ...]
    log_dirs: tuple[str, ...]
    metadata_log_dir: str
    election_timeout_ms: int = 1000
    fetch_timeout_ms: int = 2000
    election_backoff_max_ms: int = 1000
    request_timeout_ms: int = 2000
    retry_backoff_ms: int = 20
    append_linger_ms: int = 25
    auto_join_enable: bool = False
    metadata_max_idle_interval_ms: int = 500
    metadata_log_segment_bytes: int = 1024 * 1024 * 1024
    """Effective segment size: ``internal.metadata.log.segment.bytes`` when set (tests), else
    ``metadata.log.segment.bytes``."""
    metadata_log_segment_ms: int = 7 * 24 * 3600 * 1000
    metadata_snapshot_max_new_record_bytes: int = 20 * 1024 * 1024
    metadata_snapshot_max_interval_ms: int = 3600 * 1000
    metadata_max_retention_bytes: int = 100 * 1024 * 1024
    metadata_max_retention_ms: int = 7 * 24 * 3600 * 1000
    metadata_max_batch_size_bytes: int = 8 * 1024 * 1024
    metadata_max_fetch_size_bytes: int = 8 * 1024 * 1024
    socket_request_max_bytes: int = 100 * 1024 * 1024
    unstable_feature_versions_enable: bool = False
    broker_heartbeat_interval_ms: int = 2000
    broker_session_timeout_ms: int = 9000
    max_connections: int = INT32_MAX
    """``max.connections``: client connections the node accepts at once (unbounded by default)."""
    max_connections_per_ip: int = INT32_MAX
    """``max.connections.per.ip``: connections at once from one IP address."""
    max_connections_per_ip_overrides: Mapping[str, int] = field(default_factory=dict)
    """``max.connections.per.ip.overrides``: per host name or IP address, its own cap."""
    connections_max_idle_ms: int = 600_000
    """``connections.max.idle.ms``: a connection idle that long is closed (negative: never)."""
    originals: Mapping[str, str] = field(default_factory=dict)
    """Every key of the file, as loaded (unknown ones included)."""
    unknown_keys: tuple[str, ...] = ()
    path: Path | None = None

    @property
    def is_controller(self) -> bool:
        return "controller" in self.process_roles

    @property
    def is_broker(self) -> bool:
        return "broker" in self.process_roles

    @property
    def default_listener_name(self) -> str:
        """The first ``controller.listener.names`` entry: the one voters are reached through."""
        return self.controller_listener_names[0]

    @property
    def controller_listeners(self) -> tuple[Listener, ...]:
        """The ``listeners`` entries named in ``controller.listener.names`` (what a controller binds)."""
        return tuple(listener for listener in self.listeners
                     if listener.name in self.controller_listener_names)

    @property
    def advertised_controller_listeners(self) -> tuple[Listener, ...]:
        """Kafka's ``effectiveAdvertisedControllerListeners``: per controller listener name, in the
        order of ``controller.listener.names``, the advertised entry or else the listener itself."""
        advertised = self.advertised_listeners if self.advertised_listeners is not None else self.listeners
        result: list[Listener] = []
        for name in self.controller_listener_names:
            found = next((item for item in advertised if item.name == name), None)
            if found is None:
                found = next((item for item in self.controller_listeners if item.name == name), None)
            if found is not None:
                result.append(found)
        return tuple(result)

    @property
    def all_log_dirs(self) -> tuple[str, ...]:
        """The sorted, de-duplicated union of ``log.dirs`` and the metadata directory."""
        return tuple(sorted({*self.log_dirs, self.metadata_log_dir}))


def load_properties(path: str | os.PathLike[str]) -> dict[str, str]:
    """Read a properties file as ``Properties.load(InputStream)`` does (ISO-8859-1)."""
    try:
        return read_properties(path)
    except OSError as exc:
        raise ConfigError(f"Unable to read config file {os.fspath(path)}: {exc.strerror}") from None
    except ValueError as exc:
        raise ConfigError(f"Unable to parse config file {os.fspath(path)}: {exc}") from None


def load_config(path: str | os.PathLike[str]) -> ServerConfig:
    """Load and validate ``path`` (``kraft-server --config <path>``)."""
    return parse_config(load_properties(path), path=Path(path))


def parse_config(props: Mapping[str, str], *, path: Path | None = None) -> ServerConfig:
    """Validate loaded properties into a ``ServerConfig``; raises :class:`ConfigError`."""
    p = _Props(props)

    roles = parse_list(p.required(PROCESS_ROLES))
    if any(not role for role in roles):
        raise ConfigError(f"Configuration '{PROCESS_ROLES}' values must not be empty.")
    if not roles:
        raise ConfigError(f"Configuration '{PROCESS_ROLES}' must not be empty. Valid values include: "
                          "[broker, controller]")
    for role in roles:
        if role not in ("broker", "controller"):
            raise _invalid(PROCESS_ROLES, role, "String must be one of: broker, controller")
    if len(set(roles)) != len(roles):
        raise ConfigError(f"Configuration '{PROCESS_ROLES}' values must not be duplicated.")

    node_id = _parse_number(NODE_ID, p.required(NODE_ID), 32)
    if node_id < 0:
        raise _invalid(NODE_ID, node_id, "Value must be at least 0")

    controller_names = parse_list(p.required(CONTROLLER_LISTENER_NAMES))
    if any(not name for name in controller_names):
        raise ConfigError(f"Configuration '{CONTROLLER_LISTENER_NAMES}' values must not be empty.")
    if len(set(controller_names)) != len(controller_names):
        raise ConfigError(f"Configuration '{CONTROLLER_LISTENER_NAMES}' values must not be duplicated.")

    explicit_map = p.raw(LISTENER_SECURITY_PROTOCOL_MAP)
    protocols = _parse_security_protocol_map(explicit_map if explicit_map is not None
                                             else DEFAULT_SECURITY_PROTOCOL_MAP)
    listeners_raw = p.raw(LISTENERS)
    listeners_text = DEFAULT_LISTENERS if listeners_raw is None else listeners_raw
    if explicit_map is None:
        # KafkaConfig.effectiveListenerSecurityProtocolMap: with the default map in KRaft, controller
        # listener names map to PLAINTEXT unless SSL or SASL is in use anywhere.
        secure = {"SSL", "SASL_SSL", "SASL_PLAINTEXT"}
        listener_names = [entry.split("://", 1)[0].upper() for entry in parse_list(listeners_text)]
        if not any(name in secure for name in [*controller_names, *listener_names]):
            for name in controller_names:
                protocols.setdefault(name.upper(), "PLAINTEXT")
    listeners = _parse_listeners(LISTENERS, listeners_text, protocols, require_distinct_ports=True)
    advertised_raw = p.raw(ADVERTISED_LISTENERS)
    advertised = (None if advertised_raw is None else
                  _parse_listeners(ADVERTISED_LISTENERS, advertised_raw, protocols,
                                   require_distinct_ports=False))

    voters_raw = p.raw(QUORUM_VOTERS)
    voters = parse_voters(voters_raw) if voters_raw is not None else ()
    servers_raw = p.raw(QUORUM_BOOTSTRAP_SERVERS)
    servers = parse_bootstrap_servers(servers_raw) if servers_raw is not None else ()

    log_dirs_raw = p.raw(LOG_DIRS)
    log_dir_raw = p.raw(LOG_DIR)
    log_dirs = csv_list(log_dirs_raw if log_dirs_raw is not None else
                        (log_dir_raw if log_dir_raw is not None else DEFAULT_LOG_DIR))
    if not log_dirs:
        raise ConfigError("At least one log directory must be defined via log.dirs or log.dir.")
    metadata_dir = p.string(METADATA_LOG_DIR) or log_dirs[0]

    segment_bytes = p.integer(METADATA_LOG_SEGMENT_BYTES, 1024 * 1024 * 1024,
                              at_least=MIN_METADATA_LOG_SEGMENT_BYTES)
    internal_segment_bytes = p.optional_int(INTERNAL_METADATA_LOG_SEGMENT_BYTES)
    if internal_segment_bytes is not None and internal_segment_bytes < LOG_OVERHEAD:
        raise _invalid(INTERNAL_METADATA_LOG_SEGMENT_BYTES, internal_segment_bytes,
                       f"Value must be at least {LOG_OVERHEAD}")

    max_per_ip = p.integer(MAX_CONNECTIONS_PER_IP, INT32_MAX, at_least=0)
    overrides_raw = p.raw(MAX_CONNECTIONS_PER_IP_OVERRIDES)
    overrides = _parse_connection_overrides(overrides_raw) if overrides_raw is not None else {}
    if max_per_ip == 0 and not overrides:
        raise ConfigError(f"{MAX_CONNECTIONS_PER_IP} can be set to zero only if "
                          f"{MAX_CONNECTIONS_PER_IP_OVERRIDES} property is set.")

    config = ServerConfig(
        process_roles=tuple(roles),
        node_id=node_id,
        listeners=listeners,
        advertised_listeners=advertised,
        controller_listener_names=tuple(controller_names),
        listener_security_protocol_map=protocols,
        quorum_voters=voters,
        quorum_bootstrap_servers=servers,
        log_dirs=tuple(log_dirs),
        metadata_log_dir=metadata_dir,
        election_timeout_ms=p.integer(QUORUM_ELECTION_TIMEOUT_MS, 1000, at_least=0),
        fetch_timeout_ms=p.integer(QUORUM_FETCH_TIMEOUT_MS, 2000, at_least=0),
        election_backoff_max_ms=p.integer(QUORUM_ELECTION_BACKOFF_MAX_MS, 1000, at_least=0),
        request_timeout_ms=p.integer(QUORUM_REQUEST_TIMEOUT_MS, 2000, at_least=0),
        retry_backoff_ms=p.integer(QUORUM_RETRY_BACKOFF_MS, 20, at_least=0),
        append_linger_ms=p.integer(QUORUM_APPEND_LINGER_MS, 25, at_least=0),
        auto_join_enable=p.boolean(QUORUM_AUTO_JOIN_ENABLE, False),
        metadata_max_idle_interval_ms=p.integer(METADATA_MAX_IDLE_INTERVAL_MS, 500, at_least=0),
        metadata_log_segment_bytes=(segment_bytes if internal_segment_bytes is None
                                    else internal_segment_bytes),
        metadata_log_segment_ms=p.integer(METADATA_LOG_SEGMENT_MS, 7 * 24 * 3600 * 1000, bits=64),
        metadata_snapshot_max_new_record_bytes=p.integer(METADATA_SNAPSHOT_MAX_NEW_RECORD_BYTES,
                                                         20 * 1024 * 1024, at_least=1, bits=64),
        metadata_snapshot_max_interval_ms=p.integer(METADATA_SNAPSHOT_MAX_INTERVAL_MS, 3600 * 1000,
                                                    at_least=0, bits=64),
        metadata_max_retention_bytes=p.integer(METADATA_MAX_RETENTION_BYTES, 100 * 1024 * 1024, bits=64),
        metadata_max_retention_ms=p.integer(METADATA_MAX_RETENTION_MS, 7 * 24 * 3600 * 1000, bits=64),
        metadata_max_batch_size_bytes=p.integer(INTERNAL_METADATA_MAX_BATCH_SIZE, 8 * 1024 * 1024),
        metadata_max_fetch_size_bytes=p.integer(INTERNAL_METADATA_MAX_FETCH_SIZE, 8 * 1024 * 1024),
        socket_request_max_bytes=p.integer(SOCKET_REQUEST_MAX_BYTES, 100 * 1024 * 1024, at_least=1),
        unstable_feature_versions_enable=p.boolean(UNSTABLE_FEATURE_VERSIONS_ENABLE, False),
        broker_heartbeat_interval_ms=p.integer(BROKER_HEARTBEAT_INTERVAL_MS, 2000),
        broker_session_timeout_ms=p.integer(BROKER_SESSION_TIMEOUT_MS, 9000),
        max_connections=p.integer(MAX_CONNECTIONS, INT32_MAX, at_least=0),
        max_connections_per_ip=max_per_ip,
        max_connections_per_ip_overrides=overrides,
        connections_max_idle_ms=p.integer(CONNECTIONS_MAX_IDLE_MS, 600_000, bits=64),
        originals=dict(props),
        unknown_keys=tuple(sorted(set(props) - p.used)),
        path=path,
    )
    _validate(config)
    return config


def _validate(config: ServerConfig) -> None:
    """The KRaft checks of ``KafkaConfig.validateValues``, in Kafka's order."""
    voter_ids = [voter.node_id for voter in config.quorum_voters]
    voter_text = "Set(" + ", ".join(str(voter) for voter in voter_ids) + ")"
    roles = set(config.process_roles)
    names = config.controller_listener_names
    listener_names = {listener.name for listener in config.listeners}
    if not voter_ids and not config.quorum_bootstrap_servers:
        raise ConfigError(f"If using {PROCESS_ROLES}, either {QUORUM_BOOTSTRAP_SERVERS} must contain the "
                          f"set of bootstrap controllers or {QUORUM_VOTERS} must contain a parseable set of "
                          "controllers.")
    if roles == {"broker"}:
        if config.node_id in voter_ids:
            raise ConfigError(f"If {PROCESS_ROLES} contains just the 'broker' role, the node id "
                              f"{config.node_id} must not be included in the set of voters "
                              f"{QUORUM_VOTERS}={voter_text}")
        if config.controller_listeners:
            raise ConfigError(f"{CONTROLLER_LISTENER_NAMES} must not contain a value appearing in the "
                              f"'{LISTENERS}' configuration when running KRaft with just the broker role")
        for name in names:
            if name.upper() not in config.listener_security_protocol_map:
                raise ConfigError(
                    f"Controller listener with name {name.upper()} defined in {CONTROLLER_LISTENER_NAMES} "
                    f"not found in {LISTENER_SECURITY_PROTOCOL_MAP}  (an explicit security mapping for each "
                    f"controller listener is required if {LISTENER_SECURITY_PROTOCOL_MAP} is non-empty, or "
                    "if there are security protocols other than PLAINTEXT in use)")
        if len(names) > 1:
            log.warning("%s has multiple entries; only the first will be used since %s=broker: %s",
                        CONTROLLER_LISTENER_NAMES, PROCESS_ROLES, list(names))
    else:
        if roles == {"controller"} and len(config.advertised_controller_listeners) != len(config.listeners):
            raise ConfigError(f"The {LISTENERS} config must only contain KRaft controller listeners from "
                              f"{CONTROLLER_LISTENER_NAMES} when {PROCESS_ROLES}=controller")
        if voter_ids and config.node_id not in voter_ids:
            raise ConfigError(f"If {PROCESS_ROLES} contains the 'controller' role, the node id "
                              f"{config.node_id} must be included in the set of voters "
                              f"{QUORUM_VOTERS}={voter_text}")
        if not config.advertised_controller_listeners:
            raise ConfigError(f"{CONTROLLER_LISTENER_NAMES} must contain at least one value appearing in the "
                              f"'{LISTENERS}' configuration when running the KRaft controller role")
        if not all(name in listener_names for name in names):
            raise ConfigError(f"{CONTROLLER_LISTENER_NAMES} must only contain values appearing in the "
                              f"'{LISTENERS}' configuration when running the KRaft controller role")
    if roles != {"controller"}:
        broker_advertised = [listener for listener in (config.advertised_listeners or config.listeners)
                             if listener.name not in names]
        if not broker_advertised:
            raise ConfigError("There must be at least one broker advertised listener. Perhaps all listeners "
                              f"appear in {CONTROLLER_LISTENER_NAMES}?")
    advertised = [*config.advertised_controller_listeners,
                  *[listener for listener in (config.advertised_listeners or config.listeners)
                    if listener.name not in names]]
    if any(listener.host == NON_ROUTABLE_HOST for listener in advertised):
        raise ConfigError(f"{ADVERTISED_LISTENERS} cannot use the nonroutable meta-address 0.0.0.0. "
                          "Use a routable IP address.")
