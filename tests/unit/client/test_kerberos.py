"""The GSSAPI client mechanism against a real MIT KDC started for the test, with a plain GSS-API
acceptor written here as the server; Kafka's principal name rules; the settings' checks."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path
from typing import Any

import pytest
from external_tools import external_tool
from kerberos_realm import Realm, realm_fixture  # noqa: F401 (the fixture)

from kafka_admin_kraft.client import kerberos
from kafka_admin_kraft.client.config import ClientConfig
from kafka_admin_kraft.client.kerberos import (
    GssapiMechanism,
    KerberosFailure,
    KerberosName,
    KerberosShortNamer,
)
from kafka_admin_kraft.client.principal import configured_principal
from kafka_admin_kraft.client.sasl import exchange_failure, mechanism_for
from kafka_admin_kraft.errors import ConfigError, ErrorCode
from kafka_admin_kraft_server.local import free_ports

SERVICE = {"sasl.kerberos.service.name": "kafka"}
KEYTAB_OPTIONS = {"useKeyTab": "true", "principal": "alice@EXAMPLE.TEST", "keyTab": "/k"}


# --------------------------------------------------------------------------- names and rules


@pytest.mark.parametrize(("name", "parsed"), [
    ("alice@EXAMPLE.TEST", KerberosName("alice", None, "EXAMPLE.TEST")),
    ("kafka/host.example@EXAMPLE.TEST", KerberosName("kafka", "host.example", "EXAMPLE.TEST")),
    ("alice", KerberosName("alice", None, None)),
])
def test_names_split_as_kafka_splits_them(name: str, parsed: KerberosName) -> None:
    assert KerberosName.parse(name) == parsed
    assert str(parsed) == name


def test_a_name_with_two_hosts_is_malformed() -> None:
    with pytest.raises(ValueError, match="Malformed Kerberos name: a/b/c@R"):
        KerberosName.parse("a/b/c@R")


@pytest.mark.parametrize(("rules", "name", "short"), [
    (["DEFAULT"], "alice@EXAMPLE.TEST", "alice"),
    (["DEFAULT"], "kafka/host@EXAMPLE.TEST", "kafka"),
    (["DEFAULT"], "alice", "alice"),
    (["RULE:[1:$1@$0](.*@OTHER.TEST)s/@.*//", "DEFAULT"], "bob@OTHER.TEST", "bob"),
    (["RULE:[2:$1](kafka)", "DEFAULT"], "kafka/host@OTHER.TEST", "kafka"),
    (["RULE:[1:$1]/L"], "Carol@OTHER.TEST", "carol"),
    (["RULE:[1:$1@$0](.*@OTHER.TEST)s/(.*)@OTHER.TEST/x-$1/g"], "dave@OTHER.TEST", "x-dave"),
])
def test_short_names_follow_the_rules_in_order(rules: list[str], name: str, short: str) -> None:
    assert KerberosShortNamer(rules, "EXAMPLE.TEST").short_name(name) == short


def test_a_name_no_rule_applies_to_is_refused() -> None:
    with pytest.raises(ValueError, match=r"No rules apply to bob@OTHER.TEST, rules \[DEFAULT\]"):
        KerberosShortNamer(["DEFAULT"], "EXAMPLE.TEST").short_name("bob@OTHER.TEST")
    with pytest.raises(ValueError, match="Non-simple name bob@OTHER.TEST"):
        KerberosShortNamer(["RULE:[1:$1@$0]"], "EXAMPLE.TEST").short_name("bob@OTHER.TEST")


@pytest.mark.parametrize("rule", ["RULE:[1:$1", "DEFAULTX", "RULE:[1:$1]s/a/b"])
def test_a_bad_rule_is_refused(rule: str) -> None:
    with pytest.raises(ValueError, match="Invalid rule"):
        KerberosShortNamer([rule], "EXAMPLE.TEST")


# --------------------------------------------------------------------------- settings


def _config(jaas: str, **extra: str) -> ClientConfig:
    return ClientConfig.from_properties({"bootstrap.servers": "localhost:9092",
                                         "security.protocol": "SASL_PLAINTEXT", "sasl.jaas.config": jaas,
                                         **extra})


KEYTAB_JAAS = ('com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true '
               'keyTab="/k" principal="alice@EXAMPLE.TEST";')


def test_gssapi_is_the_default_mechanism_and_keeps_the_service_name() -> None:
    pytest.importorskip("gssapi")
    config = _config(KEYTAB_JAAS, **SERVICE)
    assert config.sasl is not None
    assert (config.sasl.mechanism, config.sasl.properties) == ("GSSAPI", SERVICE)


@pytest.mark.parametrize(("jaas", "extra", "message"), [
    (KEYTAB_JAAS, {}, "No serviceName defined in either JAAS or Kafka config: set sasl.kerberos.service."),
    (KEYTAB_JAAS.replace(";", ' serviceName="other";'), SERVICE, "Conflicting serviceName values"),
    ("com.sun.security.auth.module.Krb5LoginModule required;", SERVICE, "cannot ask for a password"),
    ("com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true;", SERVICE, "needs principal"),
    (KEYTAB_JAAS, {**SERVICE, "sasl.mechanism": "PLAIN"}, "Krb5LoginModule does not provide PLAIN"),
])
def test_unusable_settings_say_what_to_set(jaas: str, extra: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        _config(jaas, **extra)


def test_without_the_gssapi_package_the_extra_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "gssapi" else real(name, *a))
    extra = r"pip install 'kafka-admin-kraft\[kerberos\]'"
    with pytest.raises(ConfigError, match=r"needs the gssapi package \(MIT Kerberos\): " + extra):
        _config(KEYTAB_JAAS, **SERVICE)


def test_the_service_principal_uses_the_name_of_an_address() -> None:
    assert kerberos.service_host("broker1.example") == "broker1.example"
    assert kerberos.service_host("127.0.0.1") == "localhost"  # /etc/hosts, as Java's getHostName()


# --------------------------------------------------------------------------- against the KDC


class Acceptor:
    """The server side of RFC 4752 written straight on GSS-API: what the client's bytes must satisfy."""

    def __init__(self, realm: Realm) -> None:
        import gssapi

        name = gssapi.Name(realm.service_principal, gssapi.NameType.kerberos_principal)
        creds = gssapi.Credentials(name=name, usage="accept", store={"keytab": str(realm.service_keytab)})
        self.context: Any = gssapi.SecurityContext(creds=creds, usage="accept")
        self.choice = b""

    def run(self, mechanism: GssapiMechanism) -> None:
        token: bytes | None = mechanism.initial()
        stage = 0
        while token is not None:
            if not self.context.complete:
                challenge = self.context.step(token) or b""
            elif stage == 0:
                assert token == b""
                stage = 1
                challenge = self.context.wrap(bytes([1, 0, 0, 0]), False).message
            else:
                unwrapped = self.context.unwrap(token)
                assert not unwrapped.encrypted
                self.choice = unwrapped.message
                challenge = b""
            token = mechanism.respond(challenge)


