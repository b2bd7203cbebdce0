"""Golden wire vectors for Fetch (API 1) v0-v3 (Kafka 3.9's oldest, removed in 4.0 by KIP-896) and
v12-v18, worked out by hand from Kafka's JSON schema.

v0-v3 are not flexible: int16 string lengths, int32 array lengths, int32 byte lengths (-1 null), no
tagged fields. Request v3 adds MaxBytes; response v1 adds ThrottleTimeMs. What changes from v12 on
(flexible):
* request v12: tagged ClusterId (tag 0), LastFetchedEpoch; v13: TopicId replaces the topic name (also in
  ForgottenTopicsData); v14 = v13; v15: ReplicaId leaves the body for the tagged ReplicaState (tag 1);
  v16 = v15; v17: tagged ReplicaDirectoryId per partition (tag 0); v18: tagged HighWatermark per
  partition (tag 1, default 2^63-1).
* response v12: tagged DivergingEpoch/CurrentLeader/SnapshotId per partition (tags 0/1/2); v13: TopicId
  replaces the topic name; v14 = v15 = v13; v16: tagged NodeEndpoints (tag 0) at the top; v17 = v18 = v16.

Each vector is checked both ways. None was produced by the project's encoder.
"""

from __future__ import annotations

import pytest

from golden.golden_testlib import golden_tests
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import Uuid

UUID_A_BYTES = b"\x6d\x2a\x1f\x0e\x43\x5c\x4b\x8a\x9e\x01\x23\x45\x67\x89\xab\xcd"
UUID_B_BYTES = b"\xf0\xe1\xd2\xc3\xb4\xa5\x96\x87\x78\x69\x5a\x4b\x3c\x2d\x1e\x0f"
UUID_A, UUID_B = Uuid(UUID_A_BYTES), Uuid(UUID_B_BYTES)
# Uuid.METADATA_TOPIC_ID, text form AAAAAAAAAAAAAAAAAAAAAQ: most significant bits 0, least significant 1.
METADATA_TOPIC_ID_BYTES = b"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01"
METADATA_TOPIC_ID = Uuid.from_string("AAAAAAAAAAAAAAAAAAAAAQ")
META = b"__cluster_metadata"  # 18 bytes, compact length 0x13

FQ = messages.FetchRequest
FR = messages.FetchResponse

# ---------------------------------------------------------------------------------------------
# Requests
# ---------------------------------------------------------------------------------------------

FETCH_REQUEST_V0 = b"".join([
    b"\x00\x00\x00\x01",  # ReplicaId int32 = 1
    b"\x00\x00\x01\xf4",  # MaxWaitMs int32 = 500
    b"\x00\x00\x00\x01",  # MinBytes int32 = 1
    b"\x00\x00\x00\x01",  # Topics array, 1 element
    b"\x00\x12" + META,   #   Topic string, 18 bytes
    b"\x00\x00\x00\x01",  #   Partitions array, 1 element
    b"\x00\x00\x00\x00",  #     Partition int32 = 0
    b"\x00\x00\x00\x00\x00\x00\x00\x64",  # FetchOffset int64 = 100
    b"\x00\x10\x00\x00",  #     PartitionMaxBytes int32 = 1048576
])

FETCH_REQUEST_V3 = FETCH_REQUEST_V0[:12] + b"\x00\x80\x00\x00" + FETCH_REQUEST_V0[12:]
"""v3: MaxBytes int32 = 8388608 after MinBytes."""

