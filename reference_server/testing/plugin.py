"""The pytest plugin: reference KRaft quorums as fixtures for users' own tests.

Installed with the distribution as the ``pytest11`` entry point ``kafka_admin_kraft`` (``-p
no:kafka_admin_kraft`` turns it off). Loading it imports nothing but this module: the quorum, the SDK
and the server's modules load when a test first asks for a quorum, so other test runs pay nothing.

* ``kraft_quorum``: a factory, ``kraft_quorum(size=3, dynamic=True, brokers=0, security=None,
  release_version=None, lines=None, properties=None, wait=True)``, returning a started
  ``KraftQuorum`` (``kafka_admin_kraft_server.testing.quorum``) with a leader elected; its quorums are
  killed when the test ends. ``kraft_quorum_module`` and ``kraft_quorum_session`` make quorums that
  live as long as the module or the session, for a user's own module- or session-scoped fixtures;
  their ``shared(**options)`` hands out one quorum per set of options, reset between uses.
* ``@pytest.mark.kraft_quorum(size=3, scope="function", **options)`` gives the test a ``quorum``;
  with ``scope="module"`` or ``"session"`` the tests asking for the same options share one, which
  ``KraftQuorum.reset`` brings back (nodes started, resumed, healed) before each of them.
* Every process is killed at teardown, after a failed test, after an interrupt (the session's
  teardown, then ``pytest_unconfigure`` and ``atexit`` for whatever is left); once a quorum was
  made, a SIGTERM to pytest interrupts it as Ctrl-C does (unless the run set a handler of its own).
  The nodes of every quorum of a run are forked by one fork server (``kafka_admin_kraft_server.
  forkserver``, under the run's temporary directory), which has imported the server once; they die
  with pytest even when nothing of it runs any more (a SIGKILL).
* When a test fails, each node's log since the test started is attached to its report as a section
  ``kraft_quorum node <id> log``.
"""

from __future__ import annotations

import atexit
import signal
import threading
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pytest

if TYPE_CHECKING:
    from ..local import ForkServer
    from .quorum import KraftQuorum

MARKER: Final = "kraft_quorum"
SCOPES: Final = {"function": "kraft_quorum", "module": "kraft_quorum_module",
                  "session": "kraft_quorum_session"}

_open: pytest.StashKey[list[KraftQuorum]] = pytest.StashKey()
"""Per pytest run (its config): every quorum made and not closed yet, oldest first."""
_forkserver: pytest.StashKey[ForkServer] = pytest.StashKey()
"""Per pytest run: what forks the nodes of all its quorums, started with the first (it imports the
server once for the run, so later quorums start in a fraction of a second)."""
_log_offsets: pytest.StashKey[dict[int, dict[int, int]]] = pytest.StashKey()
"""Per test item: id(quorum) -> each node's log size when the test started."""
_Report = pytest.TestReport
_everywhere: list[list[KraftQuorum]] = []
"""The lists of every run in this process, for ``atexit``."""


def _opened(config: pytest.Config) -> list[KraftQuorum]:
    if _open not in config.stash:
        config.stash[_open] = []
        _everywhere.append(config.stash[_open])
        if len(_everywhere) == 1:
            atexit.register(_close_everywhere)  # a last resort when the session's teardown did not run
            if (signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
                    and threading.current_thread() is threading.main_thread()):
                signal.signal(signal.SIGTERM, _terminated)
    return config.stash[_open]


