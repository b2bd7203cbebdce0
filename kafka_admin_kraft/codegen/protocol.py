"""The protocol package's generated modules: plain, straight-line Python codecs from the specs
(``protocol/specs/*.kspec``), the API keys named from them and the error table
(``protocol/specs/errors.tsv``).

Each struct gets one encoder and one decoder per distinct wire layout (versions with identical
layouts share a function), named after the struct and the first version with that layout
(``_e_DescribeQuorumResponse_v2``), so a new version adds functions without renaming the others. Runs
of fixed-width fields are packed and unpacked with one ``struct.Struct``, named after its format
(``_F_iqqq``); everything else calls the helpers in ``primitives``. The functions keep the index of the
current field in a local ``f`` so that failures can be reported with a field path and offset. The
specs' comments become the docstrings of messages, structs and fields.

Decoders have fast paths for the common case, each falling back to the code above wherever its
condition fails, so that tagged fields and bad input come out exactly as without it: an array of
structs made of fixed-width fields only is read with one ``iter_unpack`` when no element carries
tagged fields, and a compact string or bytes value with a one-byte length is sliced inline.

A uuid field is a ``UuidField`` over the slot ``_<name>``: decoders store the 16 wire bytes there and
the first read makes the ``Uuid``, so a decoded struct costs no uuid object until one is asked for;
encoders write the bytes from the slot, whichever it holds. Values given to the constructor or the
field must be ``Uuid`` objects (bytes are refused, as only the wire puts bytes there).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

from kafka_admin_kraft.codegen import PACKAGE_DIR, header
from kafka_admin_kraft.protocol.spec import (
    FIXED,
    PY_TYPES,
    SPEC_DIR,
    FieldSpec,
    MessageSpec,
    load_specs,
    snake_case,
)

PROTOCOL_DIR = PACKAGE_DIR / "protocol"
MESSAGES_DIR = PROTOCOL_DIR / "messages"
"""Every module in it is generated, one per spec file besides the package's ``__init__``."""
ERROR_TABLE = SPEC_DIR / "errors.tsv"
ERROR_MODULE = PROTOCOL_DIR / "error_codes.py"
API_KEY_MODULE = PROTOCOL_DIR / "api_keys.py"

MIN_SIZE = {"string": (2, 1), "bytes": (4, 1), "records": (4, 1)}  # classic, compact
FORMAT_NAMES = {"?": "o", "16s": "u"}
"""Format codes that are no identifier characters, as they appear in a packer's name."""


@dataclass
class StructInfo:
    """A struct of one message: its Python name, fields and the versions in which it is reachable."""

    name: str
    qualname: str
    fields: list[FieldSpec]
    versions: set[int] = field(default_factory=set)
    doc: str = ""


def _present(spec: FieldSpec, version: int) -> bool:
    return version in spec.versions and not spec.tagged_at(version)


def _nullable_anywhere(spec: FieldSpec) -> bool:
    return not spec.nullable.is_empty() or spec.default == "null" or spec.type == "records"


def _slot(spec: FieldSpec) -> str:
    """The slot a decoder fills: a uuid field's is ``_<name>``, holding the wire bytes until the
    property ``<name>`` first makes them a ``Uuid``; every other field's is its name."""
    name = snake_case(spec.name)
    return f"_{name}" if spec.type == "uuid" else name


def _default_expr(spec: FieldSpec, struct_name: str | None) -> str:
    """Python expression of a field's default value."""
    default = spec.default
    if spec.is_array:
        return "None" if default == "null" else "[]"
    if spec.is_struct:
        return "None" if default == "null" else f"{struct_name}()"
    kind = spec.type
    if default is None or default == "":
        return {"bool": "False", "float64": "0.0", "uuid": "ZERO_UUID", "string": '""',
                "bytes": 'b""', "records": "None"}.get(kind, "0")
    if default == "null":
        return "None"
    if kind == "bool":
        return "True" if default.lower() == "true" else "False"
    if kind == "string":
        return repr(default)
    if kind == "float64":
        return repr(float(default))
    return str(int(default, 0))


