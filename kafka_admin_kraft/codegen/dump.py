"""The dump package's generated module, ``dump/metadata_json.py``: for every metadata record version,
one straight-line function that reads the record body from the wire and returns Kafka's JSON text of
it, with no objects in between. The records are every metadata record of the spec tree, those the
codec models (``protocol/specs``) and those it does not (``protocol/specs/unmodelled``).

The generated readers follow Kafka's generated ``read`` methods, not the project's stricter codec:
strings decode malformed UTF-8 to U+FFFD, a known tagged field is read without checking its declared
size, a string longer than 32767 bytes is refused, and a version outside the record's range reads as
the nearest version in it (Kafka's version checks are generated only inside the valid range). The
text follows Kafka's generated ``*JsonConverter.write`` (see ``json_text``); a tagged field appears
only when it differs from its default.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kafka_admin_kraft.codegen import PACKAGE_DIR, header
from kafka_admin_kraft.dump.json_text import json_string
from kafka_admin_kraft.protocol.spec import (
    FIXED,
    SPEC_DIR,
    UNMODELLED_DIR,
    FieldSpec,
    MessageSpec,
    SpecError,
    load_specs,
)

OUTPUT = PACKAGE_DIR / "dump" / "metadata_json.py"

STRING_MAX = 0x7FFF
"""Kafka refuses a string field longer than this (``string field ... had invalid length``)."""


def type_name(record_name: str) -> str:
    """Kafka's ``MetadataRecordType`` constant of a record: ``MessageGenerator.toSnakeCase`` upper-cased,
    so a run of capitals stays one word (``KRaftVersionRecord`` gives ``KRAFT_VERSION_RECORD``)."""
    out: list[str] = []
    previous_capital = True
    for char in record_name:
        if char.isupper():
            if not previous_capital:
                out.append("_")
            out.append(char.lower())
            previous_capital = True
        else:
            out.append(char)
            previous_capital = False
    return "".join(out).upper()


def json_name(field_name: str) -> str:
    """The JSON key of a field: its name with the first letter lower-cased (``kRaftVersion``)."""
    return field_name[:1].lower() + field_name[1:]


def metadata_specs() -> list[MessageSpec]:
    """Every metadata record, by api key; a key defined twice is an error."""
    records: dict[int, MessageSpec] = {}
    for directory in (SPEC_DIR, UNMODELLED_DIR):
        for messages in load_specs(directory).values():
            for message in messages:
                if message.kind != "metadata":
                    continue
                assert message.api_key is not None, message.name
                if message.api_key in records:
                    raise SpecError(f"metadata api key {message.api_key} is defined by "
                                    f"{records[message.api_key].name} and {message.name}")
                records[message.api_key] = message
    return [records[key] for key in sorted(records)]


@dataclass
class _Writer:
    """Collects the functions of one module; identical bodies share one function."""

    functions: list[str] = field(default_factory=list)
    by_body: dict[str, str] = field(default_factory=dict)
    formats: dict[str, str] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)
    caches: list[str] = field(default_factory=list)

    def packer(self, fmt: str) -> str:
        name = self.formats.get(fmt)
        if name is None:
            name = self.formats[fmt] = f"_P{len(self.formats)}"
        return name

    def cache(self) -> str:
        """A new module-level cache of texts by bytes."""
        name = f"_C{len(self.caches)}"
        self.caches.append(name)
        return name

    def function(self, stem: str, body: list[str]) -> str:
        text = "\n".join(body)
        name = self.by_body.get(text)
        if name is None:
            name = self.by_body[text] = f"_{stem}_{len(self.by_body)}"
            self.functions.append(f"def {name}(b: bytes, p: int) -> tuple[str, int]:\n{text}")
        return name


class _StructGenerator:
    """Emits the reader of one struct at one version."""

    def __init__(self, writer: _Writer, message: MessageSpec) -> None:
        self.writer = writer
        self.message = message
        self.structs = {struct.name: struct.fields for struct in message.structs()}

    def generate(self, stem: str, fields: list[FieldSpec], version: int, *, start: int = 0,
                 fragment: bool = False) -> str:
        """The name of the function reading ``fields`` at ``version``; returns (JSON text, position).
        With ``start``, the fields before it are not read (a caller did); with ``fragment``, the text
        is the fields' ``,"key":value`` pieces without braces."""
        if version not in self.message.flexible:
            raise SpecError(f"{self.message.name} v{version}: metadata records are flexible; the "
                            "generator reads compact encodings only")
        lines: list[str] = []
        parts: list[str] = []
        optional_first = False
        untagged = [(index, spec) for index, spec in enumerate(fields)
                    if index >= start and version in spec.versions and not spec.tagged_at(version)]
        tagged = [(index, spec) for index, spec in enumerate(fields) if spec.tagged_at(version)]
        run: list[tuple[int, FieldSpec]] = []
        for index, spec in untagged:
            if spec.type in FIXED:
                run.append((index, spec))
                continue
            lines += self._fixed_run(run)
            run = []
            lines += self._value(spec, f"x{index}", version, "    ")
        lines += self._fixed_run(run)
        lines += self._tag_section(fields, tagged, version)
        for index, spec in enumerate(fields):
            if index < start or version not in spec.versions:
                continue
            key = json_name(spec.name)
            if spec.tagged_at(version):
                parts.append(f"f'{{t{index}}}'")
                if not parts[:-1]:
                    optional_first = True
                continue
            comma = "," if parts or fragment else ""
            parts.append(f"f'{comma}\"{key}\":{{x{index}}}'")
        if fragment:
            joined = "\n            ".join(parts or ["''"])
            lines.append(f"    return ({joined}), p")
        elif optional_first:
            lines.append("    s = (" + ("\n         ".join(parts) if parts else "''") + ")")
            lines.append("    return '{' + s[1:] + '}', p")
        else:
            joined = "\n            ".join(["'{'", *parts, "'}'"])
            lines.append(f"    return ({joined}), p")
        return self.writer.function(stem, lines)

    def generate_record(self, version: int) -> str:
        """The reader of a whole record body at ``version``. When the body starts with fixed-width
        fields (ids) followed by arrays or tagged fields (replica lists, directories, changes), the
        text of everything after those ids is cached by its bytes, which run to the end of the value:
        metadata logs repeat replica sets, epochs and ISR changes on almost every record."""
        fields = self.message.fields
        head: list[tuple[int, FieldSpec]] = []
        split = 0
        for index, spec in enumerate(fields):
            if version not in spec.versions:
                split = index + 1
                continue
            if spec.type not in FIXED or spec.tagged_at(version):
                break
            head.append((index, spec))
            split = index + 1
        rest = [spec for spec in fields[split:] if version in spec.versions]
        if not head or not any(spec.is_array or spec.tagged_at(version) for spec in rest) or any(
                spec.tagged_at(version) for spec in fields[:split]):
            return self.generate(self.message.name, fields, version)
        tail = self.generate(f"{self.message.name}_tail", fields, version, start=split, fragment=True)
        cache = self.writer.cache()
        self.writer.used.add("CACHE_LIMIT")
        parts = ["'{'"] + [f"f'{',' if position else ''}\"{json_name(spec.name)}\":{{x{index}}}'"
                           for position, (index, spec) in enumerate(head)] + ["f'{t}'", "'}'"]
        size = sum(FIXED[spec.type][1] for _, spec in head)
        lines = self._fixed_run(head, convert=False)
        lines += [f"    t = {cache}.get(b[p + {size}:])",
                  "    if t is None:",
                  f"        r = b[p + {size}:]",
                  f"        t, p = {tail}(b, p + {size})",
                  "        if p != len(b):",
                  "            return '', p",
                  f"        if len({cache}) >= CACHE_LIMIT:",
                  f"            {cache}.clear()",
                  f"        {cache}[r] = t"]
        for index, spec in head:
            lines += self._fixed_text(spec.type, f"x{index}", f"x{index}", "    ")
        lines.append("    return (" + "\n            ".join(parts) + "), len(b)")
        return self.writer.function(self.message.name, lines)

    # -- fixed-width fields ------------------------------------------------------------------
    def _fixed_run(self, run: list[tuple[int, FieldSpec]], *, convert: bool = True) -> list[str]:
        """Read a run of fixed-width fields with one unpack into ``x<index>``, turned into their text
        unless ``convert`` is False; without it ``p`` stays at the run's start."""
        if not run:
            return []
        fmt = ">" + "".join(FIXED[spec.type][0] for _, spec in run)
        names = [f"x{index}" for index, _ in run]
        lines = [f"    {', '.join(names)}, = {self.writer.packer(fmt)}.unpack_from(b, p)"]
        if not convert:
            return lines
        lines.append(f"    p += {sum(FIXED[spec.type][1] for _, spec in run)}")
        for (_, spec), name in zip(run, names, strict=True):
            lines += self._fixed_text(spec.type, name, name, "    ")
        return lines

    def _fixed_text(self, kind: str, raw: str, target: str, pad: str) -> list[str]:
        """Turn an unpacked fixed-width value into its JSON text, where numbers are not already it."""
        if kind == "bool":
            return [f"{pad}{target} = 'true' if {raw} else 'false'"]
        if kind == "uuid":
            self.writer.used.update({"LAST_UUID", "uuid_json"})
            return [f"{pad}u = LAST_UUID[0]",
                    f"{pad}if {raw} != u[0]:",
                    f"{pad}    u = LAST_UUID[0] = ({raw}, uuid_json({raw}))",
                    f"{pad}{target} = u[1]"]
        if kind == "float64":
            self.writer.used.add("double_json")
            return [f"{pad}{target} = double_json({raw})"]
        if raw != target:
            return [f"{pad}{target} = {raw}"]
        return []

    # -- variable-length fields ----------------------------------------------------------------
    def _length(self, pad: str) -> list[str]:
        """``n``: a compact length (uvarint minus one, negative for null) read at ``p``."""
        self.writer.used.add("uvarint32")
        return [f"{pad}n = b[p] - 1",
                f"{pad}p += 1",
                f"{pad}if n > 126:",
                f"{pad}    n, p = uvarint32(b, p - 1)",
                f"{pad}    n -= 1"]

    def _null(self, spec: FieldSpec, version: int, target: str, pad: str, nullable: bool) -> list[str]:
        self.writer.used.add("Malformed")
        if nullable and version in spec.nullable:
            return [f"{pad}if n < 0:", f"{pad}    {target} = 'null'", f"{pad}else:"]
        return [f"{pad}if n < 0:", f"{pad}    raise Malformed('null in a non-nullable field')"]

    def _take(self, pad: str, width: str) -> list[str]:
        """``r``: the next ``n`` elements of ``width`` bytes. A value cut short by the end of the record
        leaves ``p`` past the end, which the next read (at the latest the tagged-field count every
        struct ends with) or the caller's final position check refuses."""
        size = "n" if width == "1" else f"{width} * n"
        return [f"{pad}e = p + {size}",
                f"{pad}r = b[p:e]",
                f"{pad}p = e"]

    def _value(self, spec: FieldSpec, target: str, version: int, pad: str,
               nullable: bool = True) -> list[str]:
        """Lines that read one variable-length value at ``p`` into ``target`` (its JSON text)."""
        kind = spec.element_type
        if spec.is_struct and not spec.is_array or spec.is_array and kind in FIXED and kind not in (
                "int32", "uuid"):
            raise SpecError(f"{self.message.name}.{spec.name}: no metadata record has a {spec.type} field "
                            "yet; add its reader here")
        lines = self._length(pad) + self._null(spec, version, target, pad, nullable)
        inner = pad + "    " if lines[-1].endswith("else:") else pad
        if not spec.is_array:
            lines += self._scalar_body(kind, target, inner)
            return lines
        if kind == "int32":
            self.writer.used.update({"INT32_ARRAYS", "int32_array_json"})
            lines += self._take(inner, "4")
            lines.append(f"{inner}{target} = INT32_ARRAYS.get(r) or int32_array_json(r)")
        elif kind == "uuid":
            self.writer.used.update({"UUID_ARRAYS", "uuid_array_json"})
            lines += self._take(inner, "16")
            lines.append(f"{inner}{target} = UUID_ARRAYS.get(r) or uuid_array_json(r)")
        else:
            lines += [f"{inner}if n > len(b) - p:",
                      f"{inner}    raise Malformed('array longer than the bytes left')",
                      f"{inner}items = []",
                      f"{inner}for _ in range(n):"]
            element = f"{inner}    "
            if spec.is_struct:
                function = self.generate(f"{self.message.name}_{kind}", self.structs[kind], version)
                lines.append(f"{element}item, p = {function}(b, p)")
            else:
                lines += self._length(element) + self._null(spec, version, "item", element, False)
                lines += self._scalar_body(kind, "item", element)
            lines += [f"{element}items.append(item)", f"{inner}{target} = '[' + ','.join(items) + ']'"]
        return lines

    def _scalar_body(self, kind: str, target: str, pad: str) -> list[str]:
        """A string or bytes value of length ``n`` (not null) at ``p``."""
        if kind == "string":
            self.writer.used.update({"STRINGS", "string_json"})
            return [f"{pad}if n > {STRING_MAX}:",
                    f"{pad}    raise Malformed('string longer than {STRING_MAX} bytes')",
                    *self._take(pad, "1"),
                    f"{pad}{target} = STRINGS.get(r) or string_json(r)"]
        if kind == "bytes":
            self.writer.used.add("bytes_json")
            return [*self._take(pad, "1"), f"{pad}{target} = bytes_json(r)"]
        raise SpecError(f"{self.message.name}: no JSON reader for type {kind}")

    # -- tagged fields ---------------------------------------------------------------------------
    def _tag_section(self, fields: list[FieldSpec], tagged: list[tuple[int, FieldSpec]],
                     version: int) -> list[str]:
        """The tagged-field section: known tags read without checking their size (as Kafka does),
        unknown ones skipped, a tag of another version refused."""
        self.writer.used.update({"uvarint32", "Malformed"})
        lines = [f"    t{index} = ''" for index, _ in tagged]
        lines += ["    n = b[p]",
                  "    p += 1",
                  "    if n:",
                  "        if n > 127:",
                  "            n, p = uvarint32(b, p - 1)"]
        loop = ["    for _ in range(n):",
                "        tag = b[p]",
                "        p += 1",
                "        if tag > 127:",
                "            tag, p = uvarint32(b, p - 1)",
                "        size = b[p]",
                "        p += 1",
                "        if size > 127:",
                "            size, p = uvarint32(b, p - 1)"]
        keyword = "if"
        for index, spec in tagged:
            loop.append(f"        {keyword} tag == {spec.tag}:")
            loop += self._tagged_value(spec, index, version, "            ")
            keyword = "elif"
        foreign = sorted({spec.tag for spec in fields if spec.tag is not None and not spec.tagged.is_empty()
                          and not spec.tagged_at(version)})
        for tag in foreign:
            loop.append(f"        {keyword} tag == {tag}:")
            loop.append(f"            raise Malformed('tag {tag} is not valid in version {version}')")
            keyword = "elif"
        body = ["if size < 0 or p + size > len(b):",
                "    raise Malformed('tagged field runs past the record')",
                "p += size"]
        if keyword == "if":
            loop += [f"        {line}" for line in body]
        else:
            loop.append("        else:")
            loop += [f"            {line}" for line in body]
        return lines + ["    " + line for line in loop]

    def _tagged_value(self, spec: FieldSpec, index: int, version: int, pad: str) -> list[str]:
        """Read a known tagged field; ``t<index>`` becomes its ``,"key":value`` text, or stays empty
        when the value equals the field's default (Kafka writes only non-default tagged fields)."""
        key = json_name(spec.name)
        piece = f"f',\"{key}\":{{v}}'"
        if spec.type in FIXED:
            code, size = FIXED[spec.type]
            lines = [f"{pad}v, = {self.writer.packer('>' + code)}.unpack_from(b, p)", f"{pad}p += {size}"]
            default = self._fixed_default(spec)
            condition = f"v != {default}"
            lines.append(f"{pad}if {condition}:")
            lines += self._fixed_text(spec.type, "v", "v", pad + "    ")
            lines.append(f"{pad}    t{index} = {piece}")
            return lines
        if spec.is_struct and not spec.is_array:
            raise SpecError(f"{self.message.name}.{spec.name}: tagged struct fields are not supported")
        lines = self._value(spec, "v", version, pad)
        if spec.default == "null":
            condition = "n >= 0"
        elif spec.is_array:
            condition = "n != 0"
        else:
            condition = f"v != {self._text_default(spec)!r}"
        lines.append(f"{pad}if {condition}:")
        lines.append(f"{pad}    t{index} = {piece}")
        return lines

    def _fixed_default(self, spec: FieldSpec) -> str:
        default = spec.default
        if spec.type == "uuid":
            return "b'\\x00' * 16"
        if spec.type == "bool":
            return "True" if (default or "").lower() == "true" else "False"
        if spec.type == "float64":
            return repr(float(default or 0))
        return str(int(default or "0", 0))

    def _text_default(self, spec: FieldSpec) -> str:
        """The JSON text of a string or bytes field's (non-null) default."""
        if spec.type == "string":
            return json_string(spec.default or "")
        if spec.type == "bytes" and not spec.default:
            return '""'
        raise SpecError(f"{self.message.name}.{spec.name}: unsupported default {spec.default!r}")