FETCH_REQUEST_V12 = b"".join([
    b"\x00\x00\x00\x01",  # ReplicaId int32 = 1
    b"\x00\x00\x01\xf4",  # MaxWaitMs int32 = 500
    b"\x00\x00\x00\x01",  # MinBytes int32 = 1
    b"\x7f\xff\xff\xff",  # MaxBytes int32 = 2147483647
    b"\x00",              # IsolationLevel int8 = 0
    b"\x00\x00\x00\x00",  # SessionId int32 = 0
    b"\xff\xff\xff\xff",  # SessionEpoch int32 = -1
    b"\x02",              # Topics compact array, 1 element
    b"\x13" + META,       #   Topic compact string (v0-12)
    b"\x02",              #   Partitions compact array, 1 element
    b"\x00\x00\x00\x00",  #     Partition int32 = 0
    b"\x00\x00\x00\x05",  #     CurrentLeaderEpoch int32 = 5
    b"\x00\x00\x00\x00\x00\x00\x00\x64",  # FetchOffset int64 = 100
    b"\x00\x00\x00\x04",  #     LastFetchedEpoch int32 = 4
    b"\xff\xff\xff\xff\xff\xff\xff\xff",  # LogStartOffset int64 = -1
    b"\x00\x10\x00\x00",  #     PartitionMaxBytes int32 = 1048576
    b"\x00",              #     tagged fields: none
    b"\x00",              #   tagged fields: none
    b"\x02",              # ForgottenTopicsData compact array, 1 element
    b"\x04" b"old",       #   Topic compact string (v7-12)
    b"\x03",              #   Partitions compact []int32, 2 elements
    b"\x00\x00\x00\x01",  #     [0] int32 = 1
    b"\x00\x00\x00\x02",  #     [1] int32 = 2
    b"\x00",              #   tagged fields: none
    b"\x01",              # RackId compact string = ""
    b"\x01",              # tagged fields: 1 entry
    b"\x00",              #   tag 0 = ClusterId
    b"\x04",              #   size 4
    b"\x04" b"abc",       #   compact nullable string "abc"
])

FETCH_REQUEST_V13 = b"".join([
    b"\x00\x00\x00\x01",  # ReplicaId int32 = 1
    b"\x00\x00\x01\xf4",  # MaxWaitMs int32 = 500
    b"\x00\x00\x00\x01",  # MinBytes int32 = 1
    b"\x00\x80\x00\x00",  # MaxBytes int32 = 8388608
    b"\x00",              # IsolationLevel int8 = 0
    b"\x00\x00\x00\x00",  # SessionId int32 = 0
    b"\xff\xff\xff\xff",  # SessionEpoch int32 = -1
    b"\x02",              # Topics compact array, 1 element
    METADATA_TOPIC_ID_BYTES,  # TopicId uuid (v13+)
    b"\x02",              #   Partitions compact array, 1 element
    b"\x00\x00\x00\x00",  #     Partition int32 = 0
    b"\x00\x00\x00\x05",  #     CurrentLeaderEpoch int32 = 5
    b"\x00\x00\x00\x00\x00\x00\x00\x64",  # FetchOffset int64 = 100
    b"\x00\x00\x00\x04",  #     LastFetchedEpoch int32 = 4
    b"\x00\x00\x00\x00\x00\x00\x00\x00",  # LogStartOffset int64 = 0
    b"\x00\x10\x00\x00",  #     PartitionMaxBytes int32 = 1048576
    b"\x00",              #     tagged fields: none
    b"\x00",              #   tagged fields: none
    b"\x01",              # ForgottenTopicsData compact array, empty
    b"\x07" b"rack-1",    # RackId compact string, 6 bytes
    b"\x00",              # tagged fields: none (ClusterId null is the default)
])

FETCH_REQUEST_V14 = b"".join([
    b"\xff\xff\xff\xff",  # ReplicaId int32 = -1 (a consumer)
    b"\x00\x00\x00\x64",  # MaxWaitMs int32 = 100
    b"\x00\x00\x00\x00",  # MinBytes int32 = 0
    b"\x7f\xff\xff\xff",  # MaxBytes int32 = 2147483647
    b"\x01",              # IsolationLevel int8 = 1 (read committed)
    b"\x00\x00\x00\x7b",  # SessionId int32 = 123
    b"\x00\x00\x00\x02",  # SessionEpoch int32 = 2
    b"\x02",              # Topics compact array, 1 element
    UUID_A_BYTES,         #   TopicId uuid
    b"\x02",              #   Partitions compact array, 1 element
    b"\x00\x00\x00\x03",  #     Partition int32 = 3
    b"\xff\xff\xff\xff",  #     CurrentLeaderEpoch int32 = -1
    b"\x00\x00\x00\x00\x00\x00\x00\x00",  # FetchOffset int64 = 0
    b"\xff\xff\xff\xff",  #     LastFetchedEpoch int32 = -1
    b"\x00\x00\x00\x00\x00\x00\x00\x00",  # LogStartOffset int64 = 0
    b"\x00\x01\x00\x00",  #     PartitionMaxBytes int32 = 65536
    b"\x00",              #     tagged fields: none
    b"\x00",              #   tagged fields: none
    b"\x02",              # ForgottenTopicsData compact array, 1 element
    UUID_B_BYTES,         #   TopicId uuid (v13+)
    b"\x02",              #   Partitions compact []int32, 1 element
    b"\x00\x00\x00\x07",  #     [0] int32 = 7
    b"\x00",              #   tagged fields: none
    b"\x01",              # RackId compact string = ""
    b"\x00",              # tagged fields: none
])