class MessageGenerator:
    """Emits the classes and codec functions of one message."""

    def __init__(self, message: MessageSpec, file_doc: str = "", fast_paths: bool = True) -> None:
        self.message = message
        self.fast_paths = fast_paths
        """Whether decoders get their fast paths (arrays of fixed-width structs, short compact
        strings and bytes); without them, the reference the fast paths are tested against."""
        self.versions = message.version_list
        self.functions: list[str] = []
        self.tables: list[str] = []
        self.formats: dict[str, str] = {}
        self.top = StructInfo(message.name, message.name, message.fields, set(self.versions),
                              message.doc or file_doc)
        self.structs = {struct.name: StructInfo(struct.name, f"{message.name}.{struct.name}", struct.fields,
                                                doc=struct.doc)
                        for struct in message.structs()[1:]}
        for version in self.versions:
            self._reach(self.top, version)
        # Function name per (struct name, version), filled bottom-up.
        self.encoders: dict[tuple[str, int], str] = {}
        self.decoders: dict[tuple[str, int], str] = {}
        self._bodies: dict[str, str] = {}

    # -- structure -------------------------------------------------------------------------
    def _reach(self, info: StructInfo, version: int) -> None:
        info.versions.add(version)
        for spec in info.fields:
            if spec.is_struct and version in spec.versions:
                self._reach(self.structs[spec.element_type], version)

    def _struct_order(self) -> list[StructInfo]:
        """Structs with the ones they contain first, the message itself last."""
        order: list[StructInfo] = []
        seen: set[str] = set()

        def visit(info: StructInfo) -> None:
            for spec in info.fields:
                if spec.is_struct and spec.element_type not in seen:
                    seen.add(spec.element_type)
                    visit(self.structs[spec.element_type])
            order.append(info)

        visit(self.top)
        return order

    def flexible(self, version: int) -> bool:
        return version in self.message.flexible

    def pytype(self, spec: FieldSpec) -> str:
        base = self.structs[spec.element_type].qualname if spec.is_struct else PY_TYPES[spec.element_type]
        text = f"list[{base}]" if spec.is_array else base
        return f"{text} | None" if _nullable_anywhere(spec) else text

    def default(self, spec: FieldSpec) -> str:
        qual = self.structs[spec.element_type].qualname if spec.is_struct else None
        return _default_expr(spec, qual)

    def struct_format(self, fmt: str) -> str:
        """The module-level packer of a ``struct`` format, named after the format."""
        name = self.formats.get(fmt)
        if name is None:
            codes = fmt.lstrip(">")
            for code, letter in FORMAT_NAMES.items():
                codes = codes.replace(code, letter)
            name = f"_F_{codes}"
            self.formats[fmt] = name
        return name

    # -- code --------------------------------------------------------------------------------
    def generate(self) -> tuple[str, list[str]]:
        """Source of the class (with nested classes) and of the codec functions."""
        order = self._struct_order()
        for info in order:
            for version in sorted(info.versions):
                self.encoders[(info.name, version)] = self._function("e", info, version)
                self.decoders[(info.name, version)] = self._function("d", info, version)
        return self._class(self.top, 0), self.functions

    def _function(self, kind: str, info: StructInfo, version: int) -> str:
        body, table = (self._encoder_body if kind == "e" else self._decoder_body)(info, version)
        key = f"{kind}|{info.qualname}|{body}|{table}"
        name = self._bodies.get(key)
        if name is not None:
            return name
        # Versions come in ascending order: the first one with this layout names the function.
        name = f"_{kind}_{info.qualname.replace('.', '_')}_v{version}"
        self._bodies[key] = name
        table_name = f"_T{name}"
        self.tables.append(f"{table_name}: tuple[FieldEntry, ...] = {table}")
        if kind == "e":
            head = f"def {name}(o: {info.qualname}, out: bytearray) -> None:"
            tail = ["    except _ENCODE_ERRORS as exc:",
                    f"        raise encode_failure(exc, o, {table_name}, f, i) from None"]
            prologue = ["    f = 0", "    i = -1", "    try:"]
            epilogue: list[str] = []
        else:
            head = f"def {name}(buf: bytes, pos: int) -> tuple[{info.qualname}, int]:"
            prologue = [f"    o = _new({info.qualname})", "    f = 0", "    i = -1", "    try:"]
            tail = ["    except _DECODE_ERRORS as exc:",
                    f"        raise decode_failure(exc, buf, pos, {table_name}, f, i) from None"]
            epilogue = ["    return o, pos"]
        lines = [head, *prologue, *body.splitlines(), *tail, *epilogue]
        self.functions.append("\n".join(lines))
        return name

    # Field layout of one struct version: the groups and single fields, in wire order.
    def _layout(self, info: StructInfo, version: int) -> list[list[FieldSpec]]:
        layout: list[list[FieldSpec]] = []
        run: list[FieldSpec] = []
        for spec in info.fields:
            if not _present(spec, version):
                continue
            if spec.type in FIXED:
                run.append(spec)
                continue
            if run:
                layout.append(run)
                run = []
            layout.append([spec])
        if run:
            layout.append(run)
        return layout

    def _encoder_body(self, info: StructInfo, version: int) -> tuple[str, str]:
        flexible = self.flexible(version)
        lines: list[str] = []
        table: list[str] = []

        def step(label: str, is_array: bool = False, group: str = "()") -> None:
            lines.append(f"f = {len(table)}")
            table.append(f"({label!r}, {is_array}, {group})")

        for spec in info.fields:
            if version in spec.versions or spec.ignorable:
                continue
            if spec.tagged_at(version):
                continue
            step(spec.name)
            lines.append(f"if {self._not_default(spec, 'o.' + snake_case(spec.name))}:")
            lines.append(f"    raise absent_field({version})")
        for group in self._layout(info, version):
            first = group[0]
            if first.type in FIXED:
                fmt = ">" + "".join(FIXED[s.type][0] for s in group)
                members = "(" + "".join(f"({s.name!r}, {FIXED[s.type][1]}, {FIXED[s.type][0]!r}), "
                                        for s in group) + ")"
                step(first.name, False, members)
                for n, s in enumerate(group):
                    if s.type == "uuid":  # the wire bytes a decoder left, or the Uuid's
                        # (``__class__``: half the time of ``isinstance``; mypy cannot narrow to Uuid by it)
                        lines += [f"w{n} = o.{_slot(s)}", f"if w{n}.__class__ is not bytes:",
                                  f"    w{n} = w{n}._bytes  # type: ignore[union-attr]"]
                args = ", ".join(f"w{n}" if s.type == "uuid" else f"o.{snake_case(s.name)}"
                                 for n, s in enumerate(group))
                lines.append(f"out += {self.struct_format(fmt)}.pack({args})")
                continue
            step(first.name, first.is_array)
            lines += self._encode_value(first, version, f"o.{snake_case(first.name)}", "out")
        step("<tagged fields>")
        if flexible:
            lines += self._encode_tags(info, version)
        else:
            lines.append("if o._unknown_tagged_fields:")
            lines.append(f"    raise EncodeError('tagged fields need a flexible version, not {version}')")
        body = "\n".join("        " + line for line in lines)
        return body, "(" + "".join(t + ", " for t in table) + ")"

    def _not_default(self, spec: FieldSpec, expr: str) -> str:
        default = self.default(spec)
        if default == "None":
            return f"{expr} is not None"
        if default == "[]":
            return f"{expr}"
        if default == "False":
            return f"{expr}"
        if default == "True":
            return f"not {expr}"
        return f"{expr} != {default}"

    def _writer(self, kind: str, nullable: bool, compact: bool) -> str:
        name = {"string": "string", "bytes": "bytes", "records": "bytes"}[kind]
        return "write_" + ("compact_" if compact else "") + ("nullable_" if nullable else "") + name

    def _field_compact(self, spec: FieldSpec, version: int) -> bool:
        if spec.flexible is not None:
            return version in spec.flexible
        return self.flexible(version)

    def _encode_value(self, spec: FieldSpec, version: int, expr: str, out: str) -> list[str]:
        compact = self._field_compact(spec, version)
        nullable = version in spec.nullable
        kind = spec.element_type
        if not spec.is_array:
            if spec.is_struct:
                encoder = self.encoders[(kind, version)]
                if nullable:
                    return [f"if {expr} is None:", f"    {out}.append(0xFF)", "else:",
                            f"    {out}.append(1)", f"    {encoder}({expr}, {out})"]
                return [f"{encoder}({expr}, {out})"]
            if kind in FIXED:
                fmt = ">" + FIXED[kind][0]
                value = f"{expr}.bytes" if kind == "uuid" else expr
                return [f"{out} += {self.struct_format(fmt)}.pack({value})"]
            return [f"{self._writer(kind, nullable, compact)}({out}, {expr})"]
        v = "v_" + expr.rsplit(".", 1)[-1]
        item = "item_" + expr.rsplit(".", 1)[-1]
        lines = [f"{v} = {expr}"]
        if nullable:
            lines += [f"if {v} is None:", f"    write_array_length({out}, -1, {compact})", "else:"]
            pad = "    "
        else:
            pad = ""
            if _nullable_anywhere(spec):
                lines += [f"if {v} is None:", "    raise EncodeError('null where the field is not nullable')"]
        lines.append(f"{pad}write_array_length({out}, len({v}), {compact})")
        if spec.is_struct:
            encoder = self.encoders[(kind, version)]
            lines += [f"{pad}for i, {item} in enumerate({v}):", f"{pad}    {encoder}({item}, {out})"]
        elif kind in FIXED and kind != "uuid":
            lines.append(f"{pad}{out} += pack('>%d{FIXED[kind][0]}' % len({v}), *{v})")
        elif kind == "uuid":
            lines += [f"{pad}for i, {item} in enumerate({v}):", f"{pad}    {out} += {item}.bytes"]
        else:
            writer = self._writer(kind, False, compact)
            lines += [f"{pad}for i, {item} in enumerate({v}):", f"{pad}    {writer}({out}, {item})"]
        lines.append("i = -1")
        return lines

    def _known_tags(self, info: StructInfo) -> list[FieldSpec]:
        return sorted((s for s in info.fields if s.tag is not None), key=lambda s: s.tag or 0)

    def _encode_tags(self, info: StructInfo, version: int) -> list[str]:
        tagged = [s for s in self._known_tags(info) if version in s.tagged]
        all_tags = sorted({s.tag for s in self._known_tags(info) if s.tag is not None})
        if not tagged and not all_tags:
            return ["if o._unknown_tagged_fields:",
                    "    write_tagged_fields(out, o._unknown_tagged_fields)",
                    "else:",
                    "    out.append(0)"]
        lines = ["tags: list[RawTaggedField] = []"]
        for spec in tagged:
            expr = f"o.{snake_case(spec.name)}"
            lines.append(f"if {self._not_default(spec, expr)}:")
            lines.append("    t = bytearray()")
            lines += ["    " + line for line in self._encode_value(spec, version, expr, "t")]
            lines.append(f"    tags.append(({spec.tag}, bytes(t)))")
        lines += ["unknown = o._unknown_tagged_fields or []",
                  "for tag, _ in unknown:",
                  f"    if tag in {tuple(all_tags)!r}:",
                  "        raise EncodeError(f'unknown tagged field {tag} clashes with a known tag')",
                  "write_tagged_fields(out, tags + unknown)"]
        return lines

    def _decoder_body(self, info: StructInfo, version: int) -> tuple[str, str]:
        flexible = self.flexible(version)
        lines: list[str] = []
        table: list[str] = []

        def step(label: str, is_array: bool = False, group: str = "()") -> None:
            lines.append(f"f = {len(table)}")
            table.append(f"({label!r}, {is_array}, {group})")

        for spec in info.fields:
            if not _present(spec, version):
                lines.append(f"o.{_slot(spec)} = {self.default(spec)}")
        for group in self._layout(info, version):
            first = group[0]
            if first.type in FIXED:
                fmt = ">" + "".join(FIXED[s.type][0] for s in group)
                size = sum(FIXED[s.type][1] for s in group)
                members = "(" + "".join(f"({s.name!r}, {FIXED[s.type][1]}, {FIXED[s.type][0]!r}), "
                                        for s in group) + ")"
                step(first.name, False, members)
                targets = [f"o.{_slot(s)}" for s in group]
                lines.append(f"{', '.join(targets)}, = {self.struct_format(fmt)}.unpack_from(buf, pos)")
                lines.append(f"pos += {size}")
                continue
            step(first.name, first.is_array)
            lines += self._decode_value(first, version, f"o.{_slot(first)}", "pos")
        step("<tagged fields>")
        if flexible:
            lines += self._decode_tags(info, version)
        else:
            lines.append("o._unknown_tagged_fields = None")
        body = "\n".join("        " + line for line in lines)
        return body, "(" + "".join(t + ", " for t in table) + ")"

    def _reader(self, kind: str, nullable: bool, compact: bool) -> str:
        return self._writer(kind, nullable, compact).replace("write_", "read_", 1)

    def _decode_value(self, spec: FieldSpec, version: int, target: str, pos: str) -> list[str]:
        compact = self._field_compact(spec, version)
        nullable = version in spec.nullable
        kind = spec.element_type
        if not spec.is_array:
            if spec.is_struct:
                decoder = self.decoders[(kind, version)]
                if nullable:
                    return [f"if buf[{pos}] >= 0x80:", f"    {target} = None", f"    {pos} += 1", "else:",
                            f"    {target}, {pos} = {decoder}(buf, {pos} + 1)"]
                return [f"{target}, {pos} = {decoder}(buf, {pos})"]
            if kind in FIXED:
                fmt = ">" + FIXED[kind][0]
                unpack = f"{self.struct_format(fmt)}.unpack_from(buf, {pos})[0]"
                return [f"{target} = {unpack}", f"{pos} += {FIXED[kind][1]}"]
            read = f"{target}, {pos} = {self._reader(kind, nullable, compact)}(buf, {pos})"
            if not compact or not self.fast_paths:
                return [read]
            # A length below 127 that the buffer holds is read inline; the helper does the rest,
            # nulls and failures included.
            value = f"buf[{pos} + 1:{pos} + k]"
            value = f"{value}.decode()" if kind == "string" else f"bytes({value})"
            return [f"if {pos} < len(buf) and 0 < (k := buf[{pos}]) < 0x80 and {pos} + k <= len(buf):",
                    f"    {target} = {value}", f"    {pos} += k", "else:", f"    {read}"]
        if spec.is_struct:
            min_size = 1
        elif kind in FIXED:
            min_size = FIXED[kind][1]
        else:
            min_size = MIN_SIZE[kind][1 if compact else 0]
        if compact:
            # One-byte counts (arrays below 127 elements) are read inline; the helper does the rest.
            lines = ["i = -1", f"n = buf[{pos}] - 1", "if n < 0x7F:", f"    {pos} += 1",
                     f"    if n * {min_size} > len(buf) - {pos}:",
                     f"        raise array_too_long(n, len(buf) - {pos}, {pos} - 1)",
                     "else:", f"    n, {pos} = read_array_length(buf, {pos}, True, {min_size})", "if n < 0:"]
        else:
            lines = ["i = -1", f"n, {pos} = read_array_length(buf, {pos}, False, {min_size})", "if n < 0:"]
        if nullable:
            lines.append(f"    {target} = None")
        else:
            lines.append(f"    raise DecodeError('null array where the field is not nullable', offset={pos})")
        lines.append("else:")
        if kind in FIXED and kind != "uuid":
            code = FIXED[kind][0]
            lines += [f"    {target} = list(unpack_from('>%d{code}' % n, buf, {pos}))",
                      f"    {pos} += {FIXED[kind][1]} * n"]
            return lines
        attr = target.rsplit(".", 1)[-1]
        fast = self._fixed_array(kind, version, attr, pos) if spec.is_struct and self.fast_paths else []
        if fast:
            lines += fast
            lines += ["    else:", f"        items_{attr} = []", "        for i in range(n):",
                      f"            item_{attr}, {pos} = {self.decoders[(kind, version)]}(buf, {pos})",
                      f"            items_{attr}.append(item_{attr})",
                      f"    {target} = items_{attr}", "    i = -1"]
            return lines
        if spec.is_struct:
            read = f"{self.decoders[(kind, version)]}(buf, {pos})"
        elif kind == "uuid":
            read = f"uuid_from_wire(buf[{pos}:{pos} + 16]), {pos} + 16"
        else:
            read = f"{self._reader(kind, False, compact)}(buf, {pos})"
        lines += [f"    items_{attr} = []", "    for i in range(n):", f"        item_{attr}, {pos} = {read}",
                  f"        items_{attr}.append(item_{attr})", f"    {target} = items_{attr}", "    i = -1"]
        return lines

    def _fixed_array(self, kind: str, version: int, attr: str, pos: str) -> list[str]:
        """The fast path of an array of structs whose elements are fixed-width at ``version``.

        Such an element is a run of fixed-width fields, then (in flexible versions) its tagged-field
        count. When every count is 0, which the check finds with one strided slice at C speed, all
        elements have the same size and one ``iter_unpack`` over the array reads them; the objects
        are filled inline. Otherwise (tagged fields, or an array running past the buffer) the lines
        that follow read element by element, so unknown tags and failures come out as they did.
        Returns no lines where the element has any variable-width field.
        """
        info = self.structs[kind]
        layout = self._layout(info, version)
        if len(layout) != 1 or layout[0][0].type not in FIXED:
            return []
        group = layout[0]
        flexible = self.flexible(version)
        size = sum(FIXED[s.type][1] for s in group)
        stride = size + 1 if flexible else size
        fmt = ">" + "".join(FIXED[s.type][0] for s in group) + ("x" if flexible else "")
        stop, item = f"stop_{attr}", f"item_{attr}"
        check = f"{stop} <= len(buf)"
        if flexible:
            check += f" and buf[{pos} + {size}:{stop}:{stride}] == bytes(n)"
        names = [f"a{n}" for n in range(len(group))]
        packer = self.struct_format(fmt)
        lines = [f"    {stop} = {pos} + {stride} * n",
                 f"    if {check}:",
                 f"        cls_{attr} = {info.qualname}",
                 f"        items_{attr} = []",
                 f"        for {', '.join(names)}, in {packer}.iter_unpack(buf[{pos}:{stop}]):",
                 f"            {item} = _new(cls_{attr})"]
        body: list[str] = []
        for spec in info.fields:
            if not _present(spec, version):
                body.append(f"{item}.{_slot(spec)} = {self.default(spec)}")
        body += [f"{item}.{_slot(spec)} = {name}" for name, spec in zip(names, group, strict=True)]
        body += [f"{item}._unknown_tagged_fields = None", f"items_{attr}.append({item})"]
        lines += ["            " + line for line in body]
        lines.append(f"        {pos} = {stop}")
        return lines

    def _decode_tags(self, info: StructInfo, version: int) -> list[str]:
        known = self._known_tags(info)
        tagged = [s for s in known if version in s.tagged]
        if not known:
            return ["if buf[pos] == 0:",
                    "    pos += 1",
                    "    o._unknown_tagged_fields = None",
                    "else:",
                    "    o._unknown_tagged_fields, pos = read_tagged_fields(buf, pos)"]
        lines = [
            "if buf[pos] == 0:",
            "    pos += 1",
            "    o._unknown_tagged_fields = None",
            "else:",
            "    count, pos = read_uvarint(buf, pos)",
            "    unknown: list[RawTaggedField] = []",
            "    for _ in range(count):",
            "        tag, pos = read_uvarint(buf, pos)",
            "        size, pos = read_uvarint(buf, pos)",
            "        end = pos + size",
            "        if end > len(buf):",
            "            raise DecodeError(f'tagged field {tag} claims {size} bytes, '",
            "                              f'{len(buf) - pos} left', offset=pos)",
        ]
        keyword = "if"
        for spec in tagged:
            lines.append(f"        {keyword} tag == {spec.tag}:")
            lines.append("            p = pos")
            value_lines = self._decode_value(spec, version, f"o.{_slot(spec)}", "p")
            lines += ["            " + line for line in value_lines]
            lines += ["            if p != end:",
                      f"                raise DecodeError(f'tagged field {spec.name} used {{p - pos}} of its "
                      "{size} bytes', offset=pos)"]
            keyword = "elif"
        invalid = sorted({s.tag for s in known if version not in s.tagged and s.tag is not None})
        if invalid:
            lines.append(f"        {keyword} tag in {tuple(invalid)!r}:")
            lines.append(f"            raise DecodeError(f'tag {{tag}} is not valid in version {version}', "
                         "offset=pos)")
            keyword = "elif"
        if keyword == "if":
            lines.append("        unknown.append((tag, bytes(buf[pos:end])))")
        else:
            lines += ["        else:", "            unknown.append((tag, bytes(buf[pos:end])))"]
        lines += ["        pos = end", "    o._unknown_tagged_fields = unknown"]
        return lines

    def _class(self, info: StructInfo, depth: int) -> str:
        pad = "    " * depth
        names = [snake_case(s.name) for s in info.fields]
        slots = "".join(f"{_slot(s)!r}, " for s in info.fields)
        msg = self.message
        lines = [f"{pad}class {info.name}(Struct):"]
        versions = sorted(info.versions)
        summary = _docstring(info.doc) or f"The {info.name} struct of {msg.name}."
        lines.append(f'{pad}    """{summary}')
        lines.append("")
        lines.append(f"{pad}    Used in versions {_ranges(versions)}; flexible versions: {msg.flexible}.")
        lines.append(f'{pad}    """')
        lines.append("")
        lines.append(f"{pad}    __slots__ = ({slots})")
        lines.append(f"{pad}    NAME = {info.qualname!r}")
        lines.append(f"{pad}    VERSIONS = ({msg.versions.low}, {msg.versions.high})")
        flexible_from = None if msg.flexible.is_empty() else msg.flexible.low
        lines.append(f"{pad}    FLEXIBLE_FROM = {flexible_from}")
        if info is self.top:
            lines.append(f"{pad}    KIND = {msg.kind!r}")
            if msg.api_key is not None:
                lines.append(f"{pad}    API_KEY = {msg.api_key}")
            if msg.listeners:
                lines.append(f"{pad}    LISTENERS = {tuple(msg.listeners)!r}")
            if msg.kind in ("request", "response"):
                headers = {v: self._header_version(v) for v in self.versions}
                lines.append(f"{pad}    HEADER_VERSIONS = {headers!r}")
        lines.append(f"{pad}    _FIELDS = ({''.join(f'{n!r}, ' for n in names)})")
        lines.append("")
        for spec in info.fields:
            if spec.type == "uuid":
                lines.append(f"{pad}    {_slot(spec)}: {self.pytype(spec)} | bytes")
                lines.append(f"{pad}    {snake_case(spec.name)} = UuidField()")
            else:
                lines.append(f"{pad}    {snake_case(spec.name)}: {self.pytype(spec)}")
            lines.append(f'{pad}    """{_field_doc(spec)}"""')
        if info is self.top:
            for nested in self.structs.values():
                lines.append("")
                lines.append(self._class(nested, depth + 1))
        lines.append("")
        params = []
        assigns = []
        for spec in info.fields:
            attr = snake_case(spec.name)
            default = self.default(spec)
            if default == "[]" or default.endswith("()"):
                params.append(f"{attr}: {self.pytype(spec)} = UNSET")
                assigns.append(f"self.{attr} = {default} if {attr} is UNSET else {attr}")
            else:
                params.append(f"{attr}: {self.pytype(spec)} = {default}")
                assigns.append(f"self.{attr} = {attr}")
        params.append("unknown_tagged_fields: list[RawTaggedField] | None = None")
        assigns.append("self._unknown_tagged_fields = unknown_tagged_fields")
        lines.append(f"{pad}    def __init__(")
        lines.append(f"{pad}        self,")
        lines.append(f"{pad}        *,")
        lines += [f"{pad}        {p}," for p in params]
        lines.append(f"{pad}    ) -> None:")
        lines += [f"{pad}        {a}" for a in assigns]
        return "\n".join(lines)

    def _header_version(self, version: int) -> int:
        for versions, header_version in self.message.header_versions:
            if version in versions:
                return header_version
        flexible = self.flexible(version)
        if self.message.kind == "request":
            return 2 if flexible else 1
        if self.message.name == "ApiVersionsResponse":
            return 0  # so that a client can read it whatever version it asked for
        return 1 if flexible else 0

    def registrations(self) -> list[str]:
        lines = []
        for info in [self.top, *self.structs.values()]:
            encoders = ", ".join(f"{v}: {self.encoders[(info.name, v)]}" for v in sorted(info.versions))
            decoders = ", ".join(f"{v}: {self.decoders[(info.name, v)]}" for v in sorted(info.versions))
            lines.append(f"{info.qualname}._ENCODERS = {{{encoders}}}")
            lines.append(f"{info.qualname}._DECODERS = {{{decoders}}}")
        return lines


