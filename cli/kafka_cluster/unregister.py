"""`kafka-cluster unregister`: remove the registration of a broker that is gone for good
(UnregisterBroker, KIP-631; ``ClusterTool.unregisterCommand``)."""

from __future__ import annotations

import click

from .. import output
from ..admin_options import JAVA_INT
from .common import Connection, cluster_command, unregister_node


@cluster_command("unregister")
@click.option("--id", "-i", "broker_id", type=JAVA_INT, required=True, metavar="ID",
              help="Node id of the broker to unregister.")
@output.output_option
def unregister(connection: Connection, broker_id: int, output_format: str) -> None:
    """Unregister a broker that is gone for good, so that its supported feature levels no longer hold
    back feature upgrades.

    \b
    Example:
      kafka-cluster unregister --bootstrap-server localhost:9092 --id 4
    """
    unregister_node(connection, "broker", broker_id, output_format)
