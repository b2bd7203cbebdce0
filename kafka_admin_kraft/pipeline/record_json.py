"""The ``record_json`` text of a decoded record, written by one function per message class.

``record_json`` is what ``json.JSONEncoder(separators=(",", ":"))`` writes for a struct as the
object of its fields in declaration order (snake_case keys), with ids as their text and bytes as
base64. A general encoder calls back into Python for every struct and id it meets, which was half
the cost of a record with JSON; the function built here from the message's spec knows each field's
type and joins the text in one expression. Anything the spec does not describe (a class without a
spec, a field holding a value of another type) goes through the general encoder, so the text is the
same either way.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
from collections.abc import Callable
from typing import Any, Final

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.message import Struct, snake_case
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.protocol.spec import PY_TYPES, FieldSpec, MessageSpec, all_messages

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

_WRITERS: dict[type, Writer] = {}


def record_json(message: object) -> str:
    """``message`` as ``record_json`` text."""
    writer = _WRITERS.get(message.__class__)
    if writer is None:
        writer = _writer_of(message.__class__)
    return writer(message)


@functools.cache
def _specs() -> dict[str, MessageSpec]:
    return {spec.name: spec for spec in all_messages()}


def _writer_of(cls: type) -> Writer:
    """The writer of ``cls``, built with those of its message's nested structs the first time."""
    spec = _specs().get(cls.__name__) if issubclass(cls, Struct) else None
    if spec is None or getattr(messages, spec.name, None) is not cls:
        _WRITERS[cls] = json_text
    else:
        _Builder(spec, cls).build()
    return _WRITERS[cls]


_TEXT: Final = {
    "int": "str({v})",
    "bool": "('true' if {v} else 'false')",
    "str": "_string({v})",
    "Uuid": "_uuid({v})",
    "bytes": "_bytes({v})",
}
"""By the Python type of a field (:data:`~kafka_admin_kraft.protocol.spec.PY_TYPES`): an expression
writing its value ``{v}`` when the value is of exactly that type; the general encoder writes any
other (``None``, a float, a value of another type)."""


def _uuid(value: Uuid) -> str:
    return '"' + str(value) + '"'


def _bytes(value: bytes) -> str:
    return '"' + binascii.b2a_base64(value, newline=False).decode() + '"'


_NAMESPACE: Final = {
    "_any": json_text,
    "_string": json.encoder.encode_basestring_ascii,
    "_uuid": _uuid,
    "_bytes": _bytes,
    "Uuid": Uuid,
}


class _Builder:
    """The writers of one message spec's class and nested struct classes, compiled together."""

    def __init__(self, spec: MessageSpec, cls: type[Struct]) -> None:
        self.spec = spec
        self.cls = cls
        self.fields = spec.struct_fields()

    def _class(self, name: str) -> type[Struct]:
        return self.cls if name == self.spec.name else getattr(self.cls, name)

    def build(self) -> None:
        """Compile the writers; a class whose fields the spec does not name keeps the general encoder."""
        order = {name: index for index, name in enumerate(self.fields)}
        namespace: dict[str, Any] = dict(_NAMESPACE)
        source: list[str] = []
        for name, index in order.items():
            cls = self._class(name)
            by_name = {snake_case(field.name): field for field in self.fields[name]}
            if set(cls._FIELDS) - by_name.keys():
                for other in order:
                    _WRITERS[self._class(other)] = json_text
                return
            namespace[f"_C{index}"] = cls
            source += self._function(index, [by_name[field] for field in cls._FIELDS], cls._FIELDS, order)
        exec("\n".join(source), namespace)  # noqa: S102 - source built above from the spec's names
        for name, index in order.items():
            _WRITERS[self._class(name)] = namespace[f"_w{index}"]

    @classmethod
    def _function(
        cls, index: int, fields: list[FieldSpec], names: tuple[str, ...], order: dict[str, int]
    ) -> list[str]:
        lines = [f"def _w{index}(o):", f"    if o.__class__ is not _C{index}:", "        return _any(o)"]
        parts = []
        for position, (name, field) in enumerate(zip(names, fields, strict=True)):
            value = f"v{position}"
            lines.append(f"    {value} = o.{name}")
            parts.append(repr(("{" if position == 0 else ",") + json.dumps(name) + ":"))
            parts.append(cls._value(field, value, order))
        parts.append(repr("}" if names else "{}"))
        lines.append(f"    return ''.join(({', '.join(parts)},))")
        return lines

    @staticmethod
    def _value(field: FieldSpec, value: str, order: dict[str, int]) -> str:
        """An expression writing the field's ``value``."""
        element = field.element_type
        if field.is_array:
            if field.is_struct:
                each = f"map(_w{order[element]}, {value})"
            elif element == "uuid":
                each = f"[_uuid(u) if u.__class__ is Uuid else _any(u) for u in {value}]"
            else:  # numbers and strings: many lists are empty, the general encoder writes the others
                empty = f"{value}.__class__ is list and not {value}"
                return f"('null' if {value} is None else '[]' if {empty} else _any({value}))"
            return f"('[' + ','.join({each}) + ']' if {value}.__class__ is list else _any({value}))"
        if field.is_struct:
            return f"_w{order[element]}({value})"
        python_type = PY_TYPES.get(element, "")
        text = _TEXT.get(python_type)
        if text is None:
            return f"_any({value})"
        return f"({text.format(v=value)} if {value}.__class__ is {python_type} else _any({value}))"
