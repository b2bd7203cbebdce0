"""Whether a string can be used as the host of an endpoint: a host name or an IP literal.

One check shared by the SDK (before a host is dialled or sent) and the reference server (before a host from
a request is stored in the log or dialled): ``host_problem`` returns ``None`` for a usable host and otherwise
a short reason naming what is wrong, meant to follow the quoted host in an error message.
``printable_host`` shows any host safely in a log line.

A host name is what DNS and the IDNA codec accept: labels of 1-63 characters, at most 253 characters in all
(one trailing dot allowed), letters, digits, ``-`` and ``_`` (what Kafka's listener pattern allows), and
non-ASCII letters that IDNA can encode. A name made only of numeric labels must be a valid IPv4 address.
IPv6 literals are given without brackets, optionally with a ``%zone``.

Pure functions: no resolution, no I/O.
"""

from __future__ import annotations

import ipaddress
import unicodedata
from typing import Final

MAX_HOST_LENGTH: Final = 253
MAX_LABEL_LENGTH: Final = 63

_LABEL_CHARACTERS: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")


def host_problem(host: str) -> str | None:
    """None when ``host`` is a valid host name or IP literal, else a short reason such as
    ``has an empty label``."""
    if not host:
        return "is empty"
    for character in host:
        if unicodedata.category(character) in ("Cc", "Cf", "Zl", "Zp") or character.isspace():
            return f"contains the character {character!r} (U+{ord(character):04X})"
    if _is_ip_literal(host):
        return None
    if ":" in host:
        return "is not a valid IPv6 address"
    name = host[:-1] if host.endswith(".") else host
    labels = name.split(".")
    if any(not label for label in labels):
        return "has an empty label"
    try:
        encoded = name.encode("idna").decode("ascii")
    except UnicodeError:
        if any(len(label) > MAX_LABEL_LENGTH for label in labels):
            return f"has a label longer than {MAX_LABEL_LENGTH} characters"
        return "cannot be encoded with IDNA"
    if len(encoded) > MAX_HOST_LENGTH:
        return f"is longer than {MAX_HOST_LENGTH} characters"
    for label in encoded.split("."):
        if len(label) > MAX_LABEL_LENGTH:
            return f"has a label longer than {MAX_LABEL_LENGTH} characters"
        bad = next((character for character in label if character not in _LABEL_CHARACTERS), None)
        if bad is not None:
            return f"contains {bad!r} (a host name has letters, digits, '-', '_' and '.')"
    if all(label.isdigit() for label in labels):
        return "is not a valid IPv4 address"
    return None


def printable_host(host: str) -> str:
    """``host`` as a log line or message may show it: unchanged when printable, else its ``repr`` (so
    control characters such as NUL never reach a log raw)."""
    return host if host.isprintable() else repr(host)


def _is_ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True
