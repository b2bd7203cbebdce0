"""update_features (``client/operations/update_features.py``) through the in-memory network: the
request of each version, per-feature and top-level errors, retries."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_admin_kraft import FeatureUpdate, UpgradeType
from kafka_admin_kraft.errors import (
    InvalidUpdateVersionError,
    KafkaTimeoutError,
    NotControllerError,
    UnsupportedOperationError,
)
from kafka_admin_kraft.protocol import messages
from unit.client.fake import FakeNetwork, FakeNode, admin


def test_update_features_v2_has_no_per_feature_results() -> None:
    net = FakeNetwork(3, leader=1)
    with admin(net) as a:
        results = a.update_features({"metadata.version": FeatureUpdate(level=29), "group.version": 1})
    assert all(r.ok and r.exception() is None for r in results.values()) and list(results) == [
        "metadata.version",
        "group.version",
    ]
    _, version, body = net.sent("UpdateFeatures")[0]
    assert version == 2 and [
        (u.feature, u.max_version_level, u.upgrade_type) for u in body.feature_updates
    ] == [("metadata.version", 29, 1), ("group.version", 1, 1)]


def test_update_features_v1_per_feature_results() -> None:
    net = FakeNetwork(1, leader=1)
    net.nodes[1].versions[57] = (0, 1)
    r = messages.UpdateFeaturesResponse
    net.nodes[1].handlers[57] = lambda n, v, b: r(
        results=[
            r.UpdatableFeatureResult(feature="metadata.version", error_message="NONE"),
            r.UpdatableFeatureResult(
                feature="group.version", error_code=95, error_message="Invalid update version"
            ),
        ]
    )
    with admin(net) as a:
        results = a.update_features(
            {
                "metadata.version": FeatureUpdate(level=20, upgrade_type=UpgradeType.SAFE_DOWNGRADE),
                "group.version": 5,
                "x": 1,
            },
            validate_only=True,
        )
    assert results["metadata.version"].ok and results["metadata.version"].error_message is None
    assert isinstance(results["group.version"].exception(), InvalidUpdateVersionError)
    assert results["x"].error_code == -1
    _, version, body = net.sent("UpdateFeatures")[0]
    assert version == 1 and body.validate_only and body.feature_updates[0].upgrade_type == 2


def test_update_features_top_level_error_fails_all_at_once() -> None:
    net = FakeNetwork(1, leader=1)
    net.nodes[1].handlers[57] = lambda n, v, b: messages.UpdateFeaturesResponse(
        error_code=95, error_message="The update failed for all features since ..."
    )
    with admin(net) as a, pytest.raises(InvalidUpdateVersionError, match="failed for all features"):
        a.update_features({"metadata.version": 30})
    assert net.sleeps == []


def test_update_features_not_controller_is_retried() -> None:
    net = FakeNetwork(3, leader=1)

    def moved(node: FakeNode, version: int, body: Any) -> Any:
        net.leader = 3
        return messages.UpdateFeaturesResponse(error_code=41)

    net.nodes[1].handlers[57] = moved
    with admin(net) as a:
        assert a.update_features({"metadata.version": 29})["metadata.version"].ok
    assert [n for n, _, _ in net.sent("UpdateFeatures")] == [1, 3]


def test_update_features_not_controller_until_the_deadline() -> None:
    net = FakeNetwork(1, leader=1)
    net.nodes[1].handlers[57] = lambda n, v, b: messages.UpdateFeaturesResponse(
        error_code=41, error_message="nc"
    )
    with admin(net) as a, pytest.raises(KafkaTimeoutError) as info:
        a.update_features({"metadata.version": 29}, timeout=3)
    assert isinstance(info.value.last_error, NotControllerError)


def test_update_features_downgrade_needs_v1() -> None:
    net = FakeNetwork(1, leader=1)
    net.nodes[1].versions[57] = (0, 0)
    with admin(net) as a:
        a.update_features({"metadata.version": 29})
        with pytest.raises(UnsupportedOperationError, match="downgrades and validate_only"):
            a.update_features(
                {"metadata.version": FeatureUpdate(level=20, upgrade_type=UpgradeType.SAFE_DOWNGRADE)}
            )


def test_update_features_arguments() -> None:
    net = FakeNetwork(1, leader=1)
    with admin(net) as a:
        with pytest.raises(ValueError):
            a.update_features({})
        with pytest.raises(ValueError):
            a.update_features({"x": FeatureUpdate(level=0)})
