"""`kafka-cluster`: the cluster's id, its brokers' and controllers' endpoints and API versions, and
unregistering brokers and controllers.

A drop-in for Kafka 4.4's tool of the same name (``ClusterTool``): the subcommands ``cluster-id``,
``unregister``, ``list-endpoints``, ``api-versions`` and ``unregister-controller``, each taking its
connection options after its name, with the same text and exit codes. Kafka 3.9's tool had
``cluster-id`` and ``unregister`` only, with the same options and output. Addition: ``--output json``
on every subcommand.

This module builds the click group; each subcommand is a module of its own, which never imports this
one; ``common`` holds the connection options they share, ``api_table`` Kafka 4.4's API keys.
"""

from __future__ import annotations

import click

from .._click import CONTEXT_SETTINGS, KafkaGroup
from . import api_versions, cluster_id, list_endpoints, unregister, unregister_controller


@click.group("kafka-cluster", cls=KafkaGroup, context_settings=CONTEXT_SETTINGS)
def main() -> None:
    """The Kafka cluster tool: the cluster's id, endpoints and API versions; unregistering brokers
    and controllers. The connection options follow the subcommand.

    \b
    Examples:
      kafka-cluster cluster-id --bootstrap-controller localhost:9093
      kafka-cluster list-endpoints --bootstrap-server localhost:9092 --include-fenced-brokers
      kafka-cluster api-versions --bootstrap-controller localhost:9093
      kafka-cluster unregister-controller --bootstrap-controller localhost:9093 --id 4
    """


# Kafka's order.
main.add_command(cluster_id.cluster_id)
main.add_command(unregister.unregister)
main.add_command(list_endpoints.list_endpoints)
main.add_command(api_versions.api_versions)
main.add_command(unregister_controller.unregister_controller)
