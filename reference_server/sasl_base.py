"""What every server-side SASL mechanism is (:class:`SaslServer`) and how a client's credentials are
refused (:class:`AuthenticationFailed`): the one module the mechanisms' own modules (``security``,
``kerberos``, ``oauth``) import, so that ``security`` can make a mechanism of any module without an
import circle."""

from __future__ import annotations

from typing import Final

from kafka_admin_kraft.client.config import parse_jaas
from kafka_admin_kraft.config.server import ConfigError
from kafka_admin_kraft.errors import ConfigError as ClientConfigError

__all__ = ["SCRAM_FAILED", "AuthenticationFailed", "SaslServer", "jaas_options"]

SCRAM_FAILED: Final = "Authentication failed during authentication due to invalid credentials with SASL " \
                      "mechanism {mechanism}"
"""``SaslServerAuthenticator``'s message when a mechanism fails the exchange without a message of its own
for the client (a ``SaslException``): SCRAM, a malformed OAUTHBEARER message."""


class AuthenticationFailed(Exception):
    """The client's credentials are wrong; the message is what the client is told."""


class SaslServer:
    """One server-side SASL exchange: ``evaluate`` each client token until ``complete``."""

    name = ""
    complete = False
    authorization_id = ""
    """The authenticated user, once ``complete``."""

    def evaluate(self, token: bytes) -> bytes:
        raise NotImplementedError


def jaas_options(key: str, text: str, mechanism: str, module: str) -> dict[str, str]:
    """The options of the JAAS setting ``key`` (``text``) for ``mechanism``, whose login module must be
    ``module``; ConfigError naming the setting otherwise."""
    try:
        found, options = parse_jaas(text)
    except ClientConfigError as exc:
        raise ConfigError(f"{key}: {exc}") from None
    if found != module:
        raise ConfigError(f"{key}: {mechanism} needs {module}, not {found}")
    return options
