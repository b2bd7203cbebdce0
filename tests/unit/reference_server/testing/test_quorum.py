"""KraftQuorum's faults and waits on one three-node quorum shared by the module (reset between tests):
a killed, stopped, paused, cut-off or disk-full leader is replaced; a replaced disk comes back as an
observer under a new directory id and is swapped into the voter set."""

from __future__ import annotations

import errno

import pytest

from kafka_admin_kraft.errors import VoterChangeRefusedError
from kafka_admin_kraft.protocol.exceptions import KafkaApiError
from kafka_admin_kraft_server.testing.plugin import QuorumFactory
from kafka_admin_kraft_server.testing.quorum import KraftQuorum, QuorumTimeout


@pytest.fixture
def quorum(kraft_quorum_module: QuorumFactory) -> KraftQuorum:
    return kraft_quorum_module.shared(size=3)


def followers(quorum: KraftQuorum, leader: int) -> list[int]:
    return [n for n in quorum.controller_ids if n != leader]


def test_a_killed_leader_is_replaced_and_comes_back_as_a_follower(quorum: KraftQuorum) -> None:
    leader = quorum.wait_for_leader()
    epoch = quorum.admin.describe_metadata_quorum().leader_epoch
    assert quorum.kill(leader) == -9 and not quorum.node(leader).running
    new = quorum.wait_for_leader(exclude={leader}, min_epoch=epoch + 1)
    quorum.start(leader)
    info = quorum.wait_caught_up()
    assert info.leader_id == new and sorted(v.replica_id for v in info.voters) == [1, 2, 3]


def test_a_stopped_leader_resigns(quorum: KraftQuorum) -> None:
    leader = quorum.wait_for_leader()
    assert quorum.stop(leader) == 0
    assert "Received SIGTERM, shutting down" in quorum.node(leader).log
    quorum.wait_for_leader(exclude={leader})


def test_a_paused_leader_loses_the_quorum_until_resumed(quorum: KraftQuorum) -> None:
    leader = quorum.wait_for_leader()
    quorum.pause(leader)
    assert quorum.node(leader).paused and quorum.node(leader).running
    new = quorum.wait_for_leader(exclude={leader})
    quorum.resume(leader)
    assert quorum.wait_caught_up().leader_id == new


def test_a_partition_cuts_nodes_apart_and_heals(quorum: KraftQuorum) -> None:
    leader = quorum.wait_for_leader()
    one, two = followers(quorum, leader)
    # Two followers cut from each other: the leader still reaches both, the log still commits.
    quorum.partition(one, two)
    high_watermark = quorum.admin.describe_metadata_quorum().high_watermark
    assert quorum.wait_for_high_watermark(high_watermark + 2) >= high_watermark + 2
    assert quorum.wait_for_leader() == leader
    # The leader cut from everyone: the others elect one of themselves, the old one resigns.
    quorum.heal()
    epoch = quorum.admin.describe_metadata_quorum().leader_epoch
    quorum.isolate(leader)
    new = quorum.wait_for_leader(min_epoch=epoch + 1)
    assert new != leader
    assert "unreachable (a network partition injected through --faults)" in quorum.node(leader).log
    quorum.heal(leader)
    info = quorum.wait_caught_up()
    assert info.leader_id == new and all(v.log_end_offset >= info.high_watermark for v in info.voters)


def test_a_full_disk_stops_the_leader(quorum: KraftQuorum) -> None:
    leader = quorum.wait_for_leader()
    quorum.fill_disk(leader)
    assert quorum.wait_for_exit(leader) == 1
    assert f"[Errno {errno.ENOSPC}] No space left on device" in quorum.node(leader).log
    assert quorum.node(leader).returncode == 1
    quorum.wait_for_leader(exclude={leader})
    quorum.free_disk(leader)
    quorum.restart(leader)
    quorum.wait_caught_up()


def test_a_replaced_disk_is_swapped_into_the_voter_set(quorum: KraftQuorum) -> None:
    leader = quorum.wait_caught_up().leader_id  # the swap refuses to start on a lagging voter
    replaced = followers(quorum, leader)[0]
    old = quorum.node(replaced).directory_id
    new = quorum.replace_disk(replaced)
    assert new != old and quorum.node(replaced).directory_id == new
    assert (quorum.node(replaced).metadata_dir / "meta.properties").read_text().count(str(new)) == 1

    def swapped() -> bool:
        """The swap, once the quorum allows it: the node is back within a second, while its old
        directory still counts as a healthy voter, and removing a healthy voter waits until every
        other voter is healthy too; an addition the leader is not ready for is resumed by the next try."""
        try:
            return quorum.admin.replace_controller(replaced, new).changed
        except (VoterChangeRefusedError, KafkaApiError):
            return False

    quorum.wait_until(swapped, 30, f"node {replaced} to swap its directory")
    info = quorum.wait_for_voters(quorum.controller_ids)
    assert (replaced, new) in {(v.replica_id, v.replica_directory_id) for v in info.voters}


def test_a_wait_that_cannot_end_says_what_it_awaited(quorum: KraftQuorum) -> None:
    with pytest.raises(QuorumTimeout, match=r"timed out after 0.5s waiting for the voters \[1, 2, 3, 4\]"):
        quorum.wait_for_voters([1, 2, 3, 4], timeout=0.5)
    with pytest.raises(KeyError, match="no node 9 in this quorum: its nodes are 1, 2, 3"):
        quorum.node(9)


def test_a_static_quorum_of_an_older_line(kraft_quorum: QuorumFactory) -> None:
    quorum = kraft_quorum(size=1, dynamic=False, release_version="3.9")
    assert "controller.quorum.voters=1@" in quorum.node(1).config_file.read_text()
    assert "the reference server runs as Kafka 3.9" in quorum.node(1).log
    info = quorum.admin.describe_metadata_quorum()
    assert info.leader_id == 1 and info.api_version <= 2  # Kafka 3.9 answers DescribeQuorum v2 at most


def test_an_added_controller_fetches_as_an_observer(kraft_quorum: QuorumFactory) -> None:
    quorum = kraft_quorum(size=1)
    node = quorum.add_controller(2)
    assert quorum.controller_ids == [1, 2] and node.running

    def observed() -> bool:
        observers = quorum.admin.describe_metadata_quorum().observers
        return (2, node.directory_id) in {(o.replica_id, o.replica_directory_id) for o in observers}

    quorum.wait_until(observed, 20, "controller 2 as an observer")
    with pytest.raises(ValueError, match="node 2 already exists"):
        quorum.add_controller(2)