def _forkserver_of(config: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> ForkServer:
    if _forkserver not in config.stash:
        from ..local import ForkServer

        config.stash[_forkserver] = ForkServer(tmp_path_factory.getbasetemp())
    return config.stash[_forkserver]


def _terminated(signum: int, frame: object) -> None:
    """SIGTERM (what CI sends on a time-out) ends the run as Ctrl-C does, so that teardown kills the
    quorums; by default Python would die on the spot and leave the servers running."""
    raise KeyboardInterrupt("SIGTERM")


def _close(opened: list[KraftQuorum]) -> None:
    while opened:
        opened.pop().close()


def _close_everywhere() -> None:
    for opened in _everywhere:
        _close(opened)


class QuorumFactory:
    """Makes quorums under pytest's temporary directory; ``close`` kills them all."""

    def __init__(self, config: pytest.Config, tmp_path_factory: pytest.TempPathFactory, scope: str,
                 opened: list[KraftQuorum]) -> None:
        self._config = config
        self._tmp = tmp_path_factory
        self._opened = opened
        self._scope = scope
        self._made: list[KraftQuorum] = []
        self._shared: dict[str, KraftQuorum] = {}

    def __call__(self, size: int = 3, **options: Any) -> KraftQuorum:
        from .quorum import start_quorum

        root = self._tmp.mktemp(f"kraft-quorum-{self._scope}", numbered=True)
        quorum = start_quorum(root, size, forkserver=_forkserver_of(self._config, self._tmp), **options)
        self._made.append(quorum)
        self._opened.append(quorum)
        return quorum

    def shared(self, size: int = 3, **options: Any) -> KraftQuorum:
        """The quorum made with these options before, reset (see ``KraftQuorum.reset``), or a new one."""
        key = repr((size, sorted(options.items())))
        quorum = self._shared.get(key)
        if quorum is not None and not quorum.closed:
            quorum.reset()
            return quorum
        quorum = self._shared[key] = self(size, **options)
        return quorum

    def close(self) -> None:
        for quorum in self._made:
            quorum.close()
            if quorum in self._opened:
                self._opened.remove(quorum)
        self._made.clear()
        self._shared.clear()


def _factory(request: pytest.FixtureRequest, scope: str) -> Iterator[QuorumFactory]:
    factory = QuorumFactory(request.config, request.getfixturevalue("tmp_path_factory"), scope,
                            _opened(request.config))
    try:
        yield factory
    finally:
        factory.close()


@pytest.fixture
def kraft_quorum(request: pytest.FixtureRequest) -> Iterator[QuorumFactory]:
    """``kraft_quorum(size=3, **options)``: a started reference quorum, killed when the test ends."""
    yield from _factory(request, "function")


@pytest.fixture(scope="module")
def kraft_quorum_module(request: pytest.FixtureRequest) -> Iterator[QuorumFactory]:
    """As ``kraft_quorum``, the quorums living until the module's last test."""
    yield from _factory(request, "module")


@pytest.fixture(scope="session")
def kraft_quorum_session(request: pytest.FixtureRequest) -> Iterator[QuorumFactory]:
    """As ``kraft_quorum``, the quorums living until the session ends."""
    yield from _factory(request, "session")


@pytest.fixture
def quorum(request: pytest.FixtureRequest) -> KraftQuorum:
    """The quorum ``@pytest.mark.kraft_quorum(...)`` describes."""
    marker = request.node.get_closest_marker(MARKER)
    if marker is None:
        pytest.fail("the quorum fixture needs a @pytest.mark.kraft_quorum(size=..., ...) marker on the test, "
                    "its class or its module", pytrace=False)
    options = dict(marker.kwargs)
    scope = options.pop("scope", "function")
    if scope not in SCOPES:
        pytest.fail(f"@pytest.mark.kraft_quorum(scope={scope!r}): the scopes are {', '.join(SCOPES)}",
                    pytrace=False)
    if marker.args:
        options["size"] = marker.args[0]
    factory: QuorumFactory = request.getfixturevalue(SCOPES[scope])
    return factory(**options) if scope == "function" else factory.shared(**options)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}(size=3, scope='function', **options): give the test a "
                                       "reference KRaft quorum as the `quorum` fixture (options as for the "
                                       "kraft_quorum factory; scope 'module' or 'session' shares it)")


def pytest_unconfigure(config: pytest.Config) -> None:
    if _open in config.stash:
        _close(config.stash[_open])
    if _forkserver in config.stash:
        config.stash[_forkserver].close()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item,
                            nextitem: pytest.Item | None) -> Generator[None, object, object]:
    opened = item.config.stash.get(_open, [])
    item.stash[_log_offsets] = {id(quorum): quorum.log_offsets() for quorum in opened}
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item,
                              call: pytest.CallInfo[None]) -> Generator[None, _Report, _Report]:
    report = yield
    opened = item.config.stash.get(_open, [])
    if report.failed and opened:
        offsets = item.stash.get(_log_offsets, {})
        for quorum in opened:
            label = "" if len(opened) == 1 else f" ({Path(quorum.root).name})"
            for node_id, text in quorum.logs_since(offsets.get(id(quorum), {})):
                report.sections.append((f"kraft_quorum node {node_id} log{label}", text))
    return report