def _ranges(versions: list[int]) -> str:
    if not versions:
        return "none"
    parts = []
    start = prev = versions[0]
    for v in versions[1:] + [-2]:
        if v != prev + 1:
            parts.append(str(start) if start == prev else f"{start}-{prev}")
            start = v
        prev = v
    return ", ".join(parts)


def _docstring(text: str) -> str:
    """Spec text made safe inside a triple-quoted string."""
    return text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')


def _field_doc(spec: FieldSpec) -> str:
    parts = [f"{spec.type}, versions {spec.versions}"]
    if not spec.nullable.is_empty():
        parts.append(f"nullable {spec.nullable}")
    if spec.tag is not None:
        parts.append(f"tag {spec.tag} in {spec.tagged}")
    if spec.ignorable:
        parts.append("ignorable")
    if spec.default is not None:
        parts.append(f"default {spec.default or repr('')}")
    layout = "; ".join(parts)
    return f"{_docstring(spec.about)} ({layout})" if spec.about else layout + "."


MODULE_PRELUDE = '''from __future__ import annotations

from struct import Struct as _Packer
from struct import pack, unpack_from

from kafka_admin_kraft.protocol.exceptions import DecodeError, EncodeError
from kafka_admin_kraft.protocol.message import (
    DECODE_FAILURES,
    ENCODE_FAILURES,
    UNSET,
    FieldEntry,
    Struct,
    UuidField,
    absent_field,
    decode_failure,
    encode_failure,
)
from kafka_admin_kraft.protocol.primitives import (
    ZERO_UUID,
    RawTaggedField,
    Uuid,
    array_too_long,
    read_array_length,
    read_bytes,
    read_compact_bytes,
    read_compact_nullable_bytes,
    read_compact_nullable_string,
    read_compact_string,
    read_nullable_bytes,
    read_nullable_string,
    read_string,
    read_tagged_fields,
    read_uvarint,
    uuid_from_wire,
    write_array_length,
    write_bytes,
    write_compact_bytes,
    write_compact_nullable_bytes,
    write_compact_nullable_string,
    write_compact_string,
    write_nullable_bytes,
    write_nullable_string,
    write_string,
    write_tagged_fields,
)

_DECODE_ERRORS = (DecodeError, *DECODE_FAILURES)
_ENCODE_ERRORS = (EncodeError, *ENCODE_FAILURES)
_new = object.__new__  # a struct whose slots the decoder fills in, skipping __init__
'''


