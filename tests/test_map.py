"""A module's tests are found by its path: each module of the SDK, the server and the tools has a test
file named after it (or after a package that holds it) in the folder that mirrors its own, or a row
in the table of ``docs/architecture.md`` that says where it is tested instead. So the map stays true
as modules come and go: a new module without either fails here, and so does a row that names a module
or a test that is gone."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAP = ROOT / "docs" / "architecture.md"
TABLE_MARK = "<!-- test-map -->"
"""The line above the table of modules tested through others."""
TREES = ("kafka_admin_kraft", "reference_server", "cli")


def mirror(module: Path) -> list[tuple[Path, str]]:
    """(folder, name) pairs whose ``test_<name>.py`` or ``test_<name>_*.py`` tests ``module``: its own
    name in the mirrored folder, or the name of a package it is in, in the folder above that."""
    tree, *parts = module.with_suffix("").parts
    if tree == "kafka_admin_kraft" and parts[0] == "pipeline":
        base, parts = Path("tests/pipeline"), parts[1:]  # they need Spark
    else:
        base = {
            "kafka_admin_kraft": Path("tests/unit"),
            "reference_server": Path("tests/unit/reference_server"),
            "cli": Path("tests/tools"),
        }[tree]
    names = [part.strip("_") if part == "__main__" else part for part in parts]
    return [(base.joinpath(*names[: i - 1]), names[i - 1]) for i in range(len(names), 0, -1)]


def has_own_tests(module: Path) -> bool:
    return any(
        (ROOT / folder / f"test_{name}.py").is_file() or any((ROOT / folder).glob(f"test_{name}_*.py"))
        for folder, name in mirror(module)
    )


def table() -> list[tuple[list[str], list[str]]]:
    """The rows below the mark: (module patterns, where they are tested), each a list of the cell's
    backquoted paths."""
    lines = MAP.read_text().splitlines()
    start = lines.index(TABLE_MARK) + 3  # the mark, the header, the rule
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        modules, tests = line.strip("|").split("|")
        rows.append((re.findall(r"`([^`]+)`", modules), re.findall(r"`([^`]+)`", tests)))
    return rows


def modules() -> list[Path]:
    return [
        path.relative_to(ROOT)
        for tree in TREES
        for path in sorted((ROOT / tree).rglob("*.py"))
        if path.name != "__init__.py"
    ]


def test_every_module_has_tests_of_its_own_or_a_row_in_the_map() -> None:
    patterns = [pattern for row_modules, _ in table() for pattern in row_modules]
    assert [
        str(module)
        for module in modules()
        if not has_own_tests(module) and not any(module.match(pattern) for pattern in patterns)
    ] == []


def test_the_map_names_modules_and_tests_that_exist() -> None:
    rows = table()
    assert rows
    for row_modules, tests in rows:
        assert row_modules and tests, f"an empty cell in the row of {row_modules}"
        for pattern in row_modules:
            assert any(module.match(pattern) for module in modules()), f"{pattern} matches no module"
        for test in tests:
            assert list(ROOT.glob(test)), f"{test} does not exist"


def test_mirror_names_the_folder_of_the_module_and_of_each_package_it_is_in() -> None:
    assert mirror(Path("kafka_admin_kraft/protocol/messages/vote.py")) == [
        (Path("tests/unit/protocol/messages"), "vote"),
        (Path("tests/unit/protocol"), "messages"),
        (Path("tests/unit"), "protocol"),
    ]
    assert mirror(Path("kafka_admin_kraft/pipeline/audit.py")) == [(Path("tests/pipeline"), "audit")]
    assert mirror(Path("cli/metadata_quorum/scale.py"))[0] == (Path("tests/tools/metadata_quorum"), "scale")
    assert mirror(Path("kafka_admin_kraft/codegen/__main__.py"))[0] == (Path("tests/unit/codegen"), "main")