FETCH_REQUEST_V15 = b"".join([
    # no ReplicaId in the body from v15: it moved to the tagged ReplicaState
    b"\x00\x00\x01\xf4",  # MaxWaitMs int32 = 500
    b"\x00\x00\x00\x01",  # MinBytes int32 = 1
    b"\x7f\xff\xff\xff",  # MaxBytes int32 = 2147483647
    b"\x00",              # IsolationLevel int8 = 0
    b"\x00\x00\x00\x00",  # SessionId int32 = 0
    b"\xff\xff\xff\xff",  # SessionEpoch int32 = -1
    b"\x02",              # Topics compact array, 1 element
    METADATA_TOPIC_ID_BYTES,  # TopicId uuid
    b"\x02",              #   Partitions compact array, 1 element
    b"\x00\x00\x00\x00",  #     Partition int32 = 0
    b"\x00\x00\x00\x07",  #     CurrentLeaderEpoch int32 = 7
    b"\x00\x00\x00\x00\x00\x00\x00\xc8",  # FetchOffset int64 = 200
    b"\x00\x00\x00\x07",  #     LastFetchedEpoch int32 = 7
    b"\xff\xff\xff\xff\xff\xff\xff\xff",  # LogStartOffset int64 = -1
    b"\x00\x10\x00\x00",  #     PartitionMaxBytes int32 = 1048576
    b"\x00",              #     tagged fields: none
    b"\x00",              #   tagged fields: none
    b"\x01",              # ForgottenTopicsData compact array, empty
    b"\x01",              # RackId compact string = ""
    b"\x02",              # tagged fields: 2 entries, ascending
    b"\x00",              #   tag 0 = ClusterId
    b"\x04",              #   size 4
    b"\x04" b"abc",       #   compact nullable string "abc"
    b"\x01",              #   tag 1 = ReplicaState
    b"\x0d",              #   size 13
    b"\x00\x00\x00\x01",  #     ReplicaId int32 = 1
    b"\x00\x00\x00\x00\x00\x00\x00\x07",  # ReplicaEpoch int64 = 7
    b"\x00",              #     tagged fields: none
])

FETCH_REQUEST_V16 = b"".join([
    b"\x00\x00\x01\xf4",  # MaxWaitMs int32 = 500
    b"\x00\x00\x00\x01",  # MinBytes int32 = 1
    b"\x7f\xff\xff\xff",  # MaxBytes int32 = 2147483647
    b"\x00",              # IsolationLevel int8 = 0
    b"\x00\x00\x00\x00",  # SessionId int32 = 0
    b"\xff\xff\xff\xff",  # SessionEpoch int32 = -1
    b"\x01",              # Topics compact array, empty
    b"\x01",              # ForgottenTopicsData compact array, empty
    b"\x01",              # RackId compact string = ""
    b"\x01",              # tagged fields: 1 entry
    b"\x01",              #   tag 1 = ReplicaState
    b"\x0d",              #   size 13
    b"\x00\x00\x00\x02",  #     ReplicaId int32 = 2
    b"\xff\xff\xff\xff\xff\xff\xff\xff",  # ReplicaEpoch int64 = -1
    b"\x00",              #     tagged fields: none
])

FETCH_REQUEST_V17 = b"".join([
    b"\x00\x00\x01\xf4",  # MaxWaitMs int32 = 500
    b"\x00\x00\x00\x01",  # MinBytes int32 = 1
    b"\x7f\xff\xff\xff",  # MaxBytes int32 = 2147483647
    b"\x00",              # IsolationLevel int8 = 0
    b"\x00\x00\x00\x00",  # SessionId int32 = 0
    b"\xff\xff\xff\xff",  # SessionEpoch int32 = -1
    b"\x02",              # Topics compact array, 1 element
    METADATA_TOPIC_ID_BYTES,  # TopicId uuid
    b"\x02",              #   Partitions compact array, 1 element
    b"\x00\x00\x00\x00",  #     Partition int32 = 0
    b"\x00\x00\x00\x07",  #     CurrentLeaderEpoch int32 = 7
    b"\x00\x00\x00\x00\x00\x00\x00\xc8",  # FetchOffset int64 = 200
    b"\x00\x00\x00\x07",  #     LastFetchedEpoch int32 = 7
    b"\xff\xff\xff\xff\xff\xff\xff\xff",  # LogStartOffset int64 = -1
    b"\x00\x10\x00\x00",  #     PartitionMaxBytes int32 = 1048576
    b"\x01",              #     tagged fields: 1 entry
    b"\x00",              #       tag 0 = ReplicaDirectoryId (v17+)
    b"\x10",              #       size 16
    UUID_A_BYTES,         #       uuid
    b"\x00",              #   tagged fields: none
    b"\x01",              # ForgottenTopicsData compact array, empty
    b"\x01",              # RackId compact string = ""
    b"\x01",              # tagged fields: 1 entry
    b"\x01",              #   tag 1 = ReplicaState
    b"\x0d",              #   size 13
    b"\x00\x00\x00\x01",  #     ReplicaId int32 = 1
    b"\x00\x00\x00\x00\x00\x00\x00\x07",  # ReplicaEpoch int64 = 7
    b"\x00",              #     tagged fields: none
])

