"""Metadata (API 3) and DescribeCluster (API 60) as a KRaft broker answers them from its metadata cache.

Metadata, versions 0-13 (the codec's; Kafka 4 brokers serve 0-13):

- Brokers: the registered, unfenced brokers of the metadata image that have an endpoint on the
  listener the request arrived on.
- ControllerId (v1+): a KRaft broker reports a random live broker, never a controller (clients send
  controller-bound requests to it and it forwards them); here itself.
- ClusterId (v2+), ClusterAuthorizedOperations (v8-10, on request), top-level ErrorCode (v13).
- Topics: the metadata image holds no TopicRecords, so a request for every topic (null Topics, or an
  empty list) gets none and each named topic UNKNOWN_TOPIC_OR_PARTITION.

DescribeCluster, versions 0-2: the same brokers and controller id, plus the fenced ones with
IsFenced when a v2 request sets IncludeFencedBrokers; EndpointType 1 (brokers). A v1+
request naming EndpointType 2 gets MISMATCHED_ENDPOINT_TYPE, any other type UNSUPPORTED_ENDPOINT_TYPE.
A broker needs no metadata.version check (that one is for controllers).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kafka_admin_kraft.protocol import messages

from .describe_cluster import (
    BROKER_ENDPOINT,
    CLUSTER_OPERATIONS,
    CONTROLLER_ENDPOINT,
    MISMATCHED_ENDPOINT_TYPE,
    UNSUPPORTED_ENDPOINT_TYPE,
)

API_KEY: Final = 3
UNKNOWN_TOPIC_OR_PARTITION: Final = 3
NO_OPERATIONS: Final = -2147483648

BROKER_APIS: Final = (3, 18, 55, 57, 60, 80, 81)
"""Metadata, ApiVersions, DescribeQuorum, UpdateFeatures, DescribeCluster, AddRaftVoter and
RemoveRaftVoter: what the reference broker listener serves (the last four forwarded but
DescribeCluster)."""


@dataclass(frozen=True)
class BrokerNode:
    """A live broker's endpoint on one listener."""

    node_id: int
    host: str
    port: int
    rack: str | None = None
    fenced: bool = False


@dataclass(frozen=True)
class BrokerView:
    """What the broker's metadata cache says, seen from one broker listener."""

    cluster_id: str
    node_id: int
    brokers: tuple[BrokerNode, ...]
    """Every registered broker with an endpoint on the listener, fenced ones included."""

    @property
    def live(self) -> list[BrokerNode]:
        return [broker for broker in self.brokers if not broker.fenced]

    @property
    def controller_id(self) -> int:
        """KRaft brokers name a live broker as the controller: this one when it is listed."""
        ids = [broker.node_id for broker in self.live]
        return self.node_id if self.node_id in ids else (ids[0] if ids else -1)


def handle_metadata(request: messages.MetadataRequest, api_version: int,
                    view: BrokerView) -> messages.MetadataResponse:
    Response = messages.MetadataResponse
    brokers = [Response.MetadataResponseBroker(node_id=b.node_id, host=b.host, port=b.port, rack=b.rack)
               for b in view.live]
    topics = [Response.MetadataResponseTopic(error_code=UNKNOWN_TOPIC_OR_PARTITION, name=topic.name,
                                             topic_id=topic.topic_id, is_internal=False, partitions=[],
                                             topic_authorized_operations=NO_OPERATIONS)
              for topic in request.topics or []]
    asked = 8 <= api_version <= 10 and request.include_cluster_authorized_operations
    operations = CLUSTER_OPERATIONS if asked else NO_OPERATIONS
    return Response(throttle_time_ms=0, brokers=brokers, cluster_id=view.cluster_id,
                    controller_id=view.controller_id, topics=topics, cluster_authorized_operations=operations,
                    error_code=0)


def handle_describe_cluster(request: messages.DescribeClusterRequest, api_version: int,
                            view: BrokerView) -> messages.DescribeClusterResponse:
    Response = messages.DescribeClusterResponse
    requested = request.endpoint_type if api_version >= 1 else BROKER_ENDPOINT
    if requested == CONTROLLER_ENDPOINT:
        return Response(error_code=MISMATCHED_ENDPOINT_TYPE, error_message=(
            "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type "
            "CONTROLLER"))
    if requested != BROKER_ENDPOINT:
        return Response(error_code=UNSUPPORTED_ENDPOINT_TYPE,
                        error_message=f"Unsupported endpoint type {requested}")
    listed = view.brokers if api_version >= 2 and request.include_fenced_brokers else view.live
    brokers = [Response.DescribeClusterBroker(broker_id=b.node_id, host=b.host, port=b.port, rack=b.rack,
                                              is_fenced=b.fenced) for b in listed]
    operations = CLUSTER_OPERATIONS if request.include_cluster_authorized_operations else NO_OPERATIONS
    return Response(error_code=0, error_message=None, endpoint_type=BROKER_ENDPOINT,
                    cluster_id=view.cluster_id, controller_id=view.controller_id, brokers=brokers,
                    cluster_authorized_operations=operations)
