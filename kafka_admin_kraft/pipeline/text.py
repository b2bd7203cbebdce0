"""Text read from damaged files, made safe to show.

A damaged file can put any byte into a value the audit shows (a NUL in a cluster id, an escape
sequence in an error message). Control characters would cut a Markdown table, make an HTML or SVG
document invalid, or act on a terminal, so they are written as ``\\xNN`` escapes instead.
"""

from __future__ import annotations

import re
from typing import Final

_CONTROL: Final = re.compile("[\x00-\x1f\x7f-\x9f]")
"""Unicode's control characters (category Cc)."""
_LINE_BREAK: Final = re.compile("\r\n|[\r\n]")


def has_control(text: str) -> bool:
    return _CONTROL.search(text) is not None


def printable(text: str) -> str:
    """``text`` with every control character written as ``\\xNN``."""
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", text)


def one_line(text: str) -> str:
    """A table cell: line breaks become spaces (a multi-line message reads as one line), then
    :func:`printable`."""
    return printable(_LINE_BREAK.sub(" ", text))
