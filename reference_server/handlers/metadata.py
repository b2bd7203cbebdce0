"""Metadata (API 3) as a KRaft broker answers it from its metadata cache, versions 0-13 (the codec's;
Kafka 4 brokers serve 0-13). Served on broker listeners only, as Kafka's spec says.

- Brokers: the registered, unfenced brokers of the metadata image that have an endpoint on the
  listener the request arrived on.
- ControllerId (v1+): a KRaft broker reports a random live broker, never a controller (clients send
  controller-bound requests to it and it forwards them); here itself.
- ClusterId (v2+), ClusterAuthorizedOperations (v8-10, on request), top-level ErrorCode (v13).
- Topics: the metadata image holds no TopicRecords, so a request for every topic (null Topics, or an
  empty list) gets none and each named topic UNKNOWN_TOPIC_OR_PARTITION.
"""

from __future__ import annotations

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.api_keys import ApiKey
from kafka_admin_kraft.protocol.error_codes import ErrorCode

from . import registry
from .describe_cluster import CLUSTER_OPERATIONS, NO_OPERATIONS
from .registry import Answer, BrokerRole, Call
from .view import BrokerNode, BrokerView


def handle_metadata(request: messages.MetadataRequest, api_version: int,
                    view: BrokerView) -> messages.MetadataResponse:
    Response = messages.MetadataResponse
    brokers = [Response.MetadataResponseBroker(node_id=b.node_id, host=b.host, port=b.port, rack=b.rack)
               for b in view.live]
    topics = [Response.MetadataResponseTopic(error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, name=topic.name,
                                             topic_id=topic.topic_id, is_internal=False, partitions=[],
                                             topic_authorized_operations=NO_OPERATIONS)
              for topic in request.topics or []]
    asked = 8 <= api_version <= 10 and request.include_cluster_authorized_operations
    operations = CLUSTER_OPERATIONS if asked else NO_OPERATIONS
    return Response(throttle_time_ms=0, brokers=brokers, cluster_id=view.cluster_id,
                    controller_id=view.controller_id, topics=topics, cluster_authorized_operations=operations,
                    error_code=ErrorCode.NONE)


async def on_broker(node: BrokerRole, call: Call) -> Answer:
    assert isinstance(call.body, messages.MetadataRequest)
    return handle_metadata(call.body, call.version, node.view(call.listener)), call.version


registry.register(ApiKey.METADATA, broker=on_broker)

__all__ = ["BrokerNode", "BrokerView", "handle_metadata"]
