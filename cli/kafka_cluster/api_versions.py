"""`kafka-cluster api-versions`: the API versions every broker (``--bootstrap-server``) or controller
(``--bootstrap-controller``) serves, as Kafka 4.4's subcommand prints them (KIP-1220, KAFKA-19663, PR
#20598; it replaces ``kafka-broker-api-versions``).

The nodes are DescribeCluster's, by id; each is asked ApiVersions. A node prints as Kafka's ``Node``
(``host:port (id: 1 rack: null isFenced: false)``), then `` -> `` and its APIs as
``NodeApiVersions.toString(true)`` lays them out: ``(``, one API a line after a tab, in key order,
comma-terminated but the last, then ``)``. An API shows its name and key, its range (``0 to 4``, or
``0`` for one version) and the newest version both the node and Kafka 4.4's client speak (``[usable:
4]``), or ``[unusable: node too new]`` / ``[unusable: node too old]`` when their ranges do not meet;
a key the client does not know is ``UNKNOWN(<key>)``, and each client API the node lacks is listed as
``<name>(<key>): UNSUPPORTED``. A node that cannot be asked prints ``<node> -> ERROR: <exception>``, as
``kafka-broker-api-versions`` did.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import output
from ..admin_options import error_text, reported_errors
from .api_table import API_KEYS, BY_KEY
from .common import Connection, cluster_command

if TYPE_CHECKING:
    from kafka_admin_kraft.models import ApiVersionRange, ClusterNode, NodeApiVersions


def node_label(node: ClusterNode) -> str:
    """Kafka's ``Node.toString()``."""
    rack = "null" if node.rack is None else node.rack
    fenced = "true" if node.is_fenced else "false"
    return f"{node.host}:{node.port} (id: {node.node_id} rack: {rack} isFenced: {fenced})"


def usable_version(api: ApiVersionRange) -> int | None:
    """The newest version both the node and Kafka 4.4's client speak; None when none is."""
    info = BY_KEY.get(api.api_key)
    if info is None or info.latest < api.min_version or api.max_version < info.oldest:
        return None
    return min(info.latest, api.max_version)


def _api_text(api: ApiVersionRange) -> str:
    low, high = api.min_version, api.max_version
    span = str(low) if low == high else f"{low} to {high}"
    info = BY_KEY.get(api.api_key)
    if info is None:
        return f"UNKNOWN({api.api_key}): {span}"
    text = f"{info.name}({api.api_key}): {span}"
    usable = usable_version(api)
    if usable is not None:
        return f"{text} [usable: {usable}]"
    return f"{text} [unusable: node too {'new' if info.latest < low else 'old'}]"


def versions_text(versions: NodeApiVersions) -> str:
    """``NodeApiVersions.toString(true)``: the node's APIs and the client APIs it lacks, in key order."""
    lines = {api.api_key: _api_text(api) for api in versions.api_versions}
    for info in API_KEYS:
        if info.broker and info.key not in lines:
            lines[info.key] = f"{info.name}({info.key}): UNSUPPORTED"
    return "(\n\t" + ",\n\t".join(lines[key] for key in sorted(lines)) + "\n)"


def node_json(node: ClusterNode, versions: NodeApiVersions | None, error: str | None) -> dict[str, Any]:
    """One node: where it is, and the APIs it serves (``usable_version`` null when none is) or why it
    could not be asked."""
    apis = None
    if versions is not None:
        apis = [{"api_key": api.api_key, "name": BY_KEY[api.api_key].name if api.api_key in BY_KEY else None,
                 "min_version": api.min_version, "max_version": api.max_version,
                 "usable_version": usable_version(api)} for api in versions.api_versions]
    return {"id": node.node_id, "host": node.host, "port": node.port, "rack": node.rack,
            "fenced": node.is_fenced, "api_versions": apis, "error": error}


@cluster_command("api-versions")
@output.output_option
def api_versions(connection: Connection, output_format: str) -> None:
    """Show the API versions each broker (--bootstrap-server) or controller (--bootstrap-controller)
    serves, and the newest version of each that Kafka 4.4's clients use.

    \b
    Examples:
      kafka-cluster api-versions --bootstrap-controller localhost:9093
      kafka-cluster api-versions --bootstrap-server localhost:9092 --output json
    """
    from kafka_admin_kraft.errors import KafkaAdminError

    json_output = output_format == "json"
    text: list[str] = []
    documents: list[dict[str, Any]] = []
    with connection.open(json_output=json_output) as admin:
        with reported_errors():
            nodes = sorted(admin.describe_cluster().nodes, key=lambda n: n.node_id)
        for node in nodes:
            try:
                versions = admin.api_versions(node.node_id)
            except KafkaAdminError as exc:
                text.append(f"{node_label(node)} -> ERROR: {error_text(exc)}\n")
                documents.append(node_json(node, None, error_text(exc)))
            else:
                text.append(f"{node_label(node)} -> {versions_text(versions)}\n")
                documents.append(node_json(node, versions, None))
    if json_output:
        output.write_json({"nodes": documents})
    else:
        output.write("".join(text))
