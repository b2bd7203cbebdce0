"""What every SASL client mechanism is (:class:`SaslMechanism`) and how one fails (:class:`SaslFailure`):
the one module the mechanisms' own modules (``sasl``, ``kerberos``, ``oauth``) import, so that ``sasl``
can pick a mechanism of any module without an import circle."""

from __future__ import annotations

__all__ = ["PASSWORD_FIX", "SaslFailure", "SaslMechanism", "escape_saslname"]

PASSWORD_FIX = " (check the username and password in sasl.jaas.config)"
"""What to change when a server refuses a user name and password."""


class SaslFailure(Exception):
    """The exchange failed on the client side (bad server message or server signature)."""


class SaslMechanism:
    """One SASL exchange; create a new instance per connection."""

    name = ""
    complete = False
    blocking_prepare = False
    """Whether ``prepare`` has work to do, which the drivers then run where blocking is allowed."""

    def prepare(self) -> None:
        """Blocking work before ``initial`` (fetching a token): the drivers run it where blocking is
        allowed, a worker thread under asyncio."""

    def failure_fix(self, message: str | None) -> str:
        """The setting to change, in brackets, when the server fails the exchange with ``message``."""
        return PASSWORD_FIX

    def initial(self) -> bytes:
        """The client's first message."""
        raise NotImplementedError

    def respond(self, challenge: bytes) -> bytes | None:
        """Answer a server message; None when the exchange is over (``complete`` is then True)."""
        raise NotImplementedError


def escape_saslname(name: str) -> str:
    """RFC 5802 ``saslname``: ``=`` and ``,`` escaped as ``=3D`` and ``=2C``."""
    return name.replace("=", "=3D").replace(",", "=2C")
