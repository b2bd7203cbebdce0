"""What reaches the user of the tools when the connection settings are bad: an address list with no
address or a host that is not a host name, a `--command-config` file that is not UTF-8 or holds a
malformed escape, a bootstrap address that answers garbage. Config errors are one line on stderr and
exit status 1, as Kafka prints them, never a traceback; a garbage-answering address is skipped."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from integration.harness import FAST_ELECTIONS, Cluster, one_controller
from integration_sdk.bad_server import ANSWERS, garbage_server

from kafka_admin_kraft_cli.kafka_features import main as features_main
from kafka_admin_kraft_cli.metadata_quorum import main as quorum_main
from tools.cluster_util import run


def quorum(*args: str) -> Result:
    return CliRunner().invoke(quorum_main, list(args), prog_name="kafka-metadata-quorum")


def one_line_error(result: Result, *fragments: str) -> None:
    """A config error as Kafka's tools print it: one line on stderr, nothing on stdout, exit status 1."""
    assert (result.exit_code, result.stdout) == (1, "")
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in result.stderr


@pytest.mark.parametrize(
    ("option", "addresses", "fragments"),
    [
        ("--bootstrap-controller", ",,,", ("bootstrap.controllers lists no address (',,,')",)),
        ("--bootstrap-server", " , ", ("bootstrap.servers lists no address",)),
        ("--bootstrap-controller", "12..0.0.1:9",
         ("invalid address '12..0.0.1:9' in bootstrap.controllers", "empty label")),
        ("--bootstrap-controller", "127.0.0.1:9093,h\u00e9\u200bst:9093",
         ("in bootstrap.controllers", "U+200B")),
        ("--bootstrap-server", "[::1:9092", ("invalid address '[::1:9092' in bootstrap.servers",)),
        ("--bootstrap-server", "localhost:99999", ("bootstrap.servers", "1-65535")),
    ],
)
def test_bad_bootstrap_addresses_are_one_line_config_errors(
    option: str, addresses: str, fragments: tuple[str, ...]
) -> None:
    one_line_error(quorum(option, addresses, "describe", "--status"), *fragments)
    features = CliRunner().invoke(features_main, [option, addresses, "describe"], prog_name="kafka-features")
    one_line_error(features, *fragments)


def test_command_config_errors_name_the_file(tmp_path: Path) -> None:
    malformed = tmp_path / "malformed.properties"
    malformed.write_bytes(b"client.id=tool\\u00\n")
    one_line_error(quorum("--bootstrap-controller", "127.0.0.1:1", "--command-config", str(malformed),
                          "describe", "--status"),
                   f"cannot parse the properties file {malformed}: Malformed \\uxxxx encoding.")
    folder = tmp_path / "folder.properties"
    folder.mkdir()
    one_line_error(quorum("--bootstrap-controller", "127.0.0.1:1", "--command-config", str(folder),
                          "describe", "--status"),
                   f"cannot read the properties file {folder}")


