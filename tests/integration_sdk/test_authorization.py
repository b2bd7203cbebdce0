"""Kafka's StandardAuthorizer on a reference quorum, through the SDK: a user without ACLs is refused every
privileged call, through the controllers and through a broker, as Kafka refuses it; DESCRIBE on the
cluster lets it read the quorum through brokers; ALTER lets it remove and add a voter and downgrade
features, until the ACL is deleted again. A TLS client is known by its certificate's subject."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from integration.authz_util import AUTHORIZER, admin, eventually, start
from integration.harness import FAST_ELECTIONS, HOST, Cluster

from integration_sdk.test_security import Pki
from kafka_admin_kraft import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    Admin,
    FeatureUpdate,
    ResourceType,
    UpgradeType,
)
from kafka_admin_kraft.errors import ClusterAuthorizationFailedError, Refusal

Make = Callable[..., Cluster]
REQUEST_TEXT = re.compile(r"Request Request\(processor=\d+, connectionId=[0-9.:-]+, "
                          r"session=org\.apache\.kafka\.network\.Session@[0-9a-f]+, "
                          r"listenerName=ListenerName\(CONTROLLER\), securityProtocol=SASL_PLAINTEXT, "
                          r"buffer=.*, "
                          r"envelope=(None|Some\(Request\(.*\)\))\) is not authorized\.")


def refused(call: Callable[[], Any]) -> Refusal:
    with pytest.raises(ClusterAuthorizationFailedError) as info:
        call()
    assert info.value.refusal is not None, info.value
    return info.value.refusal


def grant(cluster: Cluster, *operations: AclOperation) -> None:
    with admin(cluster, "admin") as a:
        results = a.create_acls([AclBinding(ResourceType.CLUSTER, "kafka-cluster", "User:alice", operation)
                                 for operation in operations])
    assert all(result.ok for result in results), results


def test_a_user_without_acls_is_refused_until_an_acl_grants_it(make_cluster: Make) -> None:
    cluster = start(make_cluster)
    with admin(cluster, "admin") as a:
        before = a.describe_metadata_quorum()
        levels = dict(a.describe_features().finalized_features)
    voter = next(v for v in before.voters if v.replica_id != before.leader_id)
    endpoint = before.nodes[voter.replica_id].endpoints[0]
    endpoints = {endpoint.listener: (endpoint.host, endpoint.port)}
    downgrades = {"share.version": FeatureUpdate(level=1, upgrade_type=UpgradeType.SAFE_DOWNGRADE),
                  "streams.version": FeatureUpdate(level=0, upgrade_type=UpgradeType.SAFE_DOWNGRADE)}
    assert (levels["share.version"].max_version_level, levels["streams.version"].max_version_level) == (2, 1)

    alice = admin(cluster, "alice", timeout_ms=8000)
    via_broker = admin(cluster, "alice", brokers=True, timeout_ms=8000)
    with alice, via_broker:
        # Through the controllers every call starts with DescribeCluster, which a controller allows only
        # with ALTER on the cluster.
        first = refused(alice.describe_metadata_quorum)
        assert (first.principal, first.api, first.listener, first.operation, first.broker_operation) == (
            "User:alice", "DescribeCluster", "controller", "ALTER", None)
        assert first.server_message is not None and REQUEST_TEXT.fullmatch(first.server_message)

        # Through a broker DescribeCluster needs nothing, and every privileged call is refused by the
        # controller it is forwarded to, as Kafka answers each API.
        assert via_broker.describe_cluster().cluster_id == cluster.cluster_id
        quorum = refused(via_broker.describe_metadata_quorum)
        assert (quorum.api, quorum.operation, quorum.forwarded) == ("DescribeQuorum", "DESCRIBE", True)
        assert quorum.server_message == "Cluster authorization failed."  # the code alone: no message
        removal = refused(lambda: via_broker.remove_raft_voter(voter.replica_id, voter.replica_directory_id))
        assert (removal.api, removal.operation, removal.server_message) == (
            "RemoveRaftVoter", "ALTER", "Cluster authorization failed.")
        addition = refused(lambda: via_broker.add_raft_voter(voter.replica_id, voter.replica_directory_id,
                                                              endpoints))
        assert addition.api == "AddRaftVoter"
        update = refused(lambda: via_broker.update_features(downgrades))
        assert update.api == "UpdateFeatures" and update.server_message is not None
        assert REQUEST_TEXT.fullmatch(update.server_message)
        assert "envelope=Some(Request(" in update.server_message
        binding = AclBinding(ResourceType.CLUSTER, "kafka-cluster", "User:alice", AclOperation.ALTER)
        assert refused(lambda: via_broker.create_acls([binding])).api == "CreateAcls"
        assert refused(lambda: via_broker.delete_acls([AclBindingFilter()])).api == "DeleteAcls"
        described = refused(via_broker.describe_acls)
        assert (described.api, described.listener, described.forwarded) == ("DescribeAcls", "broker", False)

    with admin(cluster, "admin") as a:
        after = a.describe_metadata_quorum()
        assert sorted(v.replica_id for v in after.voters) == sorted(v.replica_id for v in before.voters)
        assert a.describe_features().finalized_features == levels
        assert a.describe_acls() == []

    # DESCRIBE: the quorum and the ACLs can be read through brokers, nothing can be changed, and the
    # controllers still want ALTER for DescribeCluster.
    grant(cluster, AclOperation.DESCRIBE)
    with admin(cluster, "alice", brokers=True) as via_broker, \
            admin(cluster, "alice", timeout_ms=8000) as alice:
        assert eventually(via_broker.describe_metadata_quorum).leader_id in (1, 2, 3)
        assert [b.operation for b in eventually(via_broker.describe_acls)] == [AclOperation.DESCRIBE]
        assert refused(lambda: via_broker.update_features(downgrades)).api == "UpdateFeatures"
        assert refused(alice.describe_metadata_quorum).api == "DescribeCluster"

    # ALTER: the four privileged calls Kafka refused go through.
    grant(cluster, AclOperation.ALTER)
    with admin(cluster, "alice", timeout_ms=30000) as alice:
        eventually(alice.describe_metadata_quorum)
        alice.remove_raft_voter(voter.replica_id, voter.replica_directory_id)
        eventually(lambda: alice.add_raft_voter(voter.replica_id, voter.replica_directory_id, endpoints), 30)
        def voters() -> set[int]:
            return {v.replica_id for v in alice.describe_metadata_quorum().voters}

        assert eventually(lambda: voter.replica_id in voters())
        assert all(result.ok for result in alice.update_features(downgrades).values())
        # And with ALTER alice may delete the ACLs, after which she is refused again.
        deleted = alice.delete_acls([AclBindingFilter(principal="User:alice")])
        assert sorted(b.operation for b in deleted[0].deleted) == [AclOperation.ALTER, AclOperation.DESCRIBE]
    with admin(cluster, "alice", timeout_ms=8000) as alice:
        # Whichever comes first once every node has replayed the deletion: DescribeCluster on a controller
        # (a new client), or DescribeQuorum on the leader (a client that found it already).
        def refused_again() -> None:
            assert refused(alice.describe_metadata_quorum).api in ("DescribeCluster", "DescribeQuorum")

        eventually(refused_again)
    cluster.assert_running()


def test_a_tls_client_is_known_by_its_certificates_subject(make_cluster: Make, tmp_path: Path) -> None:
    """Without SASL the principal is the client certificate's subject (``User:CN=...``): the SDK names the
    same principal the controller refuses, and an ACL for it lets the client in. The controllers connect
    to each other with their own certificate, whose subject is the super user."""
    pki = Pki(tmp_path / "pki")
    server = pki.keystore("server.pem", ["localhost"], [HOST])
    client = pki.keystore("ops.pem", ["ops"], [])
    tls = {"listener.security.protocol.map": "CONTROLLER:SSL", "ssl.keystore.type": "PEM",
           "listener.name.controller.ssl.keystore.location": str(server), "ssl.truststore.type": "PEM",
           "ssl.truststore.location": str(pki.truststore), "ssl.client.auth": "required",
           **AUTHORIZER, "super.users": "User:CN=localhost"}
    cluster = make_cluster(1, properties={**FAST_ELECTIONS, **tls})

    def admin_as(keystore: Path) -> Admin:
        return Admin(bootstrap_controllers=cluster.bootstrap_servers(), security_protocol="SSL",
                     ssl_truststore_location=str(pki.truststore), ssl_keystore_location=str(keystore),
                     default_api_timeout_ms=20000, request_timeout_ms=5000)

    with admin_as(server) as node:
        eventually(node.describe_metadata_quorum, 30)
    with admin_as(client) as ops:
        refusal = refused(ops.describe_metadata_quorum)
        assert (refusal.principal, refusal.api) == ("User:CN=ops", "DescribeCluster")
    with admin_as(server) as node:
        assert node.create_acls([AclBinding(ResourceType.CLUSTER, "kafka-cluster", refusal.principal,
                                            AclOperation.ALTER)])[0].ok
    with admin_as(client) as ops:
        assert eventually(ops.describe_metadata_quorum).leader_id == 1
