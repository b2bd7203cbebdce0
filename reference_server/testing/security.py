"""How a test quorum is secured: one security protocol on every listener, and what follows from it for
the nodes' ``server.properties`` and for the clients' ``.properties``.

* ``SSL`` and ``SASL_SSL``: a CA and a server key store made for the test (``pki``); clients trust the
  CA and check the host name, as Kafka's clients do by default.
* ``SASL_PLAINTEXT`` and ``SASL_SSL``: every listener enables PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512
  (and OAUTHBEARER with Kafka's unsecured tokens when ``mechanism`` is OAUTHBEARER: any user name is
  taken at its word), with the users of ``users`` plus ``admin`` (the nodes log in to each other as
  ``admin`` with ``mechanism``). The users are written in the listeners' JAAS settings, the reference server's
  convention for both mechanisms (``kafka_admin_kraft_server.security``).
* ``mechanism="GSSAPI"`` with ``kerberos``, a started :class:`~.kerberos.KerberosRealm`: the listeners
  enable GSSAPI too, as the realm's ``kafka/localhost``, which the nodes also log in to each other as
  (``User:kafka``); a client logs in as ``<user>@<REALM>`` with a keytab the realm makes for it. The
  nodes and this process must see the realm: ``os.environ.update(realm.env)`` (or ``monkeypatch``)
  before the quorum starts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from kafka_admin_kraft.config.security import (
    KERBEROS_MODULE,
    OAUTHBEARER_MODULE,
    PLAIN_MODULE,
    SCRAM_MODULE,
    SECURITY_PROTOCOLS,
    TLS_PROTOCOLS,
)

from ..local import BROKER_LISTENER, LISTENER
from ..security import PASSWORD_MECHANISMS, SUPPORTED_MECHANISMS
from .kerberos import SERVICE, KerberosRealm

ADMIN_USER: Final = "admin"
ADMIN_PASSWORD: Final = "admin-secret"
"""The user the nodes and the quorum's own clients authenticate as on SASL listeners."""


def _jaas(module: str, user: str, password: str, users: Mapping[str, str] | None = None) -> str:
    if module == OAUTHBEARER_MODULE:  # an unsecured token naming the user (Kafka's default validator)
        return f'{module} required unsecuredLoginStringClaim_sub="{user}";'
    entries = "".join(f' user_{name}="{secret}"' for name, secret in (users or {}).items())
    return f'{module} required username="{user}" password="{password}"{entries};'


def _keytab_jaas(keytab: Path, principal: str) -> str:
    return (f'{KERBEROS_MODULE} required useKeyTab=true storeKey=true keyTab="{keytab}" '
            f'principal="{principal}";')


def _module(mechanism: str) -> str:
    if mechanism == "OAUTHBEARER":
        return OAUTHBEARER_MODULE
    return PLAIN_MODULE if mechanism == "PLAIN" else SCRAM_MODULE


