"""KIP-853 operations on real processes that test_voters.py leaves out: controllers that join the
voter set by themselves (``controller.quorum.auto.join.enable``), a wiped controller replaced by
auto-join under a new directory id, a dead voter replaced by a controller with a new node id while
the quorum keeps committing, and a static quorum that accepts AddRaftVoter once upgraded to
kraft.version 1."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from typing import Any

from integration.harness import FAST_ELECTIONS, Cluster, Node, free_ports, wait_until
from integration.test_voters import (
    add_when_caught_up,
    admin,
    standalone,
    voter_keys,
)
from kafka_admin_kraft import Admin
from kafka_admin_kraft.errors import InvalidUpdateVersionError

Make = Callable[..., Cluster]
AUTO_JOIN = {"controller.quorum.auto.join.enable": "true"}


def keys_of(cluster: Cluster, *node_ids: int) -> set[tuple[int, str]]:
    return {(i, str(cluster.nodes[i].directory_id)) for i in node_ids}


def high_watermark(cluster: Cluster) -> int:
    found = cluster.find_leader()
    return found[1].high_watermark if found is not None else -1


def wait_committing(cluster: Cluster, timeout: float = 20) -> int:
    """Wait until the leader's high watermark moves past where it is now; return the new value."""
    start = wait_until(lambda: (hw := high_watermark(cluster)) > 0 and hw, timeout, "a high watermark")
    return wait_until(lambda: (hw := high_watermark(cluster)) > start and hw, timeout,
                      f"the high watermark to move past {start}")


def started(make_cluster: Make, size: int, **options: Any) -> Cluster:
    cluster = make_cluster(size, **options)
    cluster.format()
    cluster.start_all()
    return cluster


def add_controller(cluster: Cluster, node_id: int, overrides: dict[str, str] | None = None) -> Node:
    """A new controller formatted with ``--no-initial-controllers`` (it starts as an observer)."""
    node = cluster.new_node(node_id, free_ports(1)[0])
    cluster.nodes[node_id] = node
    cluster.write_config(node, overrides)
    cluster.format_node(node, ())
    return node


def test_controllers_formatted_without_initial_controllers_join_by_themselves(make_cluster: Make) -> None:
    cluster = standalone(make_cluster, 3)
    for node_id in (2, 3):
        cluster.write_config(cluster.nodes[node_id], AUTO_JOIN)
    cluster.start_all()
    cluster.wait_for_leader()
    expected = keys_of(cluster, 1, 2, 3)
    wait_until(lambda: voter_keys(cluster) == expected, 40, "nodes 2 and 3 to join the voter set")

    def committed() -> Any:
        partition = cluster.describe_quorum(cluster.wait_for_leader()[0], 3).topics[0].partitions[0]
        return {v.replica_id for v in partition.committed_voters} == {1, 2, 3} and partition

    partition = wait_until(committed, 20, "the joined voters to be committed")
    assert {o.replica_id for o in partition.observers}.isdisjoint({2, 3})
    # The joined voters count for the quorum: with node 1 gone, 2 and 3 elect a leader and commit.
    cluster.kill(1)
    leader, _ = cluster.wait_for_leader(30, candidates=[2, 3])
    assert leader in (2, 3)
    wait_committing(cluster)
    cluster.assert_running()


def test_a_wiped_controller_with_auto_join_replaces_its_stale_entry(make_cluster: Make) -> None:
    cluster = started(make_cluster, 3, properties={**FAST_ELECTIONS, **AUTO_JOIN})
    leader, _ = cluster.wait_for_leader()
    victim = next(i for i in (3, 2) if i != leader)
    node = cluster.nodes[victim]
    old = (victim, str(node.directory_id))
    assert old in voter_keys(cluster)
    cluster.kill(victim)
    shutil.rmtree(node.metadata_dir)
    node.directory_id = type(node.directory_id).random()
    cluster.format_node(node, ())
    cluster.start(victim)
    new = (victim, str(node.directory_id))
    wait_until(lambda: new in voter_keys(cluster), 40, f"node {victim} to rejoin under its new directory id")
    assert old not in voter_keys(cluster)
    assert {k[0] for k in voter_keys(cluster)} == {1, 2, 3}
    wait_committing(cluster)
    cluster.assert_running()


def test_replace_a_dead_voter_with_a_new_node_id(make_cluster: Make) -> None:
    cluster = started(make_cluster, 3, properties=dict(FAST_ELECTIONS))
    leader, _ = cluster.wait_for_leader()
    cluster.wait_caught_up(leader)
    dead = next(i for i in (3, 2) if i != leader)
    dead_directory = cluster.nodes[dead].directory_id
    cluster.kill(dead)  # for good: its disk is lost
    committed = [wait_committing(cluster)]
    replacement = add_controller(cluster, 4)
    cluster.start(4)
    with admin(cluster) as client:
        add_when_caught_up(cluster, client, replacement)
        committed.append(wait_committing(cluster))
        # Four voters, one dead: 3 of 4 are a majority, so the quorum still commits.
        assert {k[0] for k in voter_keys(cluster)} == {1, 2, 3, 4}
        client.remove_raft_voter(dead, dead_directory)
        committed.append(wait_committing(cluster))
        quorum = client.describe_metadata_quorum()
    alive = sorted({1, 2, 3, 4} - {dead})
    assert voter_keys(cluster) == keys_of(cluster, *alive)
    assert sorted(v.replica_id for v in quorum.voters) == alive
    assert committed == sorted(committed)
    # The new voter is a full member: it catches up and can be elected.
    leader, _ = cluster.wait_for_leader()
    cluster.wait_caught_up(leader)
    cluster.assert_running()


def test_a_static_quorum_upgraded_to_kraft_version_1_accepts_add_raft_voter(make_cluster: Make) -> None:
    cluster = started(make_cluster, 3, dynamic=False, properties=dict(FAST_ELECTIONS))
    leader, _ = cluster.wait_for_leader(30)
    cluster.wait_caught_up(leader)
    with Admin(bootstrap_controllers=cluster.bootstrap_servers(), default_api_timeout_ms=20000,
               request_timeout_ms=5000) as client:

        def upgraded() -> bool:
            try:
                return client.update_features({"kraft.version": 1})["kraft.version"].ok
            except InvalidUpdateVersionError:  # not every voter has told the leader its range yet
                return False

        wait_until(upgraded, 30, "the kraft.version upgrade", interval=0.3)
    # A new controller finds the quorum through controller.quorum.bootstrap.servers (a node whose id
    # is not in controller.quorum.voters may not use that option) and is added like in any dynamic
    # quorum.
    static = [n.node_id for n in cluster.controllers()]
    bootstrap = ",".join(cluster.nodes[i].address for i in static)
    new = add_controller(cluster, 4)
    props = cluster.node_properties(new)
    del props["controller.quorum.voters"]
    props["controller.quorum.bootstrap.servers"] = bootstrap
    new.config_path.write_text("".join(f"{key}={value}\n" for key, value in props.items()))
    cluster.start(4)
    with Admin(bootstrap_controllers=bootstrap, default_api_timeout_ms=20000,
               request_timeout_ms=5000) as client:
        add_when_caught_up(cluster, client, new)
        wait_until(lambda: {k[0] for k in voter_keys(cluster)} == {1, 2, 3, 4}, 20, "four voters")
        quorum = client.describe_metadata_quorum()
        assert sorted(v.replica_id for v in quorum.voters) == [1, 2, 3, 4]
        four = next(v for v in quorum.voters if v.replica_id == 4)
        assert str(four.replica_directory_id) == str(new.directory_id)
    wait_committing(cluster)
    cluster.assert_running()
