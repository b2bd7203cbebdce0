"""The server side of SASL/GSSAPI (Kerberos V5, RFC 4752), as Kafka's ``SaslServerAuthenticator`` runs
it, over MIT Kerberos through the ``gssapi`` package (the ``kerberos`` extra).

A listener that enables GSSAPI (``sasl.enabled.mechanisms``) needs:

* ``listener.name.<listener>.gssapi.sasl.jaas.config`` (else ``sasl.jaas.config``)::

      com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true
          keyTab="/etc/kafka/kafka.keytab" principal="kafka/controller1.example.com@EXAMPLE.COM";

  the server's own service principal, ``<service>/<host>@<REALM>`` (Kafka's
  ``createSaslKerberosServer`` takes the service name and host from it), and the keytab holding its
  keys. The same login is what the controller connects to the other voters with when
  ``sasl.mechanism.controller.protocol=GSSAPI``.
* ``sasl.kerberos.service.name`` (or ``serviceName`` in the JAAS options), required as Kafka's
  ``KerberosLogin`` requires it.
* ``sasl.kerberos.principal.to.local.rules`` (default ``DEFAULT``): how an authenticated client's
  Kerberos name becomes the ``User`` principal (``KerberosShortNamer``).

The exchange: the client's GSS-API tokens until the context is established (the last one answered
with the server's), then the server's wrapped offer of no security layer (RFC 4752 section 3.1) and
the client's wrapped choice with its authorization id. As Kafka's ``SaslServerCallbackHandler``, the
authenticated name is the one used, whatever authorization id the client asks for. Any failure,
a malformed token included, is answered as Kafka answers a failed SASL exchange: SASL_AUTHENTICATION_FAILED
with its message, then the connection is closed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from kafka_admin_kraft.client.kerberos import (
    EXTRA,
    NO_LAYER,
    KerberosName,
    KerberosShortNamer,
    default_realm,
    service_name,
)
from kafka_admin_kraft.config.security import KERBEROS_MODULE
from kafka_admin_kraft.config.server import ConfigError
from kafka_admin_kraft.errors import ConfigError as ClientConfigError

from .sasl_base import AuthenticationFailed, SaslServer, jaas_options

if TYPE_CHECKING:
    import gssapi

log = logging.getLogger("kafka.security.authenticator.SaslServerAuthenticator")

FAILED: Final = ("Authentication failed during authentication due to invalid credentials with SASL mechanism "
                 "GSSAPI")
"""``SaslServerAuthenticator``'s message when a SASL exchange fails."""


class GssapiServer(SaslServer):
    """One GSSAPI exchange, accepting with the listener's service credentials."""

    name = "GSSAPI"

    def __init__(self, credentials: gssapi.Credentials, namer: KerberosShortNamer) -> None:
        import gssapi

        self.context = gssapi.SecurityContext(creds=credentials, usage="accept")
        self.namer = namer
        self._stage = 0

    def evaluate(self, token: bytes) -> bytes:
        from gssapi.raw.misc import GSSError

        try:
            return self._evaluate(token)
        except (GSSError, ValueError) as exc:
            log.info("GSSAPI exchange failed: %s", exc)
            raise AuthenticationFailed(FAILED) from None

    def _evaluate(self, token: bytes) -> bytes:
        context = self.context
        if self._stage == 0:
            if not token:
                raise ValueError("an empty GSS-API token")
            answer = context.step(token) or b""
            if context.complete:
                self._stage = 1
            return answer
        if self._stage == 1:
            if token:
                raise ValueError("the client's message after the context was established is not empty")
            self._stage = 2
            return bytes(context.wrap(bytes([NO_LAYER, 0, 0, 0]), False).message)
        if self._stage == 2:
            choice = context.unwrap(token).message
            if len(choice) < 4 or choice[0] != NO_LAYER:
                raise ValueError("the client did not choose 'no security layer', the only one offered")
            requested = choice[4:].decode("utf-8", "replace")
            authenticated = str(context.initiator_name)
            self.authorization_id = self.namer.short_name(authenticated)
            log.info("Successfully authenticated client: authenticationID=%s; authorizationID=%s.",
                     authenticated, requested)
            self._stage = 3
            self.complete = True
            return b""
        raise ValueError("the GSSAPI exchange is already complete")


def server_factory(jaas_key: str, jaas_text: str,
                   setting: Callable[[str], str | None]) -> Callable[[], SaslServer]:
    """What makes a listener's GSSAPI exchanges, from its JAAS config (``jaas_key`` = ``jaas_text``) and
    its other settings (``setting`` looks one up with the listener prefix first); ConfigError when
    they cannot work, checked once at start-up: the keytab is read and the realm's default known."""
    try:
        import gssapi
        from gssapi.raw.misc import GSSError
    except ImportError:
        raise ConfigError(f"SASL mechanism GSSAPI needs the gssapi package (MIT Kerberos): {EXTRA}") from None
    options = jaas_options(jaas_key, jaas_text, "GSSAPI", KERBEROS_MODULE)
    keytab, principal = options.get("keyTab"), options.get("principal")
    if options.get("useKeyTab", "").lower() != "true" or not keytab or not principal:
        raise ConfigError(f'{jaas_key}: GSSAPI needs useKeyTab=true keyTab="<the service keytab>" '
                          'principal="<service>/<host>@<REALM>"')
    service = setting("sasl.kerberos.service.name")
    try:
        service_name(options, {} if service is None else {"sasl.kerberos.service.name": service})
        parsed = KerberosName.parse(principal)
    except (ClientConfigError, ValueError) as exc:
        raise ConfigError(f"{jaas_key}: {exc}") from None
    if parsed.host is None:
        raise ConfigError(f"{jaas_key}: the server's principal {principal} has no host part: use "
                          "<service>/<host>@<REALM>")
    raw_rules = setting("sasl.kerberos.principal.to.local.rules")
    rules = [rule.strip() for rule in (raw_rules or "DEFAULT").split(",") if rule.strip()]
    try:
        with open(keytab, "rb"):
            pass
        credentials = gssapi.Credentials(name=gssapi.Name(principal, gssapi.NameType.kerberos_principal),
                                         usage="accept", store={"keytab": keytab})
        namer = KerberosShortNamer(rules, default_realm())
    except OSError as exc:
        raise ConfigError(f"{jaas_key}: cannot read the keytab {keytab}: {exc.strerror or exc}") from None
    except GSSError as exc:
        raise ConfigError(f"{jaas_key}: cannot accept GSSAPI logins as {principal} with the keytab {keytab}: "
                          f"{exc}") from None
    except ValueError as exc:
        raise ConfigError(f"sasl.kerberos.principal.to.local.rules: {exc}") from None
    return lambda: GssapiServer(credentials, namer)
