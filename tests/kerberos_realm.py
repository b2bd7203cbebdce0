"""A test Kerberos realm (``kafka_admin_kraft_server.testing.kerberos``) with the principals the GSSAPI
tests use, and this process pointed at it.

Without the MIT KDC programs or the ``gssapi`` package a test skips on a developer's machine and
fails where ``KAFKA_ADMIN_KRAFT_REQUIRE_TOOLS`` is set (``.ci/run``), as ``external_tools`` does for
the other programs, so that CI never passes by skipping. ``realm_env`` holds what a subprocess needs
(``KRB5_CONFIG`` and a private ``KRB5CCNAME``); the fixture sets the same in this process for as long
as the module's tests run, so the in-process library calls see the test realm and nothing else.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from external_tools import REQUIRE

from kafka_admin_kraft_server.testing.kerberos import KerberosRealm, KerberosUnavailable

SERVICE_KEYTAB_PRINCIPAL = "kafka/localhost"


@dataclass(frozen=True)
class Realm:
    """The running realm, its keytabs and the environment that points Kerberos at it."""

    kdc: KerberosRealm
    service_keytab: Path
    alice_keytab: Path
    env: dict[str, str]

    @property
    def name(self) -> str:
        return self.kdc.realm

    @property
    def service_principal(self) -> str:
        return self.kdc.service_principal()

    @property
    def alice(self) -> str:
        return self.kdc.principal("alice")

    def client_jaas(self, principal: str | None = None, keytab: Path | None = None) -> str:
        return (f'com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true '
                f'keyTab="{keytab or self.alice_keytab}" principal="{principal or self.alice}";')

    def server_jaas(self) -> str:
        return (f'com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true '
                f'keyTab="{self.service_keytab}" principal="{self.service_principal}";')


def _unavailable(message: str) -> None:
    if os.environ.get(REQUIRE):
        pytest.fail(message)
    pytest.skip(message)


def start_realm(directory: Path) -> KerberosRealm:
    """A started realm under ``directory``, or a skip (a failure under CI) naming what is missing."""
    if importlib.util.find_spec("gssapi") is None:
        _unavailable("the gssapi package is not installed (pip install 'kafka-admin-kraft[kerberos]')")
    try:
        return KerberosRealm(directory).start()
    except KerberosUnavailable as exc:
        _unavailable(str(exc))
        raise


@pytest.fixture(scope="module", name="realm")
def realm_fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Realm]:
    """A realm with ``kafka/localhost`` and ``alice`` (keytabs), this process pointed at it."""
    directory = tmp_path_factory.mktemp("realm")
    kdc = start_realm(directory / "kdc")
    try:
        env = {"KRB5_CONFIG": str(kdc.krb5_conf), "KRB5CCNAME": f"FILE:{directory / 'ccache'}"}
        found = Realm(kdc, kdc.add_principal(SERVICE_KEYTAB_PRINCIPAL), kdc.add_principal("alice"), env)
        with pytest.MonkeyPatch.context() as patch:
            for key, value in env.items():
                patch.setenv(key, value)
            yield found
    finally:
        kdc.stop()
