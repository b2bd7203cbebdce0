"""The ``record_json`` text of single values: a general encoder for any value, and the writers of a
str, a Uuid and bytes that the generated writers call when a field holds exactly that type, each
writing what the general encoder writes for it.

The general encoder is what ``json.JSONEncoder(separators=(",", ":"))`` writes, structs as the object
of their fields (snake_case keys), ids as their text and bytes as base64.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from typing import Any, Final

from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.protocol.primitives import Uuid

Writer = Callable[[Any], str]


def _json_default(value: object) -> object:
    """What the general encoder writes for the codec's own types."""
    if isinstance(value, Struct):
        return {name: getattr(value, name) for name in value._FIELDS}
    if isinstance(value, Uuid):
        return str(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    return str(value)


def _general_encoder() -> Writer:
    """``json.JSONEncoder(separators=(",", ":"), default=...).encode`` without building its C encoder
    anew on every call, which costs more than encoding a short list."""
    make = json.encoder.c_make_encoder  # type: ignore[attr-defined]
    if make is None:
        return json.JSONEncoder(separators=(",", ":"), default=_json_default).encode
    ascii_text = json.encoder.encode_basestring_ascii
    chunks = make(None, _json_default, ascii_text, None, ":", ",", False, False, True)
    return lambda value: "".join(chunks(value, 0))


json_text: Final[Writer] = _general_encoder()
"""The general encoder: any value, structs and ids included (a decoded message has no cycles, so
they are not looked for)."""

str_json: Final[Callable[[str], str]] = json.encoder.encode_basestring_ascii
"""A str, quoted and escaped to ASCII."""


def uuid_json(value: Uuid) -> str:
    """A Uuid: its text, quoted."""
    return '"' + str(value) + '"'


def bytes_json(value: bytes) -> str:
    """Bytes: standard base64 with padding, quoted."""
    return '"' + binascii.b2a_base64(value, newline=False).decode() + '"'
