"""Handlers of the APIs a controller answers outside the consensus core, one module per API.

Each module opens with the versions it serves and what each version added. A handler is a plain
function of the decoded request, its version and a ``ServerView`` (a frozen picture of what the node
knows when the request is handled); it returns the response body. The runtime decodes, routes,
encodes and writes; handlers do no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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


__all__ = ["ServerView"]