def _keytab_settings(realm: Realm, **options: str) -> dict[str, str]:
    return {"useKeyTab": "true", "storeKey": "true", "keyTab": str(realm.alice_keytab),
            "principal": realm.alice, **options}


def test_a_keytab_login_authenticates_with_rfc_4752(realm: Realm) -> None:
    mechanism = GssapiMechanism(_keytab_settings(realm), SERVICE, "localhost")
    acceptor = Acceptor(realm)
    acceptor.run(mechanism)
    assert mechanism.complete
    assert str(acceptor.context.initiator_name) == realm.alice
    # no security layer, a buffer of 0 and the client's name as the authorization id
    assert acceptor.choice == b"\x01\x00\x00\x00" + realm.alice.encode()


def test_a_kinit_ticket_cache_logs_in(realm: Realm, tmp_path: Path) -> None:
    kinit = external_tool("kinit", package="krb5-user")
    cache = tmp_path / "cache"
    subprocess.run([kinit, "-kt", str(realm.alice_keytab), "-c", f"FILE:{cache}", realm.alice],
                   env={**realm.env, "PATH": "/usr/bin:/bin"}, check=True)
    options = {"useTicketCache": "true", "ticketCache": f"FILE:{cache}"}
    mechanism = GssapiMechanism(options, SERVICE, "localhost")
    acceptor = Acceptor(realm)
    acceptor.run(mechanism)
    assert mechanism.complete and str(acceptor.context.initiator_name) == realm.alice
    assert kerberos.client_principal(options) == realm.alice


def test_mechanism_for_picks_gssapi_with_the_hosts_name(realm: Realm) -> None:
    config = _config(realm.client_jaas(), **SERVICE)
    assert config.sasl is not None
    mechanism = mechanism_for(config.sasl, "127.0.0.1")
    assert isinstance(mechanism, GssapiMechanism) and mechanism.service == "kafka/localhost"
    assert configured_principal(config) == "User:alice"


def _failure(mechanism: GssapiMechanism) -> str:
    with pytest.raises(KerberosFailure) as failure:
        mechanism.initial()
    message = str(failure.value)
    assert "\n" not in message
    return message


