"""The GSSAPI server side against the SDK's GSSAPI client and a real MIT KDC started for the test: the
exchange, the principal by Kafka's rules, the refusals and the listener settings."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from kerberos_realm import Realm, realm_fixture  # noqa: F401 (the fixture)

from kafka_admin_kraft.client.config import ClientConfig
from kafka_admin_kraft.client.sasl import mechanism_for
from kafka_admin_kraft.config.server import ConfigError, parse_config
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.api_keys import ApiKey
from kafka_admin_kraft.protocol.error_codes import ErrorCode
from kafka_admin_kraft_server.kerberos import FAILED, server_factory
from kafka_admin_kraft_server.sasl_base import AuthenticationFailed, SaslServer
from kafka_admin_kraft_server.security import ListenerSecurity, from_config

SERVICE = {"sasl.kerberos.service.name": "kafka"}
KEY = "listener.name.controller.gssapi.sasl.jaas.config"


def _factory(realm: Realm, jaas: str | None = None, **settings: str) -> Callable[[], SaslServer]:
    values = {**SERVICE, **settings}
    return server_factory(KEY, jaas or realm.server_jaas(), values.get)


def _client(realm: Realm, host: str = "localhost", jaas: str | None = None) -> ClientConfig:
    return ClientConfig.from_properties({"bootstrap.servers": f"{host}:9093",
                                         "security.protocol": "SASL_PLAINTEXT",
                                         "sasl.jaas.config": jaas or realm.client_jaas(), **SERVICE})


def _exchange(server: SaslServer, config: ClientConfig, host: str = "localhost") -> None:
    assert config.sasl is not None
    client = mechanism_for(config.sasl, host)
    token: bytes | None = client.initial()
    while token is not None:
        token = client.respond(server.evaluate(token))
    assert server.complete and client.complete


def test_a_keytab_client_authenticates_as_its_short_name(realm: Realm) -> None:
    server = _factory(realm)()
    _exchange(server, _client(realm))
    assert (server.name, server.authorization_id) == ("GSSAPI", "alice")


def test_the_principal_follows_the_to_local_rules(realm: Realm) -> None:
    rules = "RULE:[1:$1@$0](alice@EXAMPLE.TEST)s/@.*/-kerberos/,DEFAULT"
    server = _factory(realm, **{"sasl.kerberos.principal.to.local.rules": rules})()
    _exchange(server, _client(realm))
    assert server.authorization_id == "alice-kerberos"


def test_a_name_no_rule_applies_to_is_refused_as_kafka_refuses_credentials(realm: Realm) -> None:
    server = _factory(realm, **{"sasl.kerberos.principal.to.local.rules": "RULE:[2:$1]"})()
    with pytest.raises(AuthenticationFailed, match=FAILED):
        _exchange(server, _client(realm))


@pytest.mark.parametrize("token", [b"", b"\x00", b"`\x82\x02\x00garbage", bytes(range(256)) * 4])
def test_a_malformed_token_is_refused_without_crashing(realm: Realm, token: bytes) -> None:
    with pytest.raises(AuthenticationFailed, match=f"^{FAILED}$"):
        _factory(realm)().evaluate(token)


def test_a_session_answers_a_failure_with_sasl_authentication_failed_and_closes(realm: Realm) -> None:
    listener = ListenerSecurity("CONTROLLER", "SASL_PLAINTEXT", servers={"GSSAPI": _factory(realm)})
    session = listener.new_session("/127.0.0.1:5000")
    assert session is not None
    shake = session.handle(ApiKey.SASL_HANDSHAKE, 1, messages.SaslHandshakeRequest(mechanism="GSSAPI"))
    assert isinstance(shake.response, messages.SaslHandshakeResponse) and shake.response.error_code == 0
    junk = messages.SaslAuthenticateRequest(auth_bytes=b"junk")
    outcome = session.handle(ApiKey.SASL_AUTHENTICATE, 2, junk)
    assert isinstance(outcome.response, messages.SaslAuthenticateResponse)
    assert (outcome.response.error_code, outcome.response.error_message, outcome.close) == (
        ErrorCode.SASL_AUTHENTICATION_FAILED, FAILED, True)
    assert not session.authenticated


def test_a_session_authenticates_and_names_the_principal(realm: Realm) -> None:
    listener = ListenerSecurity("CONTROLLER", "SASL_PLAINTEXT", servers={"GSSAPI": _factory(realm)})
    session = listener.new_session("/127.0.0.1:5000")
    assert session is not None
    session.handle(ApiKey.SASL_HANDSHAKE, 1, messages.SaslHandshakeRequest(mechanism="GSSAPI"))
    config = _client(realm)
    assert config.sasl is not None
    client = mechanism_for(config.sasl, "127.0.0.1")
    token: bytes | None = client.initial()
    while token is not None:
        request = messages.SaslAuthenticateRequest(auth_bytes=token)
        outcome = session.handle(ApiKey.SASL_AUTHENTICATE, 2, request)
        assert isinstance(outcome.response, messages.SaslAuthenticateResponse)
        assert outcome.response.error_code == 0 and not outcome.close
        token = client.respond(outcome.response.auth_bytes)
    assert session.authenticated and session.principal == "alice"


def test_a_ticket_for_another_service_is_refused(realm: Realm, tmp_path: Path) -> None:
    """A client that asks for kafka/otherhost's ticket reaches a server that is kafka/localhost."""
    other = realm.kdc.add_principal("kafka/otherhost", tmp_path / "other.keytab")
    server = server_factory(KEY, realm.server_jaas().replace(str(realm.service_keytab), str(other))
                            .replace("kafka/localhost", "kafka/otherhost"), SERVICE.get)()
    with pytest.raises(AuthenticationFailed, match=FAILED):
        _exchange(server, _client(realm))


