"""The ``.properties`` text format as ``java.util.Properties`` reads and writes it: the one reader of
server, client and ``meta.properties`` files, and the writers of ``meta.properties`` and of the
configuration files the reference quorum runs with.

Reading is ``Properties.load(InputStream)``: the bytes are ISO-8859-1, ``#``/``!`` start a comment
line, a key ends at the first unescaped ``=``, ``:`` or blank, a line ending in an odd number of
backslashes continues on the next one (whose leading blanks are skipped), ``\\t \\n \\r \\f`` and
``\\uXXXX`` are escapes, any other escaped character is itself, and a repeated key keeps its last
value. A leaf module (it imports nothing of the package), so that reading a file stays cheap for the
tools' start-up.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Final, Literal

from kafka_admin_kraft.java_text import java_lines

# ---------------------------------------------------------------------------- load

_ESCAPED_IN: Final = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_BLANKS: Final = " \t\f"
"""What ``Properties.load`` counts as white space: not every ``str.isspace`` character."""


def _logical_lines(text: str) -> list[str]:
    """Natural lines joined where one ends in an odd number of backslashes; comments dropped."""
    logical: list[str] = []
    pending: str | None = None
    for raw in java_lines(text):
        line = raw.lstrip(_BLANKS)
        if pending is None and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        joined = line if pending is None else pending + line
        if trailing % 2:
            pending = joined[:-1]
        else:
            logical.append(joined)
            pending = None
    if pending is not None:
        logical.append(pending)
    return logical


def _unescape(text: str) -> str:
    """``Properties.loadConvert``; Java strings being UTF-16, a pair of escaped surrogates is one
    character."""
    out = []
    surrogates = False
    index = 0
    while index < len(text):
        char = text[index]
        index += 1
        if char != "\\" or index == len(text):
            if char != "\\":
                out.append(char)
            continue
        char = text[index]
        index += 1
        if char == "u":
            digits = text[index:index + 4]
            if len(digits) < 4 or any(c not in "0123456789abcdefABCDEF" for c in digits):
                raise ValueError("Malformed \\uxxxx encoding.")
            code = int(digits, 16)
            surrogates = surrogates or 0xD800 <= code <= 0xDFFF
            out.append(chr(code))
            index += 4
        else:
            out.append(_ESCAPED_IN.get(char, char))
    joined = "".join(out)
    if surrogates:
        joined = joined.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return joined


def _split_key(line: str) -> tuple[str, str]:
    """Key ends at the first unescaped ``=``, ``:`` or blank; one separator may follow."""
    index = 0
    while index < len(line):
        char = line[index]
        if char == "\\":
            index += 2
            continue
        if char in "=:" or char in _BLANKS:
            break
        index += 1
    key = line[:index]
    rest = line[index:].lstrip(_BLANKS)
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(_BLANKS)
    return key, rest


def parse_properties(text: str) -> dict[str, str]:
    """``Properties.load`` on decoded text: comments, continuations, ``=``/``:``/blank separators,
    escapes; a repeated key keeps its last value.

    Raises ValueError for a malformed ``\\u`` escape, as Java does.
    """
    props: dict[str, str] = {}
    for line in _logical_lines(text):
        key, value = _split_key(line)
        props[_unescape(key)] = _unescape(value)
    return props


def read_properties(path: str | os.PathLike[str]) -> dict[str, str]:
    """``Properties.load(InputStream)`` on a file: its bytes are ISO-8859-1, so any byte is a character.

    Raises OSError when the file cannot be read, ValueError for a malformed ``\\u`` escape.
    """
    return parse_properties(Path(path).read_bytes().decode("iso-8859-1"))


# ---------------------------------------------------------------------------- store

KeyOrder = Literal["sorted", "hash"]
_ESCAPED_OUT: Final = {"\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f", "=": "\\=", ":": "\\:",
                       "#": "\\#", "!": "\\!", "\\": "\\\\"}


def _escape(text: str, is_key: bool) -> str:
    """``Properties.saveConvert`` for a Writer: no \\u escapes, spaces escaped in keys and leading."""
    out = []
    for index, char in enumerate(text):
        if char == " ":
            out.append("\\ " if is_key or index == 0 else " ")
        else:
            out.append(_ESCAPED_OUT.get(char, char))
    return "".join(out)


def _java_string_hash(text: str) -> int:
    h = 0
    data = text.encode("utf-16-be")
    for index in range(0, len(data), 2):
        h = (31 * h + (data[index] << 8 | data[index + 1])) & 0xFFFFFFFF
    return h


def _hash_order(keys: list[str]) -> list[str]:
    """Iteration order of the 16-bin ConcurrentHashMap inside a fresh ``Properties`` (JDK 9-17)."""
    if len(keys) > 12:
        raise ValueError("hash order is reproduced for at most 12 keys (no table resize)")

    def bin_of(key: str) -> int:
        h = _java_string_hash(key)
        return (h ^ (h >> 16)) & 15

    return sorted(keys, key=bin_of)  # stable: insertion order within a bin


_DAYS: Final = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS: Final = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def java_date(moment: datetime) -> str:
    """``java.util.Date.toString()``: ``EEE MMM dd HH:mm:ss zzz yyyy`` in English."""
    local = moment if moment.tzinfo is not None else moment.astimezone()
    return (f"{_DAYS[local.weekday()]} {_MONTHS[local.month - 1]} {local.day:02d} "
            f"{local:%H:%M:%S} {local.tzname()} {local.year}")


def format_properties(props: Mapping[str, str], *, comment: str = "", moment: datetime | None = None,
                      key_order: KeyOrder = "sorted") -> str:
    """Text of ``Properties.store(writer, comment)``, as Kafka writes ``meta.properties``: comment
    line, date line, one line per key. JDK 18 and later sort the keys; ``key_order="hash"`` gives
    JDK 17's hash-table order."""
    keys = sorted(props) if key_order == "sorted" else _hash_order(list(props))
    lines = ["#" + comment, "#" + java_date(moment or datetime.now().astimezone())]
    lines += [f"{_escape(key, True)}={_escape(props[key], False)}" for key in keys]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------- configuration files

_SHORT_ESCAPES: Final = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f"}
_KEY_SEPARATORS: Final = "=: "


def _escape_sparingly(text: str, is_key: bool) -> str:
    """Only what ``load`` would otherwise read differently: backslashes, line breaks, a leading blank
    or comment mark, a separator inside a key; every character outside printable ASCII as
    ``\\uXXXX`` (UTF-16 units, as Java), so the text reads the same in any encoding."""
    out = []
    for index, char in enumerate(text):
        if char in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[char])
        elif (is_key and char in _KEY_SEPARATORS) or (index == 0 and char in (" #!" if is_key else " ")):
            out.append("\\" + char)
        elif " " <= char <= "~":
            out.append(char)
        else:
            units = char.encode("utf-16-be")
            out.extend(f"\\u{units[i] << 8 | units[i + 1]:04X}" for i in range(0, len(units), 2))
    return "".join(out)


def format_config_file(props: Mapping[str, str]) -> str:
    """A configuration file as a person writes one: ``key=value`` lines in the mapping's order, with
    no comment or date lines and escapes only where needed, so that :func:`parse_properties` (and
    Kafka) read back exactly ``props``. ASCII only."""
    return "".join(f"{_escape_sparingly(key, True)}={_escape_sparingly(value, False)}\n"
                   for key, value in props.items())
