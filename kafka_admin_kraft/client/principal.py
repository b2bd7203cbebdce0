"""The principal a Kafka node authenticates this client as, as its default principal builder
(``DefaultKafkaPrincipalBuilder``) makes it: what an authorization refusal is explained with.

- SASL (``SASL_PLAINTEXT``, ``SASL_SSL``): ``User:<the sasl.jaas.config username>``, for OAUTHBEARER
  the token's principal claim (``OAuthBearerSaslServer`` authenticates the token's principal name);
- TLS with a client certificate (``SSL`` with ``ssl.keystore.location`` or
  ``ssl.keystore.certificate.chain``): ``User:<the certificate's subject>``, the distinguished name in
  RFC 2253 form as Java's ``X500Principal.getName()`` prints it (last attribute first, ``\\``-escaped
  specials, and an attribute without an RFC 2253 keyword as ``<oid>=#<its DER bytes in hex>``);
- anything else: ``User:ANONYMOUS``.

A server may map names differently (``ssl.principal.mapping.rules``, ``sasl.kerberos.principal.to.local
.rules``, a custom builder): the result is what a node with Kafka's defaults sees.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from kafka_admin_kraft.client.config import ClientConfig

ANONYMOUS: Final = "User:ANONYMOUS"

KEYWORDS: Final = {"2.5.4.3": "CN", "2.5.4.6": "C", "2.5.4.7": "L", "2.5.4.8": "ST", "2.5.4.9": "STREET",
                   "2.5.4.10": "O", "2.5.4.11": "OU", "0.9.2342.19200300.100.1.25": "DC",
                   "0.9.2342.19200300.100.1.1": "UID"}
"""The attribute types RFC 2253 names by keyword; every other one prints as its dotted OID."""

_STRINGS: Final = {0x0C: "utf-8", 0x13: "ascii", 0x16: "ascii", 0x14: "latin-1", 0x1E: "utf-16-be",
                   0x1C: "utf-32-be"}
"""DER string types an attribute value may have (UTF8String, PrintableString, IA5String, TeletexString,
BMPString, UniversalString) and how their bytes decode."""


def escape_rdn_value(value: str) -> str:
    """An attribute value escaped as RFC 2253 (and Java) write it."""
    escaped = "".join(f"\\{char}" if char in ',+"\\<>;' else char for char in value)
    if escaped.startswith((" ", "#")):
        escaped = "\\" + escaped
    return escaped[:-1] + "\\ " if escaped.endswith(" ") else escaped


def rfc2253(rdns: Sequence[Sequence[tuple[str, str]]]) -> str:
    """A distinguished name from its relative distinguished names in certificate order, each a list of
    (keyword, value): the last one first, attributes of one RDN joined by ``+``. A value of the form
    ``#<hex>`` is written as it is."""
    def attribute(key: str, value: str) -> str:
        return f"{key}={value if value.startswith('#') and key[:1].isdigit() else escape_rdn_value(value)}"

    return ",".join("+".join(attribute(key, value) for key, value in rdn) for rdn in reversed(rdns))


class _Der:
    """Just enough DER to walk a certificate to its subject."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def item(self, pos: int) -> tuple[int, int, int]:
        """(tag, start of the contents, end of the contents) of the element at ``pos``."""
        tag = self.data[pos]
        length = self.data[pos + 1]
        start = pos + 2
        if length & 0x80:
            size = length & 0x7F
            length = int.from_bytes(self.data[start:start + size], "big")
            start += size
        end = start + length
        if end > len(self.data):
            raise ValueError("truncated DER element")
        return tag, start, end

    def children(self, start: int, end: int) -> list[tuple[int, int, int, int]]:
        """(tag, start, end, element start) of each element in ``start..end``."""
        found = []
        pos = start
        while pos < end:
            tag, inner, after = self.item(pos)
            found.append((tag, inner, after, pos))
            pos = after
        return found


def _oid(data: bytes) -> str:
    parts = [data[0] // 40, data[0] % 40]
    value = 0
    for byte in data[1:]:
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            parts.append(value)
            value = 0
    return ".".join(map(str, parts))


def certificate_subject(pem: str) -> str | None:
    """The RFC 2253 subject of the first certificate in ``pem``; None when there is none or it cannot
    be read."""
    match = re.search(r"-----BEGIN CERTIFICATE-----(.*?)-----END CERTIFICATE-----", pem, re.S)
    if match is None:
        return None
    try:
        der = _Der(base64.b64decode("".join(match.group(1).split())))
        _, cert_start, cert_end = der.item(0)
        _, tbs_start, tbs_end = der.item(cert_start)
        fields = der.children(tbs_start, tbs_end)
        if fields and fields[0][0] == 0xA0:  # [0] version
            fields = fields[1:]
        _, name_start, name_end, _ = fields[4]  # serial, signature, issuer, validity, subject
        rdns = []
        for _, set_start, set_end, _ in der.children(name_start, name_end):
            rdn = []
            for _, attr_start, attr_end, _ in der.children(set_start, set_end):
                (_, oid_start, oid_end, _), (tag, value_start, value_end, element) = der.children(attr_start,
                                                                                                   attr_end)
                oid = _oid(der.data[oid_start:oid_end])
                key = KEYWORDS.get(oid)
                if key is None or tag not in _STRINGS:
                    rdn.append((oid, "#" + der.data[element:value_end].hex()))
                else:
                    rdn.append((key, der.data[value_start:value_end].decode(_STRINGS[tag])))
            rdns.append(rdn)
        return rfc2253(rdns)
    except (ValueError, IndexError, UnicodeDecodeError):
        return None


def configured_principal(config: ClientConfig) -> str:
    """The principal a node with Kafka's default principal builder sees this client as."""
    if config.sasl is not None and config.sasl.mechanism == "GSSAPI":
        from kafka_admin_kraft.client.kerberos import short_principal

        return f"User:{short_principal(config.sasl.options)}"
    if config.sasl is not None and config.sasl.mechanism == "OAUTHBEARER":
        from kafka_admin_kraft.client.oauth import cached_principal

        principal = cached_principal(config.sasl)
        return f"User:{principal or '<the principal claim of the OAuth token>'}"
    if config.sasl is not None:
        return f"User:{config.sasl.username}"
    options = config.ssl_options
    pem = options.get("ssl.keystore.certificate.chain")
    if pem is None and "ssl.keystore.location" in options:
        try:
            pem = Path(options["ssl.keystore.location"]).read_text(encoding="ascii", errors="replace")
        except OSError:
            pem = None
    if config.uses_tls and pem is not None:
        subject = certificate_subject(pem)
        unreadable = "User:<the subject of the keystore's certificate>"
        return f"User:{subject}" if subject is not None else unreadable
    return ANONYMOUS


__all__ = ["ANONYMOUS", "certificate_subject", "configured_principal", "escape_rdn_value", "rfc2253"]