FETCH_REQUEST_V18 = b"".join([
    b"\x00\x00\x01\xf4",  # MaxWaitMs int32 = 500
    b"\x00\x00\x00\x01",  # MinBytes int32 = 1
    b"\x7f\xff\xff\xff",  # MaxBytes int32 = 2147483647
    b"\x00",              # IsolationLevel int8 = 0
    b"\x00\x00\x00\x00",  # SessionId int32 = 0
    b"\xff\xff\xff\xff",  # SessionEpoch int32 = -1
    b"\x02",              # Topics compact array, 1 element
    METADATA_TOPIC_ID_BYTES,  # TopicId uuid
    b"\x03",              #   Partitions compact array, 2 elements
    b"\x00\x00\x00\x00",  #     [0] Partition int32 = 0
    b"\x00\x00\x00\x07",  #     [0] CurrentLeaderEpoch int32 = 7
    b"\x00\x00\x00\x00\x00\x00\x00\xc8",  # [0] FetchOffset int64 = 200
    b"\x00\x00\x00\x07",  #     [0] LastFetchedEpoch int32 = 7
    b"\xff\xff\xff\xff\xff\xff\xff\xff",  # [0] LogStartOffset int64 = -1
    b"\x00\x10\x00\x00",  #     [0] PartitionMaxBytes int32 = 1048576
    b"\x02",              #     [0] tagged fields: 2 entries, ascending
    b"\x00",              #       tag 0 = ReplicaDirectoryId
    b"\x10",              #       size 16
    UUID_A_BYTES,         #       uuid
    b"\x01",              #       tag 1 = HighWatermark (v18+)
    b"\x08",              #       size 8
    b"\x00\x00\x00\x00\x00\x00\x00\xbe",  # int64 = 190
    b"\x00\x00\x00\x01",  #     [1] Partition int32 = 1
    b"\xff\xff\xff\xff",  #     [1] CurrentLeaderEpoch int32 = -1
    b"\x00\x00\x00\x00\x00\x00\x00\x00",  # [1] FetchOffset int64 = 0
    b"\xff\xff\xff\xff",  #     [1] LastFetchedEpoch int32 = -1
    b"\xff\xff\xff\xff\xff\xff\xff\xff",  # [1] LogStartOffset int64 = -1
    b"\x00\x00\x10\x00",  #     [1] PartitionMaxBytes int32 = 4096
    b"\x00",              #     [1] tagged fields: none (zero directory id, HighWatermark 2^63-1)
    b"\x00",              #   tagged fields: none
    b"\x01",              # ForgottenTopicsData compact array, empty
    b"\x01",              # RackId compact string = ""
    b"\x01",              # tagged fields: 1 entry
    b"\x01",              #   tag 1 = ReplicaState
    b"\x0d",              #   size 13
    b"\x00\x00\x00\x01",  #     ReplicaId int32 = 1
    b"\x00\x00\x00\x00\x00\x00\x00\x07",  # ReplicaEpoch int64 = 7
    b"\x00",              #     tagged fields: none
])


def _kraft_partition(**extra: object) -> messages.FetchRequest.FetchPartition:
    return FQ.FetchPartition(partition=0, current_leader_epoch=7, fetch_offset=200, last_fetched_epoch=7,
                             log_start_offset=-1, partition_max_bytes=1048576, **extra)


def _request_v0(**extra: object) -> messages.FetchRequest:
    return FQ(replica_id=1, max_wait_ms=500, min_bytes=1, topics=[FQ.FetchTopic(
        topic="__cluster_metadata", partitions=[FQ.FetchPartition(partition=0, fetch_offset=100,
                                                                  partition_max_bytes=1048576)])], **extra)


