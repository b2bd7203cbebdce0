"""Golden wire vectors, worked out by hand from Kafka's JSON schemas, for the KRaft quorum APIs:
DescribeQuorum (v3 = the CommittedVoters proposal), AddRaftVoter, RemoveRaftVoter, UpdateRaftVoter,
UpdateFeatures, Vote, BeginQuorumEpoch, EndQuorumEpoch and FetchSnapshot.

Each vector is checked both ways (encode equals the bytes, decode equals the object). None of these
byte strings was produced by the project's encoder.
"""

from __future__ import annotations

import pytest

from golden.golden_testlib import golden_tests
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import ZERO_UUID, Uuid

UUID_A_BYTES = b"\x6d\x2a\x1f\x0e\x43\x5c\x4b\x8a\x9e\x01\x23\x45\x67\x89\xab\xcd"
UUID_B_BYTES = b"\xf0\xe1\xd2\xc3\xb4\xa5\x96\x87\x78\x69\x5a\x4b\x3c\x2d\x1e\x0f"
UUID_C_BYTES = b"\x00\x11\x22\x33\x44\x55\x66\x77\x88\x99\xaa\xbb\xcc\xdd\xee\xff"
UUID_A, UUID_B, UUID_C = Uuid(UUID_A_BYTES), Uuid(UUID_B_BYTES), Uuid(UUID_C_BYTES)
ZERO_UUID_BYTES = b"\x00" * 16
META = b"__cluster_metadata"  # 18 bytes: compact length 0x13, classic length 0x0012
TS = b"\x00\x00\x01\x8b\xcf\xe5\x68\x00"  # int64 1700000000000 (ms since the epoch)
TS2 = b"\x00\x00\x01\x8b\xcf\xe5\x64\x18"  # int64 1699999999000
NONE8 = b"\xff" * 8  # int64 -1

DQ = messages.DescribeQuorumResponse

# ---------------------------------------------------------------------------------------------
# DescribeQuorum (API 55), flexible from v0. The request is the same in every version. Response:
# v1 adds LastFetchTimestamp/LastCaughtUpTimestamp to ReplicaState; v2 adds both ErrorMessages,
# ReplicaDirectoryId and Nodes; v3 (proposal) adds CommittedVoters between CurrentVoters and Observers.
# ---------------------------------------------------------------------------------------------

DESCRIBE_QUORUM_REQUEST = b"".join([
    b"\x02",              # Topics compact array, 1 element
    b"\x13" + META,       #   TopicName compact string "__cluster_metadata"
    b"\x02",              #   Partitions compact array, 1 element
    b"\x00\x00\x00\x00",  #     PartitionIndex int32 = 0
    b"\x00",              #     tagged fields: none
    b"\x00",              #   tagged fields: none
    b"\x00",              # tagged fields: none
])

DESCRIBE_QUORUM_RESPONSE_V0 = b"".join([
    b"\x00\x00",          # ErrorCode int16 = 0
    b"\x02",              # Topics compact array, 1 element
    b"\x13" + META,       #   TopicName compact string
    b"\x02",              #   Partitions compact array, 1 element
    b"\x00\x00\x00\x00",  #     PartitionIndex int32 = 0
    b"\x00\x00",          #     ErrorCode int16 = 0
    b"\x00\x00\x00\x01",  #     LeaderId int32 = 1
    b"\x00\x00\x00\x03",  #     LeaderEpoch int32 = 3
    b"\x00\x00\x00\x00\x00\x00\x00\x64",  # HighWatermark int64 = 100
    b"\x02",              #     CurrentVoters compact array, 1 element
    b"\x00\x00\x00\x01",  #       ReplicaId int32 = 1
    b"\x00\x00\x00\x00\x00\x00\x00\x64",  # LogEndOffset int64 = 100
    b"\x00",              #       tagged fields: none
    b"\x01",              #     Observers compact array, empty
    b"\x00",              #     tagged fields: none
    b"\x00",              #   tagged fields: none
    b"\x00",              # tagged fields: none
])

DESCRIBE_QUORUM_RESPONSE_V1 = b"".join([
    b"\x00\x00",          # ErrorCode int16 = 0
    b"\x02",              # Topics compact array, 1 element
    b"\x13" + META,       #   TopicName compact string
    b"\x02",              #   Partitions compact array, 1 element
    b"\x00\x00\x00\x00",  #     PartitionIndex int32 = 0
    b"\x00\x00",          #     ErrorCode int16 = 0
    b"\x00\x00\x00\x02",  #     LeaderId int32 = 2
    b"\x00\x00\x00\x07",  #     LeaderEpoch int32 = 7
    b"\x00\x00\x00\x00\x00\x00\x01\xf4",  # HighWatermark int64 = 500
    b"\x03",              #     CurrentVoters compact array, 2 elements
    b"\x00\x00\x00\x02",  #       [0] ReplicaId int32 = 2
    b"\x00\x00\x00\x00\x00\x00\x01\xf4",  # [0] LogEndOffset int64 = 500
    TS,                   #       [0] LastFetchTimestamp int64 = 1700000000000
    TS,                   #       [0] LastCaughtUpTimestamp int64 = 1700000000000
    b"\x00",              #       [0] tagged fields: none
    b"\x00\x00\x00\x03",  #       [1] ReplicaId int32 = 3
    b"\x00\x00\x00\x00\x00\x00\x01\xe0",  # [1] LogEndOffset int64 = 480
    TS,                   #       [1] LastFetchTimestamp int64 = 1700000000000
    TS2,                  #       [1] LastCaughtUpTimestamp int64 = 1699999999000
    b"\x00",              #       [1] tagged fields: none
    b"\x02",              #     Observers compact array, 1 element
    b"\x00\x00\x00\x04",  #       ReplicaId int32 = 4
    NONE8,                #       LogEndOffset int64 = -1
    NONE8,                #       LastFetchTimestamp int64 = -1
    NONE8,                #       LastCaughtUpTimestamp int64 = -1
    b"\x00",              #       tagged fields: none
    b"\x00",              #     tagged fields: none
    b"\x00",              #   tagged fields: none
    b"\x00",              # tagged fields: none
])

