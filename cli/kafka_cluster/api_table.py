"""Kafka 4.4's API keys as its tools' client knows them: name, oldest and newest version, and whether the
broker listener serves the API. ``kafka-cluster api-versions`` prints every node's ranges against this
table, as Kafka's ``NodeApiVersions.toString(true)`` does against the client's ``ApiKeys``.

The ranges are the ``validVersions`` of Kafka's request schemas (``clients/src/main/resources/common/
message/*Request.json``), unstable last versions included (``ApiKeys.latestVersion()`` counts them); the
broker flag is whether the schema's ``listeners`` name ``broker`` (``ApiKeys.clientApis()`` is
``brokerApis()`` in Kafka 4.x). An API without valid versions (LeaderAndIsr, StopReplica,
UpdateMetadata, ControlledShutdown, removed with ZooKeeper in Kafka 4.0) has none: its range is 0 to -1.

Against the schemas of the 4.2 branch, Kafka 4.3 and 4.4 add: BrokerHeartbeat v2 (KIP-1066, PR #21273),
ApiVersions v5 (KIP-1242, PR #22187), TxnOffsetCommit v6 (KIP-1319, PR #22205), DeleteGroups v3,
StreamsGroupHeartbeat and StreamsGroupDescribe v1 and the new StreamsGroupTopologyDescriptionUpdate (key
93), and UnregisterController (key 94, KIP-1312, PR #22191).
"""

from __future__ import annotations

from typing import NamedTuple


class ApiKeyInfo(NamedTuple):
    """One of Kafka's API keys."""

    key: int
    name: str
    oldest: int
    latest: int
    broker: bool
    """Whether the broker listener serves it (a client API): a node that lacks it is listed as
    ``UNSUPPORTED``."""


