"""SASL/GSSAPI end to end: a reference quorum whose controller listener (and the voters' own connections
to each other) use Kerberos from a KDC started for the test, described through the Admin SDK and
through ``kafka-metadata-quorum --command-config``, and refused in one line without a ticket."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from console_scripts import console_script
from integration.harness import FAST_ELECTIONS, Cluster
from kerberos_realm import Realm, realm_fixture  # noqa: F401 (the fixture)

from integration_sdk.secured import describe_replicated
from kafka_admin_kraft import AclBinding, AclOperation, Admin, ResourceType
from kafka_admin_kraft.errors import AuthenticationError, ClusterAuthorizationFailedError

Make = Callable[..., Cluster]
SERVICE = "kafka"


def _cluster(make_cluster: Make, realm: Realm, size: int = 3, **extra: str) -> Cluster:
    properties = {**FAST_ELECTIONS, **extra,
                  "listener.security.protocol.map": "CONTROLLER:SASL_PLAINTEXT",
                  "sasl.enabled.mechanisms": "GSSAPI",
                  "sasl.mechanism.controller.protocol": "GSSAPI",
                  "sasl.kerberos.service.name": SERVICE,
                  "listener.name.controller.gssapi.sasl.jaas.config": realm.server_jaas()}
    return make_cluster(size, properties=properties)


def _client(jaas: str) -> dict[str, str]:
    return {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "GSSAPI",
            "sasl_kerberos_service_name": SERVICE, "sasl_jaas_config": jaas}


def test_a_kerberos_quorum_described_by_the_sdk_and_the_tool(make_cluster: Make, realm: Realm,
                                                             tmp_path: Path) -> None:
    cluster = _cluster(make_cluster, realm)
    describe_replicated(cluster, "GSSAPI", **_client(realm.client_jaas()))

    properties = tmp_path / "alice.properties"
    properties.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=GSSAPI\n"
                          f"sasl.kerberos.service.name={SERVICE}\n"
                          f"sasl.jaas.config={realm.client_jaas()}\n")
    described = subprocess.run(
        [console_script("kafka-metadata-quorum"), "--bootstrap-controller", cluster.bootstrap_servers(),
         "--command-config", str(properties), "describe", "--status"],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert described.returncode == 0, described.stderr
    assert f"ClusterId:              {cluster.cluster_id}" in described.stdout
    assert "CurrentVoters:" in described.stdout

    # Without a ticket (an empty cache and no keytab): one line naming the cause and the fix, at once.
    empty = f"FILE:{tmp_path / 'no-tickets'}"
    jaas = f'com.sun.security.auth.module.Krb5LoginModule required useTicketCache=true ticketCache="{empty}";'
    started = time.monotonic()
    with Admin(bootstrap_controllers=cluster.bootstrap_servers(), default_api_timeout_ms=30000,
               request_timeout_ms=5000, **_client(jaas)) as admin, \
            pytest.raises(AuthenticationError) as refused:
        admin.describe_metadata_quorum()
    assert time.monotonic() - started < 5
    assert refused.value.java_exception == "SaslAuthenticationException"
    assert "no Kerberos ticket" in refused.value.reason and "run kinit" in refused.value.reason

    properties.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=GSSAPI\n"
                          f"sasl.kerberos.service.name={SERVICE}\nsasl.jaas.config={jaas}\n")
    refused_tool = subprocess.run(
        [console_script("kafka-metadata-quorum"), "--bootstrap-controller", cluster.bootstrap_servers(),
         "--command-config", str(properties), "describe", "--status"],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert refused_tool.returncode != 0
    lines = refused_tool.stderr.strip().splitlines()
    assert len(lines) == 1 and "SaslAuthenticationException" in lines[0] and "run kinit" in lines[0], lines
    cluster.assert_running()


def test_a_wrong_service_name_is_refused_by_the_kdc_in_one_line(make_cluster: Make, realm: Realm) -> None:
    cluster = _cluster(make_cluster, realm, size=1)
    settings = {**_client(realm.client_jaas()), "sasl_kerberos_service_name": "notkafka"}
    with Admin(bootstrap_controllers=cluster.bootstrap_servers(), default_api_timeout_ms=30000,
               request_timeout_ms=5000, **settings) as admin, pytest.raises(AuthenticationError) as refused:
        admin.describe_metadata_quorum()
    assert f"Server notkafka/localhost@{realm.name} not found in Kerberos database" in refused.value.reason
    cluster.assert_running()


def test_the_principal_is_the_short_name_the_authorizer_knows(make_cluster: Make, realm: Realm) -> None:
    """Kafka's DEFAULT rule: alice@REALM is User:alice, the voters' kafka/localhost@REALM is User:kafka."""
    cluster = _cluster(make_cluster, realm, size=1, **{
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:kafka", "allow.everyone.if.no.acl.found": "false"})
    bootstrap = {"bootstrap_controllers": cluster.bootstrap_servers(), "default_api_timeout_ms": 30000,
                 "request_timeout_ms": 5000}
    with Admin(**bootstrap, **_client(realm.client_jaas())) as alice:
        with pytest.raises(ClusterAuthorizationFailedError) as refused:
            alice.describe_metadata_quorum()
        assert refused.value.refusal is not None and refused.value.refusal.principal == "User:alice"
        with Admin(**bootstrap, **_client(realm.server_jaas())) as kafka:
            granted = kafka.create_acls([
                AclBinding(ResourceType.CLUSTER, "kafka-cluster", "User:alice", operation)
                for operation in (AclOperation.DESCRIBE, AclOperation.ALTER)])
            assert all(result.ok for result in granted), granted
        deadline = time.monotonic() + 10
        while True:
            try:
                assert alice.describe_metadata_quorum().leader_id == 1
                break
            except ClusterAuthorizationFailedError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
