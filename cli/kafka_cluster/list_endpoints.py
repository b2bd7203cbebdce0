"""`kafka-cluster list-endpoints`: the brokers' or the controllers' endpoints, as a table
(``ClusterTool.listEndpoints``, KIP-919; ``--include-fenced-brokers`` from Kafka 4.0, KIP-1073).

The columns are left-aligned and separated by a space: ID, PORT and STATE 10 wide, ENDPOINT_TYPE 15,
HOST as wide as the longest host and RACK as the longest rack (10 when no node has one; a missing rack
prints as ``null``), as Kafka's format strings lay them out. Brokers get a STATE column, fenced or
unfenced; controllers do not. A server too old for the request has its message printed on standard
output, and the tool exits with 0, as Kafka's does (with ``--output json``: on stderr, exit status 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from .. import output
from ..admin_options import reported_errors
from .common import Connection, cluster_command

if TYPE_CHECKING:
    from kafka_admin_kraft.models import ClusterNode

ID_WIDTH, PORT_WIDTH, STATE_WIDTH, TYPE_WIDTH = 10, 10, 10, 15
NO_HOSTS_WIDTH, NO_RACKS_WIDTH = 100, 10


def endpoints_text(nodes: Sequence[ClusterNode], *, controllers: bool) -> str:
    """The table, header first, nodes in the order the server listed them."""
    host_width = max((len(n.host) for n in nodes), default=NO_HOSTS_WIDTH)
    rack_width = max((len(n.rack) for n in nodes if n.rack is not None), default=NO_RACKS_WIDTH)

    def row(node_id: str, host: str, port: str, rack: str, state: str | None, kind: str) -> str:
        cells = [f"{node_id:<{ID_WIDTH}}", f"{host:<{host_width}}", f"{port:<{PORT_WIDTH}}",
                 f"{rack:<{rack_width}}"]
        if state is not None:
            cells.append(f"{state:<{STATE_WIDTH}}")
        cells.append(f"{kind:<{TYPE_WIDTH}}")
        return " ".join(cells) + "\n"

    lines = [row("ID", "HOST", "PORT", "RACK", None if controllers else "STATE", "ENDPOINT_TYPE")]
    for node in nodes:
        state = None if controllers else ("fenced" if node.is_fenced else "unfenced")
        lines.append(row(str(node.node_id), node.host, str(node.port), node.rack or "null", state,
                         "controller" if controllers else "broker"))
    return "".join(lines)


def endpoints_json(nodes: Sequence[ClusterNode], *, controllers: bool) -> dict[str, Any]:
    """``endpoint_type`` (broker or controller) and one entry per node; ``fenced`` for brokers only."""
    entries: list[dict[str, Any]] = []
    for node in nodes:
        entry: dict[str, Any] = {"id": node.node_id, "host": node.host, "port": node.port, "rack": node.rack}
        if not controllers:
            entry["fenced"] = node.is_fenced
        entries.append(entry)
    return {"endpoint_type": "controller" if controllers else "broker", "nodes": entries}


@cluster_command("list-endpoints")
@click.option("--include-fenced-brokers", is_flag=True,
              help="List fenced brokers too (brokers of Kafka 4.0 or newer; --bootstrap-server only).")
@output.output_option
def list_endpoints(connection: Connection, include_fenced_brokers: bool, output_format: str) -> None:
    """List the endpoints of the brokers (--bootstrap-server) or of the controllers
    (--bootstrap-controller).

    \b
    Examples:
      kafka-cluster list-endpoints --bootstrap-controller localhost:9093
      kafka-cluster list-endpoints --bootstrap-server localhost:9092 --include-fenced-brokers
    """
    from kafka_admin_kraft.errors import UnsupportedOperationError, UnsupportedVersionError

    json_output = output_format == "json"
    controllers = connection.to_controllers
    with connection.open(json_output=json_output) as admin:
        if include_fenced_brokers and controllers:
            output.fail("The option --include-fenced-brokers is only supported with --bootstrap-server "
                        "option")
        with reported_errors():
            try:
                cluster = admin.describe_cluster(include_fenced_brokers=include_fenced_brokers)
            except (UnsupportedVersionError, UnsupportedOperationError) as exc:
                message = exc.message if isinstance(exc, UnsupportedVersionError) else str(exc)
                if json_output:  # a document without nodes would read as an empty cluster
                    output.fail(message)
                output.write(message + "\n")
                return
    if json_output:
        output.write_json(endpoints_json(cluster.nodes, controllers=controllers))
    else:
        output.write(endpoints_text(cluster.nodes, controllers=controllers))
