"""Nodes forked by the fork server die with the process that started the quorum, however it dies (a
SIGKILL too, with a node stopped by SIGSTOP), and not when only the thread that started them ends; a
fork server shared by quorums outlives each; a node's exit status and a dead fork server are
reported; a node whose parent has already gone exits; the pipe fallback kills at end of file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kafka_admin_kraft_server.local import ForkServer, LocalQuorum


def alive(pid: int) -> bool:
    """The process exists and is not a zombie (an orphan's zombie may wait long for a reaper)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def until(condition: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


PARENT = '''
import os, signal, sys, time
from pathlib import Path
from kafka_admin_kraft_server.local import ForkServer, LocalQuorum

quorum = LocalQuorum(Path(sys.argv[1]), 3).format().start_all()
os.kill(quorum.nodes[2].process.pid, signal.SIGSTOP)
pids = [quorum.forkserver.process.pid] + [node.process.pid for node in quorum.nodes.values()]
print(" ".join(map(str, pids)), flush=True)
time.sleep(60)
'''


def test_a_sigkill_of_the_parent_kills_every_node_and_the_fork_server(tmp_path: Path) -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(tmp_path)], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert parent.stdout is not None
        pids = [int(pid) for pid in parent.stdout.readline().split()]
        assert len(pids) == 4 and all(alive(pid) for pid in pids)
        parent.kill()
        parent.wait(10)
        assert until(lambda: not any(alive(pid) for pid in pids)), [pid for pid in pids if alive(pid)]
    finally:
        parent.kill()
        parent.wait(10)


def test_nodes_started_from_a_thread_outlive_the_thread(tmp_path: Path) -> None:
    quorum = LocalQuorum(tmp_path, 1).format()
    try:
        thread = threading.Thread(target=quorum.start_all)
        thread.start()
        thread.join()
        process = quorum.nodes[1].process
        assert process is not None
        time.sleep(0.5)
        assert process.poll() is None and alive(process.pid)
        assert quorum.forkserver is not None
        forkserver = quorum.forkserver.process.pid
    finally:
        quorum.close()
    assert process.poll() == -signal.SIGKILL
    assert until(lambda: not alive(forkserver) and not alive(process.pid))


def test_nodes_die_with_a_killed_fork_server(tmp_path: Path) -> None:
    """PR_SET_PDEATHSIG: nothing is left to kill them, yet they end (a stopped one too)."""
    quorum = LocalQuorum(tmp_path, 2).format().start_all()
    try:
        processes = [node.process for node in quorum.nodes.values()]
        assert quorum.forkserver is not None and all(p is not None for p in processes)
        pids = [p.pid for p in processes if p is not None]
        os.kill(pids[0], signal.SIGSTOP)
        quorum.forkserver.process.kill()
        assert until(lambda: not any(alive(pid) for pid in pids)), [pid for pid in pids if alive(pid)]
        assert [p.wait(5) for p in processes if p is not None] == [-signal.SIGKILL] * 2
    finally:
        quorum.close()


def test_a_shared_fork_server_outlives_the_quorums_that_used_it(tmp_path: Path) -> None:
    shared = ForkServer(tmp_path)
    try:
        first = LocalQuorum(tmp_path / "a", 1, shared_forkserver=shared).format().start_all()
        process = first.nodes[1].process
        first.close()
        assert process is not None and process.poll() == -signal.SIGKILL and shared.process.poll() is None
        second = LocalQuorum(tmp_path / "b", 1, shared_forkserver=shared).format().start_all()
        assert second.forkserver is shared and second.nodes[1].running
        second.close()
    finally:
        shared.close()
    assert shared.process.returncode == 0


def test_a_node_that_refuses_to_start_exits_with_its_status_and_message(tmp_path: Path) -> None:
    quorum = LocalQuorum(tmp_path, 1)
    quorum.write_config(quorum.nodes[1])  # not formatted
    try:
        process = quorum.start(1).process
        assert process is not None and process.wait(30) == 1
        assert "Exiting Kafka due to fatal exception during startup: No readable meta.properties files " \
               "found." in quorum.nodes[1].output()
    finally:
        quorum.close()


def test_a_fork_server_that_died_is_reported_not_awaited(tmp_path: Path) -> None:
    server = ForkServer(tmp_path)
    server.process.kill()
    server.process.wait(10)
    with pytest.raises(RuntimeError, match="the fork server exited"):
        server.spawn(["--config", str(tmp_path / "missing")], tmp_path, tmp_path / "server.log")
    server.close()


def run_python(code: str, *args: str, **options: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=30,
                          check=False, **options)  # type: ignore[call-overload]


BIND = '''
import os, sys
from kafka_admin_kraft_server.forkserver import die_with_parent
read, write = os.pipe()
die_with_parent(int(sys.argv[1]) if len(sys.argv) > 1 else os.getppid(), read)
print("bound")
'''


def test_a_node_whose_parent_is_already_gone_exits() -> None:
    result = run_python(BIND, "1")  # the child's parent is this process, not init
    assert (result.returncode, result.stdout) == (1, "")
    result = run_python(BIND)
    assert (result.returncode, result.stdout) == (0, "bound\n")


WATCH = '''
import sys, time
from kafka_admin_kraft_server.forkserver import watch_lifeline
watch_lifeline(int(sys.argv[1]))
print("watching", flush=True)
time.sleep(60)
'''


def test_the_lifeline_kills_at_end_of_file() -> None:
    read, write = os.pipe()
    child = subprocess.Popen([sys.executable, "-c", WATCH, str(read)], pass_fds=(read,),
                             stdout=subprocess.PIPE, text=True)
    os.close(read)
    try:
        assert child.stdout is not None and child.stdout.readline() == "watching\n"
        time.sleep(0.2)
        assert child.poll() is None
        os.close(write)
        assert child.wait(10) == -signal.SIGKILL
    finally:
        child.kill()
        child.wait(10)
