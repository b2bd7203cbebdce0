"""Progress shows on a terminal only: scripted output (pipes, files) never carries it."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

PROGRAM = """
import time
from kafka_admin_kraft_cli.output import progress, write
with progress("Waiting for controller 4 to catch up"):
    time.sleep(0.5)
write("done\\n")
"""


def run(stderr: int) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-c", PROGRAM], stdout=subprocess.PIPE, stderr=stderr,
                          timeout=30, check=True)


def test_progress_is_drawn_on_a_terminal() -> None:
    controller, terminal = pty.openpty()
    try:
        result = run(terminal)
        os.close(terminal)
        terminal = -1
        drawn = b""
        while True:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # the terminal's other end is closed: everything is read
                break
            if not chunk:
                break
            drawn += chunk
    finally:
        if terminal >= 0:
            os.close(terminal)
        os.close(controller)
    assert result.stdout == b"done\n"
    assert b"Waiting for controller 4 to catch up" in drawn


def test_no_progress_when_stderr_is_not_a_terminal() -> None:
    result = run(subprocess.PIPE)
    assert (result.stdout, result.stderr) == (b"done\n", b"")