def generate_module(records: list[MessageSpec]) -> str:
    writer = _Writer()
    tables: list[str] = []
    names: list[str] = []
    for message in records:
        generator = _StructGenerator(writer, message)
        functions = [generator.generate_record(version) for version in message.version_list]
        readers = "".join(f"\n        {function}," for function in functions)
        tables.append(f"    {message.api_key}: ({message.versions.low}, ({readers}\n    )),")
        names.append(f"    {message.api_key}: {type_name(message.name)!r},")
    imports = sorted(writer.used, key=lambda name: (not name.isupper(), not name[0].isupper(), name.lower()))
    lines = [header("protocol/specs"),
             '"""Kafka\'s JSON text of every metadata record version, read straight from the record body.',
             "",
             "``WRITERS[api_key]`` is (lowest version, readers by version from the lowest); a reader takes",
             "the body and its start and returns the JSON text of the record's data and the position after",
             "it.",
             '"""',
             "",
             "from __future__ import annotations",
             "",
             "from collections.abc import Callable",
             "from struct import Struct as _Packer",
             "",
             "from kafka_admin_kraft.dump.json_text import ("]
    lines += [f"    {name}," for name in imports]
    lines += [")", ""]
    lines += [f"{name} = _Packer({fmt!r})" for fmt, name in writer.formats.items()]
    lines += [f"{name}: dict[bytes, str] = {{}}" for name in writer.caches]
    for function in writer.functions:
        lines += ["", "", function]
    lines += ["", "",
              "TYPE_NAMES: dict[int, str] = {",
              *names,
              "}",
              '"""Api key -> Kafka\'s ``MetadataRecordType`` constant, as the decoder prints it."""',
              "",
              "WRITERS: dict[int, tuple[int, tuple[Callable[[bytes, int], tuple[str, int]], ...]]] = {",
              *tables,
              "}"]
    return "\n".join(lines) + "\n"


def outputs() -> dict[Path, str]:
    """The generated file and its content."""
    return {OUTPUT: generate_module(metadata_specs())}