def generate_module(stem: str, messages: list[MessageSpec], fast_paths: bool = True) -> str:
    """The generated module for one spec file (``fast_paths``: see ``MessageGenerator``)."""
    file_doc = messages[0].doc if messages else ""
    generators = [MessageGenerator(m, file_doc, fast_paths) for m in messages]
    classes: list[str] = []
    functions: list[str] = []
    tables: list[str] = []
    registrations: list[str] = []
    formats: dict[str, str] = {}
    for generator in generators:
        generator.formats = formats
        class_source, funcs = generator.generate()
        classes.append(class_source)
        functions += funcs
        tables += generator.tables
        registrations += generator.registrations()
    doc = _docstring(file_doc) or stem
    names = ", ".join(repr(m.name) for m in messages)
    parts = [header(f"protocol/specs/{stem}.kspec"), f'"""{doc}"""\n', MODULE_PRELUDE]
    parts.append(f"__all__ = [{names}]\n")
    parts += [f"{name} = _Packer({fmt!r})" for fmt, name in formats.items()]
    parts.append("")
    for source in classes:
        parts += ["", source, ""]
    parts += ["", *tables, ""]
    for source in functions:
        parts += ["", source, ""]
    parts += ["", *registrations]
    return "\n".join(parts).rstrip() + "\n"


