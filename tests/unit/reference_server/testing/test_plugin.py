"""The pytest plugin run by pytest itself (``pytester``): a suite that uses the fixtures and the marker,
shares a quorum across tests, fails (the nodes' logs in the report), is interrupted, terminated or
killed, and after each run no server process is left; the README's examples as written."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]


def leftover(root: Path) -> list[int]:
    """Processes whose command line names a path under ``root`` (the servers' config files do)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if str(root) in command and state != "Z":
                found.append(int(entry.name))
    return found


SUITE = '''
import pytest

from kafka_admin_kraft_server.testing.quorum import KraftQuorum


@pytest.fixture(scope="module")
def shared(kraft_quorum_module):
    return kraft_quorum_module(size=1)


def test_factory(kraft_quorum):
    quorum = kraft_quorum(size=1)
    assert quorum.admin.describe_metadata_quorum().leader_id == 1
    node = quorum.node(1)
    assert node.config_file.read_text().count("node.id=1") == 1
    assert node.directory_id == quorum.admin.describe_metadata_quorum().voters[0].replica_directory_id
    assert quorum.client_properties().read_text() == "security.protocol=PLAINTEXT\\n"
    assert "Kafka Server started" in node.log


def test_own_module_fixture(shared):
    assert isinstance(shared, KraftQuorum) and shared.wait_for_leader() == 1


@pytest.mark.kraft_quorum(1, scope="module")
def test_shared_a(quorum, shared):
    assert quorum is not shared  # one quorum per set of options, not per factory
    assert quorum.local.forkserver is shared.local.forkserver  # one fork server per run
    pytest.first_cluster = quorum.cluster_id
    quorum.kill(1)


@pytest.mark.kraft_quorum(1, scope="module")
def test_shared_b_after_reset(quorum):
    assert quorum.cluster_id == pytest.first_cluster and quorum.node(1).running
    assert quorum.admin.describe_metadata_quorum().leader_id == 1


@pytest.mark.kraft_quorum(size=1)
def test_fails(quorum):
    assert quorum.wait_for_leader() == 2, "the leader"


def test_quorum_without_marker(quorum):
    pass


@pytest.mark.kraft_quorum(size=1, scope="class")
def test_bad_scope(quorum):
    pass
'''


def test_fixtures_marker_shared_quorums_and_logs_on_failure(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=4, failed=1, errors=2)
    output = result.stdout.str()
    assert "kraft_quorum node 1 log" in output  # one section, the failed test's only node
    assert output.count("kraft_quorum node 1 log") == 1
    assert "Completed transition to Leader(localId=1" in output
    assert "the quorum fixture needs a @pytest.mark.kraft_quorum(size=..., ...) marker" in output
    assert "@pytest.mark.kraft_quorum(scope='class'): the scopes are function, module, session" in output
    assert leftover(pytester.path) == []


INTERRUPTED = '''
import pytest


@pytest.fixture(scope="session")
def session_quorum(kraft_quorum_session):
    return kraft_quorum_session(size=1)


def test_interrupted(kraft_quorum, session_quorum):
    kraft_quorum(size=1).pause(1)  # even a stopped process is killed
    raise KeyboardInterrupt
'''


def test_an_interrupted_run_leaves_no_process(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_interrupted=INTERRUPTED)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert leftover(pytester.path) == []


TERMINATED = '''
import os
import signal
import time


def test_terminated(kraft_quorum):
    kraft_quorum(size=1)
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(30)
'''


def test_a_sigterm_to_pytest_leaves_no_process(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_terminated=TERMINATED)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert "KeyboardInterrupt: SIGTERM" in result.stdout.str()
    assert leftover(pytester.path) == []


KILLED = '''
import os
import signal


def test_killed(kraft_quorum):
    quorum = kraft_quorum(size=3)
    quorum.pause(2)
    os.kill(os.getpid(), signal.SIGKILL)
'''


def test_a_sigkill_to_pytest_leaves_no_process(pytester: pytest.Pytester) -> None:
    """No teardown runs: the nodes die with the pytest process (``kafka_admin_kraft_server.forkserver``)."""
    pytester.makepyfile(test_killed=KILLED)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == -signal.SIGKILL
    deadline = time.monotonic() + 5
    while leftover(pytester.path) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert leftover(pytester.path) == []


def test_loading_the_plugin_imports_nothing_of_the_quorum() -> None:
    """A pytest run that never asks for a quorum loads the plugin alone: not the SDK, not the server."""
    code = ("import sys, pytest, kafka_admin_kraft_server.testing.plugin; "
            "print(sorted(m for m in sys.modules if m.startswith('kafka_admin_kraft')))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == ("['kafka_admin_kraft_server', 'kafka_admin_kraft_server.testing', "
                              "'kafka_admin_kraft_server.testing.plugin']")


README = Path(__file__).resolve().parents[4] / "README.md"


def readme_files() -> dict[str, str]:
    """The README's Python blocks that start with a ``# <file name>`` line, by file name."""
    blocks = re.findall(r"```python\n# (\S+\.py)\n(.*?)```", README.read_text(), re.S)
    return dict(blocks)


def test_the_readme_examples_pass_as_written(pytester: pytest.Pytester,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    files = readme_files()
    assert sorted(files) == ["monitoring/quorum_rule.py", "ops/replace_disk.py", "test_quorum_rule.py",
                             "test_replace_disk.py"]
    for name, text in files.items():
        path = pytester.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    # The example calls the tool by name, as from an activated environment. A process of its own: an
    # in-process run would drop the cryptography modules it imports, which cannot be imported twice.
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    assert leftover(pytester.path) == []