DESCRIBE_QUORUM_RESPONSE_V2 = b"".join([
    b"\x00\x00",          # ErrorCode int16 = 0
    b"\x00",              # ErrorMessage compact nullable string = null
    b"\x02",              # Topics compact array, 1 element
    b"\x13" + META,       #   TopicName compact string
    b"\x02",              #   Partitions compact array, 1 element
    b"\x00\x00\x00\x00",  #     PartitionIndex int32 = 0
    b"\x00\x00",          #     ErrorCode int16 = 0
    b"\x00",              #     ErrorMessage compact nullable string = null
    b"\x00\x00\x00\x01",  #     LeaderId int32 = 1
    b"\x00\x00\x00\x03",  #     LeaderEpoch int32 = 3
    b"\x00\x00\x00\x00\x00\x00\x00\x64",  # HighWatermark int64 = 100
    b"\x02",              #     CurrentVoters compact array, 1 element
    b"\x00\x00\x00\x01",  #       ReplicaId int32 = 1
    UUID_A_BYTES,         #       ReplicaDirectoryId uuid
    b"\x00\x00\x00\x00\x00\x00\x00\x64",  # LogEndOffset int64 = 100
    TS,                   #       LastFetchTimestamp int64 = 1700000000000
    TS,                   #       LastCaughtUpTimestamp int64 = 1700000000000
    b"\x00",              #       tagged fields: none
    b"\x02",              #     Observers compact array, 1 element
    b"\x00\x00\x00\x04",  #       ReplicaId int32 = 4
    ZERO_UUID_BYTES,      #       ReplicaDirectoryId uuid = zero
    b"\x00\x00\x00\x00\x00\x00\x00\x5a",  # LogEndOffset int64 = 90
    NONE8,                #       LastFetchTimestamp int64 = -1
    NONE8,                #       LastCaughtUpTimestamp int64 = -1
    b"\x00",              #       tagged fields: none
    b"\x00",              #     tagged fields: none
    b"\x00",              #   tagged fields: none
    b"\x02",              # Nodes compact array, 1 element
    b"\x00\x00\x00\x01",  #   NodeId int32 = 1
    b"\x02",              #   Listeners compact array, 1 element
    b"\x0b" b"CONTROLLER",  #   Name compact string, 10 bytes
    b"\x0a" b"localhost",   #   Host compact string, 9 bytes
    b"\x23\x85",          #     Port uint16 = 9093
    b"\x00",              #     tagged fields: none
    b"\x00",              #   tagged fields: none
    b"\x00",              # tagged fields: none
])

DESCRIBE_QUORUM_RESPONSE_V3 = b"".join([
    b"\x00\x00",          # ErrorCode int16 = 0
    b"\x00",              # ErrorMessage compact nullable string = null
    b"\x02",              # Topics compact array, 1 element
    b"\x13" + META,       #   TopicName compact string
    b"\x02",              #   Partitions compact array, 1 element
    b"\x00\x00\x00\x00",  #     PartitionIndex int32 = 0
    b"\x00\x00",          #     ErrorCode int16 = 0
    b"\x00",              #     ErrorMessage compact nullable string = null
    b"\x00\x00\x00\x01",  #     LeaderId int32 = 1
    b"\x00\x00\x00\x04",  #     LeaderEpoch int32 = 4
    b"\x00\x00\x00\x00\x00\x00\x00\xc8",  # HighWatermark int64 = 200
    b"\x03",              #     CurrentVoters compact array, 2 elements
    b"\x00\x00\x00\x01",  #       [0] ReplicaId int32 = 1
    UUID_A_BYTES,         #       [0] ReplicaDirectoryId uuid
    b"\x00\x00\x00\x00\x00\x00\x00\xc8",  # [0] LogEndOffset int64 = 200
    TS,                   #       [0] LastFetchTimestamp int64
    TS,                   #       [0] LastCaughtUpTimestamp int64
    b"\x00",              #       [0] tagged fields: none
    b"\x00\x00\x00\x02",  #       [1] ReplicaId int32 = 2
    UUID_B_BYTES,         #       [1] ReplicaDirectoryId uuid
    b"\x00\x00\x00\x00\x00\x00\x00\x96",  # [1] LogEndOffset int64 = 150
    NONE8,                #       [1] LastFetchTimestamp int64 = -1
    NONE8,                #       [1] LastCaughtUpTimestamp int64 = -1
    b"\x00",              #       [1] tagged fields: none
    b"\x02",              #     CommittedVoters compact array, 1 element (v3+)
    b"\x00\x00\x00\x01",  #       ReplicaId int32 = 1
    UUID_A_BYTES,         #       ReplicaDirectoryId uuid
    b"\x00\x00\x00\x00\x00\x00\x00\xc8",  # LogEndOffset int64 = 200
    TS,                   #       LastFetchTimestamp int64
    TS,                   #       LastCaughtUpTimestamp int64
    b"\x00",              #       tagged fields: none
    b"\x01",              #     Observers compact array, empty
    b"\x00",              #     tagged fields: none
    b"\x00",              #   tagged fields: none
    b"\x03",              # Nodes compact array, 2 elements
    b"\x00\x00\x00\x01",  #   [0] NodeId int32 = 1
    b"\x02",              #   [0] Listeners compact array, 1 element
    b"\x0b" b"CONTROLLER",  #     Name compact string
    b"\x03" b"c1",        #       Host compact string
    b"\x9c\x40",          #       Port uint16 = 40000 (above 32767)
    b"\x00",              #       tagged fields: none
    b"\x00",              #   [0] tagged fields: none
    b"\x00\x00\x00\x02",  #   [1] NodeId int32 = 2
    b"\x02",              #   [1] Listeners compact array, 1 element
    b"\x0b" b"CONTROLLER",  #     Name compact string
    b"\x03" b"c2",        #       Host compact string
    b"\xff\xff",          #       Port uint16 = 65535
    b"\x00",              #       tagged fields: none
    b"\x00",              #   [1] tagged fields: none
    b"\x00",              # tagged fields: none
])

_LEADER_V3 = DQ.ReplicaState(replica_id=1, replica_directory_id=UUID_A, log_end_offset=200,
                             last_fetch_timestamp=1700000000000, last_caught_up_timestamp=1700000000000)

DESCRIBE_QUORUM_CASES = [
    pytest.param(messages.DescribeQuorumRequest, v, messages.DescribeQuorumRequest(topics=[
        messages.DescribeQuorumRequest.TopicData(topic_name="__cluster_metadata", partitions=[
            messages.DescribeQuorumRequest.PartitionData(partition_index=0)])]),
        DESCRIBE_QUORUM_REQUEST, id=f"DescribeQuorumRequest-v{v}")
    for v in (0, 1, 2, 3)
] + [
    pytest.param(DQ, 0, DQ(topics=[DQ.TopicData(topic_name="__cluster_metadata", partitions=[
        DQ.PartitionData(leader_id=1, leader_epoch=3, high_watermark=100,
                         current_voters=[DQ.ReplicaState(replica_id=1, log_end_offset=100)])])]),
        DESCRIBE_QUORUM_RESPONSE_V0, id="DescribeQuorumResponse-v0"),
    pytest.param(DQ, 1, DQ(topics=[DQ.TopicData(topic_name="__cluster_metadata", partitions=[
        DQ.PartitionData(leader_id=2, leader_epoch=7, high_watermark=500, current_voters=[
            DQ.ReplicaState(replica_id=2, log_end_offset=500, last_fetch_timestamp=1700000000000,
                            last_caught_up_timestamp=1700000000000),
            DQ.ReplicaState(replica_id=3, log_end_offset=480, last_fetch_timestamp=1700000000000,
                            last_caught_up_timestamp=1699999999000)],
            observers=[DQ.ReplicaState(replica_id=4, log_end_offset=-1)])])]),
        DESCRIBE_QUORUM_RESPONSE_V1, id="DescribeQuorumResponse-v1"),
    pytest.param(DQ, 2, DQ(error_message=None, topics=[DQ.TopicData(
        topic_name="__cluster_metadata", partitions=[DQ.PartitionData(
            error_message=None, leader_id=1, leader_epoch=3, high_watermark=100,
            current_voters=[DQ.ReplicaState(replica_id=1, replica_directory_id=UUID_A, log_end_offset=100,
                                            last_fetch_timestamp=1700000000000,
                                            last_caught_up_timestamp=1700000000000)],
            observers=[DQ.ReplicaState(replica_id=4, replica_directory_id=ZERO_UUID, log_end_offset=90)])])],
        nodes=[DQ.Node(node_id=1, listeners=[DQ.Listener(name="CONTROLLER", host="localhost", port=9093)])]),
        DESCRIBE_QUORUM_RESPONSE_V2, id="DescribeQuorumResponse-v2"),
    pytest.param(DQ, 3, DQ(error_message=None, topics=[DQ.TopicData(
        topic_name="__cluster_metadata", partitions=[DQ.PartitionData(
            error_message=None, leader_id=1, leader_epoch=4, high_watermark=200,
            current_voters=[_LEADER_V3, DQ.ReplicaState(replica_id=2, replica_directory_id=UUID_B,
                                                        log_end_offset=150)],
            committed_voters=[_LEADER_V3],
            observers=[])])],
        nodes=[DQ.Node(node_id=1, listeners=[DQ.Listener(name="CONTROLLER", host="c1", port=40000)]),
               DQ.Node(node_id=2, listeners=[DQ.Listener(name="CONTROLLER", host="c2", port=65535)])]),
        DESCRIBE_QUORUM_RESPONSE_V3, id="DescribeQuorumResponse-v3"),
]

