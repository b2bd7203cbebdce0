"""Text files as Java reads and writes them: ``BufferedReader.readLine``, ``Integer.parseInt`` and
``java.util.Properties`` (``load`` and ``store``), for Kafka's ``meta.properties``, checkpoint files
and server and client ``.properties`` files. A leaf module: reading a properties file loads nothing
else of the package."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Final, Literal

_LINE_BREAK: Final = re.compile(r"\r\n|\r|\n")


def java_lines(text: str) -> list[str]:
    """The lines ``readLine`` would return, without a phantom empty line after a final break."""
    lines = _LINE_BREAK.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


_JAVA_INT: Final = re.compile(r"[+-]?[0-9]+")


def parse_java_int(text: str, bits: int = 32) -> int:
    """``Integer.parseInt`` / ``Long.parseLong``: optional sign, ASCII digits, in range."""
    if not _JAVA_INT.fullmatch(text):
        raise ValueError(f"{text!r} is not a base-10 number")
    value = int(text)
    if not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
        raise ValueError(f"{text} does not fit in {bits} bits")
    return value


# ---------------------------------------------------------------------------- Properties

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
    """Text of ``Properties.store(writer, comment)``: comment line, date line, one line per key."""
    keys = sorted(props) if key_order == "sorted" else _hash_order(list(props))
    lines = ["#" + comment, "#" + java_date(moment or datetime.now().astimezone())]
    lines += [f"{_escape(key, True)}={_escape(props[key], False)}" for key in keys]
    return "\n".join(lines) + "\n"


_ESCAPED_IN: Final = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_WHITESPACE: Final = " \t\f"


def _logical_lines(text: str) -> list[str]:
    """Natural lines joined where one ends in an odd number of backslashes; comments dropped."""
    logical: list[str] = []
    pending: str | None = None
    for raw in java_lines(text):
        line = raw.lstrip(_WHITESPACE)
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
    out = []
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
            out.append(chr(int(digits, 16)))
            index += 4
        else:
            out.append(_ESCAPED_IN.get(char, char))
    return "".join(out)


def _split_key(line: str) -> tuple[str, str]:
    """Key ends at the first unescaped ``=``, ``:`` or whitespace; one separator may follow."""
    index = 0
    while index < len(line):
        char = line[index]
        if char == "\\":
            index += 2
            continue
        if char in "=:" or char in _WHITESPACE:
            break
        index += 1
    key = line[:index]
    rest = line[index:].lstrip(_WHITESPACE)
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(_WHITESPACE)
    return key, rest


def parse_properties(text: str) -> dict[str, str]:
    """``Properties.load``: comments, continuations, ``=``/``:``/space separators, escapes.

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
