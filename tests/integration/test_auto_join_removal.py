"""Removing a controller that runs with ``controller.quorum.auto.join.enable=true`` (Kafka 4.2's
auto-join), on real processes: removed while it runs it adds itself back, which ``Admin.reconcile_voters``
and ``kafka-metadata-quorum scale`` report instead of success; its ``--controller-config`` makes the
tool refuse the removal with the fix; stopped first, it stays removed. And a wiped controller with
auto-join racing ``Admin.replace_controller`` through the same directory swap."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Callable
from typing import Any

import pytest
from console_scripts import console_script

from integration.harness import HOST, LISTENER, Cluster, wait_until
from integration.test_voters import FAST, admin, format_observer
from kafka_admin_kraft import Endpoint
from kafka_admin_kraft.errors import VoterChangeError
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.voters import Progress

Make = Callable[..., Cluster]
AUTO_JOIN = {"controller.quorum.auto.join.enable": "true"}
REJOINED = ("controller 3 rejoined the voter set: it runs with controller.quorum.auto.join.enable=true; stop "
            "it before removing it")


def committed_voters(cluster: Cluster) -> tuple[set[int], set[int]]:
    """Node ids of the leader's CurrentVoters and CommittedVoters (DescribeQuorum v3)."""
    leader, _ = cluster.wait_for_leader()
    partition = cluster.describe_quorum(leader, 3).topics[0].partitions[0]
    current = {v.replica_id for v in partition.current_voters}
    return current, {v.replica_id for v in partition.committed_voters}


def all_three_again(cluster: Cluster) -> None:
    """Wait until node 3 is a committed voter again and fetches (it answers its probe)."""
    wait_until(lambda: committed_voters(cluster) == ({1, 2, 3}, {1, 2, 3}), 30, "node 3 among the voters")
    leader, _ = cluster.wait_for_leader()
    cluster.wait_caught_up(leader, 30, since_ms=int(time.time() * 1000))


def quorum_tool(cluster: Cluster, *args: str) -> subprocess.CompletedProcess[str]:
    command = [console_script("kafka-metadata-quorum"), "--bootstrap-controller", cluster.bootstrap_servers()]
    return subprocess.run([*command, *args], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)


@pytest.fixture
def third_auto_joins(make_cluster: Make) -> Cluster:
    """Three dynamic voters; node 3 runs with auto-join and is started once 1 and 2 have a leader (so
    that the removal tested is a follower's)."""
    cluster = make_cluster(3, properties=dict(FAST)).format()
    cluster.write_config(cluster.nodes[3], AUTO_JOIN)
    cluster.start(1)
    cluster.start(2)
    cluster.wait_for_leader(30, candidates=[1, 2])
    cluster.start(3)
    cluster.wait_ready(3, 30)
    all_three_again(cluster)
    return cluster


def test_removing_a_running_auto_join_controller_is_reported_and_stopping_it_first_sticks(
    third_auto_joins: Cluster,
) -> None:
    cluster = third_auto_joins
    config = str(cluster.nodes[3].config_path)
    directory = cluster.nodes[3].directory_id

    # The SDK, told nothing about node 3's configuration: the removal commits, node 3 comes back.
    with admin(cluster) as client, pytest.raises(VoterChangeError) as caught:
        client.reconcile_voters([1, 2], timeout=30)
    assert str(caught.value).startswith(REJOINED)
    removal = f"Remove voter 3 (directory id {directory})"
    assert [o.step.describe() for o in caught.value.completed] == [removal]
    all_three_again(cluster)

    # The tool without the configuration: the plan says it may come back, the run reports that it did.
    dry = quorum_tool(cluster, "scale", "--remove", "3", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.splitlines()[-3:] == [
        "Note: if controller 3 runs with controller.quorum.auto.join.enable=true (Kafka 4.2+), it adds "
        "itself back to the voters unless it is stopped first",
        "Note: controller 3 still answers, so it is not unregistered (a running controller registers again): "
        "once it is stopped, unregister it (kafka-cluster unregister-controller --id 3)",
        "Dry run: no change made.",
    ]
    removed = quorum_tool(cluster, "scale", "--remove", "3", "--yes")
    assert removed.returncode == 1
    assert removed.stderr.splitlines()[-1] == f"Voter change failed: {REJOINED} (completed: {removal})"
    all_three_again(cluster)

    # With its configuration the tool knows, and refuses before any change.
    refused = quorum_tool(cluster, "scale", "--remove", "3", "--controller-config", config, "--yes")
    assert (refused.returncode, refused.stdout) == (1, "")
    assert refused.stderr == (
        "Voter change refused: controller 3 is configured with controller.quorum.auto.join.enable=true: "
        "removed while it runs, it adds itself back to the voters; stop it, or set "
        "controller.quorum.auto.join.enable=false and restart it, before removing it "
        "(no step was completed)\n")
    assert committed_voters(cluster) == ({1, 2, 3}, {1, 2, 3})

    # Stopped first, it is removed for good (the tool still notes what starting it again would do).
    cluster.kill(3)
    stopped = quorum_tool(cluster, "scale", "--remove", "3", "--controller-config", config, "--yes")
    assert stopped.returncode == 0, stopped.stderr
    lines = stopped.stdout.splitlines()
    assert ("Note: controller 3 does not answer and is configured with controller.quorum.auto.join.enable="
            "true: started so again, it adds itself back to the voters; set the option to false before "
            "starting it") in lines
    assert lines[-1].startswith("Done: the voters are now 1, 2, fault tolerance 0 (1 step")
    assert "Watching" not in stopped.stderr  # a stopped controller is not waited for
    time.sleep(3)
    assert committed_voters(cluster) == ({1, 2}, {1, 2})
    cluster.assert_running()


def test_replace_controller_and_a_new_incarnation_with_auto_join_make_one_swap(make_cluster: Make) -> None:
    """The new incarnation starts while ``replace_controller`` waits for it; it removes its stale entry
    and adds itself as the run plans the same two changes. The run ends with the new directory id
    committed, whoever made each change."""
    cluster = make_cluster(3, properties=dict(FAST)).format().start_all()
    leader, _ = cluster.wait_for_leader()
    cluster.wait_caught_up(leader)
    victim = next(i for i in (3, 2) if i != leader)
    node = cluster.nodes[victim]
    cluster.kill(victim)
    shutil.rmtree(node.metadata_dir)
    node.directory_id = Uuid.random()
    cluster.write_config(node, AUTO_JOIN)
    format_observer(cluster, node)
    events: list[Progress] = []

    def progress(event: Progress) -> None:
        events.append(event)
        if event.kind == "waiting" and not node.running:
            cluster.start(victim)

    with admin(cluster) as client:
        endpoint = Endpoint(listener=LISTENER, host=HOST, port=node.port)
        result = client.replace_controller(victim, str(node.directory_id), endpoints=[endpoint],
                                           progress=progress, timeout=30, auto_join=True)
    assert node.running and result.final is not None
    expected: Any = {(i, cluster.nodes[i].directory_id) for i in (1, 2, 3)}
    assert result.final.current == expected
    assert result.plan.notes[0].startswith(f"controller {victim} is configured with")

    def swapped() -> bool:
        partition = cluster.describe_quorum(cluster.wait_for_leader()[0], 3).topics[0].partitions[0]
        keys = {(v.replica_id, v.replica_directory_id) for v in partition.committed_voters}
        return keys == expected

    wait_until(swapped, 20, "the new directory id committed")
    cluster.assert_running()
