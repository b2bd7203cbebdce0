"""A quorum whose voters run different Kafka lines, as during a rolling upgrade: node 1 runs as Kafka
3.9 (``kraft-server --release-version 3.9``: no pre-vote, Vote v0-1), nodes 2 and 3 as Kafka 4.4,
every directory formatted at 3.9's levels. Each node in turn becomes the leader and the others
follow, with records flowing from a 3.9 leader to 4.x followers and from a 4.x leader to the 3.9
follower."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable

from integration.harness import FAST_ELECTIONS, Cluster, wait_until
from kafka_admin_kraft.protocol import messages

OLD_NODE = 1
SLOW = {"controller.quorum.election.timeout.ms": "60000", "controller.quorum.fetch.timeout.ms": "60000"}
"""Timeouts that keep a voter from running for office while it still votes."""
FALLBACK = "does not support pre-vote (Vote v2); starting a standard election"
VOTE = messages.VoteRequest.API_KEY


def start(cluster: Cluster, node_id: int, *, slow: bool = False) -> int:
    """Start the node (killing it first if it runs), with ``SLOW`` timeouts when asked; the wall-clock
    ms it was started at.

    SIGKILL, not SIGTERM: a node asked to stop while its controller registration is being answered
    can hang on the way out, which is not what this test is about."""
    node = cluster.nodes[node_id]
    if node.running:
        cluster.kill(node_id, signal.SIGKILL)
    cluster.write_config(node, dict(SLOW) if slow else {})
    started_ms = int(time.time() * 1000)
    cluster.start(node_id)
    return started_ms


def follows(cluster: Cluster, leader: int, node_id: int, since_ms: int) -> bool:
    """The leader saw ``node_id`` fetch after ``since_ms`` and reach its high watermark."""
    data = cluster.quorum_from(leader)
    if data is None or data.high_watermark <= 0:
        return False
    voter = next(voter for voter in data.current_voters if voter.replica_id == node_id)
    return voter.last_fetch_timestamp >= since_ms and voter.log_end_offset >= data.high_watermark


def leader_end_offset(cluster: Cluster, leader: int) -> int:
    data = cluster.quorum_from(leader)
    assert data is not None, f"node {leader} no longer leads"
    return next(voter.log_end_offset for voter in data.current_voters if voter.replica_id == leader)


def elect(cluster: Cluster, target: int) -> None:
    """Make ``target`` the leader: the third voter stops once the target holds all it could have; the
    leader is killed; the third voter comes back with timeouts too long to run itself, so the target's
    election is the only one and the third voter's vote decides it. Then the old leader and the third
    voter run again as usual, one at a time so that the new leader keeps a majority, and follow."""
    leader, before = cluster.wait_for_leader(30)
    third = next(node_id for node_id in cluster.nodes if node_id not in (leader, target))
    cluster.kill(third, signal.SIGKILL)
    end = leader_end_offset(cluster, leader)
    # The high watermark needs the target's fetches now: past ``end``, it holds all the third had.
    wait_until(lambda: (data := cluster.quorum_from(leader)) is not None and data.high_watermark > end, 20,
               f"node {target} to fetch past offset {end}")
    cluster.kill(leader, signal.SIGKILL)
    start(cluster, third, slow=True)
    elected, _ = cluster.wait_for_leader(30, min_epoch=before.leader_epoch + 1, candidates=[target])
    assert elected == target
    restarted_ms = start(cluster, leader)
    wait_until(lambda: follows(cluster, target, leader, restarted_ms), 30,
               f"node {leader} to follow node {target}")
    restarted_ms = start(cluster, third)
    caught_up = cluster.wait_caught_up(target, 30, since_ms=restarted_ms)
    assert caught_up.leader_id == target and caught_up.high_watermark > before.high_watermark
    if target != OLD_NODE and third == OLD_NODE:
        # The only voter it could reach speaks Vote v0-1: its pre-vote was answered UNSUPPORTED_VERSION
        # without being sent, and it ran a standard election at once.
        assert FALLBACK in cluster.nodes[target].output()


def pre_vote(cluster: Cluster, voter_id: int) -> messages.VoteRequest:
    """A pre-vote of replica 3 at epoch 1 (Vote v2 only)."""
    partition = messages.VoteRequest.PartitionData(replica_epoch=1, replica_id=3, pre_vote=True)
    return messages.VoteRequest(cluster_id=cluster.cluster_id, voter_id=voter_id, topics=[
        messages.VoteRequest.TopicData(topic_name="__cluster_metadata", partitions=[partition])])


def test_each_voter_of_a_mixed_quorum_leads_in_turn(make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster(3, properties=dict(FAST_ELECTIONS), lines={OLD_NODE: "3.9"},
                           format_release_version="3.9").format()
    cluster.start_all()
    first, _ = cluster.wait_for_leader(30)
    for node_id in cluster.nodes:
        with cluster.nodes[node_id].client() as client:
            client.api_versions()
            assert client.versions[VOTE] == ((0, 1) if node_id == OLD_NODE else (0, 2))
    # Every node leads once; the first leader last, once another has taken over from it.
    for target in [*(node_id for node_id in cluster.nodes if node_id != first), first]:
        elect(cluster, target)
    # A Vote v2 is a version the 3.9-like node does not serve: it closes the connection unanswered.
    with cluster.nodes[OLD_NODE].client() as client:
        client.send(pre_vote(cluster, OLD_NODE), 2)
        assert client.is_closed_by_server()
    with cluster.nodes[2].client() as client:
        assert isinstance(client.request(pre_vote(cluster, 2), 2), messages.VoteResponse)
    # It never ran a pre-vote round, so never had one to fall back from.
    old_output = cluster.nodes[OLD_NODE].output()
    assert FALLBACK not in old_output and "unsupported version error" not in old_output
    cluster.assert_running()
