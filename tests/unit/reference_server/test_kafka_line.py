"""The line table (``kafka_line``) against Kafka's facts, one row per API and line, each citing its
source; what a node serves of it, the gaps the codec leaves, and the behaviour of each line."""

from __future__ import annotations

import pytest

from kafka_admin_kraft import features
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.api_keys import ApiKey
from kafka_admin_kraft_server import kafka_line
from kafka_admin_kraft_server.handlers import BROKER_APIS, CONTROLLER_APIS
from kafka_admin_kraft_server.kafka_line import LINES, NEWEST, line

ORDER = ("3.9", "4.0", "4.1", "4.2", "4.3", "4.4")

# API -> Kafka's versions per line (3.9, 4.0, 4.1, 4.2, 4.3, 4.4; None: the line has not the API), and
# where that comes from.
FACTS: dict[int, tuple[tuple[tuple[int, int] | None, ...], str]] = {
    ApiKey.API_VERSIONS: (
        ((0, 4),) * 5 + ((0, 5),),
        "ApiVersionsRequest.json 0-4 in 3.9.0 and 4.2; v5 in 4.4: PR #22187, stable by PR #22512"),
    ApiKey.FETCH: (
        ((0, 17), (4, 17), (4, 18), (4, 18), (4, 18), (4, 18)),
        "FetchRequest.json 0-17 in 3.9.0, 4-17 in 4.0.0 (KIP-896), 4-18 in 4.1.0 (KIP-1166)"),
    ApiKey.METADATA: (
        ((0, 12),) + ((0, 13),) * 5,
        "MetadataRequest.json 0-12 in 3.9.0, 0-13 from 4.0.0 (KIP-1102)"),
    ApiKey.SASL_HANDSHAKE: (((0, 1),) * 6, "SaslHandshakeRequest.json, 3.9.0 to 4.2"),
    ApiKey.SASL_AUTHENTICATE: (((0, 2),) * 6, "SaslAuthenticateRequest.json, 3.9.0 to 4.2"),
    ApiKey.VOTE: (
        ((0, 1),) + ((0, 2),) * 5,
        "VoteRequest.json 0-1 in 3.9.0; v2 (PreVote, KIP-996) PR #17807, 4.0"),
    ApiKey.BEGIN_QUORUM_EPOCH: (((0, 1),) * 6, "BeginQuorumEpochRequest.json, 3.9.0 to 4.2"),
    ApiKey.END_QUORUM_EPOCH: (((0, 1),) * 6, "EndQuorumEpochRequest.json, 3.9.0 to 4.2"),
    ApiKey.DESCRIBE_QUORUM: (
        ((0, 2),) * 6,
        "DescribeQuorumRequest.json 0-2 (KIP-853); v3 never merged (KAFKA-17243)"),
    ApiKey.UPDATE_FEATURES: (
        ((0, 1),) + ((0, 2),) * 5,
        "UpdateFeaturesRequest.json 0-1 in 3.9.0, 0-2 from 4.0.0"),
    ApiKey.ENVELOPE: (((0, 0),) * 6, "EnvelopeRequest.json, 3.9.0 to 4.2"),
    ApiKey.FETCH_SNAPSHOT: (((0, 1),) * 6, "FetchSnapshotRequest.json, 3.9.0 to 4.2"),
    ApiKey.DESCRIBE_CLUSTER: (
        ((0, 1),) + ((0, 2),) * 5,
        "DescribeClusterRequest.json 0-1 in 3.9.0, 0-2 from 4.0.0 (KIP-1073)"),
    ApiKey.BROKER_REGISTRATION: (
        ((0, 4),) * 6,
        "BrokerRegistrationRequest.json 0-4, 3.9.0 to 4.2; the v5 of PR #21273 was removed by PR #22070"),
    ApiKey.BROKER_HEARTBEAT: (
        ((0, 1),) * 4 + ((0, 2),) * 2,
        "BrokerHeartbeatRequest.json 0-1 to 4.2; v2 (CordonedLogDirs, KIP-1066) PR #21273, 4.3"),
    ApiKey.CONTROLLER_REGISTRATION: (((0, 0),) * 6, "ControllerRegistrationRequest.json (KIP-919)"),
    ApiKey.ADD_RAFT_VOTER: (
        ((0, 0),) * 3 + ((0, 1),) * 3,
        "AddRaftVoterRequest.json 0 to 4.1; v1 (AckWhenCommitted, KIP-1186) PR #19982, 4.2"),
    ApiKey.REMOVE_RAFT_VOTER: (((0, 0),) * 6, "RemoveRaftVoterRequest.json, 3.9.0 to trunk after 4.4"),
    ApiKey.UPDATE_RAFT_VOTER: (((0, 0),) * 6, "UpdateRaftVoterRequest.json, 3.9.0 to 4.2"),
    ApiKey.UNREGISTER_BROKER: (
        ((0, 0),) * 6,
        "UnregisterBrokerRequest.json 0, listeners broker and controller; ControllerApis handles it"),
    ApiKey.UNREGISTER_CONTROLLER: (
        (None,) * 5 + ((0, 0),),
        "UnregisterControllerRequest.json key 94, v0: new in 4.4 (KIP-1312, PR #22191)"),
    ApiKey.DESCRIBE_ACLS: (
        ((0, 3),) + ((1, 3),) * 5,
        "DescribeAclsRequest.json 0-3 (v0 deprecated) in 3.9.0; v0 removed in 4.0 (KIP-896)"),
    ApiKey.CREATE_ACLS: (
        ((0, 3),) + ((1, 3),) * 5,
        "CreateAclsRequest.json 0-3 in 3.9.0; 1-3 from 4.0 (KIP-896)"),
    ApiKey.DELETE_ACLS: (
        ((0, 3),) + ((1, 3),) * 5,
        "DeleteAclsRequest.json 0-3 in 3.9.0; 1-3 from 4.0 (KIP-896)"),
}


