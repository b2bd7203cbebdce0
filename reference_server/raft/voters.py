"""Voter sets and the history of KRaftVersionRecord / VotersRecord control records (KIP-853).

With kraft.version 1 the voter set is the latest VotersRecord in the log or the latest snapshot,
committed or not: a change takes effect as soon as it is appended, and is undone when the follower
truncates the record away. ``LogHistory`` keeps values keyed by the offset of the record that set
them (Kafka's ``TreeMapLogHistory``), ``VoterSetHistory`` holds the two histories plus the static
``controller.quorum.voters`` set used with kraft.version 0.

Offsets: a record read from the log is keyed by its own offset; a record read from a snapshot with
end offset E is keyed by E - 1 (its last contained offset), so the bootstrap snapshot (0, 0) gives -1.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from typing import Generic, TypeVar

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import ZERO_UUID
from kafka_admin_kraft.records import ControlRecord, RecordBatch, decode_control_batch

from .api import Endpoint, ReplicaKey, VoterInfo, VoterSet

T = TypeVar("T")

EMPTY_VOTER_SET = VoterSet({})


def voter_set_from_record(record: messages.VotersRecord) -> VoterSet:
    """The voter set a VotersRecord describes."""
    voters: dict[int, VoterInfo] = {}
    for voter in record.voters:
        endpoints = tuple(Endpoint(endpoint.name, endpoint.host, endpoint.port)
                          for endpoint in voter.endpoints)
        feature = voter.k_raft_version_feature
        voters[voter.voter_id] = VoterInfo(ReplicaKey(voter.voter_id, voter.voter_directory_id), endpoints,
                                           feature.min_supported_version, feature.max_supported_version)
    return VoterSet(voters)


def voters_record(voters: VoterSet) -> messages.VotersRecord:
    """The VotersRecord (version 0) of a voter set, voters by ascending id."""
    entries = []
    for voter_id in sorted(voters.voters):
        info = voters.voters[voter_id]
        entries.append(messages.VotersRecord.Voter(
            voter_id=voter_id,
            voter_directory_id=info.key.directory_id,
            endpoints=[messages.VotersRecord.Endpoint(name=e.name, host=e.host, port=e.port)
                       for e in info.endpoints],
            k_raft_version_feature=messages.VotersRecord.KRaftVersionFeature(
                min_supported_version=info.min_kraft_version, max_supported_version=info.max_kraft_version)))
    return messages.VotersRecord(version=0, voters=entries)


def endpoint_for(endpoints: Iterable[Endpoint], listener: str) -> Endpoint | None:
    """The endpoint of ``listener``; with an empty listener name, the first (default) one."""
    endpoints = tuple(endpoints)
    if not listener:
        return endpoints[0] if endpoints else None
    for endpoint in endpoints:
        if endpoint.name == listener:
            return endpoint
    return None


def with_local_endpoints(voters: VoterSet, local: ReplicaKey, listeners: tuple[Endpoint, ...]) -> VoterSet:
    """The voter set with the local voter's endpoints replaced by ``listeners`` (matching the voter by
    id only, as Kafka's ``updateVoterIgnoringDirectoryId``); unchanged when the local node is no voter."""
    info = voters.voters.get(local.id)
    if info is None or not listeners:
        return voters
    directory_id = local.directory_id if info.key.directory_id == ZERO_UUID else info.key.directory_id
    updated = VoterInfo(ReplicaKey(local.id, directory_id), listeners, info.min_kraft_version,
                        info.max_kraft_version)
    if updated == info:
        return voters
    return VoterSet({**voters.voters, local.id: updated})