# ---------------------------------------------------------------------------------------------
# AddRaftVoter (API 80): v1 adds AckWhenCommitted to the request; the response is unchanged.
# RemoveRaftVoter (API 81) and UpdateRaftVoter (API 82): v0 only.
# ---------------------------------------------------------------------------------------------

ADD_RAFT_VOTER_REQUEST_V0 = b"".join([
    b"\x17" b"MkU3OEVBNTcwNTJENDM2Qg",  # ClusterId compact nullable string, 22 bytes
    b"\x00\x00\x75\x30",  # TimeoutMs int32 = 30000
    b"\x00\x00\x00\x03",  # VoterId int32 = 3
    UUID_C_BYTES,         # VoterDirectoryId uuid
    b"\x02",              # Listeners compact array, 1 element
    b"\x0b" b"CONTROLLER",  # Name compact string
    b"\x0d" b"controller-3",  # Host compact string, 12 bytes
    b"\x23\x85",          #   Port uint16 = 9093
    b"\x00",              #   tagged fields: none
    b"\x00",              # tagged fields: none
])

ADD_RAFT_VOTER_REQUEST_V1 = b"".join([
    b"\x00",              # ClusterId compact nullable string = null
    b"\x00\x00\x07\xd0",  # TimeoutMs int32 = 2000
    b"\x00\x00\x00\x04",  # VoterId int32 = 4
    UUID_C_BYTES,         # VoterDirectoryId uuid
    b"\x03",              # Listeners compact array, 2 elements
    b"\x0b" b"CONTROLLER",  # [0] Name compact string
    b"\x03" b"c4",        #   [0] Host compact string
    b"\x23\x85",          #   [0] Port uint16 = 9093
    b"\x00",              #   [0] tagged fields: none
    b"\x0f" b"CONTROLLER_SSL",  # [1] Name compact string, 14 bytes
    b"\x03" b"c4",        #   [1] Host compact string
    b"\x9c\x40",          #   [1] Port uint16 = 40000
    b"\x00",              #   [1] tagged fields: none
    b"\x00",              # AckWhenCommitted bool = false (v1+)
    b"\x00",              # tagged fields: none
])

ADD_RAFT_VOTER_RESPONSE_V0 = b"".join([
    b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
    b"\x00\x00",          # ErrorCode int16 = 0
    b"\x00",              # ErrorMessage compact nullable string = null
    b"\x00",              # tagged fields: none
])

ADD_RAFT_VOTER_RESPONSE_V1 = b"".join([
    b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
    b"\x00\x07",          # ErrorCode int16 = 7 REQUEST_TIMED_OUT
    b"\x17" b"The request timed out.",  # ErrorMessage compact nullable string, 22 bytes
    b"\x00",              # tagged fields: none
])

REMOVE_RAFT_VOTER_REQUEST_V0 = b"".join([
    b"\x04" b"abc",       # ClusterId compact nullable string
    b"\x00\x00\x00\x02",  # VoterId int32 = 2
    UUID_B_BYTES,         # VoterDirectoryId uuid
    b"\x00",              # tagged fields: none
])

REMOVE_RAFT_VOTER_RESPONSE_V0 = b"".join([
    b"\x00\x00\x00\x0a",  # ThrottleTimeMs int32 = 10
    b"\x00\x7f",          # ErrorCode int16 = 127 VOTER_NOT_FOUND
    b"\x02" b"x",         # ErrorMessage compact nullable string = "x"
    b"\x00",              # tagged fields: none
])

UPDATE_RAFT_VOTER_REQUEST_V0 = b"".join([
    b"\x00",              # ClusterId compact nullable string = null
    b"\x00\x00\x00\x05",  # CurrentLeaderEpoch int32 = 5
    b"\x00\x00\x00\x01",  # VoterId int32 = 1
    UUID_A_BYTES,         # VoterDirectoryId uuid
    b"\x02",              # Listeners compact array, 1 element
    b"\x0b" b"CONTROLLER",  # Name compact string
    b"\x03" b"c1",        #   Host compact string
    b"\x23\x85",          #   Port uint16 = 9093
    b"\x00",              #   tagged fields: none
    b"\x00\x00",          # KRaftVersionFeature.MinSupportedVersion int16 = 0
    b"\x00\x01",          # KRaftVersionFeature.MaxSupportedVersion int16 = 1
    b"\x00",              # KRaftVersionFeature tagged fields: none
    b"\x00",              # tagged fields: none
])

UPDATE_RAFT_VOTER_RESPONSE_V0 = b"".join([
    b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
    b"\x00\x00",          # ErrorCode int16 = 0
    b"\x01",              # tagged fields: 1 entry
    b"\x00",              #   tag 0 = CurrentLeader
    b"\x10",              #   size 16
    b"\x00\x00\x00\x01",  #     LeaderId int32 = 1
    b"\x00\x00\x00\x05",  #     LeaderEpoch int32 = 5
    b"\x03" b"c1",        #     Host compact string
    b"\x00\x00\x23\x85",  #     Port int32 = 9093
    b"\x00",              #     tagged fields: none
])

UPDATE_RAFT_VOTER_RESPONSE_V0_NO_LEADER = b"".join([
    b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
    b"\x00\x06",          # ErrorCode int16 = 6 NOT_LEADER_OR_FOLLOWER
    b"\x00",              # tagged fields: none (CurrentLeader at its default is not written)
])

