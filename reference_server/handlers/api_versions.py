"""ApiVersions (API 18), versions 0-4, as a Kafka 4.2 controller answers it.

- v0: ErrorCode and ApiKeys (key, min, max) of every API the listener serves.
- v1: ThrottleTimeMs.
- v2: no change (the client may rely on throttling being applied after the response).
- v3: flexible; the request carries ClientSoftwareName and ClientSoftwareVersion, each of which must
  match ``[a-zA-Z0-9](?:[a-zA-Z0-9\\-.]*[a-zA-Z0-9])?`` or the answer is INVALID_REQUEST; the response
  gains the tagged SupportedFeatures, FinalizedFeaturesEpoch, FinalizedFeatures and ZkMigrationReady.
  Below v4, supported features whose minimum is 0 are left out (older clients reject min 0).
- v4: supported features with minimum 0 are included.

The supported ranges are Kafka 4.2's production levels, or its testing levels on a node with
``unstable.feature.versions.enable`` (so nodes report different ranges, as during a rolling upgrade).

A request of a version this server does not know is answered at v0 with UNSUPPORTED_VERSION and
ApiKeys holding only ApiVersions' own range, so the client can retry inside it (the response header
of every ApiVersions response is v0). Answered before any authentication.

ApiKeys lists what the listener's kind serves in the API table (``registry.served``), with the
versions of each; a SASL listener adds SaslHandshake and SaslAuthenticate.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Final

from kafka_admin_kraft.features import METADATA_VERSION, SUPPORTED_FEATURES, supported_range
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.api_keys import ApiKey
from kafka_admin_kraft.protocol.error_codes import ErrorCode

from . import registry
from .registry import BROKER, CONTROLLER, Answer, BrokerRole, Call, ControllerRole
from .view import ServerView

_SOFTWARE: Final = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")

Response = messages.ApiVersionsResponse


def api_entries(api_keys: Iterable[int], max_versions: Mapping[int, int] | None = None
                ) -> list[messages.ApiVersionsResponse.ApiVersion]:
    """One ApiVersion entry per key, with the versions the table serves (capped by ``max_versions``),
    in key order."""
    entries = []
    for key in sorted(api_keys):
        entry = registry.api(key)
        if entry is None:
            raise ValueError(f"API key {key} is not in the API table")
        low, high = entry.versions
        high = min(high, (max_versions or {}).get(key, high))
        entries.append(Response.ApiVersion(api_key=key, min_version=low, max_version=high))
    return entries


def is_valid(request: messages.ApiVersionsRequest, api_version: int) -> bool:
    """Kafka's ``ApiVersionsRequest.isValid``: software name and version checked from v3 on."""
    if api_version < 3:
        return True
    return bool(_SOFTWARE.fullmatch(request.client_software_name)
                and _SOFTWARE.fullmatch(request.client_software_version))


def unsupported_version_response() -> messages.ApiVersionsResponse:
    """The v0 answer to an ApiVersions version this server does not know."""
    return Response(error_code=ErrorCode.UNSUPPORTED_VERSION, api_keys=api_entries([ApiKey.API_VERSIONS]))


def handle(request: messages.ApiVersionsRequest | None, api_version: int, view: ServerView,
           api_keys: Iterable[int] | None = None) -> tuple[messages.ApiVersionsResponse, int]:
    """The response and the version to encode it at (0 for an unknown request version). ``api_keys``:
    what the listener serves, by default what a controller listener serves.

    ``request`` is None when the version was unknown and its body could not be decoded.
    """
    low, high = messages.ApiVersionsRequest.VERSIONS
    if request is None or not low <= api_version <= high:
        return unsupported_version_response(), 0
    if not is_valid(request, api_version):
        return Response(error_code=ErrorCode.INVALID_REQUEST), api_version
    include_min_zero = api_version >= 4
    ranges = [(name, *supported_range(name, unstable=view.unstable_feature_versions))
              for name, _, _ in SUPPORTED_FEATURES]
    supported = [Response.SupportedFeatureKey(name=name, min_version=minimum, max_version=maximum)
                 for name, minimum, maximum in ranges if maximum > 0 and (include_min_zero or minimum > 0)]
    finalized = dict(view.finalized_features)
    if view.metadata_version is not None:
        finalized.setdefault(METADATA_VERSION, view.metadata_version)
    finalized_keys = [Response.FinalizedFeatureKey(name=name, max_version_level=level,
                                                   min_version_level=level)
                      for name, level in _feature_order(finalized)]
    served = registry.served(CONTROLLER) if api_keys is None else api_keys
    response = Response(error_code=ErrorCode.NONE, api_keys=api_entries(served, view.max_versions),
                        throttle_time_ms=0, supported_features=supported,
                        finalized_features_epoch=view.finalized_features_epoch,
                        finalized_features=finalized_keys, zk_migration_ready=False)
    return response, api_version


def _feature_order(levels: dict[str, int]) -> list[tuple[str, int]]:
    """metadata.version first, then Kafka's feature-list order, then anything else by name."""
    order = {name: index for index, (name, _, _) in enumerate(SUPPORTED_FEATURES)}
    return sorted(levels.items(), key=lambda item: (order.get(item[0], len(order)), item[0]))


async def on_controller(node: ControllerRole, call: Call) -> Answer:
    assert call.body is None or isinstance(call.body, messages.ApiVersionsRequest)
    return handle(call.body, call.version, node.view(call.listener), registry.served(CONTROLLER))


async def on_broker(node: BrokerRole, call: Call) -> Answer:
    assert call.body is None or isinstance(call.body, messages.ApiVersionsRequest)
    return handle(call.body, call.version, node.server_view(call.listener), registry.served(BROKER))


registry.register(ApiKey.API_VERSIONS, controller=on_controller, broker=on_broker)
