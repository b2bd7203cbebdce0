"""What a handler may know about the node answering a request: frozen pictures taken per request."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..kafka_line import NEWEST, ServerLine
from ..raft.api import VoterSet


@dataclass(frozen=True)
class ServerView:
    """What a handler may know about the node answering a request."""

    cluster_id: str
    node_id: int
    leader_id: int
    """The quorum leader's id, -1 when unknown."""
    voters: VoterSet
    listener: str
    """Name of the listener the request arrived on (``CONTROLLER``)."""
    finalized_features: dict[str, int] = field(default_factory=dict)
    """Finalized features whose level is not 0 (metadata.version always present once known)."""
    finalized_features_epoch: int = -1
    metadata_version: int | None = None
    unstable_feature_versions: bool = False
    """Whether the node supports the feature levels still in testing (Kafka's
    ``unstable.feature.versions.enable``)."""
    line: ServerLine = NEWEST
    """The Kafka line the node runs as: its API versions, feature tables and rules."""
    unstable_api_versions: bool = False
    """Kafka's ``unstable.api.versions.enable``: the project's unreleased versions are served too."""


@dataclass(frozen=True)
class BrokerNode:
    """A live broker's endpoint on one listener."""

    node_id: int
    host: str
    port: int
    rack: str | None = None
    fenced: bool = False


@dataclass(frozen=True)
class BrokerView:
    """What the broker's metadata cache says, seen from one broker listener."""

    cluster_id: str
    node_id: int
    brokers: tuple[BrokerNode, ...]
    """Every registered broker with an endpoint on the listener, fenced ones included."""

    @property
    def live(self) -> list[BrokerNode]:
        return [broker for broker in self.brokers if not broker.fenced]

    @property
    def controller_id(self) -> int:
        """KRaft brokers name a live broker as the controller: this one when it is listed."""
        ids = [broker.node_id for broker in self.live]
        return self.node_id if self.node_id in ids else (ids[0] if ids else -1)


__all__ = ["BrokerNode", "BrokerView", "ServerView"]
