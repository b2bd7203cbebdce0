"""describe_features (``client/operations/describe_features.py``) through the in-memory network: the
features of the active controller, or of one node found through DescribeCluster."""

from __future__ import annotations

import time
from typing import Any

import pytest

from kafka_admin_kraft.errors import UnknownNodeError
from unit.client.fake import FakeNetwork, FakeNode, admin
from unit.client.fake import api_versions as fake_api_versions


def test_describe_features() -> None:
    net = FakeNetwork(3, leader=2)
    with admin(net) as a:
        features = a.describe_features()
    assert net.sent("ApiVersions")[-1][:2] == (2, 4)
    assert features.finalized_features["metadata.version"].max_version_level == 29
    assert features.supported_features["kraft.version"].min_version == 0
    assert features.finalized_features_epoch == 42


def _supporting_metadata_version_up_to(top: int) -> Any:
    def answer(node: FakeNode, version: int, body: Any) -> Any:
        response = fake_api_versions(node, version, body)
        response.supported_features[0].max_version = top
        return response

    return answer


def test_describe_features_of_one_controller() -> None:
    net = FakeNetwork(3, leader=2)
    net.nodes[3].handlers[18] = _supporting_metadata_version_up_to(27)
    with admin(net) as a:
        features = a.describe_features(node_id=3)
        assert a.describe_features(node_id=1).supported_features["metadata.version"].max_version == 29
    assert features.supported_features["metadata.version"].max_version == 27
    assert [(n, api) for n, api, _, _ in net.requests] == [
        (1, "ApiVersions"),
        (1, "DescribeCluster"),  # names the active controller and every controller's endpoint
        (2, "ApiVersions"),
        (3, "ApiVersions"),  # the connection's own negotiation
        (3, "ApiVersions"),  # the features
        (1, "ApiVersions"),
    ]


def test_describe_features_of_one_broker_finds_it_through_describe_cluster() -> None:
    net = FakeNetwork(1, brokers=2)
    net.nodes[102].handlers[18] = _supporting_metadata_version_up_to(28)
    with admin(net, brokers=True) as a:
        features = a.describe_features(node_id=102)
    assert features.supported_features["metadata.version"].max_version == 28
    assert [(n, api) for n, api, _, _ in net.requests] == [
        (101, "ApiVersions"),
        (101, "DescribeCluster"),
        (102, "ApiVersions"),
        (102, "ApiVersions"),
    ]
    assert net.sent("DescribeCluster")[0][2].endpoint_type == 1


def test_describe_features_of_an_unknown_node_is_refused_at_once_naming_the_nodes() -> None:
    net = FakeNetwork(3, leader=2)
    started = time.monotonic()
    refused = pytest.raises(UnknownNodeError, match=r"^the cluster has no node 9 \(nodes: 1, 2, 3\)$")
    with admin(net) as a, refused:
        a.describe_features(node_id=9, timeout=60)
    assert time.monotonic() - started < 10
    assert not [n for n, api, _, _ in net.requests if n == 9]


def test_the_plain_answer_holds_what_the_feature_metadata_holds() -> None:
    from kafka_admin_kraft.client.answers import FeaturesAnswer
    from kafka_admin_kraft.client.operations.describe_features import describe_features_answer
    from kafka_admin_kraft.models import FeatureMetadata

    net = FakeNetwork(3, leader=2)
    with admin(net) as a:
        answer = a.run(lambda core: describe_features_answer(core, node_id=3))
        features = a.describe_features(node_id=3)
    assert isinstance(answer, FeaturesAnswer) and answer.finalized_features_epoch == 42
    assert FeatureMetadata.model_validate(answer, from_attributes=True) == features
