"""`kafka-cluster unregister-controller`: remove the registration of a controller that is gone for good
(UnregisterController, KIP-1312, Kafka 4.4, PR #22191: ``--id``/``-i``, as the merged tool spells it).

The controller must be stopped and no longer a voter: the active controller refuses a voter
(KAFKA-20865). ``kafka-metadata-quorum remove-controller --unregister`` does both steps for a voter.
"""

from __future__ import annotations

import click

from .. import output
from ..admin_options import JAVA_INT
from .common import Connection, cluster_command, unregister_node


@cluster_command("unregister-controller")
@click.option("--id", "-i", "controller_id", type=JAVA_INT, required=True, metavar="ID",
              help="Node id of the controller to unregister.")
@output.output_option
def unregister_controller(connection: Connection, controller_id: int, output_format: str) -> None:
    """Unregister a stopped controller that is not a voter (an observer, or one already removed from
    the voters), so that its supported feature levels no longer hold back feature upgrades. Needs Kafka
    4.4 with metadata.version 4.4-IV2 or later.

    \b
    Example:
      kafka-cluster unregister-controller --bootstrap-controller localhost:9093 --id 4
    """
    unregister_node(connection, "controller", controller_id, output_format)