@pytest.mark.parametrize("key", sorted(FACTS), ids=lambda key: ApiKey(key).name)
def test_the_table_holds_kafkas_versions(key: int) -> None:
    ranges, source = FACTS[key]
    assert source
    assert [LINES[name].kafka_versions(key) for name in ORDER] == list(ranges)


def test_every_served_api_has_a_row() -> None:
    assert {*CONTROLLER_APIS, *BROKER_APIS} == set(FACTS)
    assert NEWEST.kafka_versions(0) is None and NEWEST.versions(0) is None  # Produce: not served


def test_a_node_serves_kafkas_versions_as_far_as_the_codec_speaks_them() -> None:
    """Every version of every line is served: no gap."""
    gaps = {name: line_.unserved() for name, line_ in LINES.items()}
    assert gaps == {name: {} for name in LINES}
    for name, line_ in LINES.items():
        for key in FACTS:
            served = line_.versions(key)
            if line_.kafka_versions(key) is None:
                assert served is None
                continue
            assert served is not None
            assert messages.request_class(key).VERSIONS[0] <= served[0] <= served[1]
            assert served[1] <= messages.request_class(key).VERSIONS[1], (name, key)


def test_describe_quorum_v3_only_with_unstable_api_versions() -> None:
    for line_ in LINES.values():
        assert line_.versions(ApiKey.DESCRIBE_QUORUM) == (0, 2)
        assert line_.versions(ApiKey.DESCRIBE_QUORUM, unstable_api_versions=True) == (0, 3)
        assert line_.max_versions(unstable_api_versions=True)[ApiKey.DESCRIBE_QUORUM] == 3


def test_outgoing_requests_stay_within_the_line() -> None:
    """What peers and a broker's channels cap their requests at."""
    old, new = line("3.9").max_versions(), NEWEST.max_versions()
    assert (old[ApiKey.VOTE], old[ApiKey.FETCH], old[ApiKey.ADD_RAFT_VOTER]) == (1, 17, 0)
    assert (new[ApiKey.VOTE], new[ApiKey.FETCH], new[ApiKey.ADD_RAFT_VOTER]) == (2, 18, 1)
    assert line("4.0").max_versions()[ApiKey.FETCH] == 17
    assert line("3.9").versions(ApiKey.FETCH) == (0, 17) and line("4.0").versions(ApiKey.FETCH) == (4, 17)


def test_behaviour_by_line() -> None:
    """Pre-vote from 4.0 (KIP-996, PR #17807); the kraft.version upgrade from 4.1 (KAFKA-16538, PR #19416);
    auto-join and AddRaftVoter v1 from 4.2 (KAFKA-19078 PR #19589, KIP-1186 PR #19982)."""
    def since(attribute: str) -> str:
        return next(name for name in ORDER if getattr(LINES[name], attribute))
    assert (since("pre_vote"), since("upgrades_kraft_version"), since("auto_join"),
            since("ack_when_committed")) == ("4.0", "4.1", "4.2", "4.2")
    assert all(LINES[name].features is features.LINES[name] for name in ORDER)


def test_register_broker_record_version() -> None:
    """v4 (CordonedLogDirs) at 4.3-IV0 on 4.3 and later (KIP-1066); 4.2 knows 4.3-IV0 only as a
    placeholder and writes v3."""
    assert [LINES[name].register_broker_record_version(30) for name in ORDER] == [3, 3, 3, 3, 4, 4]
    assert NEWEST.register_broker_record_version(29) == 3


@pytest.mark.parametrize(("text", "expected"), [("4.2", "4.2"), (" 3.9 ", "3.9"), ("4.2.1", "4.2"),
                                                 ("4.4.0", "4.4")])
def test_release_versions_name_a_line(text: str, expected: str) -> None:
    assert line(text).name == expected


@pytest.mark.parametrize("text", ["3.8", "4.5", "4", "latest", "", "4.2.1.0", "4.x"])
def test_an_unknown_release_version_names_the_lines(text: str) -> None:
    with pytest.raises(ValueError) as info:
        line(text)
    assert str(info.value) == (f"unknown release version '{text}': the reference server runs as Kafka 3.9, "
                               "4.0, 4.1, 4.2, 4.3, 4.4 (for example --release-version 4.4)")
    assert kafka_line.DEFAULT_LINE == "4.4"


def test_unregister_controller_is_a_44_api() -> None:
    """KIP-1312: an older node neither advertises nor accepts API key 94, and states no gap for it."""
    for name in ORDER[:-1]:
        assert LINES[name].versions(ApiKey.UNREGISTER_CONTROLLER) is None
        assert ApiKey.UNREGISTER_CONTROLLER not in LINES[name].max_versions()
        assert ApiKey.UNREGISTER_CONTROLLER not in LINES[name].unserved()
    assert NEWEST.versions(ApiKey.UNREGISTER_CONTROLLER) == (0, 0)
    assert all(LINES[name].versions(ApiKey.UNREGISTER_BROKER) == (0, 0) for name in ORDER)