REQUEST_CASES = [
    pytest.param(FQ, 0, _request_v0(), FETCH_REQUEST_V0, id="FetchRequest-v0"),
    pytest.param(FQ, 3, _request_v0(max_bytes=8388608), FETCH_REQUEST_V3, id="FetchRequest-v3"),
    pytest.param(FQ, 12, FQ(
        cluster_id="abc", replica_id=1, max_wait_ms=500, min_bytes=1,
        topics=[FQ.FetchTopic(topic="__cluster_metadata", partitions=[FQ.FetchPartition(
            partition=0, current_leader_epoch=5, fetch_offset=100, last_fetched_epoch=4, log_start_offset=-1,
            partition_max_bytes=1048576)])],
        forgotten_topics_data=[FQ.ForgottenTopic(topic="old", partitions=[1, 2])]),
        FETCH_REQUEST_V12, id="FetchRequest-v12"),
    pytest.param(FQ, 13, FQ(
        replica_id=1, max_wait_ms=500, min_bytes=1, max_bytes=8388608, rack_id="rack-1",
        topics=[FQ.FetchTopic(topic_id=METADATA_TOPIC_ID, partitions=[FQ.FetchPartition(
            partition=0, current_leader_epoch=5, fetch_offset=100, last_fetched_epoch=4, log_start_offset=0,
            partition_max_bytes=1048576)])]),
        FETCH_REQUEST_V13, id="FetchRequest-v13"),
    pytest.param(FQ, 14, FQ(
        replica_id=-1, max_wait_ms=100, min_bytes=0, isolation_level=1, session_id=123, session_epoch=2,
        topics=[FQ.FetchTopic(topic_id=UUID_A, partitions=[FQ.FetchPartition(
            partition=3, current_leader_epoch=-1, fetch_offset=0, last_fetched_epoch=-1, log_start_offset=0,
            partition_max_bytes=65536)])],
        forgotten_topics_data=[FQ.ForgottenTopic(topic_id=UUID_B, partitions=[7])]),
        FETCH_REQUEST_V14, id="FetchRequest-v14"),
    pytest.param(FQ, 15, FQ(
        cluster_id="abc", replica_state=FQ.ReplicaState(replica_id=1, replica_epoch=7), max_wait_ms=500,
        min_bytes=1, topics=[FQ.FetchTopic(topic_id=METADATA_TOPIC_ID, partitions=[_kraft_partition()])]),
        FETCH_REQUEST_V15, id="FetchRequest-v15"),
    pytest.param(FQ, 16, FQ(
        replica_state=FQ.ReplicaState(replica_id=2, replica_epoch=-1), max_wait_ms=500, min_bytes=1),
        FETCH_REQUEST_V16, id="FetchRequest-v16"),
    pytest.param(FQ, 17, FQ(
        replica_state=FQ.ReplicaState(replica_id=1, replica_epoch=7), max_wait_ms=500, min_bytes=1,
        topics=[FQ.FetchTopic(topic_id=METADATA_TOPIC_ID, partitions=[
            _kraft_partition(replica_directory_id=UUID_A)])]),
        FETCH_REQUEST_V17, id="FetchRequest-v17"),
    pytest.param(FQ, 18, FQ(
        replica_state=FQ.ReplicaState(replica_id=1, replica_epoch=7), max_wait_ms=500, min_bytes=1,
        topics=[FQ.FetchTopic(topic_id=METADATA_TOPIC_ID, partitions=[
            _kraft_partition(replica_directory_id=UUID_A, high_watermark=190),
            FQ.FetchPartition(partition=1, fetch_offset=0, partition_max_bytes=4096)])]),
        FETCH_REQUEST_V18, id="FetchRequest-v18"),
]

# ---------------------------------------------------------------------------------------------
# Responses
# ---------------------------------------------------------------------------------------------

FETCH_RESPONSE_V0 = b"".join([
    b"\x00\x00\x00\x01",  # Responses array, 1 element
    b"\x00\x12" + META,   #   Topic string, 18 bytes
    b"\x00\x00\x00\x01",  #   Partitions array, 1 element
    b"\x00\x00\x00\x00",  #     PartitionIndex int32 = 0
    b"\x00\x00",          #     ErrorCode int16 = 0
    b"\x00\x00\x00\x00\x00\x00\x00\x64",  # HighWatermark int64 = 100
    b"\x00\x00\x00\x02", b"\x01\x02",  # Records nullable bytes, 2 bytes
])

