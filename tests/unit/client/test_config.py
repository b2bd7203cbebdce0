"""Client properties (``client/config.py``): defaults, conversions and the errors of bad ones, keyword
options, JAAS parsing, properties files."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_admin_kraft import Admin
from kafka_admin_kraft.client.config import ClientConfig, load_properties, parse_jaas
from kafka_admin_kraft.errors import ConfigError

SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"


def test_defaults_and_conversions() -> None:
    config = ClientConfig.from_properties({"bootstrap.controllers": "a:1,[::1]:2"})
    assert config.bootstrap == (("a", 1), ("::1", 2)) and config.bootstrap_controllers
    assert (
        config.request_timeout,
        config.default_api_timeout,
        config.retry_backoff,
        config.retry_backoff_max,
    ) == (30.0, 60.0, 0.1, 1.0)
    assert (
        ClientConfig.from_properties(
            {"bootstrap.servers": ["a:1"], "request.timeout.ms": 90000}
        ).default_api_timeout
        == 90.0
    )


@pytest.mark.parametrize(
    ("props", "match"),
    [
        ({}, "You must set either bootstrap.servers or bootstrap.controllers"),
        ({"bootstrap.servers": "a:1", "bootstrap.controllers": "b:1"}, "You cannot set both"),
        ({"bootstrap.servers": "a"}, "expected host:port"),
        (
            {"bootstrap.servers": "a:1", "linger.ms": "5", "sasl.kerberos.kinit.cmd": "k"},
            "linger.ms, sasl.kerberos.kinit.cmd",
        ),
        ({"bootstrap.servers": "a:1", "security.protocol": "SSL", "ssl.keystore.type": "JKS"}, "only PEM is"),
        ({"bootstrap.servers": "a:1", "request.timeout.ms": "x"}, "request.timeout.ms must be an integer"),
        (
            {"bootstrap.servers": "a:1", "default.api.timeout.ms": "10", "request.timeout.ms": "20"},
            "at least",
        ),
        ({"bootstrap.servers": "a:1", "security.protocol": "SASL_SSL", "sasl.mechanism": "GSSAPI"}, "GSSAPI"),
        (
            {"bootstrap.servers": "a:1", "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN"},
            "sasl.jaas.config is needed",
        ),
        ({"bootstrap.servers": "a:1", "sasl.mechanism": "PLAIN"}, "security.protocol is PLAINTEXT"),
        ({"bootstrap.servers": "a:1", "security.protocol": "TLS"}, "is not one of"),
    ],
)
def test_bad_properties_name_what_is_wrong(props: dict[str, str], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        ClientConfig.from_properties(props)


def test_keyword_options_map_to_properties() -> None:
    with pytest.raises(ConfigError, match="bogus.option"):
        Admin(bootstrap_controllers="a:1", bogus_option=1)
    admin = Admin(bootstrap_controllers=["a:1", "b:2"], client_id="ops", retry_backoff_ms=5)
    assert admin.config.client_id == "ops" and admin.config.retry_backoff == 0.005
    admin.close()


def test_jaas_parsing() -> None:
    module, options = parse_jaas(
        'org.apache.kafka.common.security.plain.PlainLoginModule required username="a" password="b\\"c;d";'
    )
    assert module.endswith("PlainLoginModule") and options == {"username": "a", "password": 'b"c;d'}
    config = ClientConfig.from_properties(
        {
            "bootstrap.servers": "a:1",
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.jaas.config": SCRAM + ' required username=admin password="x y";',
        }
    )
    assert config.sasl is not None and (config.sasl.username, config.sasl.password) == ("admin", "x y")
    with pytest.raises(ConfigError, match="does not provide PLAIN"):
        ClientConfig.from_properties(
            {
                "bootstrap.servers": "a:1",
                "security.protocol": "SASL_SSL",
                "sasl.mechanism": "PLAIN",
                "sasl.jaas.config": SCRAM + ' required username="a" password="b";',
            }
        )
    with pytest.raises(ConfigError, match="must look like"):
        parse_jaas('username="a"')


def test_properties_file(tmp_path: Path) -> None:
    path = tmp_path / "admin.properties"
    path.write_text(
        "# comment\nbootstrap.controllers = h1:9093,\\\n   h2:9093\nclient.id: tool\n"
        "request.timeout.ms=1000\n"
    )
    assert load_properties(path) == {
        "bootstrap.controllers": "h1:9093,h2:9093",
        "client.id": "tool",
        "request.timeout.ms": "1000",
    }
    with Admin.from_properties(path) as admin:
        assert (
            admin.config.bootstrap == (("h1", 9093), ("h2", 9093)) and admin.config.default_api_timeout == 60
        )
