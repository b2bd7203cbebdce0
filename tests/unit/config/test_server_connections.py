"""max.connections, max.connections.per.ip(.overrides) and connections.max.idle.ms: Kafka's defaults
and refusals."""

from __future__ import annotations

import pytest

from kafka_admin_kraft.config.server import ConfigError
from unit.config.config_testlib import INT_MAX, lone_voter_config


def test_defaults_are_kafkas() -> None:
    parsed = lone_voter_config()
    assert (parsed.max_connections, parsed.max_connections_per_ip) == (INT_MAX, INT_MAX)
    assert parsed.max_connections_per_ip_overrides == {}
    assert parsed.connections_max_idle_ms == 600_000
    assert not parsed.unknown_keys


def test_values_are_parsed() -> None:
    parsed = lone_voter_config(**{"max.connections": "10", "max.connections.per.ip": "0",
                       "max.connections.per.ip.overrides": " 127.0.0.1:5 , localhost:7,127.0.0.1:6",
                       "connections.max.idle.ms": "-1"})
    assert (parsed.max_connections, parsed.max_connections_per_ip) == (10, 0)
    assert parsed.max_connections_per_ip_overrides == {"127.0.0.1": 6, "localhost": 7}
    assert parsed.connections_max_idle_ms == -1


@pytest.mark.parametrize(("props", "message"), [
    ({"max.connections": "-1"},
     "Invalid value -1 for configuration max.connections: Value must be at least 0"),
    ({"max.connections": "many"},
     "Invalid value many for configuration max.connections: Not a number of type INT"),
    ({"max.connections.per.ip": "-2"},
     "Invalid value -2 for configuration max.connections.per.ip: Value must be at least 0"),
    ({"max.connections.per.ip": "0"},
     "max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set."),
    ({"connections.max.idle.ms": "1m"},
     "Invalid value 1m for configuration connections.max.idle.ms: Not a number of type LONG"),
    ({"max.connections.per.ip.overrides": "hostA"},
     "Error parsing configuration property 'max.connections.per.ip.overrides': 'hostA' is not of the form "
     "HOST:MAX_CONNECTIONS"),
    ({"max.connections.per.ip.overrides": "hostA:x"},
     "Error parsing configuration property 'max.connections.per.ip.overrides': the count 'x' of 'hostA:x' "
     "is not a number of type INT"),
    ({"max.connections.per.ip.overrides": "good:1,bad/host:2,also bad:3"},
     "max.connections.per.ip.overrides contains invalid addresses : bad/host,also bad"),
])
def test_refusals(props: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        lone_voter_config(**props)
    assert str(caught.value) == message
