"""The one command: every target is fresh, ``--check`` names stale files and changes nothing, a run
rewrites them and removes the modules the specs no longer generate."""

from __future__ import annotations

from pathlib import Path

from kafka_admin_kraft.codegen.__main__ import main, sync


def test_every_generated_file_is_fresh() -> None:
    assert main(["--check"]) == 0


def test_check_names_stale_files_and_a_run_repairs_them(tmp_path: Path) -> None:
    owned = tmp_path / "messages"
    owned.mkdir()
    fresh, changed, missing, leftover = (tmp_path / "fresh.py", owned / "changed.py", owned / "missing.py",
                                         owned / "leftover.py")
    fresh.write_text("same\n")
    changed.write_text("old\n")
    leftover.write_text("from a spec that is gone\n")
    files = {fresh: "same\n", changed: "new\n", missing: "made\n"}
    assert sync(files, [owned], check=True) == [changed, missing, leftover]
    assert changed.read_text() == "old\n" and not missing.exists() and leftover.exists()
    assert sync(files, [owned], check=False) == [changed, missing, leftover]
    assert changed.read_text() == "new\n" and missing.read_text() == "made\n" and not leftover.exists()
    assert sync(files, [owned], check=True) == []