@dataclass(frozen=True)
class QuorumSecurity:
    """``protocol`` on every listener; for SASL, the ``mechanism`` clients and nodes use and the extra
    ``users`` (name -> password) the listeners accept."""

    protocol: str = "PLAINTEXT"
    mechanism: str = "PLAIN"
    users: Mapping[str, str] = field(default_factory=dict)
    kerberos: KerberosRealm | None = None
    """The realm of ``mechanism="GSSAPI"``."""

    def __post_init__(self) -> None:
        if self.protocol not in SECURITY_PROTOCOLS:
            raise ValueError(f"unknown security protocol {self.protocol!r}: use one of "
                             f"{', '.join(SECURITY_PROTOCOLS)}")
        if self.mechanism == "GSSAPI" and self.kerberos is None:
            raise ValueError("mechanism='GSSAPI' needs kerberos=<a started KerberosRealm> "
                             "(kafka_admin_kraft_server.testing.kerberos)")
        if self.mechanism not in SUPPORTED_MECHANISMS:
            raise ValueError(f"unsupported SASL mechanism {self.mechanism!r}: use one of "
                             f"{', '.join(SUPPORTED_MECHANISMS)}")
        if ADMIN_USER in self.users:
            raise ValueError(f"the user {ADMIN_USER!r} is the quorum's own (password {ADMIN_PASSWORD!r}): "
                             "name your users otherwise")

    @property
    def tls(self) -> bool:
        return self.protocol in TLS_PROTOCOLS

    @property
    def sasl(self) -> bool:
        return self.protocol.startswith("SASL_")

    def all_users(self) -> dict[str, str]:
        return {ADMIN_USER: ADMIN_PASSWORD, **self.users}

    def server_properties(self, truststore: Path | None, keystore: Path | None) -> dict[str, str]:
        """The settings every node gets (``truststore`` and ``keystore`` for TLS)."""
        protocol = self.protocol
        props = {"listener.security.protocol.map": f"{LISTENER}:{protocol},{BROKER_LISTENER}:{protocol}"}
        if self.tls:
            if truststore is None or keystore is None:
                raise ValueError(f"{self.protocol} needs a trust store and a key store")
            props.update({"ssl.keystore.type": "PEM", "ssl.keystore.location": str(keystore),
                          "ssl.truststore.type": "PEM", "ssl.truststore.location": str(truststore)})
        if self.sasl:
            oauth = ("OAUTHBEARER",) if self.mechanism == "OAUTHBEARER" else ()
            mechanisms = (*PASSWORD_MECHANISMS, *oauth)
            props["sasl.enabled.mechanisms"] = ",".join(mechanisms)
            props["sasl.mechanism.controller.protocol"] = self.mechanism
            for listener in (LISTENER, BROKER_LISTENER):
                for mechanism in mechanisms:
                    key = f"listener.name.{listener.lower()}.{mechanism.lower()}.sasl.jaas.config"
                    props[key] = _jaas(_module(mechanism), ADMIN_USER, ADMIN_PASSWORD, self.all_users())
            if self.kerberos is not None:
                props["sasl.enabled.mechanisms"] = ",".join(("GSSAPI", *PASSWORD_MECHANISMS))
                props["sasl.kerberos.service.name"] = SERVICE
                service = f"{SERVICE}/localhost"
                jaas = _keytab_jaas(self.kerberos.keytab(service), self.kerberos.principal(service))
                for listener in (LISTENER, BROKER_LISTENER):
                    props[f"listener.name.{listener.lower()}.gssapi.sasl.jaas.config"] = jaas
        return props

    def client_properties(self, truststore: Path | None, user: str = ADMIN_USER) -> dict[str, str]:
        """Kafka client settings (``--command-config``) that log in as ``user``."""
        props = {"security.protocol": self.protocol}
        if self.tls:
            props.update({"ssl.truststore.type": "PEM", "ssl.truststore.location": str(truststore)})
        if self.sasl and self.kerberos is not None and self.mechanism == "GSSAPI":
            jaas = _keytab_jaas(self.kerberos.keytab(user), self.kerberos.principal(user))
            props.update({"sasl.mechanism": "GSSAPI", "sasl.kerberos.service.name": SERVICE,
                          "sasl.jaas.config": jaas})
        elif self.sasl:
            users = self.all_users()
            if user not in users:
                raise ValueError(f"no user {user!r} on this quorum: its users are {', '.join(users)}")
            props["sasl.mechanism"] = self.mechanism
            props["sasl.jaas.config"] = _jaas(_module(self.mechanism), user, users[user])
        return props


def security_of(value: str | QuorumSecurity | None) -> QuorumSecurity:
    """A protocol name stands for its defaults: ``"SASL_SSL"`` is ``QuorumSecurity("SASL_SSL")``."""
    if value is None:
        return QuorumSecurity()
    return value if isinstance(value, QuorumSecurity) else QuorumSecurity(value.upper())
