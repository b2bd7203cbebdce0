"""api_versions: the API version ranges one node advertises (ApiVersions, API 18).

The request goes to the node ``node_id``, found through DescribeCluster (controllers with bootstrap
controllers, brokers with bootstrap servers), as Kafka 4.4's ``kafka-cluster api-versions`` asks each node
(KIP-1220, KAFKA-19663). ``exchange`` is the one ApiVersions exchange the feature and version calls share:
the highest version both sides speak, an error answer raised with the node named.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafka_admin_kraft.client.core import API_VERSIONS_MAX, AdminCore, Connection, Op
from kafka_admin_kraft.errors import error_for_code
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.api_keys import ApiKey

if TYPE_CHECKING:
    from kafka_admin_kraft.models import NodeApiVersions

OPERATION = "api_versions"


def exchange(
    core: AdminCore, conn: Connection, operation: str, deadline: float
) -> Op[messages.ApiVersionsResponse]:
    """ApiVersions on ``conn`` (v4 when the node speaks it, so that features whose minimum level is 0
    are listed), its error code raised."""
    theirs = conn.versions.get(ApiKey.API_VERSIONS, (0, 0))
    response = yield from core.api_versions_request(conn, min(API_VERSIONS_MAX, theirs[1]), deadline)
    if response.error_code:
        raise error_for_code(response.error_code).in_context(operation, conn.label)
    return response


def api_versions(core: AdminCore, node_id: int, timeout: float | None = None) -> Op[NodeApiVersions]:
    # Imported here: describe_features shares this module's exchange, and the tools print its answer
    # without the models.
    from kafka_admin_kraft.models import ApiVersionRange, NodeApiVersions

    def attempt(deadline: float) -> Op[NodeApiVersions]:
        conn = yield from core.node(node_id, OPERATION, deadline)
        response = yield from exchange(core, conn, OPERATION, deadline)
        ranges = tuple(
            ApiVersionRange(api_key=k.api_key, min_version=k.min_version, max_version=k.max_version)
            for k in sorted(response.api_keys, key=lambda k: k.api_key)
        )
        return NodeApiVersions(node_id=node_id, api_versions=ranges)

    return (yield from core.call(OPERATION, attempt, timeout))
