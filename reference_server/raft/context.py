"""What the handlers beside the core may ask of it.

``RaftCore`` owns the epoch state, the outbound requests and the log; the voter-change and snapshot
handlers (``add_voter``, ``remove_voter``, ``update_voter``, ``follower_voter``, ``fetch_snapshot``)
work through this narrow, typed view of it instead of its private attributes, as Kafka's
``AddVoterHandler`` and friends are handed the leader state, a request sender and the partition state.
Immutable inputs (``NodeIdentity``, ``RaftConfig``, the log, the voter-set history) are given to each
handler when it is built.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.records import RecordBatch, SnapshotId

from .api import Address, Endpoint, InboundRequest, VoterSet
from .leader import LeaderState
from .state import FollowerState


class RaftContext(Protocol):
    """The core as its handlers see it (``core.RaftCore`` provides one)."""

    @property
    def epoch(self) -> int:
        """The current epoch."""
        ...

    @property
    def leader_id(self) -> int:
        """The known leader of the epoch, -1 if none."""
        ...

    @property
    def voters(self) -> VoterSet:
        """The latest voter set, committed or not."""
        ...

    @property
    def is_voter(self) -> bool:
        ...

    @property
    def role(self) -> str:
        """``leader``, ``follower``, ... (``state.role_name``)."""
        ...

    @property
    def shutting_down(self) -> bool:
        """``resign`` was called: a leader in this state answers BROKER_NOT_AVAILABLE."""
        ...

    @property
    def high_watermark(self) -> int:
        """The highest offset known to be committed here (-1 while unknown)."""
        ...

    @property
    def default_listener(self) -> str:
        """The name of this node's first controller listener (Kafka's default listener)."""
        ...

    def leader_state(self) -> LeaderState | None:
        """The leader's bookkeeping, None when this replica does not lead its epoch."""
        ...

    def follower_state(self) -> FollowerState | None:
        """The follower's state, None when this replica does not follow a leader."""
        ...

    def valid_cluster_id(self, cluster_id: str | None) -> bool:
        """An unset cluster id, or ours."""
        ...

    def leader_endpoint_for(self, listener: str) -> Endpoint | None:
        """The leader's endpoint on the listener a request came in on."""
        ...

    def is_ready(self, destination: Address, now_ms: int) -> bool:
        """Nothing in flight to ``destination`` and no backoff: a request may go now."""
        ...

    def send(self, destination: Address, api_key: int, body: Struct, now_ms: int) -> int:
        """Queue a request; its answer reaches the handler the core routes that API key to.
        Returns the request id."""
        ...

    def reply(self, request: InboundRequest, body: Struct) -> None:
        """Queue the answer to ``request``."""
        ...

    def append_control(self, records: Sequence[Struct], now_ms: int) -> RecordBatch:
        """Leader only: append one control batch of the current epoch at the log end; its
        KRaftVersionRecord and VotersRecord apply at once."""
        ...

    def handle_common_response(self, error: int, leader_id: int | None, epoch: int,
                               endpoints: tuple[Endpoint, ...], now_ms: int) -> bool | None:
        """Kafka's ``maybeHandleCommonResponse``: True/False when the answer was handled (success /
        back off), None when the API-specific handler must look at it."""
        ...

    def snapshot_installed(self, snapshot_id: SnapshotId) -> None:
        """A fetched snapshot replaced the log: reload the voter-set history, reload the image from
        it over the next polls and move the high watermark to its end."""
        ...
