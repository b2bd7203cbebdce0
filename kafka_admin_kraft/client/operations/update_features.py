"""update_features: UpdateFeatures (API 57) to the active controller (or a broker, which forwards).

v0 carries only upgrades (its AllowDowngrade flag is not what KRaft reads) and no validate-only, so
downgrades and ``validate_only`` need v1+. v0/v1 answer per feature; v2 has no per-feature results:
the top-level error applies to every feature. NOT_CONTROLLER (and NOT_LEADER_OR_FOLLOWER with
bootstrap controllers) is retried; any other top-level error is raised, one error for all features.
"""

from __future__ import annotations

from collections.abc import Mapping

from kafka_admin_kraft.client.core import AdminCore, Op, controller_errors
from kafka_admin_kraft.errors import ErrorCode, error_for_code
from kafka_admin_kraft.models import FeatureUpdate, FeatureUpdateResult
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.values import UpgradeType

OPERATION = "update_features"


def update_features(
    core: AdminCore,
    updates: Mapping[str, FeatureUpdate],
    *,
    validate_only: bool = False,
    timeout: float | None = None,
) -> Op[dict[str, FeatureUpdateResult]]:
    cls = messages.UpdateFeaturesRequest
    needs_v1 = validate_only or any(u.upgrade_type != UpgradeType.UPGRADE for u in updates.values())

    def attempt(deadline: float) -> Op[dict[str, FeatureUpdateResult]]:
        conn = yield from core.target(deadline)
        version = core.choose_version(
            conn,
            cls,
            OPERATION,
            minimum=1 if needs_v1 else 0,
            why="(downgrades and validate_only need UpdateFeatures v1+)",
        )
        request = cls(
            timeout_ms=int(core.request_timeout(deadline) * 1000),
            validate_only=validate_only,
            feature_updates=[
                cls.FeatureUpdateKey(
                    feature=name, max_version_level=u.level, upgrade_type=int(u.upgrade_type)
                )
                for name, u in updates.items()
            ],
        )
        response = yield from core.request(conn, request, version, deadline)
        if response.error_code:
            raise error_for_code(response.error_code, response.error_message).in_context(
                OPERATION, conn.label
            )
        if version >= 2:
            return {name: FeatureUpdateResult(feature=name) for name in updates}
        by_name = {r.feature: r for r in response.results}
        results = {}
        for name in updates:
            result = by_name.get(name)
            if result is None:
                results[name] = FeatureUpdateResult(
                    feature=name, error_code=ErrorCode.UNKNOWN_SERVER_ERROR,
                    error_message="the server did not report this feature",
                )
            else:
                message = None if result.error_code == ErrorCode.NONE else result.error_message
                results[name] = FeatureUpdateResult(
                    feature=name, error_code=result.error_code, error_message=message
                )
        return results

    return (yield from core.call(OPERATION, attempt, timeout, controller_errors(core.config)))
