"""Metadata and DescribeCluster as a KRaft broker answers them from its metadata cache."""

from __future__ import annotations

from kafka_admin_kraft.protocol import framing, messages
from kafka_admin_kraft_server.handlers.describe_cluster import handle_broker as handle_describe_cluster
from kafka_admin_kraft_server.handlers.metadata import BrokerNode, BrokerView, handle_metadata


def test_broker_metadata_and_describe_cluster() -> None:
    view = BrokerView("abc", 100, (BrokerNode(100, "127.0.0.1", 9092),))
    request = messages.MetadataRequest(topics=[messages.MetadataRequest.MetadataRequestTopic(name="t")])
    response = handle_metadata(request, 12, view)
    assert response.controller_id == 100 and response.cluster_id == "abc"
    assert [(t.name, t.error_code) for t in response.topics] == [("t", 3)]
    framing.encode_response(response, 12, 1)
    described = handle_describe_cluster(messages.DescribeClusterRequest(endpoint_type=1), 1, view)
    assert (described.error_code, described.endpoint_type, described.controller_id) == (0, 1, 100)
    def code(endpoint_type: int, version: int) -> int:
        request = messages.DescribeClusterRequest(endpoint_type=endpoint_type)
        return handle_describe_cluster(request, version, view).error_code

    assert (code(2, 1), code(2, 0), code(3, 1)) == (114, 0, 115)