def test_no_ticket_says_run_kinit(realm: Realm, tmp_path: Path) -> None:
    options = {"useTicketCache": "true", "ticketCache": f"FILE:{tmp_path / 'none'}"}
    assert "no Kerberos ticket" in _failure(GssapiMechanism(options, SERVICE, "localhost"))
    assert "run kinit" in _failure(GssapiMechanism(options, SERVICE, "localhost"))


@pytest.mark.parametrize("content", [None, b"not a keytab"])
def test_an_unusable_keytab_names_it(realm: Realm, tmp_path: Path, content: bytes | None) -> None:
    keytab = tmp_path / "alice.keytab"
    if content is not None:
        keytab.write_bytes(content)
    message = _failure(GssapiMechanism(_keytab_settings(realm, keyTab=str(keytab)), SERVICE, "localhost"))
    if content is None:
        assert message == f"cannot read the keytab {keytab} (No such file or directory): check keyTab in " \
                          "sasl.jaas.config"
    else:
        assert f"cannot log in as {realm.alice} with the keytab {keytab}" in message
        assert "check keyTab and principal in sasl.jaas.config" in message


def test_a_principal_the_keytab_lacks_is_refused(realm: Realm) -> None:
    message = _failure(GssapiMechanism(_keytab_settings(realm, principal=realm.kdc.principal("bob")), SERVICE,
                                       "localhost"))
    assert f"cannot log in as {realm.kdc.principal('bob')}" in message


def test_an_unknown_service_principal_names_it(realm: Realm) -> None:
    message = _failure(GssapiMechanism(_keytab_settings(realm), SERVICE, "otherhost"))
    assert message.startswith(f"Server kafka/otherhost@{realm.name} not found in Kerberos database")
    assert "sasl.kerberos.service.name" in message


def test_an_unreachable_kdc_says_so(realm: Realm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    keytab = realm.kdc.add_principal("erin", tmp_path / "erin.keytab")  # no tickets cached for erin yet
    dead = tmp_path / "krb5.conf"
    dead.write_text(realm.kdc.krb5_conf.read_text().replace(f":{realm.kdc.port}", f":{free_ports(1)[0]}"))
    monkeypatch.setenv("KRB5_CONFIG", str(dead))
    options = _keytab_settings(realm, principal=realm.kdc.principal("erin"), keyTab=str(keytab))
    message = _failure(GssapiMechanism(options, SERVICE, "localhost"))
    assert "KDC unreachable" in message and "krb5.conf" in message


def test_clock_skew_with_the_kdc_says_so(realm: Realm, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A negative allowed skew makes every KDC reply too far off: MIT's own clock-skew refusal."""
    keytab = realm.kdc.add_principal("frank", tmp_path / "frank.keytab")  # no tickets cached for frank yet
    skewed = tmp_path / "krb5.conf"
    skewed.write_text(realm.kdc.krb5_conf.read_text().replace(
        "[libdefaults]\n", "[libdefaults]\n clockskew = -1\n kdc_timesync = 0\n"))
    monkeypatch.setenv("KRB5_CONFIG", str(skewed))
    options = _keytab_settings(realm, principal=realm.kdc.principal("frank"), keyTab=str(keytab))
    message = _failure(GssapiMechanism(options, SERVICE, "localhost"))
    assert "(Clock skew too great): synchronize the clocks" in message


def test_clock_skew_and_expired_tickets_say_what_to_do() -> None:
    gssapi_misc = pytest.importorskip("gssapi.raw.misc")
    skew = gssapi_misc.GSSError(851968, kerberos.CLOCK_SKEW)
    assert "Clock skew too great" in kerberos.explain(skew, principal="a@R", keytab=None)
    expired = gssapi_misc.GSSError(851968, kerberos.TKT_EXPIRED)
    assert "run kinit again" in kerberos.explain(expired, principal="a@R", keytab=None)


def test_a_server_refusing_the_ticket_points_at_kerberos_not_at_a_password() -> None:
    refused = ("Authentication failed during authentication due to invalid credentials with SASL "
               "mechanism GSSAPI")
    error = exchange_failure("localhost:9093", "GSSAPI", ErrorCode.SASL_AUTHENTICATION_FAILED, refused)
    assert error.java_exception == "SaslAuthenticationException"
    assert "password" not in error.reason
    assert error.reason.endswith("(the server refused the Kerberos ticket: check that the server's keytab "
                                 "holds its principal's current key, that the clocks agree and that "
                                 "sasl.kerberos.principal.to.local.rules map the client's name)")
