"""``kafka-metadata-quorum --help`` without click: the kept texts are what click prints today, the
installed console script prints byte for byte what the click app prints at every width (kept or not),
and only the bare ``--help`` and ``-h`` take the short way."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from console_scripts import console_script

from kafka_admin_kraft_cli import quorum_help

CLICK_APP = "from kafka_admin_kraft_cli.metadata_quorum import main; main()"


def run(command: list[str], columns: str | None) -> subprocess.CompletedProcess[bytes]:
    env = {key: value for key, value in os.environ.items()
           if key not in ("COLUMNS", quorum_help.COMPLETE_VAR)}
    if columns is not None:
        env["COLUMNS"] = columns
    return subprocess.run(command, env=env, capture_output=True, timeout=60, stdin=subprocess.DEVNULL)


def test_the_kept_texts_are_what_click_prints() -> None:
    assert Path(quorum_help.__file__).read_text() == quorum_help.source(), (
        "run: python -m kafka_admin_kraft_cli.quorum_help")
    assert sorted(quorum_help.TEXTS) == [78, 98]


@pytest.mark.parametrize("columns", [None, "80", "100", "160", "90", "0", "wide"])
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_the_console_script_prints_what_click_prints(columns: str | None, flag: str) -> None:
    script = run([console_script("kafka-metadata-quorum"), flag], columns)
    click = run([sys.executable, "-c", CLICK_APP, flag], columns)
    assert (script.returncode, script.stderr) == (click.returncode, click.stderr) == (0, b"")
    assert script.stdout == click.stdout and script.stdout.startswith(b"usage: kafka-metadata-quorum [-h] ")


@pytest.mark.parametrize("columns", ["120", "0", "-5", "wide", None])
def test_the_terminal_width_is_shutils(monkeypatch: pytest.MonkeyPatch, columns: str | None) -> None:
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert quorum_help.terminal_columns() == shutil.get_terminal_size().columns


@pytest.mark.parametrize("columns, width", [(30, 50), (80, 78), (99, 97), (100, 98), (250, 98)])
def test_the_help_width_is_clicks(columns: int, width: int) -> None:
    assert quorum_help.help_width(columns) == width


def test_only_the_bare_help_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.delenv(quorum_help.COMPLETE_VAR, raising=False)
    assert quorum_help.kept_help(["kafka-metadata-quorum", "-h"]) == quorum_help.TEXTS[78]
    for args in ([], ["describe", "--help"], ["--help", "describe"], ["--hel"], ["--version"]):
        assert quorum_help.kept_help(["kafka-metadata-quorum", *args]) is None, args
    monkeypatch.setenv("COLUMNS", "90")
    assert quorum_help.kept_help(["kafka-metadata-quorum", "--help"]) is None
    monkeypatch.setenv("COLUMNS", "120")
    assert quorum_help.kept_help(["kafka-metadata-quorum", "--help"]) == quorum_help.TEXTS[98]
    monkeypatch.setenv(quorum_help.COMPLETE_VAR, "bash_complete")
    assert quorum_help.kept_help(["kafka-metadata-quorum", "--help"]) is None


def test_a_reader_gone_away_ends_it_quietly_as_click_does() -> None:
    ended = []
    env = {**os.environ, "COLUMNS": "80"}
    for command in ([console_script("kafka-metadata-quorum"), "--help"],
                    [sys.executable, "-c", CLICK_APP, "--help"]):
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        assert process.stdout is not None and process.stderr is not None
        process.stdout.close()  # before the tool writes: its write meets a closed pipe
        ended.append((process.wait(60), process.stderr.read()))
        process.stderr.close()
    assert ended == [(1, b""), (1, b"")]