FETCH_RESPONSE_V1_NULL_RECORDS = b"".join([
    b"\x00\x00\x00\x0a",  # ThrottleTimeMs int32 = 10 (v1+)
    FETCH_RESPONSE_V0[:-6],
    b"\xff\xff\xff\xff",  #     Records nullable bytes = null
])

FETCH_RESPONSE_V12 = b"".join([
    b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
    b"\x00\x00",          # ErrorCode int16 = 0
    b"\x00\x00\x00\x00",  # SessionId int32 = 0
    b"\x02",              # Responses compact array, 1 element
    b"\x13" + META,       #   Topic compact string (v0-12)
    b"\x02",              #   Partitions compact array, 1 element
    b"\x00\x00\x00\x00",  #     PartitionIndex int32 = 0
    b"\x00\x00",          #     ErrorCode int16 = 0
    b"\x00\x00\x00\x00\x00\x00\x00\x64",  # HighWatermark int64 = 100
    b"\x00\x00\x00\x00\x00\x00\x00\x64",  # LastStableOffset int64 = 100
    b"\x00\x00\x00\x00\x00\x00\x00\x00",  # LogStartOffset int64 = 0
    b"\x00",              #     AbortedTransactions compact nullable array = null
    b"\xff\xff\xff\xff",  #     PreferredReadReplica int32 = -1
    b"\x00",              #     Records compact nullable records = null
    b"\x03",              #     tagged fields: 3 entries, ascending
    b"\x00",              #       tag 0 = DivergingEpoch
    b"\x0d",              #       size 13
    b"\x00\x00\x00\x04",  #         Epoch int32 = 4
    b"\x00\x00\x00\x00\x00\x00\x00\x5a",  # EndOffset int64 = 90
    b"\x00",              #         tagged fields: none
    b"\x01",              #       tag 1 = CurrentLeader
    b"\x09",              #       size 9
    b"\x00\x00\x00\x01",  #         LeaderId int32 = 1
    b"\x00\x00\x00\x05",  #         LeaderEpoch int32 = 5
    b"\x00",              #         tagged fields: none
    b"\x02",              #       tag 2 = SnapshotId
    b"\x0d",              #       size 13
    b"\x00\x00\x00\x00\x00\x00\x00\x50",  # EndOffset int64 = 80
    b"\x00\x00\x00\x03",  #         Epoch int32 = 3
    b"\x00",              #         tagged fields: none
    b"\x00",              #   tagged fields: none
    b"\x00",              # tagged fields: none
])

FETCH_RESPONSE_V13_V14 = b"".join([
    b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
    b"\x00\x00",          # ErrorCode int16 = 0
    b"\x00\x00\x00\x00",  # SessionId int32 = 0
    b"\x02",              # Responses compact array, 1 element
    METADATA_TOPIC_ID_BYTES,  # TopicId uuid (v13+)
    b"\x02",              #   Partitions compact array, 1 element
    b"\x00\x00\x00\x00",  #     PartitionIndex int32 = 0
    b"\x00\x00",          #     ErrorCode int16 = 0
    b"\x00\x00\x00\x00\x00\x00\x00\x64",  # HighWatermark int64 = 100
    b"\x00\x00\x00\x00\x00\x00\x00\x64",  # LastStableOffset int64 = 100
    b"\x00\x00\x00\x00\x00\x00\x00\x00",  # LogStartOffset int64 = 0
    b"\x01",              #     AbortedTransactions compact nullable array, empty (not null)
    b"\xff\xff\xff\xff",  #     PreferredReadReplica int32 = -1
    b"\x04" b"\x01\x02\x03",  # Records compact nullable records, 3 bytes
    b"\x01",              #     tagged fields: 1 entry
    b"\x01",              #       tag 1 = CurrentLeader
    b"\x09",              #       size 9
    b"\x00\x00\x00\x01",  #         LeaderId int32 = 1
    b"\x00\x00\x00\x05",  #         LeaderEpoch int32 = 5
    b"\x00",              #         tagged fields: none
    b"\x00",              #   tagged fields: none
    b"\x00",              # tagged fields: none
])