VOTERS_CASES = [
    pytest.param(messages.AddRaftVoterRequest, 0, messages.AddRaftVoterRequest(
        cluster_id="MkU3OEVBNTcwNTJENDM2Qg", timeout_ms=30000, voter_id=3, voter_directory_id=UUID_C,
        listeners=[messages.AddRaftVoterRequest.Listener(name="CONTROLLER", host="controller-3", port=9093)]),
        ADD_RAFT_VOTER_REQUEST_V0, id="AddRaftVoterRequest-v0"),
    pytest.param(messages.AddRaftVoterRequest, 1, messages.AddRaftVoterRequest(
        cluster_id=None, timeout_ms=2000, voter_id=4, voter_directory_id=UUID_C, ack_when_committed=False,
        listeners=[messages.AddRaftVoterRequest.Listener(name="CONTROLLER", host="c4", port=9093),
                   messages.AddRaftVoterRequest.Listener(name="CONTROLLER_SSL", host="c4", port=40000)]),
        ADD_RAFT_VOTER_REQUEST_V1, id="AddRaftVoterRequest-v1"),
    pytest.param(messages.AddRaftVoterResponse, 0, messages.AddRaftVoterResponse(error_message=None),
                 ADD_RAFT_VOTER_RESPONSE_V0, id="AddRaftVoterResponse-v0"),
    pytest.param(messages.AddRaftVoterResponse, 1, messages.AddRaftVoterResponse(
        error_code=7, error_message="The request timed out."),
        ADD_RAFT_VOTER_RESPONSE_V1, id="AddRaftVoterResponse-v1"),
    pytest.param(messages.RemoveRaftVoterRequest, 0, messages.RemoveRaftVoterRequest(
        cluster_id="abc", voter_id=2, voter_directory_id=UUID_B),
        REMOVE_RAFT_VOTER_REQUEST_V0, id="RemoveRaftVoterRequest-v0"),
    pytest.param(messages.RemoveRaftVoterResponse, 0, messages.RemoveRaftVoterResponse(
        throttle_time_ms=10, error_code=127, error_message="x"),
        REMOVE_RAFT_VOTER_RESPONSE_V0, id="RemoveRaftVoterResponse-v0"),
    pytest.param(messages.UpdateRaftVoterRequest, 0, messages.UpdateRaftVoterRequest(
        cluster_id=None, current_leader_epoch=5, voter_id=1, voter_directory_id=UUID_A,
        listeners=[messages.UpdateRaftVoterRequest.Listener(name="CONTROLLER", host="c1", port=9093)],
        k_raft_version_feature=messages.UpdateRaftVoterRequest.KRaftVersionFeature(
            min_supported_version=0, max_supported_version=1)),
        UPDATE_RAFT_VOTER_REQUEST_V0, id="UpdateRaftVoterRequest-v0"),
    pytest.param(messages.UpdateRaftVoterResponse, 0, messages.UpdateRaftVoterResponse(
        current_leader=messages.UpdateRaftVoterResponse.CurrentLeader(
            leader_id=1, leader_epoch=5, host="c1", port=9093)),
        UPDATE_RAFT_VOTER_RESPONSE_V0, id="UpdateRaftVoterResponse-v0"),
    pytest.param(messages.UpdateRaftVoterResponse, 0, messages.UpdateRaftVoterResponse(error_code=6),
                 UPDATE_RAFT_VOTER_RESPONSE_V0_NO_LEADER, id="UpdateRaftVoterResponse-v0-no-leader"),
]

# ---------------------------------------------------------------------------------------------
# UpdateFeatures (API 57), flexible from v0. Request v1 replaces AllowDowngrade with UpgradeType and
# adds ValidateOnly; v2 request = v1. Response v2 drops Results.
# ---------------------------------------------------------------------------------------------

UF = messages.UpdateFeaturesRequest
UFR = messages.UpdateFeaturesResponse

UPDATE_FEATURES_REQUEST_V0 = b"".join([
    b"\x00\x00\xea\x60",  # timeoutMs int32 = 60000
    b"\x02",              # FeatureUpdates compact array, 1 element
    b"\x11" b"metadata.version",  # Feature compact string, 16 bytes
    b"\x00\x15",          #   MaxVersionLevel int16 = 21
    b"\x01",              #   AllowDowngrade bool = true (v0 only)
    b"\x00",              #   tagged fields: none
    b"\x00",              # tagged fields: none
])

UPDATE_FEATURES_REQUEST_V1 = b"".join([
    b"\x00\x00\x75\x30",  # timeoutMs int32 = 30000
    b"\x03",              # FeatureUpdates compact array, 2 elements
    b"\x11" b"metadata.version",  # [0] Feature compact string
    b"\x00\x1b",          #   [0] MaxVersionLevel int16 = 27
    b"\x01",              #   [0] UpgradeType int8 = 1 (upgrade)
    b"\x00",              #   [0] tagged fields: none
    b"\x0e" b"kraft.version",  # [1] Feature compact string, 13 bytes
    b"\x00\x00",          #   [1] MaxVersionLevel int16 = 0
    b"\x03",              #   [1] UpgradeType int8 = 3 (unsafe downgrade)
    b"\x00",              #   [1] tagged fields: none
    b"\x01",              # ValidateOnly bool = true
    b"\x00",              # tagged fields: none
])

UPDATE_FEATURES_REQUEST_V2 = b"".join([
    b"\x00\x00\xea\x60",  # timeoutMs int32 = 60000
    b"\x02",              # FeatureUpdates compact array, 1 element
    b"\x0e" b"kraft.version",  # Feature compact string
    b"\x00\x01",          #   MaxVersionLevel int16 = 1
    b"\x01",              #   UpgradeType int8 = 1
    b"\x00",              #   tagged fields: none
    b"\x00",              # ValidateOnly bool = false
    b"\x00",              # tagged fields: none
])

UPDATE_FEATURES_RESPONSE_V0 = b"".join([
    b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
    b"\x00\x00",          # ErrorCode int16 = 0
    b"\x00",              # ErrorMessage compact nullable string = null
    b"\x02",              # Results compact array, 1 element
    b"\x11" b"metadata.version",  # Feature compact string
    b"\x00\x00",          #   ErrorCode int16 = 0
    b"\x05" b"NONE",      #   ErrorMessage compact nullable string = "NONE"
    b"\x00",              #   tagged fields: none
    b"\x00",              # tagged fields: none
])

UPDATE_FEATURES_RESPONSE_V1 = b"".join([
    b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
    b"\x00\x5f",          # ErrorCode int16 = 95 INVALID_UPDATE_VERSION
    b"\x04" b"bad",       # ErrorMessage compact nullable string = "bad"
    b"\x02",              # Results compact array, 1 element
    b"\x0e" b"kraft.version",  # Feature compact string
    b"\x00\x5f",          #   ErrorCode int16 = 95
    b"\x04" b"bad",       #   ErrorMessage compact nullable string = "bad"
    b"\x00",              #   tagged fields: none
    b"\x00",              # tagged fields: none
])

UPDATE_FEATURES_RESPONSE_V2 = b"".join([
    b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
    b"\x00\x00",          # ErrorCode int16 = 0
    b"\x00",              # ErrorMessage compact nullable string = null
    b"\x00",              # tagged fields: none (no Results from v2)
])

UPDATE_FEATURES_CASES = [
    pytest.param(UF, 0, UF(feature_updates=[UF.FeatureUpdateKey(
        feature="metadata.version", max_version_level=21, allow_downgrade=True)]),
        UPDATE_FEATURES_REQUEST_V0, id="UpdateFeaturesRequest-v0"),
    pytest.param(UF, 1, UF(timeout_ms=30000, validate_only=True, feature_updates=[
        UF.FeatureUpdateKey(feature="metadata.version", max_version_level=27, upgrade_type=1),
        UF.FeatureUpdateKey(feature="kraft.version", max_version_level=0, upgrade_type=3)]),
        UPDATE_FEATURES_REQUEST_V1, id="UpdateFeaturesRequest-v1"),
    pytest.param(UF, 2, UF(feature_updates=[
        UF.FeatureUpdateKey(feature="kraft.version", max_version_level=1)]), UPDATE_FEATURES_REQUEST_V2,
        id="UpdateFeaturesRequest-v2"),
    pytest.param(UFR, 0, UFR(error_message=None, results=[
        UFR.UpdatableFeatureResult(feature="metadata.version", error_message="NONE")]),
        UPDATE_FEATURES_RESPONSE_V0, id="UpdateFeaturesResponse-v0"),
    pytest.param(UFR, 1, UFR(error_code=95, error_message="bad", results=[
        UFR.UpdatableFeatureResult(feature="kraft.version", error_code=95, error_message="bad")]),
        UPDATE_FEATURES_RESPONSE_V1, id="UpdateFeaturesResponse-v1"),
    pytest.param(UFR, 2, UFR(error_message=None), UPDATE_FEATURES_RESPONSE_V2,
                 id="UpdateFeaturesResponse-v2"),
]

