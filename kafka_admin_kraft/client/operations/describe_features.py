"""describe_features: an ApiVersions request (v4 when the server speaks it, so that features whose
minimum level is 0 are included) to the active controller or a broker; reads SupportedFeatures,
FinalizedFeatures and FinalizedFeaturesEpoch. Before ApiVersions v3 there are no features.

With ``node_id`` (Kafka 4.2's DescribeFeaturesOptions.nodeId) the request goes to that node instead,
found through DescribeCluster: each node reports the levels it supports, which differ during a
rolling upgrade."""

from __future__ import annotations

from kafka_admin_kraft.client.core import AdminCore, Op
from kafka_admin_kraft.client.operations.api_versions import exchange
from kafka_admin_kraft.models import FeatureMetadata, FinalizedVersionRange, SupportedVersionRange

OPERATION = "describe_features"


def describe_features(
    core: AdminCore, timeout: float | None = None, node_id: int | None = None
) -> Op[FeatureMetadata]:
    def attempt(deadline: float) -> Op[FeatureMetadata]:
        if node_id is None:
            conn = yield from core.target(deadline)
        else:
            conn = yield from core.node(node_id, OPERATION, deadline)
        response = yield from exchange(core, conn, OPERATION, deadline)
        epoch = response.finalized_features_epoch
        return FeatureMetadata(
            finalized_features={
                f.name: FinalizedVersionRange(
                    min_version_level=f.min_version_level, max_version_level=f.max_version_level
                )
                for f in response.finalized_features
            },
            finalized_features_epoch=epoch if epoch >= 0 else None,
            supported_features={
                f.name: SupportedVersionRange(min_version=f.min_version, max_version=f.max_version)
                for f in response.supported_features
            },
        )

    return (yield from core.call(OPERATION, attempt, timeout))