def generate_index(specs: dict[str, list[MessageSpec]]) -> str:
    """``messages/__init__.py``: lazy access to every class plus lookup by api key."""
    entries = [(m.name, stem, m) for stem, ms in specs.items() for m in ms]
    lines = [header("protocol/specs/*.kspec"),
             '"""Every Kafka message, header and record the project speaks, one class each.',
             "",
             "Classes load on first use so that importing the package stays cheap.",
             '"""',
             "",
             "from __future__ import annotations",
             "",
             "import importlib",
             "from typing import TYPE_CHECKING, Any",
             "",
             "if TYPE_CHECKING:",
             "    from kafka_admin_kraft.protocol.message import Struct"]
    for name, stem, _ in sorted(entries):
        lines.append(f"    from kafka_admin_kraft.protocol.messages.{stem} import {name} as {name}")
    lines.append("")
    lines.append("_MODULES = {")
    lines += [f"    {name!r}: {stem!r}," for name, stem, _ in sorted(entries)]
    lines.append("}")
    for kind, var in (("request", "REQUEST_NAMES"), ("response", "RESPONSE_NAMES"),
                      ("metadata", "METADATA_RECORD_NAMES")):
        lines.append(f"{var} = {{")
        lines += [f"    {m.api_key}: {name!r},"
                  for name, _, m in sorted(entries, key=lambda e: e[2].api_key or 0) if m.kind == kind]
        lines.append("}")
    lines.append(f"__all__ = [{', '.join(repr(n) for n, _, _ in sorted(entries))}]")
    lines.append('''

def __getattr__(name: str) -> Any:
    if name == "METADATA_RECORDS":
        table = {key: metadata_record_class(key) for key in METADATA_RECORD_NAMES}
        globals()[name] = table
        return table
    stem = _MODULES.get(name)
    if stem is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{stem}"), name)
    globals()[name] = value
    return value


def _lookup(table: dict[int, str], api_key: int, what: str) -> type[Struct]:
    name = table.get(api_key)
    if name is None:
        raise KeyError(f"no {what} with api key {api_key}")
    cls: type[Struct] = globals().get(name) or __getattr__(name)  # loaded once, then a dict lookup
    return cls


def request_class(api_key: int) -> type[Struct]:
    """The request class of an API key (KeyError for keys the project does not speak)."""
    return _lookup(REQUEST_NAMES, api_key, "request")


def response_class(api_key: int) -> type[Struct]:
    """The response class of an API key."""
    return _lookup(RESPONSE_NAMES, api_key, "response")


def metadata_record_class(api_key: int) -> type[Struct]:
    """The metadata record class of a record api key (KeyError for record types not modelled)."""
    return _lookup(METADATA_RECORD_NAMES, api_key, "metadata record")''')
    return "\n".join(lines) + "\n"


