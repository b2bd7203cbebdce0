"""How the audit decides which records were committed, and which were appended and then lost.

Kafka persists no high watermark: ``quorum-state`` holds only the election state. The audit
therefore reconstructs commitment from the replicas' logs, using two properties of KRaft's log
replication (Raft): a batch is identified by its base offset, leader epoch and CRC, because
followers copy the leader's batches byte for byte and two logs holding the same (offset, epoch)
agree on everything before it; and the leader of the highest epoch holds every committed record
(a candidate whose log lacks a committed record cannot win a vote from the majority holding it).

For each cluster:

1. **Reference log.** The highest epoch evidenced anywhere (batch epochs, LeaderChange records,
   ``quorum-state``) and its leader (from its LeaderChange record or ``quorum-state``). The
   reference is that leader's log directory; when several directories carry its node id (a copy
   taken before a restart, say), the one with the highest last epoch and then the longest log. When
   the leader's directory is not among the inputs, the most up-to-date log (highest last epoch, then
   longest) stands in, as it is what any future leader must match.
2. **Voter set at an offset.** The last VotersRecord at or below it in the reference (a snapshot's
   VotersRecord counts at the snapshot's last offset; the bootstrap snapshot at -1); with no
   VotersRecord at all (kraft.version 0), the voters named by the last LeaderChange record.
3. **Committed end offset** (the high watermark as evidenced). The largest of: the end offset of
   every snapshot that agrees with the reference (the reference's batch holding the snapshot's last
   offset has the snapshot's epoch, or it is the reference's own snapshot) - Kafka snapshots only
   committed records; and the end of the last reference batch that a majority of the voter set in
   effect at that offset holds identically (voters counted by node id, each once however many
   directories carry it). Everything before that end is committed in the reference.
4. **Status of a batch** in any replica, by its (base offset, epoch, CRC):

   * ``committed``: identical to the reference's batch and below the committed end;
   * ``uncommitted``: identical to the reference's batch at or beyond the committed end (appended,
     not yet known to be committed);
   * ``truncated``: the reference holds a different batch at that offset, or the batch lies beyond
     the end of the reference log while the reference is the log of the highest epoch's leader:
     the record was appended but never committed, and every replica drops it when it follows the
     leader - the uncommitted-then-truncated case. When it lies below the committed end, the replica
     *diverges below the committed offset*;
   * below the start of the reference log (covered only by the reference's snapshot): ``committed``
     when a majority of voters holds it identically, else ``unverified``.

   Records in snapshots take the status of their snapshot (``committed`` when it agrees with the
   reference, else ``truncated``); records of ``bootstrap.checkpoint`` are ``bootstrap``.

Commitment evidence is only as complete as the inputs: a record committed by a majority whose
logs are not among the inputs shows as ``uncommitted``, never the other way round.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

COMMITTED: Final = "committed"
UNCOMMITTED: Final = "uncommitted"
TRUNCATED: Final = "truncated"
UNVERIFIED: Final = "unverified"
BOOTSTRAP_STATUS: Final = "bootstrap"
FAR_OFFSET: Final = 1 << 62


@dataclass(frozen=True, slots=True)
class ReplicaLog:
    """The segment part of one log directory, summarised."""

    cluster: str
    log_dir: str
    node_id: int | None
    start: int
    end: int
    last_epoch: int


@dataclass(frozen=True, slots=True)
class Reference:
    cluster: str
    log_dir: str | None
    node_id: int | None
    highest_epoch: int
    leader_id: int | None
    is_leader_log: bool
    """The reference is the log of the highest epoch's leader (not a stand-in)."""
    start: int
    end: int
    last_epoch: int


def choose_reference(
    cluster: str, replicas: Sequence[ReplicaLog], epochs: Iterable[tuple[int, int | None]]
) -> Reference:
    """Step 1: ``epochs`` holds (epoch, leader id or None) from LeaderChange records and quorum-state."""
    leaders: dict[int, int] = {}
    highest = max((r.last_epoch for r in replicas), default=-1)
    for epoch, leader in epochs:
        highest = max(highest, epoch)
        if leader is not None and leader >= 0:
            leaders.setdefault(epoch, leader)
    leader_id = leaders.get(highest)
    candidates = [r for r in replicas if leader_id is not None and r.node_id == leader_id]
    is_leader_log = bool(candidates)
    if not candidates:
        candidates = list(replicas)
    if not candidates:
        return Reference(cluster, None, None, highest, leader_id, False, 0, 0, -1)
    best = max(candidates, key=lambda r: (r.last_epoch, r.end, r.log_dir))
    return Reference(
        cluster,
        best.log_dir,
        best.node_id,
        highest,
        leader_id,
        is_leader_log,
        best.start,
        best.end,
        best.last_epoch,
    )


@dataclass(frozen=True, slots=True)
class VoterInterval:
    """The voter set in effect for offsets ``[start, end)``."""

    start: int
    end: int
    voter_ids: tuple[int, ...]


def voter_intervals(points: Iterable[tuple[int, Sequence[int]]]) -> list[VoterInterval]:
    """Step 2: (effective offset, voter ids) of the reference's voter records -> intervals."""
    ordered = sorted({offset: tuple(ids) for offset, ids in points}.items())
    intervals: list[VoterInterval] = []
    for index, (offset, ids) in enumerate(ordered):
        end = ordered[index + 1][0] if index + 1 < len(ordered) else FAR_OFFSET
        intervals.append(VoterInterval(-1 if index == 0 else offset, end, ids))
    return intervals