# ---------------------------------------------------------------------------------------------
# Vote (API 52), flexible from v0. Request v1 adds VoterId and the two directory ids, v2 PreVote.
# Response v1 adds the tagged NodeEndpoints (tag 0); v2 response = v1.
# ---------------------------------------------------------------------------------------------

VQ = messages.VoteRequest
VR = messages.VoteResponse

VOTE_REQUEST_V0 = b"".join([
    b"\x04" b"abc",       # ClusterId compact nullable string
    b"\x02",              # Topics compact array, 1 element
    b"\x13" + META,       #   TopicName compact string
    b"\x02",              #   Partitions compact array, 1 element
    b"\x00\x00\x00\x00",  #     PartitionIndex int32 = 0
    b"\x00\x00\x00\x05",  #     ReplicaEpoch int32 = 5
    b"\x00\x00\x00\x02",  #     ReplicaId int32 = 2
    b"\x00\x00\x00\x04",  #     LastOffsetEpoch int32 = 4
    b"\x00\x00\x00\x00\x00\x00\x00\x64",  # LastOffset int64 = 100
    b"\x00",              #     tagged fields: none
    b"\x00",              #   tagged fields: none
    b"\x00",              # tagged fields: none
])

VOTE_REQUEST_V1 = b"".join([
    b"\x00",              # ClusterId compact nullable string = null
    b"\x00\x00\x00\x01",  # VoterId int32 = 1 (v1+)
    b"\x02",              # Topics compact array, 1 element
    b"\x13" + META,       #   TopicName compact string
    b"\x02",              #   Partitions compact array, 1 element
    b"\x00\x00\x00\x00",  #     PartitionIndex int32 = 0
    b"\x00\x00\x00\x05",  #     ReplicaEpoch int32 = 5
    b"\x00\x00\x00\x02",  #     ReplicaId int32 = 2
    UUID_B_BYTES,         #     ReplicaDirectoryId uuid (v1+)
    UUID_A_BYTES,         #     VoterDirectoryId uuid (v1+)
    b"\x00\x00\x00\x04",  #     LastOffsetEpoch int32 = 4
    b"\x00\x00\x00\x00\x00\x00\x00\x64",  # LastOffset int64 = 100
    b"\x00",              #     tagged fields: none
    b"\x00",              #   tagged fields: none
    b"\x00",              # tagged fields: none
])

VOTE_REQUEST_V2 = b"".join([
    b"\x04" b"abc",       # ClusterId compact nullable string
    b"\x00\x00\x00\x01",  # VoterId int32 = 1
    b"\x02",              # Topics compact array, 1 element
    b"\x13" + META,       #   TopicName compact string
    b"\x02",              #   Partitions compact array, 1 element
    b"\x00\x00\x00\x00",  #     PartitionIndex int32 = 0
    b"\x00\x00\x00\x06",  #     ReplicaEpoch int32 = 6
    b"\x00\x00\x00\x02",  #     ReplicaId int32 = 2
    UUID_B_BYTES,         #     ReplicaDirectoryId uuid
    UUID_A_BYTES,         #     VoterDirectoryId uuid
    b"\x00\x00\x00\x05",  #     LastOffsetEpoch int32 = 5
    b"\x00\x00\x00\x00\x00\x00\x00\xc8",  # LastOffset int64 = 200
    b"\x01",              #     PreVote bool = true (v2+)
    b"\x00",              #     tagged fields: none
    b"\x00",              #   tagged fields: none
    b"\x00",              # tagged fields: none
])

VOTE_RESPONSE_V0 = b"".join([
    b"\x00\x00",          # ErrorCode int16 = 0
    b"\x02",              # Topics compact array, 1 element
    b"\x13" + META,       #   TopicName compact string
    b"\x02",              #   Partitions compact array, 1 element
    b"\x00\x00\x00\x00",  #     PartitionIndex int32 = 0
    b"\x00\x00",          #     ErrorCode int16 = 0
    b"\xff\xff\xff\xff",  #     LeaderId int32 = -1
    b"\x00\x00\x00\x05",  #     LeaderEpoch int32 = 5
    b"\x01",              #     VoteGranted bool = true
    b"\x00",              #     tagged fields: none
    b"\x00",              #   tagged fields: none
    b"\x00",              # tagged fields: none
])

VOTE_RESPONSE_V1 = b"".join([
    b"\x00\x00",          # ErrorCode int16 = 0
    b"\x02",              # Topics compact array, 1 element
    b"\x13" + META,       #   TopicName compact string
    b"\x02",              #   Partitions compact array, 1 element
    b"\x00\x00\x00\x00",  #     PartitionIndex int32 = 0
    b"\x00\x4a",          #     ErrorCode int16 = 74 FENCED_LEADER_EPOCH
    b"\x00\x00\x00\x01",  #     LeaderId int32 = 1
    b"\x00\x00\x00\x06",  #     LeaderEpoch int32 = 6
    b"\x00",              #     VoteGranted bool = false
    b"\x00",              #     tagged fields: none
    b"\x00",              #   tagged fields: none
    b"\x01",              # tagged fields: 1 entry
    b"\x00",              #   tag 0 = NodeEndpoints
    b"\x0b",              #   size 11
    b"\x02",              #     compact array, 1 element
    b"\x00\x00\x00\x01",  #     NodeId int32 = 1
    b"\x03" b"c1",        #     Host compact string
    b"\x23\x85",          #     Port uint16 = 9093
    b"\x00",              #     tagged fields: none
])

VOTE_RESPONSE_V2 = b"".join([
    b"\x00\x00",          # ErrorCode int16 = 0
    b"\x02",              # Topics compact array, 1 element
    b"\x13" + META,       #   TopicName compact string
    b"\x02",              #   Partitions compact array, 1 element
    b"\x00\x00\x00\x00",  #     PartitionIndex int32 = 0
    b"\x00\x00",          #     ErrorCode int16 = 0
    b"\xff\xff\xff\xff",  #     LeaderId int32 = -1
    b"\x00\x00\x00\x06",  #     LeaderEpoch int32 = 6
    b"\x01",              #     VoteGranted bool = true
    b"\x00",              #     tagged fields: none
    b"\x00",              #   tagged fields: none
    b"\x00",              # tagged fields: none (empty NodeEndpoints is not written)
])


