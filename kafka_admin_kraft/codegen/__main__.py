"""Regenerate every generated module of the product from the spec tree.

``python -m kafka_admin_kraft.codegen`` rewrites the files that differ from what the specs generate
and removes the modules of spec files that no longer exist; ``--check`` changes nothing and exits
non-zero, naming each stale file, when any would change.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path

from kafka_admin_kraft.codegen import PACKAGE_DIR, dump, pipeline, protocol

OWNED_DIRS = (protocol.MESSAGES_DIR,)
"""Folders whose every module is generated: a module the specs no longer generate is stale."""


def outputs() -> dict[Path, str]:
    """Every generated file of every target and its content."""
    return {**protocol.outputs(), **dump.outputs(), **pipeline.outputs()}


def sync(files: dict[Path, str], owned_dirs: Iterable[Path], *, check: bool) -> list[Path]:
    """The stale files: those whose content differs from ``files`` and the modules in ``owned_dirs``
    that ``files`` does not name. Unless ``check``, each is rewritten or removed."""
    stale = []
    for path, content in files.items():
        if not path.exists() or path.read_text() != content:
            stale.append(path)
            if not check:
                path.write_text(content)
    for directory in owned_dirs:
        for path in sorted(directory.glob("*.py")):
            if path not in files:
                stale.append(path)
                if not check:
                    path.unlink()
    return stale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kafka_admin_kraft.codegen",
                                     description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="fail if a generated file is out of date")
    args = parser.parse_args(argv)
    stale = sync(outputs(), OWNED_DIRS, check=args.check)
    if args.check and stale:
        for path in stale:
            print(f"stale generated file: {path.relative_to(PACKAGE_DIR.parent)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