def _class_name(error_name: str) -> str:
    """``NOT_CONTROLLER`` -> ``NotControllerError``; ``KAFKA_STORAGE_ERROR`` -> ``KafkaStorageError``."""
    name = "".join(part.capitalize() for part in error_name.lower().split("_"))
    return name if name.endswith("Error") else name + "Error"


def _doubled_name(error_name: str) -> str:
    """The class name with "Error" appended whatever the error's name ends with."""
    return "".join(part.capitalize() for part in error_name.lower().split("_")) + "Error"


def generate_errors(table_path: Path = ERROR_TABLE) -> str:
    """``error_codes.py``: Kafka's error table as data, an ``ErrorCode`` enum naming every code, and
    one exception class per code."""
    with table_path.open(newline="") as handle:
        rows = [row for row in csv.reader(handle, delimiter="\t") if row and not row[0].startswith("#")]
    columns, rows = rows[0], rows[1:]
    assert columns == ["code", "name", "retriable", "java_exception", "message"], columns
    lines = [header("protocol/specs/errors.tsv"),
             '"""Kafka\'s error codes: ``ErrorCode`` names each one and is its row of the table, and one',
             'exception class per code carries it."""',
             "",
             "from __future__ import annotations",
             "",
             "from enum import IntEnum",
             "",
             "from kafka_admin_kraft.protocol.exceptions import KafkaApiError",
             ""]
    for code, name, retriable, java_exception, message in rows:
        if int(code) == 0:
            continue
        lines += ["", f"class {_class_name(name)}(KafkaApiError):",
                  f'    """Error {code}: {message}"""' if message else f'    """Error {code}."""',
                  "", f"    code = {int(code)}", f"    name = {name!r}",
                  f"    retriable = {retriable == 'yes'}", f"    description = {message!r}",
                  f"    java_exception = {java_exception!r}", ""]
    doubled = [(_doubled_name(row[1]), _class_name(row[1])) for row in rows
               if int(row[0]) != 0 and _doubled_name(row[1]) != _class_name(row[1])]
    if doubled:
        lines += ["", "# The same classes under names with a doubled suffix, which stay importable."]
        lines += [f"{old} = {new}" for old, new in doubled]
        lines.append("")
    lines += ["",
              "class ErrorCode(IntEnum):",
              '    """Every Kafka error code by name, as Kafka\'s ``Errors``; a member is also its row of',
              '    the table: ``retriable``, the default ``message``, the ``java_exception`` Kafka\'s tools',
              '    print and the ``exception`` class the client raises."""',
              ""]
    lines += [f"    {name} = {int(code)}" for code, name, *_ in rows]
    lines += ["",
              "    @property",
              "    def code(self) -> int:",
              '        """The number on the wire."""',
              "        return int(self)",
              "",
              "    @property",
              "    def retriable(self) -> bool:",
              '        """Whether a client may send the request again."""',
              "        return _ROWS[self][0]",
              "",
              "    @property",
              "    def message(self) -> str:",
              '        """Kafka\'s default text for the code."""',
              "        return _ROWS[self][1]",
              "",
              "    @property",
              "    def java_exception(self) -> str:",
              '        """The class Kafka\'s Java client raises (in ``org.apache.kafka.common.errors``)."""',
              "        return _ROWS[self][2]",
              "",
              "    @property",
              "    def exception(self) -> type[KafkaApiError]:",
              '        """The exception class of the code."""',
              "        return _ROWS[self][3]",
              "",
              "",
              "_ROWS: dict[int, tuple[bool, str, str, type[KafkaApiError]]] = {"]
    for code, name, retriable, java_exception, message in rows:
        exception = "KafkaApiError" if int(code) == 0 else _class_name(name)
        row = f"({retriable == 'yes'}, {message!r}, {java_exception!r}, {exception})"
        lines.append(f"    {int(code)}: {row},")
    lines += ["}",
              "",
              "ERRORS: dict[int, ErrorCode] = {int(error): error for error in ErrorCode}",
              "ERRORS_BY_NAME: dict[str, ErrorCode] = dict(ErrorCode.__members__)",
              "",
              "",
              "def error_for_code(code: int, message: str | None = None) -> KafkaApiError:",
              '    """The exception for a non-zero error code, carrying the server\'s message if any."""',
              "    entry = ERRORS.get(code)",
              "    if entry is None:",
              "        error = UnknownServerError(message or f'unknown error code {code}')",
              "        error.code = code",
              "        return error",
              "    return entry.exception(message)",
              ""]
    return "\n".join(lines)


