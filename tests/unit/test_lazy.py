"""Package names loaded on first use: the module behind a name is imported when the name is first
read, never before, and the name is then kept in the package."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = """
from kafka_admin_kraft.lazy import lazy_names

_LAZY = {"VALUE": "lazypkg.heavy"}
__getattr__, __dir__ = lazy_names(__name__, _LAZY)
"""


def run(tmp_path: Path, code: str) -> str:
    (tmp_path / "lazypkg").mkdir(exist_ok=True)
    (tmp_path / "lazypkg" / "__init__.py").write_text(PACKAGE)
    (tmp_path / "lazypkg" / "heavy.py").write_text("print('heavy loaded')\nVALUE = 42\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                            check=True)
    return result.stdout


def test_a_name_loads_its_module_at_first_use_only(tmp_path: Path) -> None:
    code = ("import sys, lazypkg; print('heavy' in sys.modules or 'lazypkg.heavy' in sys.modules); "
            "print('VALUE' in dir(lazypkg)); print(lazypkg.VALUE); print(lazypkg.VALUE); "
            "print('VALUE' in vars(lazypkg))")
    assert run(tmp_path, code).splitlines() == ["False", "True", "heavy loaded", "42", "42", "True"]


def test_an_unknown_name_is_an_attribute_error_naming_the_package(tmp_path: Path) -> None:
    code = "import lazypkg\ntry:\n    lazypkg.NOPE\nexcept AttributeError as exc:\n    print(exc)"
    assert run(tmp_path, code) == "module 'lazypkg' has no attribute 'NOPE'\n"


def test_the_records_package_loads_a_module_only_for_its_names() -> None:
    import kafka_admin_kraft.records as records

    code = ("import sys, kafka_admin_kraft.records as r; print(sorted(m for m in sys.modules "
            "if m.startswith('kafka_admin_kraft.records.')))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"
    assert records.SegmentWriter.__module__ == "kafka_admin_kraft.records.segment"
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        records.nothing  # noqa: B018
