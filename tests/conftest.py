"""Shared test fixtures: where the reference material beside the project lives, if it is there.

Test modules import helpers by their path below this folder, from any working directory:
``from console_scripts import console_script``, ``from unit.reference_server.raft.raft_testlib import
make_replica``, ``from integration.harness import Cluster``. This folder has no ``__init__.py``, so
pytest's default import mode (``prepend``) puts it first on ``sys.path``; the folders below it are
packages, so their modules get unique names. A package here must not take the name of a top-level
package of the project (``cli``, ``reference_server``) or of the standard library: it would shadow it.
So the tools' tests live in ``tools/``, and ``trace/`` is no package.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parent.parent.parent / "shared"


def pytest_configure(config: pytest.Config) -> None:
    """Tests stop tools with Ctrl-C (SIGINT) and expect them to go, as they do from a terminal. A
    shell without job control starts background commands (``cmd &``) with SIGINT ignored, a
    disposition every process started from here would inherit, and a Python tool started with SIGINT
    ignored keeps ignoring it: restore the default for this run."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """``../shared`` next to the project; tests that need it skip in a user's clone without it."""
    if not SHARED.is_dir():
        pytest.skip("../shared (Kafka's reference specs) is not present")
    return SHARED


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--rewrite-traces", action="store_true", dest="rewrite_traces",
                     help="write the traces of tests/trace/scenarios from what the core does now")