FETCH_RESPONSE_V15 = b"".join([
    b"\x00\x00\x00\x0a",  # ThrottleTimeMs int32 = 10
    b"\x00\x00",          # ErrorCode int16 = 0
    b"\x00\x00\x03\xe8",  # SessionId int32 = 1000
    b"\x02",              # Responses compact array, 1 element
    UUID_A_BYTES,         #   TopicId uuid
    b"\x02",              #   Partitions compact array, 1 element
    b"\x00\x00\x00\x02",  #     PartitionIndex int32 = 2
    b"\x00\x01",          #     ErrorCode int16 = 1 OFFSET_OUT_OF_RANGE
    b"\x00\x00\x00\x00\x00\x00\x00\x64",  # HighWatermark int64 = 100
    b"\xff\xff\xff\xff\xff\xff\xff\xff",  # LastStableOffset int64 = -1
    b"\xff\xff\xff\xff\xff\xff\xff\xff",  # LogStartOffset int64 = -1
    b"\x02",              #     AbortedTransactions compact nullable array, 1 element
    b"\x00\x00\x00\x00\x00\x00\x03\xe8",  # ProducerId int64 = 1000
    b"\x00\x00\x00\x00\x00\x00\x00\x32",  # FirstOffset int64 = 50
    b"\x00",              #       tagged fields: none
    b"\x00\x00\x00\x03",  #     PreferredReadReplica int32 = 3
    b"\x01",              #     Records compact nullable records, empty
    b"\x00",              #     tagged fields: none
    b"\x00",              #   tagged fields: none
    b"\x00",              # tagged fields: none
])

FETCH_RESPONSE_V16_V17 = b"".join([
    b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
    b"\x00\x00",          # ErrorCode int16 = 0
    b"\x00\x00\x00\x00",  # SessionId int32 = 0
    b"\x02",              # Responses compact array, 1 element
    METADATA_TOPIC_ID_BYTES,  # TopicId uuid
    b"\x02",              #   Partitions compact array, 1 element
    b"\x00\x00\x00\x00",  #     PartitionIndex int32 = 0
    b"\x00\x06",          #     ErrorCode int16 = 6 NOT_LEADER_OR_FOLLOWER
    b"\xff\xff\xff\xff\xff\xff\xff\xff",  # HighWatermark int64 = -1
    b"\xff\xff\xff\xff\xff\xff\xff\xff",  # LastStableOffset int64 = -1
    b"\xff\xff\xff\xff\xff\xff\xff\xff",  # LogStartOffset int64 = -1
    b"\x00",              #     AbortedTransactions compact nullable array = null
    b"\xff\xff\xff\xff",  #     PreferredReadReplica int32 = -1
    b"\x00",              #     Records compact nullable records = null
    b"\x01",              #     tagged fields: 1 entry
    b"\x01",              #       tag 1 = CurrentLeader
    b"\x09",              #       size 9
    b"\x00\x00\x00\x02",  #         LeaderId int32 = 2
    b"\x00\x00\x00\x08",  #         LeaderEpoch int32 = 8
    b"\x00",              #         tagged fields: none
    b"\x00",              #   tagged fields: none
    b"\x01",              # tagged fields: 1 entry
    b"\x00",              #   tag 0 = NodeEndpoints (v16+)
    b"\x0e",              #   size 14
    b"\x02",              #     compact array, 1 element
    b"\x00\x00\x00\x02",  #     NodeId int32 = 2
    b"\x03" b"c2",        #     Host compact string
    b"\x00\x00\x23\x85",  #     Port int32 = 9093
    b"\x00",              #     Rack compact nullable string = null
    b"\x00",              #     tagged fields: none
])

FETCH_RESPONSE_V18 = b"".join([
    b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
    b"\x00\x00",          # ErrorCode int16 = 0
    b"\x00\x00\x00\x00",  # SessionId int32 = 0
    b"\x01",              # Responses compact array, empty
    b"\x01",              # tagged fields: 1 entry
    b"\x00",              #   tag 0 = NodeEndpoints
    b"\x1d",              #   size 29
    b"\x03",              #     compact array, 2 elements
    b"\x00\x00\x00\x01",  #     [0] NodeId int32 = 1
    b"\x03" b"c1",        #     [0] Host compact string
    b"\x00\x00\x23\x85",  #     [0] Port int32 = 9093
    b"\x03" b"r1",        #     [0] Rack compact nullable string = "r1"
    b"\x00",              #     [0] tagged fields: none
    b"\x00\x00\x00\x02",  #     [1] NodeId int32 = 2
    b"\x03" b"c2",        #     [1] Host compact string
    b"\x00\x00\x23\x86",  #     [1] Port int32 = 9094
    b"\x00",              #     [1] Rack compact nullable string = null
    b"\x00",              #     [1] tagged fields: none
])


