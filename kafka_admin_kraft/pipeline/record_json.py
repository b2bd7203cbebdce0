"""The ``record_json`` text of a decoded record, written by one function per message class.

``record_json`` is what ``json.JSONEncoder(separators=(",", ":"))`` writes for a struct as the
object of its fields in declaration order (snake_case keys), with ids as their text and bytes as
base64. A general encoder calls back into Python for every struct and id it meets, which was half
the cost of a record with JSON; the writers generated from the specs (``record_json_writers``, by
``python -m kafka_admin_kraft.codegen``) know each field's type and join the text in one expression.
Anything the specs do not describe (a class without a spec, a field holding a value of another type)
goes through the general encoder, so the text is the same either way.
"""

from __future__ import annotations

from kafka_admin_kraft.pipeline.json_values import Writer, json_text
from kafka_admin_kraft.pipeline.record_json_writers import BINDERS
from kafka_admin_kraft.protocol.message import Struct

__all__ = ["json_text", "record_json"]

_WRITERS: dict[type, Writer] = {}
_UNBOUND = dict(BINDERS)
"""The messages whose writers are not bound to their classes yet, by class name."""


def record_json(message: object) -> str:
    """``message`` as ``record_json`` text."""
    writer = _WRITERS.get(message.__class__)
    if writer is None:
        writer = _writer_of(message.__class__)
    return writer(message)


def _writer_of(cls: type) -> Writer:
    """The writer of ``cls``: the first time one of a message's classes is met, the writers of all
    of them are bound; any other class gets the general encoder."""
    if issubclass(cls, Struct):
        bind = _UNBOUND.pop(cls.__qualname__.partition(".")[0], None)
        if bind is not None:
            _WRITERS.update(bind())
    return _WRITERS.setdefault(cls, json_text)
