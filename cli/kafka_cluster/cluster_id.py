"""`kafka-cluster cluster-id`: the cluster's id, from DescribeCluster (``ClusterTool.clusterIdCommand``)."""

from __future__ import annotations

from .. import output
from ..admin_options import reported_errors
from .common import Connection, cluster_command


@cluster_command("cluster-id")
@output.output_option
def cluster_id(connection: Connection, output_format: str) -> None:
    """Print the id of the cluster.

    \b
    Examples:
      kafka-cluster cluster-id --bootstrap-controller localhost:9093
      kafka-cluster cluster-id -b localhost:9092 --output json
    """
    json_output = output_format == "json"
    with connection.open(json_output=json_output) as admin, reported_errors():
        cluster = admin.describe_cluster()
    if json_output:
        output.write_json({"cluster_id": cluster.cluster_id})
    else:
        output.write(f"Cluster ID: {cluster.cluster_id}\n")
