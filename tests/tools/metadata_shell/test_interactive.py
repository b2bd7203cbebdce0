"""The interactive shell, driven through a pseudo-terminal as a user types: the banner, completion
with Tab, history (recalled with the up arrow, listed by ``history``, kept in its file), Ctrl-C and
``exit``; and the completer itself."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import time
from pathlib import Path

import pytest
from console_scripts import console_script
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from unit.image.image_testlib import broker, feature, topic, write_snapshot

from kafka_admin_kraft.image import load_image, root_node
from kafka_admin_kraft_cli.metadata_shell.commands import State
from kafka_admin_kraft_cli.metadata_shell.interactive import ShellCompleter, complete_path

_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[\]P].*?(?:\x07|\x1b\\)|\x1b[=>()][0-9A-Za-z]?|\r")


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    return write_snapshot(tmp_path, [[feature("metadata.version", 33)], [broker(1)], [topic("orders")]])


class Terminal:
    """A process on a pseudo-terminal; ``expect`` waits for text in what it printed."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        self.process = subprocess.Popen(
            args, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True
        )
        os.close(slave)
        self.seen = ""

    def send(self, text: str) -> None:
        os.write(self.master, text.encode())

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return False
        try:
            data = os.read(self.master, 65536)
        except OSError:
            return False
        self.seen += _ESCAPES.sub("", data.decode(errors="replace"))
        return bool(data)

    def expect(self, text: str, timeout: float = 20.0, *, times: int = 1) -> None:
        deadline = time.monotonic() + timeout
        while self.seen.count(text) < times:
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} did not appear; the terminal shows:\n{self.seen[-2000:]}")
            self._read(0.2)

    def close(self) -> int:
        try:
            return self.process.wait(20)
        finally:
            os.close(self.master)


def test_a_session_through_a_pseudo_terminal(snapshot: Path, tmp_path: Path) -> None:
    history = tmp_path / "history"
    history.write_text("\n# 2026-01-01 00:00:00.000000\n+ls /local\n")  # a session before this one
    env = {
        **os.environ,
        "TERM": "xterm",
        "PROMPT_TOOLKIT_NO_CPR": "1",
        "COLUMNS": "80",
        "LINES": "24",
        "KAFKA_METADATA_SHELL_HISTORY": str(history),
    }
    terminal = Terminal([console_script("kafka-metadata-shell"), "--snapshot", str(snapshot)], env)
    try:
        terminal.expect("Loading...")
        terminal.expect("Starting...")
        terminal.expect("[ Kafka Metadata Shell ]")
        terminal.expect(">>")
        terminal.send("cat /image/features/meta\t")  # Tab completes the path
        terminal.expect("metadataVersion")
        terminal.send("\r")
        terminal.expect("Optional[4.4-IV2]")
        terminal.send("cd /image/topics/byN\t")  # a directory completes with its slash
        terminal.expect("byName/")
        terminal.send("\r")
        terminal.send("pw\t")  # Tab completes the command
        terminal.expect(">> pwd")
        terminal.send("\r")
        terminal.expect("/image/topics/byName\n")
        terminal.send("ls\r")
        terminal.expect("orders")
        terminal.send("\x1b[A\r")  # the up arrow recalls ls
        terminal.expect("orders", times=2)
        terminal.send("history\r")
        terminal.expect("    0  ls /local")
        terminal.expect("    5  history")
        terminal.send("\x03")  # Ctrl-C
        terminal.expect("^C")
        terminal.send("exit\r")
        assert terminal.close() == 0
    finally:
        if terminal.process.poll() is None:
            terminal.process.kill()
    saved = [line[1:].strip() for line in history.read_text().splitlines() if line.startswith("+")]
    # A command run again at once is kept once.
    assert saved == [
        "ls /local",
        "cat /image/features/metadataVersion",
        "cd /image/topics/byName/",
        "pwd",
        "ls",
        "history",
        "exit",
    ]


def test_end_of_input_leaves_the_shell(snapshot: Path, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "TERM": "xterm",
        "PROMPT_TOOLKIT_NO_CPR": "1",
        "KAFKA_METADATA_SHELL_HISTORY": str(tmp_path / "history"),
    }
    terminal = Terminal([console_script("kafka-metadata-shell"), "-s", str(snapshot)], env)
    try:
        terminal.expect(">>")
        terminal.send("\x04")  # Ctrl-D
        assert terminal.close() == 0
    finally:
        if terminal.process.poll() is None:
            terminal.process.kill()


def test_completion_of_commands_and_paths(snapshot: Path) -> None:
    state = State(root_node(load_image(snapshot), lambda: "v"))
    assert complete_path(state, "/image/cl") == [("/image/clientQuotas/", True), ("/image/cluster/", True)]
    assert complete_path(state, "/image/features/") == [("/image/features/metadataVersion", False)]
    assert complete_path(state, "/nope/x") == []
    completer = ShellCompleter(state)

    def texts(line: str) -> list[str]:
        return [
            c.text
            for c in completer.get_completions(Document(line), CompleteEvent(completion_requested=True))
        ]

    assert texts("h") == ["help ", "history "]
    assert texts("ls /image/topics/by") == ["/image/topics/byId/", "/image/topics/byName/"]
    assert texts("cd /local ") == []  # cd takes one path
    assert texts("man hi") == ["history"]
    assert texts("pwd ") == []
