"""Secured test quorums: SASL_SSL with a broker (certificates made for the test, SCRAM users), SSL,
SASL_PLAINTEXT with PLAIN and with GSSAPI (a KDC started for the test); the clients' settings and
``.properties`` files; settings refused in one line."""

from __future__ import annotations

import pytest
from kerberos_realm import Realm, realm_fixture  # noqa: F401 (the fixture)

from kafka_admin_kraft import Admin
from kafka_admin_kraft.config.properties import read_properties
from kafka_admin_kraft.config.security import KERBEROS_MODULE, PLAIN_MODULE, SCRAM_MODULE
from kafka_admin_kraft.errors import AuthenticationError
from kafka_admin_kraft_server.testing.plugin import QuorumFactory
from kafka_admin_kraft_server.testing.quorum import KraftQuorum
from kafka_admin_kraft_server.testing.security import QuorumSecurity

pytest.importorskip("cryptography", reason="the cryptography package makes the test certificates")


def test_sasl_ssl_quorum_with_a_broker_and_scram_users(kraft_quorum: QuorumFactory) -> None:
    security = QuorumSecurity("SASL_SSL", mechanism="SCRAM-SHA-512", users={"alice": "alice-secret"})
    quorum = kraft_quorum(size=3, brokers=1, security=security)
    assert quorum.broker_ids == [101]
    assert quorum.bootstrap_servers == quorum.node(101).address
    info = quorum.wait_caught_up()  # the voters reach each other over TLS with SCRAM
    assert sorted(v.replica_id for v in info.voters) == [1, 2, 3]
    assert [n.node_id for n in quorum.broker_admin.describe_cluster().nodes] == [101]

    path = quorum.client_properties("alice")
    assert read_properties(path) == {
        "security.protocol": "SASL_SSL", "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(quorum.truststore), "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": f'{SCRAM_MODULE} required username="alice" password="alice-secret";'}
    with Admin.from_config({**read_properties(path), "bootstrap.controllers": quorum.bootstrap_controllers}) \
            as alice:
        assert alice.describe_cluster().cluster_id == quorum.cluster_id
    with quorum.new_admin("alice", **{"sasl.jaas.config": f'{SCRAM_MODULE} required username="alice" '
                                                          'password="wrong";'}) as wrong, \
            pytest.raises(AuthenticationError):
        wrong.describe_metadata_quorum()
    with pytest.raises(ValueError, match="no user 'bob' on this quorum: its users are admin, alice"):
        quorum.client_config("bob")


@pytest.mark.kraft_quorum(size=1, security="SSL")
def test_ssl_quorum(quorum: KraftQuorum) -> None:
    assert quorum.client_config() == {"security.protocol": "SSL", "ssl.truststore.type": "PEM",
                                      "ssl.truststore.location": str(quorum.truststore)}
    assert quorum.admin.describe_metadata_quorum().leader_id == 1
    untrusting = Admin(bootstrap_controllers=quorum.bootstrap_controllers, security_protocol="SSL",
                       default_api_timeout_ms=5000, request_timeout_ms=5000)
    with untrusting, pytest.raises(AuthenticationError, match="TLS"):
        untrusting.describe_metadata_quorum()


def test_sasl_plaintext_quorum_with_plain(kraft_quorum: QuorumFactory) -> None:
    quorum = kraft_quorum(size=1, security="sasl_plaintext")
    assert quorum.client_config() == {
        "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
        "sasl.jaas.config": f'{PLAIN_MODULE} required username="admin" password="admin-secret";'}
    assert quorum.admin.describe_metadata_quorum().leader_id == 1
    assert "listener.name.controller.plain.sasl.jaas.config" in quorum.node(1).config_file.read_text()


def test_sasl_plaintext_quorum_with_gssapi(kraft_quorum: QuorumFactory, realm: Realm) -> None:
    quorum = kraft_quorum(size=3, security=QuorumSecurity("SASL_PLAINTEXT", mechanism="GSSAPI",
                                                          kerberos=realm.kdc))
    info = quorum.wait_caught_up()  # the voters reach each other with GSSAPI, as kafka/localhost
    assert sorted(v.replica_id for v in info.voters) == [1, 2, 3]
    config = quorum.client_config("alice")
    assert config == {
        "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "GSSAPI",
        "sasl.kerberos.service.name": "kafka",
        "sasl.jaas.config": f'{KERBEROS_MODULE} required useKeyTab=true storeKey=true '
                            f'keyTab="{realm.kdc.keytab("alice")}" principal="alice@{realm.name}";'}
    with quorum.new_admin("alice") as alice:
        assert alice.describe_cluster().cluster_id == quorum.cluster_id


def test_settings_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match="unknown security protocol 'TLS': use one of PLAINTEXT, SSL, "
                                         "SASL_PLAINTEXT, SASL_SSL"):
        QuorumSecurity("TLS")
    with pytest.raises(ValueError, match="unsupported SASL mechanism 'SCRAM-SHA-1': use one of GSSAPI, "
                                         "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER"):
        QuorumSecurity("SASL_SSL", mechanism="SCRAM-SHA-1")
    with pytest.raises(ValueError, match="mechanism='GSSAPI' needs kerberos=<a started KerberosRealm>"):
        QuorumSecurity("SASL_SSL", mechanism="GSSAPI")
    with pytest.raises(ValueError, match="the user 'admin' is the quorum's own"):
        QuorumSecurity("SASL_SSL", users={"admin": "x"})
