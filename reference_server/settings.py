"""The node's configuration (:class:`~kafka_admin_kraft.config.server.ServerConfig`) in the consensus
core's terms: its identity and endpoints, the raft timings, the static voters and bootstrap servers,
as a node of one Kafka line (``kafka_line``) reads them.

The line decides what a key means: ``controller.quorum.auto.join.enable`` exists from Kafka 4.2 on
(an older line warns about it as unknown and ignores it), and elections start with a pre-vote round
from Kafka 4.0 on (``RaftConfig.pre_vote``). ``unstable.api.versions.enable`` (Kafka's switch for
versions not yet released) is read here, since the SDK's configuration does not model it.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Collection
from typing import Final

from kafka_admin_kraft.config.server import (
    MAX_CONNECTIONS_PER_IP_OVERRIDES,
    QUORUM_AUTO_JOIN_ENABLE,
    ConfigError,
    ServerConfig,
)
from kafka_admin_kraft.protocol.primitives import Uuid

from .connections import ConnectionLimits
from .kafka_line import NEWEST, ServerLine
from .raft.api import Address, Endpoint, NodeIdentity, RaftConfig, ReplicaKey, VoterInfo, VoterSet

log = logging.getLogger("kafka.server.KafkaConfig")

UNSTABLE_API_VERSIONS_ENABLE: Final = "unstable.api.versions.enable"


def warn_unknown_keys(config: ServerConfig, line: ServerLine, known: Collection[str] = ()) -> None:
    """Kafka's server ignores configurations it does not know, with one warning each; a line older
    than 4.2 does not know ``controller.quorum.auto.join.enable``. ``known``: the keys read beyond
    ``ServerConfig`` (TLS and SASL, the authorizer's)."""
    unknown = [key for key in config.unknown_keys if key != UNSTABLE_API_VERSIONS_ENABLE and key not in known]
    if not line.auto_join and QUORUM_AUTO_JOIN_ENABLE in config.originals:
        unknown = sorted([*unknown, QUORUM_AUTO_JOIN_ENABLE])
    for key in unknown:
        log.warning("The configuration '%s' was supplied but isn't a known config.", key)


def unstable_api_versions_enable(config: ServerConfig) -> bool:
    """``unstable.api.versions.enable`` (default false); ConfigError naming the key for a value that is
    neither true nor false."""
    raw = config.originals.get(UNSTABLE_API_VERSIONS_ENABLE)
    if raw is None:
        return False
    text = raw.strip().lower()
    if text not in ("true", "false"):
        raise ConfigError(f"Invalid value {raw} for configuration {UNSTABLE_API_VERSIONS_ENABLE}: Expected "
                          "value to be either true or false")
    return text == "true"


def controller_endpoints(config: ServerConfig) -> tuple[Endpoint, ...]:
    """This node's advertised controller endpoints, default listener first; a wildcard (empty) host
    becomes the local canonical host name, as Kafka resolves it."""
    return tuple(Endpoint(listener.name, listener.host or socket.getfqdn(), listener.port)
                 for listener in config.advertised_controller_listeners)


def raft_config(config: ServerConfig, line: ServerLine = NEWEST) -> RaftConfig:
    return RaftConfig(
        election_timeout_ms=config.election_timeout_ms,
        fetch_timeout_ms=config.fetch_timeout_ms,
        election_backoff_max_ms=config.election_backoff_max_ms,
        request_timeout_ms=config.request_timeout_ms,
        retry_backoff_ms=config.retry_backoff_ms,
        append_linger_ms=config.append_linger_ms,
        max_fetch_bytes=config.metadata_max_fetch_size_bytes,
        snapshot_interval_bytes=config.metadata_snapshot_max_new_record_bytes,
        auto_join_enable=config.auto_join_enable and line.auto_join,
        pre_vote=line.pre_vote,
        update_voter_at_kraft_version_0=line.upgrades_kraft_version,
    )


def node_identity(config: ServerConfig, cluster_id: str, directory_id: Uuid) -> NodeIdentity:
    """Who this node is; the cluster and directory ids come from ``meta.properties``."""
    return NodeIdentity(node_id=config.node_id, directory_id=directory_id, cluster_id=cluster_id,
                        listeners=controller_endpoints(config), is_controller=config.is_controller)


def static_voter_set(config: ServerConfig) -> VoterSet | None:
    """``controller.quorum.voters`` as a kraft.version 0 voter set (no directory ids, one endpoint
    under the default listener name, kraft.version 0..0), None when the option is empty."""
    if not config.quorum_voters:
        return None
    name = config.default_listener_name
    return VoterSet({voter.node_id: VoterInfo(ReplicaKey(voter.node_id),
                                              (Endpoint(name, voter.host, voter.port),), 0, 0)
                     for voter in config.quorum_voters})


def bootstrap_servers(config: ServerConfig) -> tuple[Address, ...]:
    """``controller.quorum.bootstrap.servers``: where a replica that knows no voter asks."""
    return tuple(Address(host, port) for host, port in config.quorum_bootstrap_servers)


def connection_limits(config: ServerConfig) -> ConnectionLimits:
    """The connection caps and idle timeout; each host of ``max.connections.per.ip.overrides`` is
    resolved once, as Kafka's ``ConnectionQuotas`` does, and every address it has gets its cap."""
    overrides: dict[str, int] = {}
    for host, count in config.max_connections_per_ip_overrides.items():
        try:
            infos = socket.getaddrinfo(host or None, None, proto=socket.IPPROTO_TCP)
        except (OSError, UnicodeError) as exc:
            raise ConfigError(f"{MAX_CONNECTIONS_PER_IP_OVERRIDES}: unable to resolve {host!r}: {exc}"
                              ) from None
        for info in infos:
            overrides[str(info[4][0])] = count
    return ConnectionLimits(max_connections=config.max_connections,
                            max_connections_per_ip=config.max_connections_per_ip,
                            per_ip_overrides=overrides, max_idle_ms=config.connections_max_idle_ms)
