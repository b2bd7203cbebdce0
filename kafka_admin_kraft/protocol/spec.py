"""The project's message spec language (``specs/*.kspec``) and its in-memory model.

A spec file holds one or more messages. Indentation (two spaces) nests fields::

    # DescribeQuorum (API 55): ...
    request DescribeQuorumRequest key=55 versions=0-3 flexible=0+ listeners=broker,controller
      Topics []TopicData
        TopicName string
        Partitions []PartitionData
          PartitionIndex int32
      common ReplicaState
        ReplicaId int32

A message line is ``<kind> <Name>`` then ``key=``, ``versions=``, ``flexible=``, optional ``headers=``
(``<range>:<header version>`` pairs), ``listeners=`` and the flag ``unstable-latest``. Kinds: request,
response, header, data (control records, quorum state), metadata (metadata log records).

A field line is ``<Name> <type>`` then optional ``v<range>`` (default ``v0+``), ``nullable=<range>``,
``ignorable``, ``default=<literal>``, ``tag=<n>@<range>``, ``key`` (map key, no wire effect) and
``flexible=<range|none>`` (a field that overrides the message's flexibility). Types: bool, int8,
int16, int32, int64, uint16, uint32, float64, uuid, string, bytes, records, ``[]T`` and struct names.
A ``common <Name>`` block defines a struct shared by several fields of the message. Ranges are ``N``,
``N-M``, ``N+`` or ``none``.

Comments at the top level document the message that follows. Indented comments document the field
right below them, at the same indentation (Kafka's ``about``); consecutive comment lines join with a
space::

      # Node id of the voter or observer this entry describes.
      ReplicaId int32

The tree: ``specs/*.kspec`` hold the messages the codec models, one generated module of classes each;
``specs/unmodelled/*.kspec`` hold metadata records it does not model, which only the dump tool's JSON
readers are generated from. Readers that want classes read the top folder alone.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from kafka_admin_kraft.protocol.message import snake_case

__all__ = ["FIXED", "PY_TYPES", "FieldSpec", "MessageSpec", "SpecError", "StructSpec", "Versions",
           "all_messages", "load_spec", "load_specs", "parse_spec", "snake_case"]

SPEC_DIR = Path(__file__).parent / "specs"
UNMODELLED_DIR = SPEC_DIR / "unmodelled"

PY_TYPES: Final = {"bool": "bool", "int8": "int", "int16": "int", "int32": "int", "int64": "int",
                   "uint16": "int", "uint32": "int", "float64": "float", "uuid": "Uuid", "string": "str",
                   "bytes": "bytes", "records": "bytes"}
"""The Python type the generated codecs give each primitive type of the spec language."""
FIXED: Final = {"bool": ("?", 1), "int8": ("b", 1), "int16": ("h", 2), "int32": ("i", 4), "int64": ("q", 8),
                "uint16": ("H", 2), "uint32": ("I", 4), "float64": ("d", 8), "uuid": ("16s", 16)}
"""The fixed-width primitive types: their ``struct`` format code and their size on the wire."""
PRIMITIVES = frozenset(PY_TYPES)
MESSAGE_KINDS = frozenset({"request", "response", "header", "data", "metadata"})


class SpecError(ValueError):
    """A spec file that does not follow the spec language."""


@dataclass(frozen=True)
class Versions:
    """An inclusive version range; ``high`` None means open-ended, ``low`` > ``high`` means none."""

    low: int
    high: int | None

    @classmethod
    def parse(cls, text: str) -> Versions:
        if text == "none":
            return NO_VERSIONS
        match = re.fullmatch(r"(\d+)(\+|-(\d+))?", text)
        if not match:
            raise SpecError(f"bad version range {text!r}")
        low = int(match.group(1))
        if match.group(2) == "+":
            return cls(low, None)
        high = int(match.group(3)) if match.group(3) else low
        if high < low:
            raise SpecError(f"empty version range {text!r}")
        return cls(low, high)

    def __contains__(self, version: object) -> bool:
        return (isinstance(version, int) and version >= self.low
                and (self.high is None or version <= self.high))

    def is_empty(self) -> bool:
        return self.high is not None and self.high < self.low

    def __str__(self) -> str:
        if self.is_empty():
            return "none"
        if self.high is None:
            return f"{self.low}+"
        return str(self.low) if self.low == self.high else f"{self.low}-{self.high}"


NO_VERSIONS = Versions(1, 0)
ALL_VERSIONS = Versions(0, None)


@dataclass
class FieldSpec:
    name: str
    type: str
    versions: Versions = ALL_VERSIONS
    nullable: Versions = NO_VERSIONS
    ignorable: bool = False
    default: str | None = None
    tag: int | None = None
    tagged: Versions = NO_VERSIONS
    map_key: bool = False
    flexible: Versions | None = None
    fields: list[FieldSpec] = field(default_factory=list)
    about: str = ""

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def element_type(self) -> str:
        return self.type[2:] if self.is_array else self.type

    @property
    def is_struct(self) -> bool:
        return self.element_type not in PRIMITIVES

    def tagged_at(self, version: int) -> bool:
        """Whether the field is a tagged field at ``version`` (read and written in the tag section)."""
        return self.tag is not None and version in self.tagged


@dataclass
class StructSpec:
    name: str
    fields: list[FieldSpec]
    versions: Versions = ALL_VERSIONS
    doc: str = ""


@dataclass
class MessageSpec:
    kind: str
    name: str
    versions: Versions
    flexible: Versions
    fields: list[FieldSpec]
    api_key: int | None = None
    header_versions: list[tuple[Versions, int]] = field(default_factory=list)
    listeners: list[str] = field(default_factory=list)
    unstable_latest: bool = False
    common_structs: list[StructSpec] = field(default_factory=list)
    doc: str = ""
    source: str = ""

    @property
    def version_list(self) -> list[int]:
        assert self.versions.high is not None, f"{self.name} has an open-ended version range"
        return list(range(self.versions.low, self.versions.high + 1))

    def structs(self) -> list[StructSpec]:
        """Every struct the message holds, each once: the message itself first, then depth first in
        field order, a common struct where a field first uses it (one no field uses is left out). A
        struct declared inside a field is documented by that field's comment. SpecError for a struct
        declared twice or a type that names no struct declared before it."""
        common = {struct.name: struct for struct in self.common_structs}
        found = {self.name: StructSpec(self.name, self.fields, self.versions, self.doc)}

        def visit(fields: list[FieldSpec]) -> None:
            for spec in fields:
                if not spec.is_struct:
                    continue
                name = spec.element_type
                if spec.fields:
                    if name in found:
                        raise SpecError(f"{self.name}: struct {name} is defined twice")
                    found[name] = StructSpec(name, spec.fields, doc=spec.about)
                    visit(spec.fields)
                elif name in common and name not in found:
                    found[name] = common[name]
                    visit(common[name].fields)
                elif name not in found:
                    raise SpecError(f"{self.name}: unknown struct type {name}")

        visit(self.fields)
        return list(found.values())

    def struct_fields(self) -> dict[str, list[FieldSpec]]:
        """The fields of every struct the message holds, by struct name: the message itself first,
        then its common structs (used or not), then the others in the order of :meth:`structs`."""
        structs = {self.name: self.fields}
        structs.update({common.name: common.fields for common in self.common_structs})
        structs.update({struct.name: struct.fields for struct in self.structs()})
        return structs


def _parse_field(tokens: list[str], where: str) -> FieldSpec:
    if len(tokens) < 2:
        raise SpecError(f"{where}: a field needs a name and a type")
    spec = FieldSpec(name=tokens[0], type=tokens[1])
    for token in tokens[2:]:
        key, _, value = token.partition("=")
        if re.fullmatch(r"v(\d+(\+|-\d+)?|none)", token):
            spec.versions = Versions.parse(token[1:])
        elif key == "nullable":
            spec.nullable = Versions.parse(value)
        elif key == "ignorable":
            spec.ignorable = True
        elif key == "default":
            spec.default = value
        elif key == "tag":
            tag, _, tagged = value.partition("@")
            spec.tag = int(tag)
            spec.tagged = Versions.parse(tagged)
        elif key == "key":
            spec.map_key = True
        elif key == "flexible":
            spec.flexible = Versions.parse(value)
        else:
            raise SpecError(f"{where}: unknown field attribute {token!r}")
    return spec


def _parse_message(tokens: list[str], where: str) -> MessageSpec:
    kind, name = tokens[0], tokens[1]
    attrs: dict[str, str] = {}
    flags: set[str] = set()
    for token in tokens[2:]:
        key, eq, value = token.partition("=")
        if eq:
            attrs[key] = value
        else:
            flags.add(key)
    unknown = (set(attrs) - {"key", "versions", "flexible", "headers", "listeners"}) | (
        flags - {"unstable-latest"})
    if unknown:
        raise SpecError(f"{where}: unknown message attributes {sorted(unknown)}")
    headers = []
    for part in filter(None, attrs.get("headers", "").split(",")):
        versions, _, header = part.partition(":")
        headers.append((Versions.parse(versions), int(header)))
    return MessageSpec(
        kind=kind,
        name=name,
        versions=Versions.parse(attrs["versions"]),
        flexible=Versions.parse(attrs.get("flexible", "none")),
        fields=[],
        api_key=int(attrs["key"]) if "key" in attrs else None,
        header_versions=headers,
        listeners=[x for x in attrs.get("listeners", "").split(",") if x],
        unstable_latest="unstable-latest" in flags,
    )


def parse_spec(text: str, source: str = "<spec>") -> list[MessageSpec]:
    """Parse one spec file into its messages."""
    messages: list[MessageSpec] = []
    doc_lines: list[str] = []
    # Comment lines waiting for the field below them: (indent, where the first one is, texts).
    about: tuple[int, str, list[str]] | None = None
    # Stack of (indent, field list to append to) for nesting.
    stack: list[tuple[int, list[FieldSpec]]] = []
    for number, raw in enumerate(text.splitlines(), 1):
        where = f"{source}:{number}"
        if not raw.strip():
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        if raw.lstrip().startswith("#"):
            comment = raw.strip().lstrip("#").strip()
            if indent == 0:
                doc_lines.append(comment)
            elif about is not None and about[0] == indent:
                about[2].append(comment)
            elif about is None:
                about = (indent, where, [comment])
            else:
                raise SpecError(f"{about[1]}: a comment must sit right above a field at its indentation")
            continue
        if indent % 2:
            raise SpecError(f"{where}: indentation must be a multiple of two spaces")
        if about is not None and about[0] != indent:
            raise SpecError(f"{about[1]}: a comment must sit right above a field at its indentation")
        about_text = " ".join(about[2]) if about is not None else ""
        about = None
        tokens = shlex.split(raw.strip(), posix=True)
        if indent == 0:
            if tokens[0] not in MESSAGE_KINDS or len(tokens) < 2:
                raise SpecError(f"{where}: expected '<kind> <Name> ...' with kind in {sorted(MESSAGE_KINDS)}")
            message = _parse_message(tokens, where)
            message.doc = " ".join(doc_lines)
            message.source = source
            doc_lines = []
            messages.append(message)
            stack = [(0, message.fields)]
            continue
        if not messages:
            raise SpecError(f"{where}: a field before any message")
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if not stack:
            raise SpecError(f"{where}: unexpected indentation")
        if tokens[0] == "common":
            if about_text:
                raise SpecError(f"{where}: comments document fields, not common structs")
            if indent != 2:
                raise SpecError(f"{where}: common structs belong at the message's top level")
            struct = StructSpec(name=tokens[1], fields=[])
            if len(tokens) > 2:
                struct.versions = Versions.parse(tokens[2].lstrip("v"))
            messages[-1].common_structs.append(struct)
            stack.append((indent, struct.fields))
            continue
        spec = _parse_field(tokens, where)
        spec.about = about_text
        stack[-1][1].append(spec)
        stack.append((indent, spec.fields))
    if about is not None:
        raise SpecError(f"{about[1]}: a comment must sit right above a field at its indentation")
    return messages


def load_spec(stem: str, directory: Path = SPEC_DIR) -> list[MessageSpec]:
    """The messages of one spec file, ``<directory>/<stem>.kspec``."""
    return parse_spec((directory / f"{stem}.kspec").read_text(), f"{stem}.kspec")


def load_specs(directory: Path = SPEC_DIR) -> dict[str, list[MessageSpec]]:
    """Every spec file in ``directory`` (not below it), keyed by file stem, in name order."""
    return {path.stem: load_spec(path.stem, directory) for path in sorted(directory.glob("*.kspec"))}


def all_messages(directory: Path = SPEC_DIR) -> list[MessageSpec]:
    return [message for messages in load_specs(directory).values() for message in messages]
