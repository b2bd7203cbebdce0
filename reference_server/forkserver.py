"""``python -m kafka_admin_kraft_server.forkserver --parent PID --root DIR``: one process that imports
the server once and forks a node per request, for ``local.LocalQuorum``.

Why: a node started as ``python -m kafka_admin_kraft_server`` spends about half a second of CPU
starting the interpreter and importing the server, and three of them on a two-core machine take
seconds; a forked node starts in milliseconds, as its own process with its own pid (a test kills,
stops and restarts it as any other), running ``__main__.main`` exactly as ``kraft-server`` does.

The protocol, one line each: the parent writes a JSON request ``{"argv": [...], "cwd": ..., "log":
..., "env": {...}}`` on stdin and reads ``started <pid>`` on stdout; whenever a node ends, ``exited
<pid> <code>`` follows (the code as ``subprocess`` gives it: ``-N`` for signal N).

Lifetime: no node outlives its parent, even one killed with SIGKILL.

* A node asks the kernel for SIGKILL when the fork server dies (``prctl(PR_SET_PDEATHSIG)``, Linux),
  right after fork and before the fork server answers ``started`` (a node paused at once is armed
  already); the signal fires when the *thread* that forked exits, and the fork server has only one.
  If the fork server died before that, the node's parent is already another process and the node
  exits at once. Elsewhere the node watches a pipe whose write end only the fork server holds, and
  kills itself at its end of file.
* The fork server reads its requests until end of file: its parent's end of the pipe closes when
  the parent exits, however it exits; it then kills its nodes with SIGKILL (a stopped node too) and
  leaves. With ``--pdeathsig`` (given by a parent that starts it from its main thread, as the
  signal would fire when any other thread ends) it asks for SIGKILL at its parent's death too.

A ``kraft-server`` run by a shell or a service manager has none of this: only ``LocalQuorum`` starts
nodes through here.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import logging
import os
import select
import signal
import sys
import threading
import traceback
from collections.abc import Sequence
from typing import Any

from .__main__ import main as server_main

PR_SET_PDEATHSIG = 1
"""From ``<linux/prctl.h>``."""


def set_pdeathsig(sig: int) -> bool:
    """Ask the kernel to send ``sig`` to this process when its parent thread ends (Linux only);
    whether it was set."""
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    return bool(libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0) == 0)


def watch_lifeline(fd: int) -> None:
    """Kill this process with SIGKILL once ``fd`` (a pipe's read end) reaches end of file, from a
    daemon thread."""

    def watch() -> None:
        while os.read(fd, 1):
            pass
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="lifeline", daemon=True).start()


def die_with_parent(parent: int, lifeline: int) -> None:
    """End with ``parent``: PR_SET_PDEATHSIG, else at the end of the ``lifeline`` pipe (closed here
    when unused); exit now if ``parent`` has already gone (this process then belongs to another)."""
    if set_pdeathsig(signal.SIGKILL):
        os.close(lifeline)
    else:
        watch_lifeline(lifeline)
    if os.getppid() != parent:
        os._exit(1)


class NodeForker:
    """The fork server's loop: requests on fd 0, answers and exits on fd 1."""

    def __init__(self) -> None:
        self.nodes: set[int] = set()
        self.pid = os.getpid()
        self.lifeline_read, self.lifeline_write = os.pipe()
        self.wake_read, self.wake_write = os.pipe()
        os.set_blocking(self.wake_read, False)
        os.set_blocking(self.wake_write, False)

    def serve(self) -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C reaches the nodes and the parent itself
        signal.signal(signal.SIGCHLD, lambda signum, frame: None)
        signal.set_wakeup_fd(self.wake_write)
        pending = b""
        try:
            while True:
                ready, _, _ = select.select([0, self.wake_read], [], [])
                if self.wake_read in ready:
                    while True:
                        try:
                            if not os.read(self.wake_read, 512):
                                break
                        except BlockingIOError:
                            break
                    self.reap()
                if 0 in ready:
                    data = os.read(0, 65536)
                    if not data:
                        return
                    pending += data
                    while b"\n" in pending:
                        line, pending = pending.split(b"\n", 1)
                        pid = self.fork(json.loads(line))
                        self.nodes.add(pid)
                        self.write(f"started {pid}")
        finally:
            for pid in self.nodes:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)

    def write(self, line: str) -> None:
        os.write(1, f"{line}\n".encode())

    def reap(self) -> None:
        while self.nodes:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                return
            self.nodes.discard(pid)
            self.write(f"exited {pid} {os.waitstatus_to_exitcode(status)}")

    def fork(self, request: dict[str, Any]) -> int:
        """Fork a node; return its pid once it is bound to this process's life (so that a node stopped
        or killed by a test right after its start cannot miss the fork server's death)."""
        armed_read, armed_write = os.pipe()
        pid = os.fork()
        if pid:
            os.close(armed_write)
            os.read(armed_read, 1)  # the node armed its death signal, or died
            os.close(armed_read)
            return pid
        code = 1
        try:
            os.close(armed_read)
            code = self.run_node(request, armed_write)
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)

    def run_node(self, request: dict[str, Any], armed: int) -> int:
        """In the forked child: bind its life to the fork server's (then say so on ``armed``), become
        the node (its files, directory, environment), run ``main``."""
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.close(self.lifeline_write)
        die_with_parent(self.pid, self.lifeline_read)
        os.write(armed, b"!")
        os.close(armed)
        null = os.open(os.devnull, os.O_RDONLY)
        out = os.open(request["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        for target, source in ((0, null), (1, out), (2, out)):
            os.dup2(source, target)
        for fd in (null, out, self.wake_read, self.wake_write):
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        argv: list[str] = request["argv"]
        sys.argv = ["kraft-server", *argv]
        try:
            return server_main(argv)
        finally:
            logging.shutdown()
            sys.stdout.flush()
            sys.stderr.flush()


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m kafka_admin_kraft_server.forkserver",
                                     description="Fork reference server nodes for a local quorum.")
    parser.add_argument("--parent", type=int, required=True, help="the pid of the process that starts it")
    parser.add_argument("--pdeathsig", action="store_true",
                        help="also die by PR_SET_PDEATHSIG (only for a parent's main thread)")
    parser.add_argument("--root", help="the quorum's directory (names the process in listings)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.pdeathsig:
        set_pdeathsig(signal.SIGKILL)
    if os.getppid() != args.parent:
        return 1
    NodeForker().serve()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
