"""What a node of one Kafka line is, on the server side: ``kraft-server --release-version LINE``.

A node runs as a controller (and broker) of one Kafka line, 3.9 to 4.4, and this module is the one
place that says what that means:

- **API versions.** For every API the reference server serves, the versions a Kafka node of the line
  advertises in ApiVersions and accepts (Kafka's ``ApiKeys``/``ApiVersionManager``: the request
  schema's ``validVersions`` at that release), on controller listeners and, for the APIs a broker
  serves, on broker listeners alike. A node serves the part of that range the project's codec
  speaks (``ServerLine.versions``); ``ServerLine.unserved`` names the versions of the line the codec
  lacks, so that gap is stated rather than hidden. The table below cites where each change comes
  from.
- **Feature levels**: the line's ``kafka_admin_kraft.features.KafkaLine`` (supported ranges, default
  levels, the metadata.version levels accepted in UpdateFeatures and in bootstrap files, the
  UpdateFeatures rules that changed since 3.9).
- **Behaviour**: pre-vote (KIP-996, from 4.0), the kraft.version upgrade of a static quorum
  (KAFKA-16538, from 4.1), controller auto-join (``controller.quorum.auto.join.enable``, KIP-853's
  KAFKA-19078, from 4.2: an older line does not know the key) and AddRaftVoter v1's
  AckWhenCommitted (KIP-1186, from 4.2), and the RegisterBrokerRecord version a controller writes
  (v4 from 4.3 at 4.3-IV0, KIP-1066). UnregisterBroker is served by every line, UnregisterController
  (KIP-1312) from 4.4 on only: an older node neither advertises nor accepts it.

DescribeQuorum v3 (``CommittedVoters``) is the project's own extension from a draft proposal
(KAFKA-17243, PRs #17871 and #20712, never merged): no Kafka line serves it, so a node advertises and
accepts it only with ``unstable.api.versions.enable=true``, Kafka's switch for versions that are
not released (``ApiKeys.latestVersion(enableUnstableLastVersion)``).

Pure data: nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from kafka_admin_kraft import features
from kafka_admin_kraft.features import KafkaLine
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.api_keys import ApiKey

LINE_NAMES: Final = features.LINE_NAMES
DEFAULT_LINE: Final = features.NEWEST.name
"""``--release-version`` when none is given: the newest line."""

_Range = tuple[int, int]

# Kafka's versions per API, as (first line, range) changes, oldest first. Sources: the request schemas
# of Kafka 3.9.0, 4.0.0, 4.1.0 and of the 4.2 branch (clients/src/main/resources/common/message/
# *Request.json), and for 4.3 and 4.4 the pull requests named (no other change to these APIs is known).
_KAFKA_VERSIONS: Final[Mapping[int, tuple[tuple[str, _Range], ...]]] = {
    # v5 (KIP-1242: the cluster and node the client expects) in 4.4: PR #22187, stable by PR #22512.
    ApiKey.API_VERSIONS: (("3.9", (0, 4)), ("4.4", (0, 5))),
    # 4.0 removed v0-3 (KIP-896); v18 (KIP-1166, the high watermark) in 4.1.
    ApiKey.FETCH: (("3.9", (0, 17)), ("4.0", (4, 17)), ("4.1", (4, 18))),
    # v13 (KIP-1102, a top-level error code) in 4.0; broker listeners only.
    ApiKey.METADATA: (("3.9", (0, 12)), ("4.0", (0, 13))),
    ApiKey.SASL_HANDSHAKE: (("3.9", (0, 1)),),
    ApiKey.SASL_AUTHENTICATE: (("3.9", (0, 2)),),
    # v2 (KIP-996, PreVote) in 4.0: PR #17807.
    ApiKey.VOTE: (("3.9", (0, 1)), ("4.0", (0, 2))),
    ApiKey.BEGIN_QUORUM_EPOCH: (("3.9", (0, 1)),),
    ApiKey.END_QUORUM_EPOCH: (("3.9", (0, 1)),),
    # v2 (KIP-853) since 3.9; v3 was never merged (KAFKA-17243).
    ApiKey.DESCRIBE_QUORUM: (("3.9", (0, 2)),),
    # v2 (no per-feature results) in 4.0.
    ApiKey.UPDATE_FEATURES: (("3.9", (0, 1)), ("4.0", (0, 2))),
    ApiKey.ENVELOPE: (("3.9", (0, 0)),),
    ApiKey.FETCH_SNAPSHOT: (("3.9", (0, 1)),),
    # v2 (KIP-1073, fenced brokers) in 4.0.
    ApiKey.DESCRIBE_CLUSTER: (("3.9", (0, 1)), ("4.0", (0, 2))),
    ApiKey.BROKER_REGISTRATION: (("3.9", (0, 4)),),
    # v2 (KIP-1066, CordonedLogDirs) in 4.3: PR #21273.
    ApiKey.BROKER_HEARTBEAT: (("3.9", (0, 1)), ("4.3", (0, 2))),
    ApiKey.CONTROLLER_REGISTRATION: (("3.9", (0, 0)),),
    # v1 (KIP-1186, AckWhenCommitted) in 4.2: PR #19982.
    ApiKey.ADD_RAFT_VOTER: (("3.9", (0, 0)), ("4.2", (0, 1))),
    ApiKey.REMOVE_RAFT_VOTER: (("3.9", (0, 0)),),
    ApiKey.UPDATE_RAFT_VOTER: (("3.9", (0, 0)),),
    # v0 on broker and controller listeners in every line (UnregisterBrokerRequest.json); the controller
    # answers it itself (ControllerApis.handleUnregisterBroker), a broker forwards it.
    ApiKey.UNREGISTER_BROKER: (("3.9", (0, 0)),),
    # New in 4.4 (KIP-1312, KAFKA-20395, PR #22191): UnregisterControllerRequest.json, key 94, v0.
    ApiKey.UNREGISTER_CONTROLLER: (("4.4", (0, 0)),),
    # v3 (the USER resource type) since 3.3; 4.0 removed v0 (KIP-896). Broker and controller listeners;
    # a broker answers DescribeAcls itself and forwards the other two.
    ApiKey.DESCRIBE_ACLS: (("3.9", (0, 3)), ("4.0", (1, 3))),
    ApiKey.CREATE_ACLS: (("3.9", (0, 3)), ("4.0", (1, 3))),
    ApiKey.DELETE_ACLS: (("3.9", (0, 3)), ("4.0", (1, 3))),
}

UNRELEASED_VERSIONS: Final[Mapping[int, int]] = {ApiKey.DESCRIBE_QUORUM: 3}
"""API key -> the highest version the project speaks that no Kafka line serves: advertised and accepted
only with ``unstable.api.versions.enable=true``."""

REGISTER_BROKER_RECORD_VERSION: Final = 3
"""The RegisterBrokerRecord version from metadata.version 3.7-IV2 (JBOD) on."""
CORDONED_LOG_DIRS_VERSION: Final = 30
"""4.3-IV0: from Kafka 4.3 on, RegisterBrokerRecord v4 (CordonedLogDirs, KIP-1066); a placeholder in 4.2."""


def _index(name: str) -> int:
    return LINE_NAMES.index(name)


class ServerLine:
    """One Kafka line as a node of it serves: its API versions, feature tables and behaviour."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.features: KafkaLine = features.LINES[name]
        self.pre_vote = self._from("4.0")
        """Elections start with a pre-vote round (KIP-996); 3.9 holds standard elections only."""
        self.upgrades_kraft_version = self.features.update_upgrades_kraft_version
        """UpdateFeatures kraft.version 0 -> 1 turns a static quorum dynamic (KAFKA-16538, 4.1), once every
        voter has reported its kraft.version range with UpdateRaftVoter, which from 4.1 goes at
        kraft.version 0 too; 3.9 and 4.0 only write a FeatureLevelRecord for it, which changes nothing
        (KAFKA-18979), and neither send nor take UpdateRaftVoter at kraft.version 0."""
        self.auto_join = self._from("4.2")
        """``controller.quorum.auto.join.enable`` exists (KAFKA-19078, 4.2); older lines ignore it as an
        unknown key."""
        self.ack_when_committed = self._from("4.2")
        """AddRaftVoter v1 carries AckWhenCommitted (KIP-1186, 4.2)."""

    def __repr__(self) -> str:
        return f"ServerLine({self.name!r})"

    def _from(self, first: str) -> bool:
        return _index(self.name) >= _index(first)

    def kafka_versions(self, key: int) -> _Range | None:
        """The versions of ``key`` a Kafka node of this line advertises and accepts, None for an API
        the reference server does not serve or the line does not have (UnregisterController before
        4.4)."""
        known = [versions for since, versions in _KAFKA_VERSIONS.get(key, ()) if self._from(since)]
        return known[-1] if known else None

    def versions(self, key: int, *, unstable_api_versions: bool = False) -> _Range | None:
        """The versions of ``key`` this node advertises and accepts: Kafka's, as far as the codec speaks
        them, and the project's unreleased ones with ``unstable.api.versions.enable``. None when there
        are none."""
        kafka = self.kafka_versions(key)
        if kafka is None:
            return None
        low, high = messages.request_class(key).VERSIONS
        top = kafka[1]
        if unstable_api_versions:
            top = max(top, UNRELEASED_VERSIONS.get(key, top))
        served = (max(low, kafka[0]), min(high, top))
        return served if served[0] <= served[1] else None

    def max_versions(self, *, unstable_api_versions: bool = False) -> dict[int, int]:
        """API key -> the highest version this node sends or serves (its outgoing requests never go
        above the line's)."""
        found = {}
        for key in _KAFKA_VERSIONS:
            served = self.versions(key, unstable_api_versions=unstable_api_versions)
            if served is not None:
                found[key] = served[1]
        return found

    def unserved(self) -> dict[int, _Range]:
        """API key -> the versions of the line outside what a node serves (the codec lacks them)."""
        gaps = {}
        for key in _KAFKA_VERSIONS:
            kafka = self.kafka_versions(key)
            if kafka is None:
                continue
            served = self.versions(key)
            missing = [version for version in range(kafka[0], kafka[1] + 1)
                       if served is None or not served[0] <= version <= served[1]]
            if missing:
                gaps[key] = (missing[0], missing[-1])
        return gaps

    def register_broker_record_version(self, metadata_version: int) -> int:
        """The RegisterBrokerRecord version a controller of the line writes at ``metadata_version``
        (Kafka's ``MetadataVersion.registerBrokerRecordVersion``)."""
        if metadata_version >= CORDONED_LOG_DIRS_VERSION and self._from("4.3"):
            return 4
        return REGISTER_BROKER_RECORD_VERSION


LINES: Final[dict[str, ServerLine]] = {name: ServerLine(name) for name in LINE_NAMES}
"""Every line by name, oldest first."""

NEWEST: Final = LINES[DEFAULT_LINE]


def line(name: str) -> ServerLine:
    """The line of a release: ``4.2``, or a release of it such as ``4.2.1``; ValueError naming the
    lines there are for anything else."""
    parts = name.strip().split(".")
    numeric = len(parts) in (2, 3) and all(part.isdigit() for part in parts)
    found = LINES.get(".".join(parts[:2])) if numeric else None
    if found is None:
        raise ValueError(f"unknown release version '{name}': the reference server runs as Kafka "
                         f"{', '.join(LINE_NAMES)} (for example --release-version {DEFAULT_LINE})")
    return found


__all__ = ["DEFAULT_LINE", "LINES", "LINE_NAMES", "NEWEST", "UNRELEASED_VERSIONS", "ServerLine", "line"]
