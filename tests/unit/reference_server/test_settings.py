"""The node's configuration in the consensus core's terms (``settings``): its identity and advertised
endpoints, the static voters and bootstrap servers, the warning for unknown keys, the connection
limits the runtime is given, and what the node's Kafka line decides: pre-vote, the auto-join key and
``unstable.api.versions.enable``."""

from __future__ import annotations

import logging
import re

import pytest

from kafka_admin_kraft.config.server import ConfigError
from kafka_admin_kraft.protocol.primitives import ZERO_UUID, Uuid
from kafka_admin_kraft_server import settings
from kafka_admin_kraft_server.authorizer import STANDARD_AUTHORIZER, authorizer_config, config_keys
from kafka_admin_kraft_server.kafka_line import LINES, NEWEST
from kafka_admin_kraft_server.raft.api import Address, Endpoint, ReplicaKey, VoterInfo
from kafka_admin_kraft_server.security import from_config as security_from_config
from unit.config.config_testlib import INT_MAX, config, lone_voter_config, refused


def test_unknown_keys_are_kept_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    loaded = config(num__network__threads="3", log__retention__hours="1")
    with caplog.at_level(logging.WARNING):
        settings.warn_unknown_keys(loaded, NEWEST)
    assert loaded.unknown_keys == ("log.retention.hours", "num.network.threads")
    assert loaded.originals["num.network.threads"] == "3"
    assert "The configuration 'num.network.threads' was supplied but isn't a known config." in caplog.text


def test_identity_voters_and_bootstrap() -> None:
    loaded = config(controller__quorum__bootstrap__servers="127.0.0.1:9093")
    directory = Uuid.from_string("3Db5QLSqSZieL3rJBUUegA")
    identity = settings.node_identity(loaded, "XcZZOzUqS4yHOjhMQB6JLQ", directory)
    assert identity.node_id == 1 and identity.cluster_id == "XcZZOzUqS4yHOjhMQB6JLQ"
    assert identity.directory_id == directory and identity.is_controller
    assert identity.listeners == (Endpoint("CONTROLLER", "127.0.0.1", 9093),)
    voters = settings.static_voter_set(loaded)
    assert voters is not None and voters.ids() == frozenset({1, 2, 3})
    assert voters.voters[2] == VoterInfo(ReplicaKey(2, ZERO_UUID),
                                         (Endpoint("CONTROLLER", "127.0.0.1", 9094),), 0, 0)
    assert settings.bootstrap_servers(loaded) == (Address("127.0.0.1", 9093),)


def test_wildcard_listener_with_advertised_host(monkeypatch: pytest.MonkeyPatch) -> None:
    loaded = config(listeners="CONTROLLER://0.0.0.0:9093", advertised__listeners="CONTROLLER://ctl-1:9093")
    assert loaded.listeners[0].bind_host == "0.0.0.0" and loaded.listeners[0].is_wildcard
    assert settings.controller_endpoints(loaded) == (Endpoint("CONTROLLER", "ctl-1", 9093),)
    empty = config(listeners="CONTROLLER://:9093")
    assert empty.listeners[0].host == "" and empty.listeners[0].bind_host is None
    monkeypatch.setattr("socket.getfqdn", lambda *args: "canonical.example")
    assert settings.controller_endpoints(empty) == (Endpoint("CONTROLLER", "canonical.example", 9093),)
    # Without advertised.listeners a 0.0.0.0 controller listener would be advertised: Kafka refuses.
    assert refused(listeners="CONTROLLER://0.0.0.0:9093") == (
        "advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. Use a routable IP address.")
    assert refused(advertised__listeners="CONTROLLER://0.0.0.0:9093") == (
        "advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. Use a routable IP address.")


def test_default_listener_is_the_first_controller_listener_name() -> None:
    loaded = config(listeners="B://127.0.0.1:2,A://127.0.0.1:1", controller__listener__names="A,B",
                    listener__security__protocol__map="A:PLAINTEXT,B:PLAINTEXT")
    assert loaded.default_listener_name == "A"
    assert [endpoint.name for endpoint in settings.controller_endpoints(loaded)] == ["A", "B"]
    voters = settings.static_voter_set(loaded)
    assert voters is not None and voters.voters[1].endpoints[0].name == "A"


