"""The node's configuration in the consensus core's terms (``settings``): its identity and advertised
endpoints, the static voters and bootstrap servers, the warning for unknown keys, the connection
limits the runtime is given and the reference server's own election keys."""

from __future__ import annotations

import logging
import re

import pytest

from kafka_admin_kraft.config.server import ConfigError
from kafka_admin_kraft.protocol.primitives import ZERO_UUID, Uuid
from kafka_admin_kraft_server import settings
from kafka_admin_kraft_server.raft.api import Address, Endpoint, ReplicaKey, VoterInfo
from unit.config.config_testlib import INT_MAX, config, lone_voter_config, refused


def test_unknown_keys_are_kept_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    loaded = config(num__network__threads="3", log__retention__hours="1")
    with caplog.at_level(logging.WARNING):
        settings.warn_unknown_keys(loaded)
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


def test_the_reference_servers_own_election_keys(caplog: pytest.LogCaptureFixture) -> None:
    """``reference.server.pre.vote.enable`` and ``reference.server.vote.max.version``: known here
    (no unknown-key warning), Kafka 4.x's behaviour by default, Kafka 3.9's with false and 1."""
    default = lone_voter_config()
    assert settings.raft_config(default).pre_vote and settings.max_vote_version(default) == 2
    old = lone_voter_config(**{settings.PRE_VOTE_ENABLE: " FALSE", settings.VOTE_MAX_VERSION: "1 "})
    with caplog.at_level(logging.WARNING):
        settings.warn_unknown_keys(old)
    assert old.unknown_keys == (settings.PRE_VOTE_ENABLE, settings.VOTE_MAX_VERSION)
    assert caplog.text == ""
    assert not settings.raft_config(old).pre_vote and settings.max_vote_version(old) == 1


@pytest.mark.parametrize(("key", "value", "message"), [
    (settings.PRE_VOTE_ENABLE, "no", "Invalid value no for configuration reference.server.pre.vote.enable: "
                                     "Expected value to be either true or false"),
    (settings.VOTE_MAX_VERSION, "3", "Invalid value 3 for configuration reference.server.vote.max.version: "
                                     "Vote versions are 0 to 2 (1: as Kafka 3.9, 2: as Kafka 4.0 and later)"),
    (settings.VOTE_MAX_VERSION, "²", "Invalid value ² for configuration reference.server.vote.max.version"),
    (settings.VOTE_MAX_VERSION, "-1", "Invalid value -1 for configuration reference.server.vote.max.version"),
])
def test_a_bad_election_key_names_itself(key: str, value: str, message: str) -> None:
    loaded = lone_voter_config(**{key: value})
    read = settings.pre_vote_enable if key == settings.PRE_VOTE_ENABLE else settings.max_vote_version
    with pytest.raises(ConfigError, match="^" + re.escape(message)):
        read(loaded)
