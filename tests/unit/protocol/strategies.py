"""Hypothesis strategies that build random, valid instances of any generated message at any version,
from the project's spec model."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.message import Struct, snake_case
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.protocol.spec import FieldSpec, MessageSpec

RANGES = {"int8": 7, "int16": 15, "int32": 31, "int64": 63}
SCALARS: dict[str, st.SearchStrategy[Any]] = {
    **{kind: st.integers(-(1 << bits), (1 << bits) - 1) for kind, bits in RANGES.items()},
    "uint16": st.integers(0, 0xFFFF),
    "uint32": st.integers(0, 0xFFFFFFFF),
    "float64": st.floats(allow_nan=False),
    "bool": st.booleans(),
    "uuid": st.binary(min_size=16, max_size=16).map(Uuid),
    "string": st.text(max_size=12),
    "bytes": st.binary(max_size=12),
    "records": st.binary(max_size=24),
}


class MessageStrategies:
    """Strategies for one message spec."""

    def __init__(self, spec: MessageSpec) -> None:
        self.spec = spec
        self.cls: type[Struct] = getattr(messages, spec.name)
        self.fields = spec.struct_fields()

    def _class(self, name: str) -> type[Struct]:
        return self.cls if name == self.spec.name else getattr(self.cls, name)  # type: ignore[no-any-return]

    def unknown_tags(self, fields: list[FieldSpec]) -> st.SearchStrategy[list[tuple[int, bytes]]]:
        known = {f.tag for f in fields if f.tag is not None}
        tags = st.sets(st.integers(0, 300).filter(lambda t: t not in known), max_size=2)
        return tags.flatmap(lambda chosen: st.tuples(*[st.tuples(st.just(t), st.binary(max_size=6))
                                                        for t in sorted(chosen)]).map(list))

    def value(self, field: FieldSpec, version: int) -> st.SearchStrategy[Any]:
        if field.is_struct:
            element: st.SearchStrategy[Any] = self.struct(field.element_type, version)
        else:
            element = SCALARS[field.element_type]
        strategy = st.lists(element, max_size=3) if field.is_array else element
        if version in field.nullable:
            strategy = st.none() | strategy
        return strategy

    def struct(self, name: str, version: int) -> st.SearchStrategy[Struct]:
        fields = self.fields[name]
        present = {
            snake_case(f.name): self.value(f, version)
            for f in fields
            if version in f.versions
        }
        if version in self.spec.flexible:
            present["unknown_tagged_fields"] = self.unknown_tags(fields)
        return st.fixed_dictionaries(present).map(lambda kwargs: self._class(name)(**kwargs))

    def message(self, version: int) -> st.SearchStrategy[Struct]:
        return self.struct(self.spec.name, version)
