"""ApiVersions (API 18), versions 0-5, as a Kafka controller (or broker) of the node's line answers it.

- v0: ErrorCode and ApiKeys (key, min, max) of every API the listener serves.
- v1: ThrottleTimeMs.
- v2: no change (the client may rely on throttling being applied after the response).
- v3: flexible; the request carries ClientSoftwareName and ClientSoftwareVersion, each of which must
  match ``[a-zA-Z0-9](?:[a-zA-Z0-9\\-.]*[a-zA-Z0-9])?`` or the answer is INVALID_REQUEST; the response
  gains the tagged SupportedFeatures, FinalizedFeaturesEpoch, FinalizedFeatures and ZkMigrationReady.
  Below v4, supported features whose minimum is 0 are left out (older clients reject min 0).
- v4: supported features with minimum 0 are included.
- v5 (Kafka 4.4, KIP-1242): the request names the cluster and node the client meant to reach. A broker
  listener checks them (apache/kafka PR #22187, "checks it on the broker"; a controller listener does
  not): a ClusterId that is not this cluster's, or a NodeId that is not this node's, is answered
  REBOOTSTRAP_REQUIRED, so that a client sent to the wrong node by DNS or a load balancer starts over
  from its bootstrap servers; a NodeId without a ClusterId is INVALID_REQUEST. A null ClusterId with
  NodeId -1 (a client that knows neither, such as one on a bootstrap connection) is not checked.

ApiKeys lists what the listener's kind serves in the API table (``registry.served_versions``), at the
versions of the node's Kafka line; a SASL listener adds SaslHandshake and SaslAuthenticate. The
supported feature ranges are the line's production levels, or its testing levels on a node with
``unstable.feature.versions.enable`` (so nodes report different ranges, as during a rolling upgrade).

A request of a version above the line's is answered at v0 with UNSUPPORTED_VERSION and ApiKeys holding
only ApiVersions' own range, so the client can retry inside it (Kafka's
``ApiVersionsRequest.getErrorResponse``; the response header of every ApiVersions response is v0).
Answered before any authentication.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from kafka_admin_kraft.features import METADATA_VERSION
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.api_keys import ApiKey
from kafka_admin_kraft.protocol.error_codes import ErrorCode

from . import registry
from .registry import BROKER, CONTROLLER, Answer, BrokerRole, Call, ControllerRole
from .view import ServerView

_SOFTWARE: Final = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")

Response = messages.ApiVersionsResponse


def api_entries(ranges: Mapping[int, tuple[int, int]]) -> list[messages.ApiVersionsResponse.ApiVersion]:
    """One ApiVersion entry per key, in key order."""
    return [Response.ApiVersion(api_key=key, min_version=low, max_version=high)
            for key, (low, high) in sorted(ranges.items())]


def is_valid(request: messages.ApiVersionsRequest, api_version: int) -> bool:
    """Kafka's ``ApiVersionsRequest.isValid``: software name and version checked from v3 on."""
    if api_version < 3:
        return True
    return bool(_SOFTWARE.fullmatch(request.client_software_name)
                and _SOFTWARE.fullmatch(request.client_software_version))


def misrouted_error(request: messages.ApiVersionsRequest, api_version: int, cluster_id: str,
                    node_id: int) -> int | None:
    """KIP-1242's check of the node a v5 request meant to reach: None when it is this one (or the client
    did not say), else the error code to answer with."""
    if api_version < 5:
        return None
    if request.cluster_id is None:
        return None if request.node_id == -1 else ErrorCode.INVALID_REQUEST
    if request.cluster_id != cluster_id or request.node_id != node_id:
        return ErrorCode.REBOOTSTRAP_REQUIRED
    return None


def unsupported_version_response(view: ServerView) -> messages.ApiVersionsResponse:
    """The v0 answer to an ApiVersions version above the node's line."""
    own = view.line.versions(ApiKey.API_VERSIONS)
    assert own is not None
    return Response(error_code=ErrorCode.UNSUPPORTED_VERSION,
                    api_keys=api_entries({ApiKey.API_VERSIONS: own}))


def handle(request: messages.ApiVersionsRequest | None, api_version: int, view: ServerView,
           kind: str = CONTROLLER) -> tuple[messages.ApiVersionsResponse, int]:
    """The response and the version to encode it at (0 for a version above the line's), on a listener
    of ``kind``.

    ``request`` is None when the version was unknown and its body could not be decoded.
    """
    own = view.line.versions(ApiKey.API_VERSIONS)
    if request is None or own is None or not own[0] <= api_version <= own[1]:
        return unsupported_version_response(view), 0
    if not is_valid(request, api_version):
        return Response(error_code=ErrorCode.INVALID_REQUEST), api_version
    if kind == BROKER:
        misrouted = misrouted_error(request, api_version, view.cluster_id, view.node_id)
        if misrouted is not None:
            return Response(error_code=misrouted), api_version
    include_min_zero = api_version >= 4
    supported = [Response.SupportedFeatureKey(name=name, min_version=minimum, max_version=maximum)
                 for name, minimum, maximum
                 in view.line.features.supported_features(unstable=view.unstable_feature_versions)
                 if include_min_zero or minimum > 0]
    finalized = dict(view.finalized_features)
    if view.metadata_version is not None:
        finalized.setdefault(METADATA_VERSION, view.metadata_version)
    finalized_keys = [Response.FinalizedFeatureKey(name=name, max_version_level=level,
                                                   min_version_level=level)
                      for name, level in _feature_order(finalized, view)]
    ranges = registry.served_versions(kind, view.line, unstable_api_versions=view.unstable_api_versions)
    response = Response(error_code=ErrorCode.NONE, api_keys=api_entries(ranges),
                        throttle_time_ms=0, supported_features=supported,
                        finalized_features_epoch=view.finalized_features_epoch,
                        finalized_features=finalized_keys, zk_migration_ready=False)
    return response, api_version


def _feature_order(levels: dict[str, int], view: ServerView) -> list[tuple[str, int]]:
    """metadata.version first, then the line's feature-list order, then anything else by name."""
    names = [METADATA_VERSION, *(feature.name for feature in view.line.features.features)]
    order = {name: index for index, name in enumerate(names)}
    return sorted(levels.items(), key=lambda item: (order.get(item[0], len(order)), item[0]))


async def on_controller(node: ControllerRole, call: Call) -> Answer:
    assert call.body is None or isinstance(call.body, messages.ApiVersionsRequest)
    return handle(call.body, call.version, node.view(call.listener), CONTROLLER)


async def on_broker(node: BrokerRole, call: Call) -> Answer:
    assert call.body is None or isinstance(call.body, messages.ApiVersionsRequest)
    return handle(call.body, call.version, node.server_view(call.listener), BROKER)


registry.register(ApiKey.API_VERSIONS, controller=on_controller, broker=on_broker)