def _enum_member(name: str) -> str:
    """``DescribeQuorum`` -> ``DESCRIBE_QUORUM``, as Kafka names its enum constants."""
    return snake_case(name).upper()


def generate_api_keys(specs: dict[str, list[MessageSpec]]) -> str:
    """``api_keys.py``: the API keys and metadata record types, named from the specs."""
    messages = [m for ms in specs.values() for m in ms if m.api_key is not None]
    requests = sorted((m.api_key, _enum_member(m.name.removesuffix("Request")))
                      for m in messages if m.kind == "request" and m.api_key is not None)
    records = sorted((m.api_key, _enum_member(m.name))
                     for m in messages if m.kind == "metadata" and m.api_key is not None)
    lines = [header("protocol/specs/*.kspec"),
             '"""Kafka\'s API keys and metadata record types by name, so that no code spells a number."""',
             "",
             "from __future__ import annotations",
             "",
             "from enum import IntEnum",
             "",
             "",
             "class ApiKey(IntEnum):",
             '    """The key of every API the project speaks, named as in Kafka\'s ``ApiKeys``."""',
             ""]
    lines += [f"    {name} = {key}" for key, name in requests]
    lines += ["",
              "",
              "class MetadataRecordType(IntEnum):",
              '    """The type of every metadata record the project models, named as in Kafka\'s',
              '    ``MetadataRecordType``."""',
              ""]
    lines += [f"    {name} = {key}" for key, name in records]
    return "\n".join(lines) + "\n"


def outputs() -> dict[Path, str]:
    """Every generated file and its content."""
    specs = load_specs()
    files = {MESSAGES_DIR / f"{stem}.py": generate_module(stem, messages) for stem, messages in specs.items()}
    files[MESSAGES_DIR / "__init__.py"] = generate_index(specs)
    files[API_KEY_MODULE] = generate_api_keys(specs)
    files[ERROR_MODULE] = generate_errors()
    return files