def _vote_request(cluster_id: str | None, voter_id: int, epoch: int, last_epoch: int, last_offset: int,
                  directory_ids: bool, pre_vote: bool) -> messages.VoteRequest:
    partition = VQ.PartitionData(partition_index=0, replica_epoch=epoch, replica_id=2,
                                 last_offset_epoch=last_epoch, last_offset=last_offset, pre_vote=pre_vote)
    if directory_ids:
        partition.replica_directory_id = UUID_B
        partition.voter_directory_id = UUID_A
    return VQ(cluster_id=cluster_id, voter_id=voter_id,
              topics=[VQ.TopicData(topic_name="__cluster_metadata", partitions=[partition])])


def _vote_response(error: int, leader: int, epoch: int, granted: bool,
                   endpoints: list[messages.VoteResponse.NodeEndpoint]) -> messages.VoteResponse:
    return VR(topics=[VR.TopicData(topic_name="__cluster_metadata", partitions=[VR.PartitionData(
        partition_index=0, error_code=error, leader_id=leader, leader_epoch=epoch, vote_granted=granted)])],
        node_endpoints=endpoints)


VOTE_CASES = [
    pytest.param(VQ, 0, _vote_request("abc", -1, 5, 4, 100, False, False), VOTE_REQUEST_V0,
                 id="VoteRequest-v0"),
    pytest.param(VQ, 1, _vote_request(None, 1, 5, 4, 100, True, False), VOTE_REQUEST_V1,
                 id="VoteRequest-v1"),
    pytest.param(VQ, 2, _vote_request("abc", 1, 6, 5, 200, True, True), VOTE_REQUEST_V2,
                 id="VoteRequest-v2"),
    pytest.param(VR, 0, _vote_response(0, -1, 5, True, []), VOTE_RESPONSE_V0, id="VoteResponse-v0"),
    pytest.param(VR, 1, _vote_response(74, 1, 6, False, [VR.NodeEndpoint(node_id=1, host="c1", port=9093)]),
                 VOTE_RESPONSE_V1, id="VoteResponse-v1"),
    pytest.param(VR, 2, _vote_response(0, -1, 6, True, []), VOTE_RESPONSE_V2, id="VoteResponse-v2"),
]

# ---------------------------------------------------------------------------------------------
# BeginQuorumEpoch (API 53) and EndQuorumEpoch (API 54): v0 is NOT flexible (classic lengths, no
# tagged fields); v1 is flexible and adds directory ids, LeaderEndpoints and tagged NodeEndpoints.
# ---------------------------------------------------------------------------------------------

BQ = messages.BeginQuorumEpochRequest
BR = messages.BeginQuorumEpochResponse
EQ = messages.EndQuorumEpochRequest
ER = messages.EndQuorumEpochResponse

BEGIN_QUORUM_EPOCH_REQUEST_V0 = b"".join([
    b"\x00\x03" b"abc",   # ClusterId classic nullable string, 3 bytes
    b"\x00\x00\x00\x01",  # Topics classic array, 1 element
    b"\x00\x12" + META,   #   TopicName classic string, 18 bytes
    b"\x00\x00\x00\x01",  #   Partitions classic array, 1 element
    b"\x00\x00\x00\x00",  #     PartitionIndex int32 = 0
    b"\x00\x00\x00\x01",  #     LeaderId int32 = 1
    b"\x00\x00\x00\x05",  #     LeaderEpoch int32 = 5
])

BEGIN_QUORUM_EPOCH_REQUEST_V0_NULL_CLUSTER = b"".join([
    b"\xff\xff",          # ClusterId classic nullable string = null
    b"\x00\x00\x00\x00",  # Topics classic array, empty
])

BEGIN_QUORUM_EPOCH_REQUEST_V1 = b"".join([
    b"\x00",              # ClusterId compact nullable string = null
    b"\x00\x00\x00\x02",  # VoterId int32 = 2
    b"\x02",              # Topics compact array, 1 element
    b"\x13" + META,       #   TopicName compact string
    b"\x02",              #   Partitions compact array, 1 element
    b"\x00\x00\x00\x00",  #     PartitionIndex int32 = 0
    UUID_B_BYTES,         #     VoterDirectoryId uuid
    b"\x00\x00\x00\x01",  #     LeaderId int32 = 1
    b"\x00\x00\x00\x05",  #     LeaderEpoch int32 = 5
    b"\x00",              #     tagged fields: none
    b"\x00",              #   tagged fields: none
    b"\x02",              # LeaderEndpoints compact array, 1 element
    b"\x0b" b"CONTROLLER",  # Name compact string
    b"\x03" b"c1",        #   Host compact string
    b"\x23\x85",          #   Port uint16 = 9093
    b"\x00",              #   tagged fields: none
    b"\x00",              # tagged fields: none
])

BEGIN_QUORUM_EPOCH_RESPONSE_V0 = b"".join([
    b"\x00\x00",          # ErrorCode int16 = 0
    b"\x00\x00\x00\x01",  # Topics classic array, 1 element
    b"\x00\x12" + META,   #   TopicName classic string
    b"\x00\x00\x00\x01",  #   Partitions classic array, 1 element
    b"\x00\x00\x00\x00",  #     PartitionIndex int32 = 0
    b"\x00\x00",          #     ErrorCode int16 = 0
    b"\x00\x00\x00\x01",  #     LeaderId int32 = 1
    b"\x00\x00\x00\x05",  #     LeaderEpoch int32 = 5
])

BEGIN_QUORUM_EPOCH_RESPONSE_V1 = b"".join([
    b"\x00\x00",          # ErrorCode int16 = 0
    b"\x02",              # Topics compact array, 1 element
    b"\x13" + META,       #   TopicName compact string
    b"\x02",              #   Partitions compact array, 1 element
    b"\x00\x00\x00\x00",  #     PartitionIndex int32 = 0
    b"\x00\x00",          #     ErrorCode int16 = 0
    b"\x00\x00\x00\x01",  #     LeaderId int32 = 1
    b"\x00\x00\x00\x05",  #     LeaderEpoch int32 = 5
    b"\x00",              #     tagged fields: none
    b"\x00",              #   tagged fields: none
    b"\x01",              # tagged fields: 1 entry
    b"\x00",              #   tag 0 = NodeEndpoints
    b"\x0b",              #   size 11
    b"\x02",              #     compact array, 1 element
    b"\x00\x00\x00\x01",  #     NodeId int32 = 1
    b"\x03" b"c1",        #     Host compact string
    b"\x23\x85",          #     Port uint16 = 9093
    b"\x00",              #     tagged fields: none
])

END_QUORUM_EPOCH_REQUEST_V0 = b"".join([
    b"\x00\x03" b"abc",   # ClusterId classic nullable string
    b"\x00\x00\x00\x01",  # Topics classic array, 1 element
    b"\x00\x12" + META,   #   TopicName classic string
    b"\x00\x00\x00\x01",  #   Partitions classic array, 1 element
    b"\x00\x00\x00\x00",  #     PartitionIndex int32 = 0
    b"\x00\x00\x00\x01",  #     LeaderId int32 = 1
    b"\x00\x00\x00\x05",  #     LeaderEpoch int32 = 5
    b"\x00\x00\x00\x02",  #     PreferredSuccessors classic []int32, 2 elements (v0 only)
    b"\x00\x00\x00\x02",  #       [0] int32 = 2
    b"\x00\x00\x00\x03",  #       [1] int32 = 3
])