class LogHistory(Generic[T]):
    """Values keyed by the log offset that set them, in increasing offset order."""

    def __init__(self) -> None:
        self._offsets: list[int] = []
        self._values: list[T] = []

    def __len__(self) -> int:
        return len(self._offsets)

    def add_at(self, offset: int, value: T) -> None:
        """Record ``value`` at ``offset``; offsets must increase."""
        if self._offsets and offset <= self._offsets[-1]:
            raise ValueError(f"history offset {offset} is not above the last one ({self._offsets[-1]})")
        self._offsets.append(offset)
        self._values.append(value)

    def last_value(self) -> T | None:
        return self._values[-1] if self._values else None

    def last_offset(self) -> int | None:
        return self._offsets[-1] if self._offsets else None

    def value_at_or_before(self, offset: int) -> T | None:
        """The value in force at ``offset``: the newest entry at an offset <= ``offset``."""
        index = bisect.bisect_right(self._offsets, offset)
        return self._values[index - 1] if index else None

    def entries(self) -> list[tuple[int, T]]:
        return list(zip(self._offsets, self._values, strict=True))

    def truncate_new_entries(self, end_offset: int) -> None:
        """Forget every entry at or above ``end_offset`` (the log was truncated there)."""
        index = bisect.bisect_left(self._offsets, end_offset)
        del self._offsets[index:]
        del self._values[index:]

    def truncate_old_entries(self, start_offset: int) -> None:
        """Forget entries below ``start_offset`` except the newest of them, which is still in force."""
        index = bisect.bisect_left(self._offsets, start_offset)
        if index > 1:
            del self._offsets[:index - 1]
            del self._values[:index - 1]

    def clear(self) -> None:
        self._offsets.clear()
        self._values.clear()


class VoterSetHistory:
    """The voter set and kraft.version as of any offset of the local log.

    Steps when reading records (``apply_batch``):
      1. Only control batches matter; other batches are skipped without decoding.
      2. A KRaftVersionRecord at offset o records its kraft.version at o.
      3. A VotersRecord at offset o records its voter set at o.
    Truncating the log to E (``truncate_new_entries(E)``) drops the entries at >= E, which restores the
    voter set of the newest remaining VotersRecord, or the static voters when none remains.
    """

    def __init__(self, static_voters: VoterSet | None = None) -> None:
        self.static_voters = static_voters if static_voters is not None else EMPTY_VOTER_SET
        self.voters: LogHistory[VoterSet] = LogHistory()
        self.kraft_versions: LogHistory[int] = LogHistory()

    def last_voter_set(self) -> VoterSet:
        """The current voter set: the latest VotersRecord, committed or not, else the static voters."""
        latest = self.voters.last_value()
        return latest if latest is not None else self.static_voters

    def voter_set_at(self, offset: int) -> VoterSet:
        """The voter set in force at ``offset`` (inclusive)."""
        value = self.voters.value_at_or_before(offset)
        return value if value is not None else self.static_voters

    def kraft_version(self) -> int:
        latest = self.kraft_versions.last_value()
        return latest if latest is not None else 0

    def kraft_version_at(self, offset: int) -> int:
        value = self.kraft_versions.value_at_or_before(offset)
        return value if value is not None else 0

    def last_voters_offset(self) -> int | None:
        """Offset of the latest VotersRecord (-1 for one from the bootstrap snapshot), None if none."""
        return self.voters.last_offset()

    def apply_control_record(self, offset: int, record: ControlRecord) -> None:
        value = record.value
        if isinstance(value, messages.KRaftVersionRecord):
            self.kraft_versions.add_at(offset, value.k_raft_version)
        elif isinstance(value, messages.VotersRecord):
            self.voters.add_at(offset, voter_set_from_record(value))

    def apply_batch(self, batch: RecordBatch, offset_override: int | None = None,
                    min_offset: int = -1) -> None:
        """Apply the control records of ``batch`` (records keyed by their offset, or all by
        ``offset_override`` when the batch comes from a snapshot); records below ``min_offset`` are
        skipped."""
        if not batch.is_control:
            return
        for record, control in zip(batch.records, decode_control_batch(batch), strict=True):
            if offset_override is None and record.offset < min_offset:
                continue
            offset = record.offset if offset_override is None else offset_override
            if isinstance(control.value, messages.KRaftVersionRecord | messages.VotersRecord):
                if offset_override is not None:
                    # Several records of one snapshot share an offset: the last one wins.
                    history = (self.kraft_versions if isinstance(control.value, messages.KRaftVersionRecord)
                               else self.voters)
                    history.truncate_new_entries(offset)
                self.apply_control_record(offset, control)

    def truncate_new_entries(self, end_offset: int) -> None:
        self.voters.truncate_new_entries(end_offset)
        self.kraft_versions.truncate_new_entries(end_offset)

    def truncate_old_entries(self, start_offset: int) -> None:
        self.voters.truncate_old_entries(start_offset)
        self.kraft_versions.truncate_old_entries(start_offset)

    def clear(self) -> None:
        self.voters.clear()
        self.kraft_versions.clear()