def test_the_runtime_gets_overrides_by_address() -> None:
    limits = settings.connection_limits(lone_voter_config(**{"max.connections": "10",
                                                  "max.connections.per.ip.overrides": "127.0.0.1:3,::1:4",
                                                  "connections.max.idle.ms": "250"}))
    assert limits.max_connections == 10 and limits.max_idle_ms == 250
    assert limits.cap_for("127.0.0.1") == 3 and limits.cap_for("::1") == 4
    assert limits.cap_for("10.1.1.1") == INT_MAX


def test_an_override_host_that_does_not_resolve_refuses_the_start() -> None:
    with pytest.raises(ConfigError, match="^max.connections.per.ip.overrides: unable to resolve "
                                          "'no-such-host.invalid'"):
        settings.connection_limits(lone_voter_config(
            **{"max.connections.per.ip.overrides": "no-such-host.invalid:3"}))


def test_pre_vote_follows_the_line() -> None:
    """Elections start with a pre-vote round from Kafka 4.0 on (KIP-996); a 3.9 node holds standard
    elections only."""
    loaded = lone_voter_config()
    without = [name for name, line in LINES.items() if not settings.raft_config(loaded, line).pre_vote]
    assert without == ["3.9"]


def test_update_voter_at_kraft_version_0_from_kafka_4_1() -> None:
    """A static quorum's voters report their kraft.version range from Kafka 4.1 on (KAFKA-16538)."""
    loaded = lone_voter_config()
    without = [name for name, line in LINES.items()
               if not settings.raft_config(loaded, line).update_voter_at_kraft_version_0]
    assert without == ["3.9", "4.0"]


def test_auto_join_is_a_key_of_kafka_4_2_and_later(caplog: pytest.LogCaptureFixture) -> None:
    """``controller.quorum.auto.join.enable`` (KAFKA-19078, 4.2): older lines warn about it as an unknown
    key and do not join; a line that knows it reads it without a warning."""
    loaded = lone_voter_config(**{"controller.quorum.auto.join.enable": "true"})
    for name, line in LINES.items():
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            settings.warn_unknown_keys(loaded, line)
        known = name in ("4.2", "4.3", "4.4")
        assert settings.raft_config(loaded, line).auto_join_enable == known, name
        warning = ("The configuration 'controller.quorum.auto.join.enable' was supplied but isn't a known "
                   "config.")
        assert (warning in caplog.text) != known, name


def test_unstable_api_versions_enable_is_read_without_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    assert not settings.unstable_api_versions_enable(lone_voter_config())
    loaded = lone_voter_config(**{settings.UNSTABLE_API_VERSIONS_ENABLE: " TRUE"})
    with caplog.at_level(logging.WARNING):
        settings.warn_unknown_keys(loaded, NEWEST)
    assert settings.unstable_api_versions_enable(loaded) and caplog.text == ""
    bad = lone_voter_config(**{settings.UNSTABLE_API_VERSIONS_ENABLE: "yes"})
    with pytest.raises(ConfigError, match="^" + re.escape(
            "Invalid value yes for configuration unstable.api.versions.enable: Expected value to be either "
            "true or false")):
        settings.unstable_api_versions_enable(bad)


def test_the_security_and_authorizer_keys_are_known(caplog: pytest.LogCaptureFixture) -> None:
    """The TLS and SASL settings the listeners read, with their listener prefix, and the authorizer's are
    no unknown keys; a key nobody reads still is."""
    scram = "org.apache.kafka.common.security.scram.ScramLoginModule"
    jaas = f'{scram} required username="admin" password="a" user_admin="a";'
    loaded = lone_voter_config(**{
        "listener.security.protocol.map": "CONTROLLER:SASL_PLAINTEXT",
        "sasl.enabled.mechanisms": "SCRAM-SHA-256",
        "sasl.mechanism.controller.protocol": "SCRAM-SHA-256",
        "listener.name.controller.scram-sha-256.sasl.jaas.config": jaas,
        "authorizer.class.name": STANDARD_AUTHORIZER,
        "super.users": "User:admin",
        "allow.everyone.if.no.acl.found": "false",
        "listener.name.controller.ssl.keystore.location": "/not/used",
    })
    known = security_from_config(loaded).keys | config_keys(authorizer_config(loaded.originals))
    with caplog.at_level(logging.WARNING):
        settings.warn_unknown_keys(loaded, NEWEST, known)
    warned = re.findall(r"The configuration '([^']+)' was supplied but isn't a known config", caplog.text)
    assert warned == ["listener.name.controller.ssl.keystore.location"]
