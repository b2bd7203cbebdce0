"""What every server-side SASL mechanism is (:class:`SaslServer`) and how a client's credentials are
refused (:class:`AuthenticationFailed`): the one module the mechanisms' own modules (``security``,
``kerberos``) import, so that ``security`` can make a mechanism of any module without an import
circle."""

from __future__ import annotations

__all__ = ["AuthenticationFailed", "SaslServer"]


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