API_KEYS: tuple[ApiKeyInfo, ...] = (
    ApiKeyInfo(0, "Produce", 3, 13, True),
    ApiKeyInfo(1, "Fetch", 4, 18, True),
    ApiKeyInfo(2, "ListOffsets", 1, 11, True),
    ApiKeyInfo(3, "Metadata", 0, 13, True),
    ApiKeyInfo(4, "LeaderAndIsr", 0, -1, False),
    ApiKeyInfo(5, "StopReplica", 0, -1, False),
    ApiKeyInfo(6, "UpdateMetadata", 0, -1, False),
    ApiKeyInfo(7, "ControlledShutdown", 0, -1, False),
    ApiKeyInfo(8, "OffsetCommit", 2, 10, True),
    ApiKeyInfo(9, "OffsetFetch", 1, 10, True),
    ApiKeyInfo(10, "FindCoordinator", 0, 6, True),
    ApiKeyInfo(11, "JoinGroup", 0, 9, True),
    ApiKeyInfo(12, "Heartbeat", 0, 4, True),
    ApiKeyInfo(13, "LeaveGroup", 0, 5, True),
    ApiKeyInfo(14, "SyncGroup", 0, 5, True),
    ApiKeyInfo(15, "DescribeGroups", 0, 6, True),
    ApiKeyInfo(16, "ListGroups", 0, 5, True),
    ApiKeyInfo(17, "SaslHandshake", 0, 1, True),
    ApiKeyInfo(18, "ApiVersions", 0, 5, True),
    ApiKeyInfo(19, "CreateTopics", 2, 7, True),
    ApiKeyInfo(20, "DeleteTopics", 1, 6, True),
    ApiKeyInfo(21, "DeleteRecords", 0, 2, True),
    ApiKeyInfo(22, "InitProducerId", 0, 6, True),
    ApiKeyInfo(23, "OffsetForLeaderEpoch", 2, 4, True),
    ApiKeyInfo(24, "AddPartitionsToTxn", 0, 5, True),
    ApiKeyInfo(25, "AddOffsetsToTxn", 0, 4, True),
    ApiKeyInfo(26, "EndTxn", 0, 5, True),
    ApiKeyInfo(27, "WriteTxnMarkers", 1, 2, True),
    ApiKeyInfo(28, "TxnOffsetCommit", 0, 6, True),
    ApiKeyInfo(29, "DescribeAcls", 1, 3, True),
    ApiKeyInfo(30, "CreateAcls", 1, 3, True),
    ApiKeyInfo(31, "DeleteAcls", 1, 3, True),
    ApiKeyInfo(32, "DescribeConfigs", 1, 4, True),
    ApiKeyInfo(33, "AlterConfigs", 0, 2, True),
    ApiKeyInfo(34, "AlterReplicaLogDirs", 1, 2, True),
    ApiKeyInfo(35, "DescribeLogDirs", 1, 4, True),
    ApiKeyInfo(36, "SaslAuthenticate", 0, 2, True),
    ApiKeyInfo(37, "CreatePartitions", 0, 3, True),
    ApiKeyInfo(38, "CreateDelegationToken", 1, 3, True),
    ApiKeyInfo(39, "RenewDelegationToken", 1, 2, True),
    ApiKeyInfo(40, "ExpireDelegationToken", 1, 2, True),
    ApiKeyInfo(41, "DescribeDelegationToken", 1, 3, True),
    ApiKeyInfo(42, "DeleteGroups", 0, 3, True),
    ApiKeyInfo(43, "ElectLeaders", 0, 2, True),
    ApiKeyInfo(44, "IncrementalAlterConfigs", 0, 1, True),
    ApiKeyInfo(45, "AlterPartitionReassignments", 0, 1, True),
    ApiKeyInfo(46, "ListPartitionReassignments", 0, 0, True),
    ApiKeyInfo(47, "OffsetDelete", 0, 0, True),
    ApiKeyInfo(48, "DescribeClientQuotas", 0, 1, True),
    ApiKeyInfo(49, "AlterClientQuotas", 0, 1, True),
    ApiKeyInfo(50, "DescribeUserScramCredentials", 0, 0, True),
    ApiKeyInfo(51, "AlterUserScramCredentials", 0, 0, True),
    ApiKeyInfo(52, "Vote", 0, 2, False),
    ApiKeyInfo(53, "BeginQuorumEpoch", 0, 1, False),
    ApiKeyInfo(54, "EndQuorumEpoch", 0, 1, False),
    ApiKeyInfo(55, "DescribeQuorum", 0, 2, True),
    ApiKeyInfo(56, "AlterPartition", 2, 3, False),
    ApiKeyInfo(57, "UpdateFeatures", 0, 2, True),
    ApiKeyInfo(58, "Envelope", 0, 0, False),
    ApiKeyInfo(59, "FetchSnapshot", 0, 1, False),
    ApiKeyInfo(60, "DescribeCluster", 0, 2, True),
    ApiKeyInfo(61, "DescribeProducers", 0, 0, True),
    ApiKeyInfo(62, "BrokerRegistration", 0, 4, False),
    ApiKeyInfo(63, "BrokerHeartbeat", 0, 2, False),
    ApiKeyInfo(64, "UnregisterBroker", 0, 0, True),
    ApiKeyInfo(65, "DescribeTransactions", 0, 0, True),
    ApiKeyInfo(66, "ListTransactions", 0, 2, True),
    ApiKeyInfo(67, "AllocateProducerIds", 0, 0, False),
    ApiKeyInfo(68, "ConsumerGroupHeartbeat", 0, 1, True),
    ApiKeyInfo(69, "ConsumerGroupDescribe", 0, 1, True),
    ApiKeyInfo(70, "ControllerRegistration", 0, 0, False),
    ApiKeyInfo(71, "GetTelemetrySubscriptions", 0, 0, True),
    ApiKeyInfo(72, "PushTelemetry", 0, 0, True),
    ApiKeyInfo(73, "AssignReplicasToDirs", 0, 0, False),
    ApiKeyInfo(74, "ListConfigResources", 0, 1, True),
    ApiKeyInfo(75, "DescribeTopicPartitions", 0, 0, True),
    ApiKeyInfo(76, "ShareGroupHeartbeat", 1, 1, True),
    ApiKeyInfo(77, "ShareGroupDescribe", 1, 1, True),
    ApiKeyInfo(78, "ShareFetch", 1, 2, True),
    ApiKeyInfo(79, "ShareAcknowledge", 1, 2, True),
    ApiKeyInfo(80, "AddRaftVoter", 0, 1, True),
    ApiKeyInfo(81, "RemoveRaftVoter", 0, 0, True),
    ApiKeyInfo(82, "UpdateRaftVoter", 0, 0, False),
    ApiKeyInfo(83, "InitializeShareGroupState", 0, 0, True),
    ApiKeyInfo(84, "ReadShareGroupState", 0, 0, True),
    ApiKeyInfo(85, "WriteShareGroupState", 0, 1, True),
    ApiKeyInfo(86, "DeleteShareGroupState", 0, 0, True),
    ApiKeyInfo(87, "ReadShareGroupStateSummary", 0, 1, True),
    ApiKeyInfo(88, "StreamsGroupHeartbeat", 0, 1, True),
    ApiKeyInfo(89, "StreamsGroupDescribe", 0, 1, True),
    ApiKeyInfo(90, "DescribeShareGroupOffsets", 0, 1, True),
    ApiKeyInfo(91, "AlterShareGroupOffsets", 0, 0, True),
    ApiKeyInfo(92, "DeleteShareGroupOffsets", 0, 0, True),
    ApiKeyInfo(93, "StreamsGroupTopologyDescriptionUpdate", 0, 0, True),
    ApiKeyInfo(94, "UnregisterController", 0, 0, True),
)

BY_KEY: dict[int, ApiKeyInfo] = {info.key: info for info in API_KEYS}
