"""Kafka's text of each image value, checked against the strings Kafka's own tests pin."""

from __future__ import annotations

from kafka_admin_kraft.image.model import (
    Acl,
    BrokerRegistration,
    ControllerRegistration,
    DelegationToken,
    Endpoint,
    MetadataImage,
    Partition,
    Provenance,
    ScramCredential,
    Voter,
    version_range,
)

MIGRATING = "AAAAAAAAAAAAAAAAAAAAAA"


def test_broker_registration_as_kafkas_cluster_image_brokers_node_test() -> None:
    # ClusterImageBrokersNodeTest.testNode1Child: directories print sorted by Uuid.compareTo.
    broker = BrokerRegistration(
        1,
        1001,
        "MJkaH0j0RwuC3W2GHQHtWA",
        {},
        {"metadata.version": (1, 4)},
        None,
        False,
        False,
        False,
        ("JsnDDNVyTL289kYk6sPzig", "anCdBWcFTlu8gE1wP6bh3g"),
    )
    assert broker.text() == (
        "BrokerRegistration(id=1, epoch=1001, incarnationId=MJkaH0j0RwuC3W2GHQHtWA, listeners=[], "
        "supportedFeatures={metadata.version: 1-4}, rack=Optional.empty, fenced=false, "
        "inControlledShutdown=false, isMigratingZkBroker=false, "
        "directories=[JsnDDNVyTL289kYk6sPzig, anCdBWcFTlu8gE1wP6bh3g])"
    )


def test_broker_listeners_and_features_print_sorted_by_name() -> None:
    # BrokerRegistrationTest.testToString's second registration.
    listeners = {"INTERNAL": Endpoint("INTERNAL", "localhost", 9092, 0)}
    broker = BrokerRegistration(
        2,
        0,
        "eY7oaG1RREie5Kk9uy1l6g",
        listeners,
        {"foo": (2, 3), "bar": (1, 4)},
        "myrack",
        False,
        True,
        False,
        (),
    )
    assert broker.text() == (
        "BrokerRegistration(id=2, epoch=0, incarnationId=eY7oaG1RREie5Kk9uy1l6g, listeners=[Endpoint("
        "listenerName='INTERNAL', securityProtocol=PLAINTEXT, host='localhost', port=9092)], "
        "supportedFeatures={bar: 1-4, foo: 2-3}, rack=Optional[myrack], fenced=false, "
        "inControlledShutdown=true, isMigratingZkBroker=false, directories=[])"
    )
    assert broker.value()["listeners"][0]["securityProtocol"] == "PLAINTEXT"


def test_partition_registration_as_kafkas_topic_image_node_test() -> None:
    partition = Partition((2, 3, 4), (MIGRATING,) * 3, (2, 3), (), (), (), (), 2, 0, 1, 345)
    assert partition.text() == (
        "PartitionRegistration(replicas=[2, 3, 4], "
        "directories=[AAAAAAAAAAAAAAAAAAAAAA, AAAAAAAAAAAAAAAAAAAAAA, AAAAAAAAAAAAAAAAAAAAAA], "
        "isr=[2, 3], removingReplicas=[], addingReplicas=[], elr=[], lastKnownElr=[], leader=2, "
        "leaderRecoveryState=RECOVERED, leaderEpoch=1, partitionEpoch=345)"
    )


def test_controller_registration() -> None:
    controller = ControllerRegistration(
        3,
        "MJkaH0j0RwuC3W2GHQHtWA",
        False,
        {"CONTROLLER": Endpoint("CONTROLLER", "h", 9093, 1)},
        {"kraft.version": (0, 1), "metadata.version": (7, 33)},
    )
    assert controller.text() == (
        "ControllerRegistration(id=3, incarnationId=MJkaH0j0RwuC3W2GHQHtWA, zkMigrationReady=false, "
        "listeners=[Endpoint(listenerName='CONTROLLER', securityProtocol=SSL, host='h', port=9093)], "
        "supportedFeatures={kraft.version: 0-1, metadata.version: 7-33})"
    )


def test_version_ranges() -> None:
    assert [version_range(3, 3), version_range(1, 0x7FFF), version_range(1, 4)] == ["3", "1+", "1-4"]


def test_acl_prints_as_the_standard_acl_record() -> None:
    acl = Acl(2, "orders", 3, "User:alice", "*", 3, 3)
    assert acl.text() == (
        "StandardAcl[resourceType=TOPIC, resourceName=orders, patternType=LITERAL, "
        "principal=User:alice, host=*, operation=READ, permissionType=ALLOW]"
    )
    assert Acl(99, "x", 99, "User:a", "*", 99, 99).value()["operation"] == "UNKNOWN"


def test_secrets_print_unredacted_as_the_shell_prints_them() -> None:
    assert ScramCredential(b"\x01\xff", b"\x02", b"\x03", 4096).text() == (
        "ScramCredentialData(salt=01ff, storedKey=02, serverKey=03, iterations=4096)"
    )
    token = DelegationToken("t1", "User:alice", "User:bob", ("User:carol", "User:dave"), 1, 2, 3)
    assert token.text() == (
        "DelegationTokenDatatokenId=t1(owner=User:alice(tokenRequester=User:bob"
        "(renewers=User:carol User:dave, issueTimestamp=1, maxTimestamp=2), expiryTimestamp=3"
    )


def test_provenance_and_voters() -> None:
    assert Provenance().text() == "offset -1, epoch -1, time 1969-12-31T23:59:59.999Z[UTC]"
    assert Provenance(41, 3, 1_700_000_000_000).text() == "offset 41, epoch 3, time 2023-11-14T22:13:20Z[UTC]"
    voter = Voter(1, "AAAAAAAAAAAAAAAAAAAAZA", (("CONTROLLER", "localhost", 9093),), (0, 1))
    assert (
        voter.text()
        == "Voter(id=1, directoryId=AAAAAAAAAAAAAAAAAAAAZA, endpoints=[CONTROLLER://localhost:9093], "
        "kraftVersion=0-1)"
    )


def test_an_image_without_metadata_is_empty() -> None:
    image = MetadataImage()
    assert image.is_empty()
    image.features["group.version"] = 1
    assert not image.is_empty()
