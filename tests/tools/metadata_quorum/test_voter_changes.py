"""The run the voter commands share, on a pseudo-terminal: the question asked before a change, refused
and then accepted, with the progress and the result (through the installed `scale` against a reference
quorum)."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time

from console_scripts import console_script
from integration.harness import Cluster

from tools.metadata_quorum.quorum_util import PROG
from tools.metadata_quorum.voter_util import entry, follower, tool, voters


def on_a_terminal(cluster: Cluster, answer: str, *args: str) -> tuple[int, str]:
    """Run the tool with a pseudo-terminal for stdin, stdout and stderr; answer its question."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen([console_script(PROG), "--bootstrap-controller", cluster.bootstrap_servers(),
                                *args], stdin=terminal, stdout=terminal, stderr=terminal, close_fds=True)
    os.close(terminal)
    seen = b""
    answered = False
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([controller], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # the terminal closed: the process is gone
                break
            if not chunk:
                break
            seen += chunk
        if not answered and b"[y/N]: " in seen:
            os.write(controller, answer.encode() + b"\n")
            answered = True
        if process.poll() is not None and not ready:
            break
    os.close(controller)
    return process.wait(10), seen.decode(errors="replace").replace("\r\n", "\n")


def test_the_question_on_a_terminal(three: Cluster) -> None:
    cluster = three
    gone = follower(cluster)
    code, text = on_a_terminal(cluster, "n", "scale", "--remove", str(gone))
    assert code == 1
    assert "Change the voters in 1 step? [y/N]: n\nAborted: no change made\n" in text
    assert gone in voters(cluster)

    code, text = on_a_terminal(cluster, "y", "scale", "--remove", str(gone))
    assert code == 0, text
    assert f"Remove voter {gone} (directory id {cluster.nodes[gone].directory_id}) ... committed in" in text
    assert "Done: the voters are now" in text
    assert gone not in voters(cluster)
    restored = tool(cluster, "scale", "--add", entry(cluster, gone), "--yes")
    assert restored.returncode == 0, restored.stderr
