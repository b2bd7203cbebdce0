"""What the consensus core raises to its driver (``core`` re-exports these)."""

from __future__ import annotations


class NotLeaderError(Exception):
    """``append`` or ``upgrade_kraft_version`` on a replica that is not the leader (or is resigning)."""


class RaftInvariantError(RuntimeError):
    """The local state contradicts a Raft invariant (a bug or corrupted files); Kafka throws too."""


class KRaftUpgradeError(Exception):
    """``upgrade_kraft_version`` refused: some voter has not reported support for kraft.version 1."""
