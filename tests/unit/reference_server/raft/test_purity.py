"""The consensus core stays a deterministic state machine: no sockets, threads, clocks or global
randomness anywhere in ``reference_server/raft``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

RAFT = Path(__file__).resolve().parents[4] / "reference_server" / "raft"
FORBIDDEN_MODULES = {
    "asyncio",
    "socket",
    "threading",
    "time",
    "os",
    "selectors",
    "subprocess",
    "secrets",
    "uuid",
    "datetime",
    "multiprocessing",
    "concurrent",
}


def sources() -> list[Path]:
    return sorted(RAFT.glob("*.py"))


def test_the_package_is_where_we_look() -> None:
    assert {"core.py", "api.py", "voters.py", "leader.py"} <= {path.name for path in sources()}


@pytest.mark.parametrize("path", sources(), ids=lambda path: path.name)
def test_no_io_clock_or_global_randomness(path: Path) -> None:
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                assert alias.name.split(".")[0] not in FORBIDDEN_MODULES, f"{path.name} imports {alias.name}"
        elif isinstance(node, ast.ImportFrom):
            module = (node.module or "").split(".")[0]
            assert module not in FORBIDDEN_MODULES, f"{path.name} imports from {node.module}"
            if module == "random":
                assert [alias.name for alias in node.names] == ["Random"], (
                    f"{path.name}: from random import ..."
                )
        elif (
            isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "random"
        ):
            assert node.attr == "Random", f"{path.name} uses random.{node.attr} (global randomness)"
        elif isinstance(node, ast.Attribute) and node.attr in {"urandom", "random_uuid"}:
            raise AssertionError(f"{path.name} uses {node.attr}")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "random"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "Uuid"
        ):
            raise AssertionError(f"{path.name} draws a random uuid")
