"""The grammars of server settings that the tools reuse without validating a whole file: listener
entries (``SocketServerConfigs.listenerListToEndPoints``) and Kafka's list types."""

from __future__ import annotations

import pytest

from kafka_admin_kraft.config.server import ConfigError, Listener, csv_list, parse_list, parse_listener


@pytest.mark.parametrize(("entry", "expected"), [
    ("CONTROLLER://127.0.0.1:9093", Listener("CONTROLLER", "127.0.0.1", 9093)),
    ("controller://:9093", Listener("CONTROLLER", "", 9093)),
    ("SSL://[::1]:9094", Listener("SSL", "::1", 9094)),
    ("SSL://::1:9094", Listener("SSL", "::1", 9094)),
    ("SSL://[fe80::1%eth0]:9094", Listener("SSL", "fe80::1%eth0", 9094)),
    ("A B://my-host.example_1:1", Listener("A B", "my-host.example_1", 1)),
    ("X://h:-1", Listener("X", "h", -1)),
    ("X://h:99999", Listener("X", "h", 99999)),
])
def test_listener_entries_as_kafka_matches_them(entry: str, expected: Listener) -> None:
    assert parse_listener(entry) == expected


@pytest.mark.parametrize("entry", ["CONTROLLER:9093", "CONTROLLER://host", "C://ho st:1", "C://h!:1",
                                   "C://h:port", "C://h:1 ", "://h:1\n"])
def test_listener_entries_kafka_refuses(entry: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_listener(entry)
    assert str(info.value) == f"Unable to parse {entry} to a broker endpoint"


def test_lists() -> None:
    assert parse_list("  a , b,,c  ") == ["a", "b", "", "c"]
    assert parse_list("   ") == []
    assert csv_list("  a , b,,c , ") == ["a", "b", "c"]
