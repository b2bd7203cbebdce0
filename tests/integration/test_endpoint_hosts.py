"""AddRaftVoter, UpdateRaftVoter and BrokerRegistration naming a host that is no valid host name or
IP address, sent to a real leader: INVALID_REQUEST, no traceback, no raw control character in the log,
and the node carries on."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from integration.harness import LISTENER, Cluster
from kafka_admin_kraft.features import SUPPORTED_FEATURES
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import Uuid

BAD_HOSTS = ["12..0.0.1", "a" * 300, "evil\x00host"]


@pytest.fixture
def leader(make_cluster: Callable[..., Cluster]) -> Cluster:
    cluster = make_cluster(1).format().start_all()
    cluster.wait_for_leader(20)
    return cluster


def add_voter(host: str) -> messages.AddRaftVoterRequest:
    R = messages.AddRaftVoterRequest
    return R(cluster_id=None, timeout_ms=5000, voter_id=7, voter_directory_id=Uuid.random(),
             listeners=[R.Listener(name=LISTENER, host=host, port=9093)], ack_when_committed=True)


def update_voter(cluster: Cluster, host: str) -> messages.UpdateRaftVoterRequest:
    R = messages.UpdateRaftVoterRequest
    node = cluster.nodes[1]
    epoch = cluster.describe_quorum(1).topics[0].partitions[0].leader_epoch
    return R(cluster_id=cluster.cluster_id, current_leader_epoch=epoch, voter_id=1,
             voter_directory_id=node.directory_id,
             listeners=[R.Listener(name=LISTENER, host=host, port=node.port)],
             k_raft_version_feature=R.KRaftVersionFeature(min_supported_version=0, max_supported_version=1))


def register_broker(cluster: Cluster, host: str) -> messages.BrokerRegistrationRequest:
    R = messages.BrokerRegistrationRequest
    return R(broker_id=100, cluster_id=cluster.cluster_id, incarnation_id=Uuid.random(),
             listeners=[R.Listener(name="BROKER", host=host, port=9092, security_protocol=0)],
             features=[R.Feature(name=name, min_supported_version=low, max_supported_version=high)
                       for name, low, high in SUPPORTED_FEATURES])


def test_malformed_hosts_are_invalid_requests_and_never_reach_the_log_raw(leader: Cluster) -> None:
    node = leader.nodes[1]
    before = leader.describe_quorum(1).topics[0].partitions[0]
    with node.client() as client:
        for host in BAD_HOSTS:
            added = client.request(add_voter(host))
            assert added.error_code == 42, host
            assert added.error_message.startswith("Add voter request has an invalid endpoint for listener "
                                                  f"ListenerName({LISTENER}): the host {host!r} ")
            assert client.request(update_voter(leader, host)).error_code == 42, host
            assert client.request(register_broker(leader, host)).error_code == 42, host
        after = client.describe_quorum(2).topics[0].partitions[0]
    assert [voter.replica_id for voter in after.current_voters] == [1]
    assert after.leader_epoch == before.leader_epoch
    leader.assert_running()
    output = node.log_path.read_bytes()
    assert b"Traceback" not in output and b"Unexpected error" not in output
    assert b"\x00" not in output
    assert b"'evil\\x00host'" in output  # the refusals that are logged show the host escaped
