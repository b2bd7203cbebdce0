"""A Kerberos realm for tests: an MIT KDC of its own on a free 127.0.0.1 port, its principals and their
keytabs, all under one directory, so that GSSAPI is tested against real tickets without touching the
machine's Kerberos settings.

``krb5.conf`` and ``kdc.conf`` are written for the realm alone: no DNS look-ups of KDCs or realms, no
reverse or canonicalizing look-ups of host names (a service principal is the host name the client
was given). Every process and library call that should use the realm needs ``env`` (``KRB5_CONFIG``;
``KRB5_KDC_PROFILE`` for the KDC programs). Needs the MIT KDC programs (Debian: ``krb5-kdc``,
``krb5-admin-server``); without them :class:`KerberosUnavailable` names what to install.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Final

from ..local import HOST, free_ports

REALM: Final = "EXAMPLE.TEST"
SERVICE: Final = "kafka"
"""The service name of the realm's Kafka principals (``sasl.kerberos.service.name``)."""
PROGRAMS: Final = ("krb5kdc", "kdb5_util", "kadmin.local")
_SEARCH: Final = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/usr/bin", "/sbin"])


class KerberosUnavailable(RuntimeError):
    """The MIT KDC programs are not installed."""


def kdc_programs() -> dict[str, str]:
    """Where ``krb5kdc``, ``kdb5_util`` and ``kadmin.local`` are; KerberosUnavailable without them."""
    found = {name: shutil.which(name, path=_SEARCH) for name in PROGRAMS}
    missing = [name for name, path in found.items() if path is None]
    if missing:
        raise KerberosUnavailable(f"{', '.join(missing)} not installed: a test Kerberos realm needs the MIT "
                                  "KDC (apt-get install krb5-kdc krb5-admin-server)")
    return {name: path for name, path in found.items() if path is not None}


class KerberosRealm:
    """A realm under ``directory`` with its KDC running between ``start`` and ``stop`` (or as a context
    manager)."""

    def __init__(self, directory: Path, realm: str = REALM) -> None:
        self.directory = directory
        self.realm = realm
        self.programs = kdc_programs()
        self.port = free_ports(1)[0]
        self.krb5_conf = directory / "krb5.conf"
        self.kdc_conf = directory / "kdc.conf"
        self.log = directory / "kdc.log"
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def env(self) -> dict[str, str]:
        """The environment variables that point Kerberos at this realm."""
        return {"KRB5_CONFIG": str(self.krb5_conf), "KRB5_KDC_PROFILE": str(self.kdc_conf)}

    def principal(self, name: str) -> str:
        return f"{name}@{self.realm}"

    def service_principal(self, host: str = "localhost", service: str = SERVICE) -> str:
        return self.principal(f"{service}/{host}")

    def _write_config(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        database = self.directory / "principal"
        self.krb5_conf.write_text(
            "[libdefaults]\n"
            f" default_realm = {self.realm}\n"
            " dns_lookup_kdc = false\n dns_lookup_realm = false\n"
            " rdns = false\n dns_canonicalize_hostname = false\n"
            " udp_preference_limit = 1\n"
            f" default_ccache_name = FILE:{self.directory / 'default.ccache'}\n"
            f" default_keytab_name = FILE:{self.directory / 'default.keytab'}\n"
            "[realms]\n"
            f" {self.realm} = {{\n  kdc = {HOST}:{self.port}\n }}\n"
            "[domain_realm]\n"
            f" localhost = {self.realm}\n"
        )
        self.kdc_conf.write_text(
            "[kdcdefaults]\n"
            f" kdc_ports = {self.port}\n kdc_tcp_ports = {self.port}\n"
            "[realms]\n"
            f" {self.realm} = {{\n"
            f"  database_name = {database}\n"
            f"  key_stash_file = {self.directory / 'stash'}\n"
            f"  acl_file = {self.directory / 'kadm5.acl'}\n"
            "  max_life = 1h\n  max_renewable_life = 1h\n }\n"
            "[logging]\n"
            f" kdc = FILE:{self.log}\n"
        )

    def _run(self, program: str, *args: str) -> str:
        done = subprocess.run([self.programs[program], *args], env={**os.environ, **self.env},
                              capture_output=True, text=True, timeout=60, check=False)
        if done.returncode != 0:
            problem = done.stderr.strip() or done.stdout.strip()
            raise RuntimeError(f"{program} {' '.join(args)} failed: {problem}")
        return done.stdout

    def start(self, timeout: float = 20.0) -> KerberosRealm:
        """Create the database and start the KDC; returns once it accepts TCP connections."""
        self._write_config()
        self._run("kdb5_util", "create", "-s", "-r", self.realm, "-P", secrets.token_hex(16))
        self._process = subprocess.Popen(
            [self.programs["krb5kdc"], "-n", "-r", self.realm], env={**os.environ, **self.env},
            stdout=subprocess.DEVNULL, stderr=open(self.directory / "krb5kdc.err", "wb"))  # noqa: SIM115
        deadline = time.monotonic() + timeout
        while True:
            if self._process.poll() is not None:
                problem = (self.directory / "krb5kdc.err").read_text(errors="replace").strip()
                raise RuntimeError(f"krb5kdc exited with {self._process.returncode}: {problem}")
            try:
                socket.create_connection((HOST, self.port), timeout=1).close()
                return self
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"krb5kdc did not listen on {HOST}:{self.port} in {timeout:g} s"
                                       ) from None
                time.sleep(0.05)

    def add_principal(self, name: str, keytab: Path | None = None, *, password: str | None = None) -> Path:
        """Add ``name`` (without the realm) with a random key written to ``keytab`` (by default
        ``<directory>/<name with / as _>.keytab``), or with ``password`` and no keytab."""
        principal = self.principal(name)
        if password is not None:
            self._run("kadmin.local", "-r", self.realm, "-q", f"addprinc -pw {password} {principal}")
            return self.directory
        path = keytab or self.directory / f"{name.replace('/', '_')}.keytab"
        self._run("kadmin.local", "-r", self.realm, "-q", f"addprinc -randkey {principal}")
        self._run("kadmin.local", "-r", self.realm, "-q", f"ktadd -k {path} {principal}")
        return path

    def keytab(self, name: str) -> Path:
        """The keytab of ``name`` (without the realm), the principal added on first use."""
        path = self.directory / f"{name.replace('/', '_')}.keytab"
        return path if path.is_file() else self.add_principal(name, path)

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def __enter__(self) -> KerberosRealm:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