@pytest.fixture(scope="module")
def controller(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """One reference controller, the quorum's leader."""
    with one_controller(tmp_path_factory.mktemp("bad-arguments")) as cluster:
        yield cluster


@pytest.mark.parametrize("answer", ["huge-frame", "bad-body"])
def test_describe_moves_on_from_a_bootstrap_controller_that_answers_garbage(controller: Cluster,
                                                                           answer: str) -> None:
    with garbage_server(ANSWERS[answer]) as bad:
        result = run("kafka-metadata-quorum", "--bootstrap-controller",
                     f"{bad},{controller.bootstrap_servers()}",
                     "describe", "--status")
    assert (result.returncode, result.stderr) == (0, "")
    assert f"ClusterId:              {controller.cluster_id}\n" in result.stdout


def test_a_command_config_that_is_not_utf8_is_read_as_kafka_reads_it(controller: Cluster,
                                                                     tmp_path: Path) -> None:
    """Kafka reads the file as ISO-8859-1: any byte is a character."""
    config = tmp_path / "latin-1.properties"
    config.write_bytes(b"# r\xe9glages\nclient.id=caf\xe9-\xff\nrequest.timeout.ms=5000\n")
    result = run("kafka-metadata-quorum", "--bootstrap-controller", controller.bootstrap_servers(),
                 "--command-config", str(config), "describe", "--status")
    assert (result.returncode, result.stderr) == (0, "")
    assert "LeaderId:               1\n" in result.stdout


@pytest.fixture(scope="module")
def sasl_controller(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """One reference controller whose listener wants SASL/SCRAM-SHA-512."""
    jaas = ('org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" '
            'password="admin-secret" user_admin="admin-secret";')
    properties = {**FAST_ELECTIONS, "listener.security.protocol.map": "CONTROLLER:SASL_PLAINTEXT",
                  "sasl.enabled.mechanisms": "SCRAM-SHA-512",
                  "sasl.mechanism.controller.protocol": "SCRAM-SHA-512",
                  "listener.name.controller.scram-sha-512.sasl.jaas.config": jaas}
    cluster = Cluster(tmp_path_factory.mktemp("sasl"), 1, properties=properties)
    try:
        yield cluster.format().start_all()
    finally:
        cluster.close()


@pytest.mark.parametrize(
    ("settings", "line"),
    [
        ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\nsasl.jaas.config="
         "org.apache.kafka.common.security.scram.ScramLoginModule required username=admin password=wrong;\n",
         "org.apache.kafka.common.errors.SaslAuthenticationException: Authentication failed during "
         "authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512 (check the username "
         "and password in sasl.jaas.config)"),
        ("",
         "org.apache.kafka.common.errors.IllegalSaslStateException: the listener at {address} wants SASL "
         "authentication (enabled mechanisms are [SCRAM-SHA-512]) and closed the connection at the first "
         "request sent without it: set security.protocol=SASL_PLAINTEXT, sasl.mechanism=SCRAM-SHA-512 and "
         "sasl.jaas.config"),
    ],
    ids=["wrong-password", "no-sasl"],
)
def test_an_authentication_failure_is_kafkas_one_line(sasl_controller: Cluster, tmp_path: Path, settings: str,
                                                      line: str) -> None:
    config = tmp_path / "client.properties"
    config.write_text(settings)
    address = sasl_controller.bootstrap_servers()
    started = time.monotonic()
    result = run("kafka-metadata-quorum", "--bootstrap-controller", address, "--command-config", str(config),
                 "describe", "--status")
    assert time.monotonic() - started < 10  # not the 60 s of default.api.timeout.ms
    assert (result.returncode, result.stdout, result.stderr) == (1, "", line.format(address=address) + "\n")


def test_an_authorization_refusal_keeps_kafkas_class_and_says_what_grants_it() -> None:
    """The tools' line: Kafka's exception class, then who was refused, what grants it and, for
    DescribeCluster on a controller, that the read-only commands need only DESCRIBE through brokers."""
    from kafka_admin_kraft.errors import Refusal, error_for_code
    from kafka_admin_kraft_cli.admin_options import error_text

    error = error_for_code(31, "Request Request(...) is not authorized.").refused(Refusal(
        principal="User:alice", api="DescribeCluster", listener="controller", operation="ALTER"))
    assert error_text(error) == (
        "org.apache.kafka.common.errors.ClusterAuthorizationException: User:alice is not authorized to "
        "send DescribeCluster to a controller, which allows it to principals with ALTER on the cluster (the "
        "CLUSTER resource, kafka-cluster); an ACL allowing User:alice ALTER on the cluster grants it; "
        "through brokers (--bootstrap-server) DescribeCluster needs no permission, and read-only commands "
        "(describe, check, watch) need only DESCRIBE on the cluster")
    forwarded = error_for_code(31).refused(Refusal(principal="User:alice", api="UpdateFeatures",
                                                   listener="broker", operation="ALTER", forwarded=True,
                                                   broker_operation="ALTER"))
    assert error_text(forwarded).endswith("an ACL allowing User:alice ALTER on the cluster grants it")
    assert error_text(error_for_code(31, "raw")) == \
        "org.apache.kafka.common.errors.ClusterAuthorizationException: raw"
