"""Server configurations for the tests of ``config.server`` and of the reference server's settings: a
controller of a static three-voter quorum, and a lone voter for the connection settings."""

from __future__ import annotations

import pytest

from kafka_admin_kraft.config.server import ConfigError, ServerConfig, parse_config

BASE = {
    "process.roles": "controller",
    "node.id": "1",
    "listeners": "CONTROLLER://127.0.0.1:9093",
    "controller.listener.names": "CONTROLLER",
    "controller.quorum.voters": "1@127.0.0.1:9093,2@127.0.0.1:9094,3@127.0.0.1:9095",
    "log.dirs": "/data/kraft",
}
LONE_VOTER = {**BASE, "controller.quorum.voters": "1@127.0.0.1:9093"}
INT_MAX = 2147483647


def config(**overrides: str | None) -> ServerConfig:
    """``BASE`` with ``overrides``: ``a__b`` stands for the key ``a.b``, None drops the key."""
    props = dict(BASE)
    for key, value in overrides.items():
        name = key.replace("__", ".")
        if value is None:
            props.pop(name, None)
        else:
            props[name] = value
    return parse_config(props)


def refused(**overrides: str | None) -> str:
    """The message of the ConfigError that ``config(**overrides)`` raises."""
    with pytest.raises(ConfigError) as info:
        config(**overrides)
    return str(info.value)


def lone_voter_config(**props: str) -> ServerConfig:
    """A lone voter with ``props`` added (dotted keys as they are)."""
    return parse_config({**LONE_VOTER, **props})
