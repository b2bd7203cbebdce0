"""The import rules of the tree: every import points down the layers below, and no modules import
each other in a circle.

Imports inside functions and under ``TYPE_CHECKING`` count as much as those at the top of a module:
a lazy import that runs upward is a circle waiting for the day someone hoists it. The layers are the
map of ``docs/architecture.md``, bottom up; a new package or top-level module takes its place here
in the same change that adds it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

INSTALLED_AS = {"kafka_admin_kraft_cli": "cli", "kafka_admin_kraft_server": "reference_server"}
"""The tools and the server install under names of their own (pyproject.toml)."""

TREES = ("kafka_admin_kraft", "reference_server", "cli")
"""Bottom up: the SDK, then the server and the tools, which import the SDK and never each other."""

LAYERS: Mapping[str, Sequence[frozenset[str]]] = {
    "kafka_admin_kraft": [
        frozenset({"java_text", "hosts", "features", "lazy"}),
        frozenset({"protocol"}),
        frozenset({"records", "config", "errors"}),
        frozenset({"storage", "values"}),
        frozenset({"acl"}),
        frozenset({"models"}),
        frozenset({"health_rules"}),
        frozenset({"health"}),
        frozenset({"voters"}),
        frozenset({"client"}),
        frozenset({"client.operations"}),
        frozenset({"admin", "dump", "pipeline"}),
        frozenset({"image"}),
        frozenset({"codegen"}),
        frozenset({""}),
    ],
    "reference_server": [
        frozenset({"faults", "sasl_base"}),
        frozenset({"kerberos", "oauth"}),
        frozenset({"raft", "connections", "security", "storage", "local", "kafka_line", "authorizer"}),
        frozenset({"settings", "peers", "handlers"}),
        frozenset({"startup", "broker"}),
        frozenset({"registration"}),
        frozenset({"runtime"}),
        frozenset({"__main__", "testing"}),
        frozenset({"forkserver"}),
        frozenset({""}),
    ],
    "cli": [
        frozenset({"output", "_click", "feature_tables"}),
        frozenset({"admin_options"}),
        frozenset({"kafka_storage", "kafka_features", "kafka_dump_log", "kafka_metadata_audit",
                   "metadata_quorum", "kafka_cluster", "metadata_shell", "kafka_metadata_diff"}),
        frozenset({"completions", "quorum_help"}),
        frozenset({""}),
    ],
}
"""Per tree, its units bottom up: a unit is a subpackage or a top-level module (``""`` is the tree's
own ``__init__``); ``client.operations`` is a unit of its own above the client it drives. A unit may
import units of lower layers of its tree, and any unit of a lower tree."""


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    where: str
    """``path:line`` of the import statement."""


def modules(root: Path, trees: Sequence[str]) -> dict[str, Path]:
    """Every module of the trees by dotted name (a package by its own name)."""
    found: dict[str, Path] = {}
    for tree in trees:
        for path in sorted((root / tree).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imports(root: Path, trees: Sequence[str]) -> Iterator[Import]:
    """Every import of one of the trees' modules by another, wherever in the module it is written."""
    known = modules(root, trees)

    def resolve(name: str) -> str | None:
        head, _, rest = name.partition(".")
        name = INSTALLED_AS.get(head, head) + ("." + rest if rest else "")
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    for source, path in known.items():
        seen: set[tuple[str, int]] = set()
        package = source if path.name == "__init__.py" else source.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                names = [f"{base}.{alias.name}" for alias in node.names]
            else:
                continue
            for name in names:
                target = resolve(name)
                if target is not None and target != source and (target, node.lineno) not in seen:
                    seen.add((target, node.lineno))
                    yield Import(source, target, f"{path.relative_to(root)}:{node.lineno}")


def circles(edges: Sequence[Import]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iteratively)."""
    graph: dict[str, set[str]] = {}
    for edge in edges:
        graph.setdefault(edge.source, set()).add(edge.target)
        graph.setdefault(edge.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def unit(module: str, layers: Mapping[str, Sequence[frozenset[str]]]) -> tuple[str, str]:
    """(tree, unit) of a module: the longest unit name of its tree that the module is or is in."""
    tree, _, rest = module.partition(".")
    names = {name for layer in layers[tree] for name in layer}
    parts = rest.split(".") if rest else []
    for size in range(len(parts), 0, -1):
        candidate = ".".join(parts[:size])
        if candidate in names:
            return tree, candidate
    return tree, "" if not parts else parts[0]


def height(module: str, layers: Mapping[str, Sequence[frozenset[str]]]) -> int | None:
    """The layer of a module's unit in its tree, or None when it has none."""
    tree, name = unit(module, layers)
    return next((level for level, layer in enumerate(layers[tree]) if name in layer), None)


def upward(
    edges: Sequence[Import], layers: Mapping[str, Sequence[frozenset[str]]], trees: Sequence[str]
) -> list[str]:
    """The imports that do not point down: into a higher or sibling unit of the same tree, or into
    a tree that is not below (the server and the tools are siblings). A unit without a layer is
    the business of ``test_every_unit_has_a_layer``."""
    wrong = []
    for edge in edges:
        source_tree, source_unit = unit(edge.source, layers)
        target_tree, target_unit = unit(edge.target, layers)
        if source_tree == target_tree and source_unit == target_unit:
            continue
        if source_tree == target_tree:
            source_height, target_height = height(edge.source, layers), height(edge.target, layers)
            ok = source_height is None or target_height is None or target_height < source_height
        else:
            ok = target_tree == trees[0]
        if not ok:
            wrong.append(f"{edge.where}: {edge.source} imports {edge.target}")
    return wrong


@pytest.fixture(scope="module")
def edges() -> list[Import]:
    return list(imports(ROOT, TREES))


def test_no_module_imports_another_in_a_circle(edges: list[Import]) -> None:
    assert circles(edges) == []


def test_every_import_points_down_the_layers(edges: list[Import]) -> None:
    assert upward(edges, LAYERS, TREES) == []


def test_every_unit_has_a_layer() -> None:
    assert [module for module in modules(ROOT, TREES) if height(module, LAYERS) is None] == []


def test_the_walk_sees_lazy_imports_circles_and_upward_imports(tmp_path: Path) -> None:
    """The checks above pass only if the walk can see what they forbid: a made-up tree with one
    lazy upward import that closes a circle, and one import between sibling trees."""
    (tmp_path / "low").mkdir()
    (tmp_path / "low" / "__init__.py").write_text("")
    (tmp_path / "low" / "base.py").write_text("def f():\n    from low.top import g\n    return g\n")
    (tmp_path / "low" / "top.py").write_text("from . import base\n\ndef g():\n    return base\n")
    (tmp_path / "side").mkdir()
    (tmp_path / "side" / "__init__.py").write_text("import other.x\n")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "__init__.py").write_text("")
    (tmp_path / "other" / "x.py").write_text("from low import base\n")
    trees = ("low", "side", "other")
    layers = {
        "low": [frozenset({"base"}), frozenset({"top"}), frozenset({""})],
        "side": [frozenset({""})],
        "other": [frozenset({"x"}), frozenset({""})],
    }
    found = list(imports(tmp_path, trees))
    assert circles(found) == [["low.base", "low.top"]]
    assert upward(found, layers, trees) == [
        "low/base.py:2: low.base imports low.top",
        "side/__init__.py:1: side imports other.x",
    ]