def _response_v13(version_topic_id: Uuid) -> messages.FetchResponse:
    return FR(responses=[FR.FetchableTopicResponse(topic_id=version_topic_id, partitions=[FR.PartitionData(
        partition_index=0, high_watermark=100, last_stable_offset=100, log_start_offset=0,
        current_leader=FR.LeaderIdAndEpoch(leader_id=1, leader_epoch=5),
        aborted_transactions=[], records=b"\x01\x02\x03")])])


def _response_v16() -> messages.FetchResponse:
    return FR(
        responses=[FR.FetchableTopicResponse(topic_id=METADATA_TOPIC_ID, partitions=[FR.PartitionData(
            partition_index=0, error_code=6, high_watermark=-1, last_stable_offset=-1, log_start_offset=-1,
            current_leader=FR.LeaderIdAndEpoch(leader_id=2, leader_epoch=8), aborted_transactions=None,
            records=None)])],
        node_endpoints=[FR.NodeEndpoint(node_id=2, host="c2", port=9093, rack=None)])


def _response_v0(records: bytes | None, throttle_time_ms: int = 0) -> messages.FetchResponse:
    return FR(throttle_time_ms=throttle_time_ms, responses=[FR.FetchableTopicResponse(
        topic="__cluster_metadata", partitions=[FR.PartitionData(partition_index=0, high_watermark=100,
                                                                 records=records)])])


RESPONSE_CASES = [
    pytest.param(FR, 0, _response_v0(b"\x01\x02"), FETCH_RESPONSE_V0, id="FetchResponse-v0"),
    pytest.param(FR, 1, _response_v0(None, 10), FETCH_RESPONSE_V1_NULL_RECORDS, id="FetchResponse-v1"),
    pytest.param(FR, 12, FR(responses=[FR.FetchableTopicResponse(topic="__cluster_metadata", partitions=[
        FR.PartitionData(partition_index=0, high_watermark=100, last_stable_offset=100, log_start_offset=0,
                         diverging_epoch=FR.EpochEndOffset(epoch=4, end_offset=90),
                         current_leader=FR.LeaderIdAndEpoch(leader_id=1, leader_epoch=5),
                         snapshot_id=FR.SnapshotId(end_offset=80, epoch=3),
                         aborted_transactions=None, records=None)])]),
        FETCH_RESPONSE_V12, id="FetchResponse-v12"),
    pytest.param(FR, 13, _response_v13(METADATA_TOPIC_ID), FETCH_RESPONSE_V13_V14, id="FetchResponse-v13"),
    pytest.param(FR, 14, _response_v13(METADATA_TOPIC_ID), FETCH_RESPONSE_V13_V14, id="FetchResponse-v14"),
    pytest.param(FR, 15, FR(throttle_time_ms=10, session_id=1000, responses=[FR.FetchableTopicResponse(
        topic_id=UUID_A, partitions=[FR.PartitionData(
            partition_index=2, error_code=1, high_watermark=100, last_stable_offset=-1, log_start_offset=-1,
            aborted_transactions=[FR.AbortedTransaction(producer_id=1000, first_offset=50)],
            preferred_read_replica=3, records=b"")])]),
        FETCH_RESPONSE_V15, id="FetchResponse-v15"),
    pytest.param(FR, 16, _response_v16(), FETCH_RESPONSE_V16_V17, id="FetchResponse-v16"),
    pytest.param(FR, 17, _response_v16(), FETCH_RESPONSE_V16_V17, id="FetchResponse-v17"),
    pytest.param(FR, 18, FR(node_endpoints=[FR.NodeEndpoint(node_id=1, host="c1", port=9093, rack="r1"),
                                            FR.NodeEndpoint(node_id=2, host="c2", port=9094, rack=None)]),
                 FETCH_RESPONSE_V18, id="FetchResponse-v18"),
]

CASES = REQUEST_CASES + RESPONSE_CASES


test_encode_matches_golden, test_decode_matches_golden = golden_tests(CASES)


def test_metadata_topic_id_text_form_is_the_wire_bytes() -> None:
    assert METADATA_TOPIC_ID.bytes == METADATA_TOPIC_ID_BYTES
    assert str(Uuid(METADATA_TOPIC_ID_BYTES)) == "AAAAAAAAAAAAAAAAAAAAAQ"
