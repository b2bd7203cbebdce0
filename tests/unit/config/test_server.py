"""kafka_admin_kraft.config.server: Java properties syntax, every key and default, Kafka's refusals."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from kafka_admin_kraft.config.server import ConfigError, Listener, StaticVoter, load_config, load_properties
from kafka_admin_kraft_server import settings
from kafka_admin_kraft_server.raft.api import RaftConfig
from unit.config.config_testlib import config, refused


def test_java_properties_syntax(tmp_path: Path) -> None:
    text = (
        "# a comment\n"
        "! another comment\n"
        "   process.roles = controller\n"
        "node.id:7\n"
        "listeners   CONTROLLER://127.0.0.1:9093,\\\n"
        "            OTHER://127.0.0.1:9094\n"
        "controller.listener.names=CONTROLLER,\\\n"
        "   OTHER\n"
        "controller.quorum.voters=7@127.0.0.1:9093\n"
        "log.dirs=/tmp/with\\ space,/tmp/tab\\there\n"
        "weird\\=key\\:x = caf\\u00e9 \\#not-a-comment\n"
        "latin1.value=caf\xe9\n"
        "trailing.backslash.in.comment=ok\n"
        "# comment ending in a backslash \\\n"
        "after.comment=yes\n"
        "empty.value=\n"
    )
    path = tmp_path / "controller.properties"
    path.write_bytes(text.encode("iso-8859-1"))
    props = load_properties(path)
    assert props["process.roles"] == "controller"
    assert props["node.id"] == "7"
    assert props["listeners"] == "CONTROLLER://127.0.0.1:9093,OTHER://127.0.0.1:9094"
    assert props["controller.listener.names"] == "CONTROLLER,OTHER"
    assert props["log.dirs"] == "/tmp/with space,/tmp/tab\there"
    assert props["weird=key:x"] == "café #not-a-comment"
    assert props["latin1.value"] == "café"
    assert props["after.comment"] == "yes"
    assert props["empty.value"] == ""
    loaded = load_config(path)
    assert loaded.node_id == 7
    assert loaded.controller_listener_names == ("CONTROLLER", "OTHER")
    assert loaded.log_dirs == ("/tmp/with space", "/tmp/tab\there")
    assert loaded.path == path
    assert set(loaded.unknown_keys) == {"weird=key:x", "latin1.value", "trailing.backslash.in.comment",
                                        "after.comment", "empty.value"}
    assert loaded.originals["latin1.value"] == "café"


def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="Unable to read config file"):
        load_config(tmp_path / "missing.properties")
    bad = tmp_path / "bad.properties"
    bad.write_text("key=\\u12\n")
    with pytest.raises(ConfigError, match="Malformed"):
        load_config(bad)


# ----------------------------------------------------------------------------- every key


def test_defaults() -> None:
    loaded = config()
    assert loaded.process_roles == ("controller",)
    assert loaded.is_controller and not loaded.is_broker
    assert loaded.node_id == 1
    assert loaded.listeners == (Listener("CONTROLLER", "127.0.0.1", 9093, "PLAINTEXT"),)
    assert loaded.advertised_listeners is None
    assert loaded.quorum_voters == (StaticVoter(1, "127.0.0.1", 9093), StaticVoter(2, "127.0.0.1", 9094),
                                    StaticVoter(3, "127.0.0.1", 9095))
    assert loaded.quorum_bootstrap_servers == ()
    assert loaded.metadata_log_dir == "/data/kraft"
    assert (loaded.election_timeout_ms, loaded.fetch_timeout_ms, loaded.election_backoff_max_ms,
            loaded.request_timeout_ms, loaded.retry_backoff_ms, loaded.append_linger_ms) == (
        1000, 2000, 1000, 2000, 20, 25)
    assert loaded.metadata_max_idle_interval_ms == 500
    assert loaded.metadata_log_segment_bytes == 1073741824
    assert loaded.metadata_snapshot_max_new_record_bytes == 20971520
    assert loaded.metadata_snapshot_max_interval_ms == 3600000
    assert loaded.metadata_max_retention_bytes == 104857600
    assert loaded.metadata_max_retention_ms == 604800000
    assert loaded.socket_request_max_bytes == 104857600
    assert loaded.auto_join_enable is False
    assert loaded.unknown_keys == ()
    # Kafka's default map plus CONTROLLER -> PLAINTEXT (KRaft, no SSL/SASL in use).
    assert dict(loaded.listener_security_protocol_map) == {
        "SASL_SSL": "SASL_SSL", "PLAINTEXT": "PLAINTEXT", "SSL": "SSL", "SASL_PLAINTEXT": "SASL_PLAINTEXT",
        "CONTROLLER": "PLAINTEXT"}
    assert settings.raft_config(loaded) == RaftConfig()


def test_every_key_is_read() -> None:
    loaded = config(
        controller__quorum__election__timeout__ms="1500", controller__quorum__fetch__timeout__ms=" 3000 ",
        controller__quorum__election__backoff__max__ms="700", controller__quorum__request__timeout__ms="2500",
        controller__quorum__retry__backoff__ms="50", controller__quorum__append__linger__ms="5",
        controller__quorum__auto__join__enable="TRUE", metadata__max__idle__interval__ms="0",
        metadata__log__segment__bytes="8388608", metadata__log__max__record__bytes__between__snapshots="1000",
        metadata__log__max__snapshot__interval__ms="0", metadata__max__retention__bytes="-1",
        metadata__max__retention__ms="60000", socket__request__max__bytes="1048576",
        internal__metadata__max__fetch__size__in__bytes="4096",
        controller__quorum__bootstrap__servers="127.0.0.1:9093, [::1]:9094",
        listener__security__protocol__map="CONTROLLER:PLAINTEXT", unstable__feature__versions__enable="true")
    assert (loaded.election_timeout_ms, loaded.fetch_timeout_ms, loaded.election_backoff_max_ms,
            loaded.request_timeout_ms, loaded.retry_backoff_ms, loaded.append_linger_ms) == (
        1500, 3000, 700, 2500, 50, 5)
    assert loaded.auto_join_enable is True
    assert loaded.metadata_max_idle_interval_ms == 0
    assert loaded.metadata_log_segment_bytes == 8388608
    assert loaded.metadata_snapshot_max_new_record_bytes == 1000
    assert loaded.metadata_snapshot_max_interval_ms == 0
    assert loaded.metadata_max_retention_bytes == -1
    assert loaded.metadata_max_retention_ms == 60000
    assert loaded.socket_request_max_bytes == 1048576
    assert loaded.unstable_feature_versions_enable is True
    assert loaded.quorum_bootstrap_servers == (("127.0.0.1", 9093), ("::1", 9094))
    assert dict(loaded.listener_security_protocol_map) == {"CONTROLLER": "PLAINTEXT"}
    assert settings.raft_config(loaded) == RaftConfig(election_timeout_ms=1500, fetch_timeout_ms=3000,
                                              election_backoff_max_ms=700, request_timeout_ms=2500,
                                              retry_backoff_ms=50, append_linger_ms=5, max_fetch_bytes=4096,
                                              snapshot_interval_bytes=1000, auto_join_enable=True)
    assert loaded.unknown_keys == ()


def test_metadata_directory_resolution() -> None:
    assert config().metadata_log_dir == "/data/kraft"
    assert config(metadata__log__dir="/meta").metadata_log_dir == "/meta"
    both = config(log__dirs="/a , /b,,", metadata__log__dir=None)
    assert both.log_dirs == ("/a", "/b") and both.metadata_log_dir == "/a"
    assert config(log__dirs=None, log__dir="/single").metadata_log_dir == "/single"
    assert config(log__dirs=None).metadata_log_dir == "/tmp/kafka-logs"
    assert config(metadata__log__dir="/meta", log__dirs="/b,/a").all_log_dirs == ("/a", "/b", "/meta")


def test_internal_segment_bytes_override_the_minimum() -> None:
    assert config(internal__metadata__log__segment__bytes="4096").metadata_log_segment_bytes == 4096
    assert refused(metadata__log__segment__bytes="4096") == (
        "Invalid value 4096 for configuration metadata.log.segment.bytes: Value must be at least 8388608")


def test_broker_role_is_parsed() -> None:
    broker = config(process__roles="broker", node__id="4", listeners="PLAINTEXT://127.0.0.1:9092")
    assert broker.is_broker and not broker.is_controller
    combined = config(process__roles="broker,controller",
                      listeners="PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093")
    assert combined.is_broker and combined.is_controller
    assert combined.controller_listeners == (Listener("CONTROLLER", "127.0.0.1", 9093),)


# ----------------------------------------------------------------------------- listeners


def test_ipv6_listener() -> None:
    loaded = config(listeners="CONTROLLER://[::1]:9093")
    assert loaded.listeners[0].host == "::1"
    assert str(loaded.listeners[0]) == "CONTROLLER://[::1]:9093"


# ----------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(("overrides", "message"), [
    ({"node__id": "abc"}, "Invalid value abc for configuration node.id: Not a number of type INT"),
    ({"node__id": "-1"}, "Invalid value -1 for configuration node.id: Value must be at least 0"),
    ({"node__id": "2147483648"},
     "Invalid value 2147483648 for configuration node.id: Not a number of type INT"),
    ({"node__id": None}, 'Missing required configuration "node.id" which has no default value.'),
    ({"process__roles": None}, 'Missing required configuration "process.roles" which has no default value.'),
    ({"process__roles": "controller,voter"},
     "Invalid value voter for configuration process.roles: String must be one of: broker, controller"),
    ({"process__roles": "controller,controller"},
     "Configuration 'process.roles' values must not be duplicated."),
    ({"process__roles": " "},
     "Configuration 'process.roles' must not be empty. Valid values include: [broker, controller]"),
    ({"controller__listener__names": None},
     'Missing required configuration "controller.listener.names" which has no default value.'),
    ({"controller__quorum__election__timeout__ms": "1s"},
     "Invalid value 1s for configuration controller.quorum.election.timeout.ms: Not a number of type INT"),
    ({"controller__quorum__fetch__timeout__ms": "-5"},
     "Invalid value -5 for configuration controller.quorum.fetch.timeout.ms: Value must be at least 0"),
    ({"controller__quorum__auto__join__enable": "yes"},
     "Invalid value yes for configuration controller.quorum.auto.join.enable: Expected value to be either "
     "true or false"),
    ({"metadata__max__retention__bytes": "1e9"},
     "Invalid value 1e9 for configuration metadata.max.retention.bytes: Not a number of type LONG"),
    ({"socket__request__max__bytes": "0"},
     "Invalid value 0 for configuration socket.request.max.bytes: Value must be at least 1"),
    ({"controller__listener__names": "CONTROLLER,OTHER"},
     "controller.listener.names must only contain values appearing in the 'listeners' configuration when "
     "running the KRaft controller role"),
    ({"listeners": "CONTROLLER://127.0.0.1:9093,PLAINTEXT://127.0.0.1:9092"},
     "The listeners config must only contain KRaft controller listeners from controller.listener.names when "
     "process.roles=controller"),
    ({"listeners": "PLAINTEXT://127.0.0.1:9092"},
     "The listeners config must only contain KRaft controller listeners from controller.listener.names when "
     "process.roles=controller"),
    ({"node__id": "4"},
     "If process.roles contains the 'controller' role, the node id 4 must be included in the set of voters "
     "controller.quorum.voters=Set(1, 2, 3)"),
    ({"controller__quorum__voters": None},
     "If using process.roles, either controller.quorum.bootstrap.servers must contain the set of bootstrap "
     "controllers or controller.quorum.voters must contain a parseable set of controllers."),
    ({"controller__quorum__voters": "1-127.0.0.1:9093"},
     "Invalid configuration value for controller.quorum.voters. Each entry should be in the form "
     "`{id}@{host}:{port}`."),
    ({"controller__quorum__voters": "1@127.0.0.1:9093@x"},
     "Invalid configuration value for controller.quorum.voters. Each entry should be in the form "
     "`{id}@{host}:{port}`."),
    ({"controller__quorum__voters": "1@127.0.0.1:9093,"},
     "Invalid configuration value for controller.quorum.voters. Each entry should be in the form "
     "`{id}@{host}:{port}`."),
    ({"controller__quorum__voters": "one@127.0.0.1:9093"}, "Failed to parse voter ID as an integer from one"),
    ({"controller__quorum__voters": "1@bad host:9093"},
     "Failed to parse host name from entry 1@bad host:9093 for the configuration controller.quorum.voters. "
     "Each entry should be in the form `{id}@{host}:{port}`."),
    ({"controller__quorum__voters": "1@127.0.0.1"},
     "Failed to parse host name from entry 1@127.0.0.1 for the configuration controller.quorum.voters. Each "
     "entry should be in the form `{id}@{host}:{port}`."),
    ({"controller__quorum__voters": "1@127.0.0.1:99999"},
     "Failed to parse host port from entry 1@127.0.0.1:99999 for the configuration controller.quorum.voters. "
     "Each entry should be in the form `{id}@{host}:{port}`."),
    ({"controller__quorum__voters": "1@0.0.0.0:9093"}, "Host string (0.0.0.0) is not routeable"),
    ({"controller__quorum__voters": None, "controller__quorum__bootstrap__servers": "localhost"},
     'Failed to parse host name from localhost for the configuration controller.quorum.bootstrap.servers. '
     'Each entry should be in the form "{host}:{port}"'),
    ({"listeners": "CONTROLLER:/127.0.0.1:9093"},
     "Error creating broker listeners from 'CONTROLLER:/127.0.0.1:9093': Unable to parse "
     "CONTROLLER:/127.0.0.1:9093 to a broker endpoint"),
    ({"listeners": "CONTROLLER://127.0.0.1:70000"},
     "Error creating broker listeners from 'CONTROLLER://127.0.0.1:70000': port out of range:70000"),
    ({"listener__security__protocol__map": "PLAINTEXT:PLAINTEXT"},
     "Error creating broker listeners from 'CONTROLLER://127.0.0.1:9093': No security protocol defined for "
     "listener CONTROLLER"),
    ({"listener__security__protocol__map": "CONTROLLER:TLS"},
     "Invalid security protocol `TLS` defined in listener.security.protocol.map"),
    ({"listener__security__protocol__map": "CONTROLLER"},
     "Error parsing configuration property 'listener.security.protocol.map': 'CONTROLLER' is not of the form "
     "LISTENER_NAME:SECURITY_PROTOCOL"),
    ({"log__dirs": " , "}, "At least one log directory must be defined via log.dirs or log.dir."),
])
def test_refusals(overrides: dict[str, str | None], message: str) -> None:
    assert refused(**overrides) == message


def test_ssl_in_use_disables_the_controller_default_mapping() -> None:
    # With SSL in the listeners and no explicit map, Kafka adds no CONTROLLER -> PLAINTEXT mapping.
    assert refused(process__roles="broker,controller",
                   listeners="SSL://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093") == (
        "Error creating broker listeners from 'SSL://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093': No "
        "security protocol defined for listener CONTROLLER")


def test_listener_names_and_ports_must_differ() -> None:
    message = refused(process__roles="broker,controller",
                      listeners="CONTROLLER://127.0.0.1:9093,controller://127.0.0.1:9094")
    assert message.startswith("Each listener must have a different name, listeners: ")
    message = refused(process__roles="broker,controller",
                      listeners="PLAINTEXT://127.0.0.1:9093,CONTROLLER://127.0.0.1:9093")
    assert message.startswith("Each listener must have a different port")


def test_broker_only_checks() -> None:
    assert refused(process__roles="broker") == (
        "If process.roles contains just the 'broker' role, the node id 1 must not be included in the set of "
        "voters controller.quorum.voters=Set(1, 2, 3)")
    assert refused(process__roles="broker", node__id="9") == (
        "controller.listener.names must not contain a value appearing in the 'listeners' configuration when "
        "running KRaft with just the broker role")


def test_config_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        config().node_id = 2  # type: ignore[misc]