END_QUORUM_EPOCH_REQUEST_V1 = b"".join([
    b"\x04" b"abc",       # ClusterId compact nullable string
    b"\x02",              # Topics compact array, 1 element
    b"\x13" + META,       #   TopicName compact string
    b"\x02",              #   Partitions compact array, 1 element
    b"\x00\x00\x00\x00",  #     PartitionIndex int32 = 0
    b"\x00\x00\x00\x01",  #     LeaderId int32 = 1
    b"\x00\x00\x00\x05",  #     LeaderEpoch int32 = 5
    b"\x03",              #     PreferredCandidates compact array, 2 elements (v1+)
    b"\x00\x00\x00\x02",  #       [0] CandidateId int32 = 2
    UUID_B_BYTES,         #       [0] CandidateDirectoryId uuid
    b"\x00",              #       [0] tagged fields: none
    b"\x00\x00\x00\x03",  #       [1] CandidateId int32 = 3
    UUID_C_BYTES,         #       [1] CandidateDirectoryId uuid
    b"\x00",              #       [1] tagged fields: none
    b"\x00",              #     tagged fields: none
    b"\x00",              #   tagged fields: none
    b"\x02",              # LeaderEndpoints compact array, 1 element
    b"\x0b" b"CONTROLLER",  # Name compact string
    b"\x03" b"c1",        #   Host compact string
    b"\xff\xff",          #   Port uint16 = 65535
    b"\x00",              #   tagged fields: none
    b"\x00",              # tagged fields: none
])

END_QUORUM_EPOCH_RESPONSE_V0 = b"".join([
    b"\x00\x00",          # ErrorCode int16 = 0
    b"\x00\x00\x00\x01",  # Topics classic array, 1 element
    b"\x00\x12" + META,   #   TopicName classic string
    b"\x00\x00\x00\x01",  #   Partitions classic array, 1 element
    b"\x00\x00\x00\x00",  #     PartitionIndex int32 = 0
    b"\x00\x06",          #     ErrorCode int16 = 6 NOT_LEADER_OR_FOLLOWER
    b"\x00\x00\x00\x02",  #     LeaderId int32 = 2
    b"\x00\x00\x00\x06",  #     LeaderEpoch int32 = 6
])

END_QUORUM_EPOCH_RESPONSE_V1 = b"".join([
    b"\x00\x00",          # ErrorCode int16 = 0
    b"\x02",              # Topics compact array, 1 element
    b"\x13" + META,       #   TopicName compact string
    b"\x02",              #   Partitions compact array, 1 element
    b"\x00\x00\x00\x00",  #     PartitionIndex int32 = 0
    b"\x00\x00",          #     ErrorCode int16 = 0
    b"\x00\x00\x00\x01",  #     LeaderId int32 = 1
    b"\x00\x00\x00\x05",  #     LeaderEpoch int32 = 5
    b"\x00",              #     tagged fields: none
    b"\x00",              #   tagged fields: none
    b"\x01",              # tagged fields: 1 entry
    b"\x00",              #   tag 0 = NodeEndpoints
    b"\x15",              #   size 21
    b"\x03",              #     compact array, 2 elements
    b"\x00\x00\x00\x01",  #     [0] NodeId int32 = 1
    b"\x03" b"c1",        #     [0] Host compact string
    b"\x23\x85",          #     [0] Port uint16 = 9093
    b"\x00",              #     [0] tagged fields: none
    b"\x00\x00\x00\x02",  #     [1] NodeId int32 = 2
    b"\x03" b"c2",        #     [1] Host compact string
    b"\x80\x00",          #     [1] Port uint16 = 32768
    b"\x00",              #     [1] tagged fields: none
])


def _bqe_request_v1() -> messages.BeginQuorumEpochRequest:
    return BQ(cluster_id=None, voter_id=2,
              topics=[BQ.TopicData(topic_name="__cluster_metadata", partitions=[
                  BQ.PartitionData(partition_index=0, voter_directory_id=UUID_B, leader_id=1,
                                   leader_epoch=5)])],
              leader_endpoints=[BQ.LeaderEndpoint(name="CONTROLLER", host="c1", port=9093)])


QUORUM_EPOCH_CASES = [
    pytest.param(BQ, 0, BQ(cluster_id="abc", topics=[BQ.TopicData(
        topic_name="__cluster_metadata", partitions=[BQ.PartitionData(leader_id=1, leader_epoch=5)])]),
        BEGIN_QUORUM_EPOCH_REQUEST_V0, id="BeginQuorumEpochRequest-v0"),
    pytest.param(BQ, 0, BQ(cluster_id=None), BEGIN_QUORUM_EPOCH_REQUEST_V0_NULL_CLUSTER,
                 id="BeginQuorumEpochRequest-v0-null-cluster"),
    pytest.param(BQ, 1, _bqe_request_v1(), BEGIN_QUORUM_EPOCH_REQUEST_V1, id="BeginQuorumEpochRequest-v1"),
    pytest.param(BR, 0, BR(topics=[BR.TopicData(topic_name="__cluster_metadata", partitions=[
        BR.PartitionData(leader_id=1, leader_epoch=5)])]),
        BEGIN_QUORUM_EPOCH_RESPONSE_V0, id="BeginQuorumEpochResponse-v0"),
    pytest.param(BR, 1, BR(topics=[BR.TopicData(topic_name="__cluster_metadata", partitions=[
        BR.PartitionData(leader_id=1, leader_epoch=5)])],
        node_endpoints=[BR.NodeEndpoint(node_id=1, host="c1", port=9093)]),
        BEGIN_QUORUM_EPOCH_RESPONSE_V1, id="BeginQuorumEpochResponse-v1"),
    pytest.param(EQ, 0, EQ(cluster_id="abc", topics=[EQ.TopicData(
        topic_name="__cluster_metadata", partitions=[EQ.PartitionData(
            leader_id=1, leader_epoch=5, preferred_successors=[2, 3])])]),
        END_QUORUM_EPOCH_REQUEST_V0, id="EndQuorumEpochRequest-v0"),
    pytest.param(EQ, 1, EQ(cluster_id="abc", topics=[EQ.TopicData(
        topic_name="__cluster_metadata", partitions=[EQ.PartitionData(
            leader_id=1, leader_epoch=5, preferred_candidates=[
                EQ.ReplicaInfo(candidate_id=2, candidate_directory_id=UUID_B),
                EQ.ReplicaInfo(candidate_id=3, candidate_directory_id=UUID_C)])])],
        leader_endpoints=[EQ.LeaderEndpoint(name="CONTROLLER", host="c1", port=65535)]),
        END_QUORUM_EPOCH_REQUEST_V1, id="EndQuorumEpochRequest-v1"),
    pytest.param(ER, 0, ER(topics=[ER.TopicData(topic_name="__cluster_metadata", partitions=[
        ER.PartitionData(error_code=6, leader_id=2, leader_epoch=6)])]),
        END_QUORUM_EPOCH_RESPONSE_V0, id="EndQuorumEpochResponse-v0"),
    pytest.param(ER, 1, ER(topics=[ER.TopicData(topic_name="__cluster_metadata", partitions=[
        ER.PartitionData(leader_id=1, leader_epoch=5)])],
        node_endpoints=[ER.NodeEndpoint(node_id=1, host="c1", port=9093),
                        ER.NodeEndpoint(node_id=2, host="c2", port=32768)]),
        END_QUORUM_EPOCH_RESPONSE_V1, id="EndQuorumEpochResponse-v1"),
]

