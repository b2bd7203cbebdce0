"""The pipeline package's generated module, ``pipeline/record_json_writers.py``: the writers of the
``record_json`` column, one function per struct of every message class, from the specs.

``record_json`` is what ``json.JSONEncoder(separators=(",", ":"))`` writes for a struct: the object
of its fields in declaration order, snake_case keys, ids as their text and bytes as base64. A writer
knows each field's type and joins the text in one expression; a value of another type than its
field's (None, a float, anything else) goes to the general encoder, so the text is the same either
way. The writers are module-level functions that find the helpers and the classes they check as
globals, the fastest lookup there is; a message's classes are bound to those globals the first time
the pipeline meets one of them, so importing the module imports no message module.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final

from kafka_admin_kraft.codegen import PACKAGE_DIR, header
from kafka_admin_kraft.protocol.spec import (
    PY_TYPES,
    FieldSpec,
    MessageSpec,
    StructSpec,
    all_messages,
    snake_case,
)

OUTPUT = PACKAGE_DIR / "pipeline" / "record_json_writers.py"

_TEXT: Final = {
    "int": "str({v})",
    "bool": "('true' if {v} else 'false')",
    "str": "str_json({v})",
    "Uuid": "uuid_json({v})",
    "bytes": "bytes_json({v})",
}
"""By the Python type of a field (:data:`~kafka_admin_kraft.protocol.spec.PY_TYPES`): an expression
writing its value ``{v}`` when the value is of exactly that type; the general encoder writes any
other (``None``, a float, a value of another type)."""


def _name(message: MessageSpec, struct: StructSpec) -> str:
    """A struct's class path with underscores: ``VotersRecord_Voter``."""
    return message.name if struct.name == message.name else f"{message.name}_{struct.name}"


def _value(field: FieldSpec, value: str, names: dict[str, str]) -> list[str]:
    """The expression writing the field's ``value``, over one line or two; ``names`` gives the
    message's structs' names (:func:`_name`)."""
    element = field.element_type
    if field.is_array:
        if field.is_struct:
            each = f"map(_w_{names[element]}, {value})"
        elif element == "uuid":
            each = f"[uuid_json(u) if u.__class__ is Uuid else json_text(u) for u in {value}]"
        else:  # numbers and strings: many lists are empty, the general encoder writes the others
            empty = f"{value}.__class__ is list and not {value}"
            return [f"('null' if {value} is None else '[]' if {empty} else json_text({value}))"]
        return [f"('[' + ','.join({each}) + ']'", f" if {value}.__class__ is list else json_text({value}))"]
    if field.is_struct:
        return [f"_w_{names[element]}({value})"]
    python_type = PY_TYPES[element]
    text = _TEXT.get(python_type)
    if text is None:
        return [f"json_text({value})"]
    return [f"({text.format(v=value)} if {value}.__class__ is {python_type} else json_text({value}))"]


def _writer(name: str, struct: StructSpec, names: dict[str, str]) -> list[str]:
    """The writer ``_w_<name>`` of one struct's class ``_C_<name>``."""
    lines = [f"def _w_{name}(o: Any) -> str:",
             f"    if o.__class__ is not _C_{name}:",
             "        return json_text(o)"]
    parts: list[list[str]] = []
    for position, field in enumerate(struct.fields):
        attribute = snake_case(field.name)
        lines.append(f"    v{position} = o.{attribute}")
        parts.append([repr(("{" if position == 0 else ",") + json.dumps(attribute) + ":")])
        parts.append(_value(field, f"v{position}", names))
    parts.append([repr("}" if struct.fields else "{}")])
    lines.append("    return ''.join((")
    for part in parts:
        lines += [f"        {line}" for line in part[:-1]]
        lines.append(f"        {part[-1]},")
    lines.append("    ))")
    return lines


def _binder_name(message: MessageSpec) -> str:
    return f"_bind_{snake_case(message.name)}"


def _message(message: MessageSpec) -> list[str]:
    """The class globals, the writers and the binder of one message."""
    structs = message.structs()
    names = {struct.name: _name(message, struct) for struct in structs}
    lines = [f"_C_{name}: type[Any] = _Unbound" for name in names.values()]
    for struct in structs:
        lines += ["", "", *_writer(names[struct.name], struct, names)]
    lines += ["", "",
              f"def {_binder_name(message)}() -> dict[type, Writer]:",
              f'    """Bind the classes of {message.name}; their writers by class."""']
    lines += [f"    global _C_{name}" for name in names.values()]
    lines += [f"    _C_{names[struct.name]} = messages.{message.name}" + (
        "" if struct.name == message.name else f".{struct.name}") for struct in structs]
    lines.append("    return {")
    lines += [f"        _C_{name}: _w_{name}," for name in names.values()]
    lines.append("    }")
    return lines


def generate_module(specs: list[MessageSpec]) -> str:
    """The module of the writers of every message in ``specs``."""
    specs = sorted(specs, key=lambda message: message.name)
    lines = [header("protocol/specs/*.kspec"),
             '"""The ``record_json`` writers of every message class, one function per struct (see',
             "``record_json``).",
             "",
             "A writer checks its object's class against a global ``_C_<class path>``, which is",
             "``_Unbound`` until ``BINDERS[name]()`` binds the message's classes (importing its module) and",
             "gives their writers by class; an unbound writer hands everything to the general encoder.",
             '"""',
             "",
             "from __future__ import annotations",
             "",
             "from collections.abc import Callable",
             "from typing import Any",
             "",
             "from kafka_admin_kraft.pipeline.json_values import (",
             "    Writer,",
             "    bytes_json,",
             "    json_text,",
             "    str_json,",
             "    uuid_json,",
             ")",
             "from kafka_admin_kraft.protocol import messages",
             "from kafka_admin_kraft.protocol.primitives import Uuid",
             "",
             "",
             "class _Unbound:",
             '    """The class of no object, that of every class global until its message is bound."""']
    for message in specs:
        lines += ["", "", *_message(message)]
    lines += ["", "",
              "BINDERS: dict[str, Callable[[], dict[type, Writer]]] = {",
              *[f"    {message.name!r}: {_binder_name(message)}," for message in specs],
              "}"]
    return "\n".join(lines) + "\n"


def outputs() -> dict[Path, str]:
    """The generated file and its content."""
    return {OUTPUT: generate_module(all_messages())}
