"""Text as Java reads it: ``BufferedReader.readLine`` and ``Integer.parseInt`` / ``Long.parseLong``,
for Kafka's checkpoint files (``quorum-state``, ``partition.metadata``, ``leader-epoch-checkpoint``)
and for the numbers in configuration files. ``.properties`` files are
:mod:`kafka_admin_kraft.config.properties`. A leaf module: it imports nothing of the package."""

from __future__ import annotations

import re
from typing import Final

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