# ---------------------------------------------------------------------------------------------
# FetchSnapshot (API 59), flexible from v0. ClusterId is request tag 0 (top level); v1 adds the
# partition's tagged ReplicaDirectoryId (tag 0) and the response's tagged NodeEndpoints (tag 0).
# ---------------------------------------------------------------------------------------------

FSQ = messages.FetchSnapshotRequest
FSR = messages.FetchSnapshotResponse

FETCH_SNAPSHOT_REQUEST_V0 = b"".join([
    b"\x00\x00\x00\x02",  # ReplicaId int32 = 2
    b"\x7f\xff\xff\xff",  # MaxBytes int32 = 2147483647
    b"\x02",              # Topics compact array, 1 element
    b"\x13" + META,       #   Name compact string
    b"\x02",              #   Partitions compact array, 1 element
    b"\x00\x00\x00\x00",  #     Partition int32 = 0
    b"\x00\x00\x00\x05",  #     CurrentLeaderEpoch int32 = 5
    b"\x00\x00\x00\x00\x00\x00\x00\x64",  # SnapshotId.EndOffset int64 = 100
    b"\x00\x00\x00\x04",  #     SnapshotId.Epoch int32 = 4
    b"\x00",              #     SnapshotId tagged fields: none
    b"\x00\x00\x00\x00\x00\x00\x00\x00",  # Position int64 = 0
    b"\x00",              #     tagged fields: none
    b"\x00",              #   tagged fields: none
    b"\x01",              # tagged fields: 1 entry
    b"\x00",              #   tag 0 = ClusterId
    b"\x04",              #   size 4
    b"\x04" b"abc",       #   compact nullable string "abc"
])

FETCH_SNAPSHOT_REQUEST_V1 = b"".join([
    b"\x00\x00\x00\x03",  # ReplicaId int32 = 3
    b"\x00\x10\x00\x00",  # MaxBytes int32 = 1048576
    b"\x02",              # Topics compact array, 1 element
    b"\x13" + META,       #   Name compact string
    b"\x02",              #   Partitions compact array, 1 element
    b"\x00\x00\x00\x00",  #     Partition int32 = 0
    b"\x00\x00\x00\x05",  #     CurrentLeaderEpoch int32 = 5
    b"\x00\x00\x00\x00\x00\x00\x00\x64",  # SnapshotId.EndOffset int64 = 100
    b"\x00\x00\x00\x04",  #     SnapshotId.Epoch int32 = 4
    b"\x00",              #     SnapshotId tagged fields: none
    b"\x00\x00\x00\x00\x00\x10\x00\x00",  # Position int64 = 1048576
    b"\x01",              #     tagged fields: 1 entry
    b"\x00",              #       tag 0 = ReplicaDirectoryId
    b"\x10",              #       size 16
    UUID_B_BYTES,         #       uuid
    b"\x00",              #   tagged fields: none
    b"\x00",              # tagged fields: none (ClusterId null is the default)
])

FETCH_SNAPSHOT_RESPONSE_V0 = b"".join([
    b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
    b"\x00\x00",          # ErrorCode int16 = 0
    b"\x02",              # Topics compact array, 1 element
    b"\x13" + META,       #   Name compact string
    b"\x02",              #   Partitions compact array, 1 element
    b"\x00\x00\x00\x00",  #     Index int32 = 0
    b"\x00\x00",          #     ErrorCode int16 = 0
    b"\x00\x00\x00\x00\x00\x00\x00\x64",  # SnapshotId.EndOffset int64 = 100
    b"\x00\x00\x00\x04",  #     SnapshotId.Epoch int32 = 4
    b"\x00",              #     SnapshotId tagged fields: none
    b"\x00\x00\x00\x00\x00\x00\x10\x00",  # Size int64 = 4096
    b"\x00\x00\x00\x00\x00\x00\x00\x00",  # Position int64 = 0
    b"\x05" b"\xde\xad\xbe\xef",  #  UnalignedRecords compact records, 4 bytes
    b"\x01",              #     tagged fields: 1 entry
    b"\x00",              #       tag 0 = CurrentLeader
    b"\x09",              #       size 9
    b"\x00\x00\x00\x01",  #         LeaderId int32 = 1
    b"\x00\x00\x00\x05",  #         LeaderEpoch int32 = 5
    b"\x00",              #         tagged fields: none
    b"\x00",              #   tagged fields: none
    b"\x00",              # tagged fields: none
])

FETCH_SNAPSHOT_RESPONSE_V1 = b"".join([
    b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
    b"\x00\x06",          # ErrorCode int16 = 6 NOT_LEADER_OR_FOLLOWER
    b"\x01",              # Topics compact array, empty
    b"\x01",              # tagged fields: 1 entry
    b"\x00",              #   tag 0 = NodeEndpoints
    b"\x0b",              #   size 11
    b"\x02",              #     compact array, 1 element
    b"\x00\x00\x00\x01",  #     NodeId int32 = 1
    b"\x03" b"c1",        #     Host compact string
    b"\xc3\x50",          #     Port uint16 = 50000
    b"\x00",              #     tagged fields: none
])

FETCH_SNAPSHOT_CASES = [
    pytest.param(FSQ, 0, FSQ(cluster_id="abc", replica_id=2, topics=[FSQ.TopicSnapshot(
        name="__cluster_metadata", partitions=[FSQ.PartitionSnapshot(
            partition=0, current_leader_epoch=5, snapshot_id=FSQ.SnapshotId(end_offset=100, epoch=4),
            position=0)])]),
        FETCH_SNAPSHOT_REQUEST_V0, id="FetchSnapshotRequest-v0"),
    pytest.param(FSQ, 1, FSQ(replica_id=3, max_bytes=1048576, topics=[FSQ.TopicSnapshot(
        name="__cluster_metadata", partitions=[FSQ.PartitionSnapshot(
            partition=0, current_leader_epoch=5, snapshot_id=FSQ.SnapshotId(end_offset=100, epoch=4),
            position=1048576, replica_directory_id=UUID_B)])]),
        FETCH_SNAPSHOT_REQUEST_V1, id="FetchSnapshotRequest-v1"),
    pytest.param(FSR, 0, FSR(topics=[FSR.TopicSnapshot(name="__cluster_metadata", partitions=[
        FSR.PartitionSnapshot(index=0, snapshot_id=FSR.SnapshotId(end_offset=100, epoch=4),
                              current_leader=FSR.LeaderIdAndEpoch(leader_id=1, leader_epoch=5),
                              size=4096, position=0, unaligned_records=b"\xde\xad\xbe\xef")])]),
        FETCH_SNAPSHOT_RESPONSE_V0, id="FetchSnapshotResponse-v0"),
    pytest.param(FSR, 1, FSR(error_code=6, node_endpoints=[
        FSR.NodeEndpoint(node_id=1, host="c1", port=50000)]), FETCH_SNAPSHOT_RESPONSE_V1,
        id="FetchSnapshotResponse-v1"),
]

CASES = (DESCRIBE_QUORUM_CASES + VOTERS_CASES + UPDATE_FEATURES_CASES + VOTE_CASES + QUORUM_EPOCH_CASES
         + FETCH_SNAPSHOT_CASES)


test_encode_matches_golden, test_decode_matches_golden = golden_tests(CASES)