@pytest.mark.parametrize(("jaas", "settings", "message"), [
    (None, {"sasl.kerberos.service.name": None}, "No serviceName defined in either JAAS or Kafka config"),
    ('com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="/k" principal="kafka@R";',
     {}, "has no host part"),
    ('com.sun.security.auth.module.Krb5LoginModule required useTicketCache=true;', {},
     "needs useKeyTab=true"),
    ('org.apache.kafka.common.security.plain.PlainLoginModule required username="a" password="b";', {},
     "GSSAPI needs com.sun.security.auth.module.Krb5LoginModule"),
    ('com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="/no/such.keytab" '
     'principal="kafka/localhost@EXAMPLE.TEST";', {}, "cannot read the keytab /no/such.keytab"),
    (None, {"sasl.kerberos.principal.to.local.rules": "RULE:[1:$1"}, "Invalid rule: RULE:\\[1:\\$1"),
])
def test_unusable_listener_settings_are_refused_at_start_up(
        realm: Realm, jaas: str | None, settings: dict[str, str | None], message: str) -> None:
    values = {**SERVICE, **settings}
    with pytest.raises(ConfigError, match=message):
        server_factory(KEY, jaas or realm.server_jaas(), values.get)


def test_without_the_gssapi_package_the_extra_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gssapi", None)
    jaas = ('com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="/k" '
            'principal="kafka/localhost@EXAMPLE.TEST";')
    extra = r"pip install 'kafka-admin-kraft\[kerberos\]'"
    with pytest.raises(ConfigError, match=r"needs the gssapi package \(MIT Kerberos\): " + extra):
        server_factory(KEY, jaas, SERVICE.get)


def test_a_gssapi_listener_and_its_controller_client_from_the_config(realm: Realm, tmp_path: Path) -> None:
    config = parse_config({
        "process.roles": "controller", "node.id": "1", "listeners": "CONTROLLER://127.0.0.1:9093",
        "controller.listener.names": "CONTROLLER", "controller.quorum.voters": "1@127.0.0.1:9093",
        "log.dirs": str(tmp_path), "listener.security.protocol.map": "CONTROLLER:SASL_PLAINTEXT",
        "sasl.enabled.mechanisms": "GSSAPI", "sasl.mechanism.controller.protocol": "GSSAPI",
        "sasl.kerberos.service.name": "kafka", KEY: realm.server_jaas(),
    })
    security = from_config(config)
    assert security.listeners["CONTROLLER"].mechanisms == ("GSSAPI",)
    assert {"sasl.kerberos.service.name", KEY} <= security.keys
    client = security.client.sasl
    assert client is not None and client.mechanism == "GSSAPI" and client.properties == SERVICE
    # the voter logs in to the others as its own service principal
    server = security.listeners["CONTROLLER"].new_server("GSSAPI")
    client_config = ClientConfig.from_properties({"bootstrap.controllers": "127.0.0.1:9093",
                                                  "security.protocol": "SASL_PLAINTEXT",
                                                  "sasl.jaas.config": realm.server_jaas(), **SERVICE})
    _exchange(server, client_config, "127.0.0.1")
    assert server.authorization_id == "kafka"
