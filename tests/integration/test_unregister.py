"""A "ghost" controller blocking a metadata.version upgrade, reproduced on real processes and removed
as Kafka 4.4 allows (KIP-1312).

A dynamic quorum formatted at Kafka 4.2's levels (4.2-IV1): nodes 1 and 2 run as Kafka 4.4, node 3 as
Kafka 4.2, and a 4.4 broker. Node 3 registers (supporting metadata.version 7-29), is removed from the
voter set and stopped: its registration stays, and the leader refuses the upgrade to 4.4-IV2 naming
it. UnregisterController cannot help yet: Kafka gates it on 4.4-IV2 itself, the level the ghost
blocks. The way out Kafka leaves is a 4.4 controller registering under the ghost's id; once 4.4-IV2
is finalized and that controller is stopped, UnregisterController removes the registration for good:
DescribeCluster stops listing it and a snapshot taken afterwards holds no trace of it. UnregisterBroker
is refused for an unknown id and removes the running broker's registration, which it then renews.
The requests go to the leader's controller listener and through the broker, which forwards them, as
raw protocol requests.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from typing import Any

from integration.client import KafkaClient
from integration.harness import FAST_ELECTIONS, HOST, Cluster, wait_until
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.records import (
    ApiMessageAndVersion,
    decode_metadata_record,
    list_snapshots,
    read_snapshot,
)

Make = Callable[..., Cluster]
GHOST = 3
BROKER_ID = 100
FORMATTED = 29
"""4.2-IV1, what Kafka 4.2's ``kafka-storage format`` finalizes."""
BLOCKED = ("The update failed for all features since the following feature had an error: Invalid update "
           "version 33 for feature metadata.version. Controller 3 only supports versions 7-29")
UPDATE = messages.UpdateFeaturesRequest


def ask(port: int, body: Any, version: int) -> Any:
    with KafkaClient(HOST, port, timeout=30) as client:
        return client.request(body, version)


def upgrade(port: int, *, validate_only: bool = False) -> Any:
    """UpdateFeatures v2: metadata.version to 4.4-IV2 (33)."""
    update = UPDATE.FeatureUpdateKey(feature="metadata.version", max_version_level=33, upgrade_type=1)
    return ask(port, UPDATE(feature_updates=[update], validate_only=validate_only), 2)


def unregister(port: int, controller_id: int) -> tuple[int, str | None]:
    answer = ask(port, messages.UnregisterControllerRequest(controller_id=controller_id), 0)
    return answer.error_code, answer.error_message


def listed_controllers(port: int) -> list[int]:
    answer = ask(port, messages.DescribeClusterRequest(endpoint_type=2), 1)
    return [node.broker_id for node in answer.brokers]


def test_a_ghost_controller_blocks_4_4_iv2_until_replaced_then_is_unregistered(make_cluster: Make) -> None:
    cluster = make_cluster(3, properties=dict(FAST_ELECTIONS), lines={GHOST: "4.2"},
                           format_release_version="4.2").format()
    broker = cluster.add_broker(BROKER_ID)
    for node_id in (1, 2):
        cluster.start(node_id)
    leader, _ = cluster.wait_for_leader(30, candidates=[1, 2])
    cluster.start(GHOST)
    cluster.start(BROKER_ID)
    port = cluster.nodes[leader].port
    # The 4.2 controller's registration is committed once it holds the upgrade back.
    wait_until(lambda: upgrade(port, validate_only=True).error_message == BLOCKED, 30,
               "node 3's registration to block 4.4-IV2")

    # It leaves the voter set and stops: a ghost.
    with cluster.admin() as admin:
        admin.remove_raft_voter(GHOST, cluster.nodes[GHOST].directory_id)
    cluster.kill(GHOST, signal.SIGKILL)
    refused = upgrade(port)
    assert (refused.error_code, refused.error_message) == (95, BLOCKED)
    assert cluster.finalized(leader)["metadata.version"] == FORMATTED
    too_old = (35, "The current MetadataVersion is too old to support controller unregistration.")
    assert unregister(port, GHOST) == too_old
    assert unregister(broker.port, GHOST) == too_old  # forwarded by the broker: the same answer
    assert unregister(port, 1) == (42, "Cannot unregister controller 1 because it is part of the voter set.")

    # Kafka's way out: a 4.4 controller with the ghost's id registers 4.4's ranges, then stops.
    cluster.start(GHOST, line="4.4")
    wait_until(lambda: upgrade(port, validate_only=True).error_code == 0, 30,
               "the 4.4 controller's registration to replace the ghost's")
    cluster.kill(GHOST, signal.SIGKILL)
    assert upgrade(port).error_code == 0
    finalized = (1, 2, BROKER_ID)
    wait_until(lambda: all(cluster.finalized(node_id)["metadata.version"] == 33 for node_id in finalized),
               20, "nodes 1, 2 and the broker to finalize 4.4-IV2")

    # Now it can be unregistered, through the broker; DescribeCluster stops listing it.
    assert GHOST in listed_controllers(port)
    assert unregister(broker.port, GHOST) == (0, "")
    assert sorted(listed_controllers(port)) == [1, 2]
    assert unregister(port, GHOST) == (136, "Controller ID 3 is not currently registered.")
    # A snapshot taken now holds neither the registration nor the record that removed it.
    leader_dir = cluster.nodes[leader].partition_dir
    before = list_snapshots(leader_dir)
    process = cluster.nodes[leader].process
    assert process is not None
    process.send_signal(signal.SIGUSR1)
    snapshot = wait_until(lambda: [s for s in list_snapshots(leader_dir) if s not in before], 20,
                          "the leader to write a snapshot")[-1]
    kept = [record.message for batch in read_snapshot(leader_dir / snapshot.file_name) if not batch.is_control
            for record in map(decode_metadata_record, (r.value for r in batch.records))
            if isinstance(record, ApiMessageAndVersion)]
    registered = [m.controller_id for m in kept if isinstance(m, messages.RegisterControllerRecord)]
    assert sorted(registered) == [1, 2]
    assert not any(isinstance(m, messages.UnregisterControllerRecord) for m in kept)

    # UnregisterBroker: an unknown id is refused with the code alone; the running broker registers again.
    unknown = ask(broker.port, messages.UnregisterBrokerRequest(broker_id=BROKER_ID + 1), 0)
    assert (unknown.error_code, unknown.error_message) == (102, "")
    done = ask(port, messages.UnregisterBrokerRequest(broker_id=BROKER_ID), 0)
    assert (done.error_code, done.error_message) == (0, "")
    wait_until(lambda: "registering again" in broker.output(), 20, "the broker to register again")
    cluster.assert_running()
