"""describe_features: an ApiVersions request (v4 when the server speaks it, so that features whose
minimum level is 0 are included) to the active controller or a broker; reads SupportedFeatures,
FinalizedFeatures and FinalizedFeaturesEpoch. Before ApiVersions v3 there are no features.

With ``node_id`` (Kafka 4.2's DescribeFeaturesOptions.nodeId) the request goes to that node instead,
found through DescribeCluster: each node reports the levels it supports, which differ during a
rolling upgrade."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafka_admin_kraft.client.answers import FeaturesAnswer, FinalizedAnswer, SupportedAnswer
from kafka_admin_kraft.client.core import AdminCore, Op
from kafka_admin_kraft.client.operations.api_versions import exchange

if TYPE_CHECKING:
    from kafka_admin_kraft.models import FeatureMetadata

OPERATION = "describe_features"


def describe_features_answer(
    core: AdminCore, timeout: float | None = None, node_id: int | None = None
) -> Op[FeaturesAnswer]:
    """The operation, its answer left plain (what the tools print)."""

    def attempt(deadline: float) -> Op[FeaturesAnswer]:
        if node_id is None:
            conn = yield from core.target(deadline)
        else:
            conn = yield from core.node(node_id, OPERATION, deadline)
        response = yield from exchange(core, conn, OPERATION, deadline)
        epoch = response.finalized_features_epoch
        return FeaturesAnswer(
            finalized_features={
                f.name: FinalizedAnswer(
                    min_version_level=f.min_version_level, max_version_level=f.max_version_level
                )
                for f in response.finalized_features
            },
            finalized_features_epoch=epoch if epoch >= 0 else None,
            supported_features={
                f.name: SupportedAnswer(min_version=f.min_version, max_version=f.max_version)
                for f in response.supported_features
            },
        )

    return (yield from core.call(OPERATION, attempt, timeout))


def describe_features(
    core: AdminCore, timeout: float | None = None, node_id: int | None = None
) -> Op[FeatureMetadata]:
    """Validated into the model: a range a node reports upside down is refused here."""
    from kafka_admin_kraft.models import FeatureMetadata

    answer = yield from describe_features_answer(core, timeout, node_id)
    return FeatureMetadata.model_validate(answer, from_attributes=True)
