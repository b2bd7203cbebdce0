"""What every SASL client mechanism is (:class:`SaslMechanism`) and how one fails (:class:`SaslFailure`):
the one module the mechanisms' own modules (``sasl``, ``kerberos``) import, so that ``sasl`` can pick
a mechanism of any module without an import circle."""

from __future__ import annotations

__all__ = ["SaslFailure", "SaslMechanism"]


class SaslFailure(Exception):
    """The exchange failed on the client side (bad server message or server signature)."""


class SaslMechanism:
    """One SASL exchange; create a new instance per connection."""

    name = ""
    complete = False

    def initial(self) -> bytes:
        """The client's first message."""
        raise NotImplementedError

    def respond(self, challenge: bytes) -> bytes | None:
        """Answer a server message; None when the exchange is over (``complete`` is then True)."""
        raise NotImplementedError
