"""The project's console scripts as the tests run them: the ones installed beside the interpreter
running the tests, never whatever a ``PATH`` lookup happens to find on this machine."""

from __future__ import annotations

import sys
from pathlib import Path

BIN = Path(sys.executable).parent


def console_script(tool: str) -> str:
    """The path of ``tool`` in this interpreter's environment; a missing one is an install defect."""
    path = BIN / tool
    if not path.is_file():
        raise AssertionError(f"{tool} is not installed next to {sys.executable} (pip install -e .)")
    return str(path)
