"""The distribution as a user gets it: the sdist and the wheel built from it with ``python -m build``,
the wheel (with the ``spark`` and ``pytest`` extras) installed into a new virtual environment, and
everything run from there with nothing of the source checkout in reach: the console scripts, the
``python -m`` entry points, the completions installer, an import of every module, a local controller
formatted, started, described and audited with the installed tools, and a user's test given a quorum
by the installed pytest plugin."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import time
import venv
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from cli.completions import TOOLS as COMPLETED_TOOLS

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_DIRS = {"kafka_admin_kraft": "kafka_admin_kraft", "kafka_admin_kraft_cli": "cli",
                "kafka_admin_kraft_server": "reference_server"}
"""Installed top-level package -> its folder in the repository."""
CONSOLE_SCRIPTS = ("kafka-metadata-quorum", "kafka-storage", "kafka-features", "kafka-cluster",
                   "kafka-metadata-audit", "kafka-metadata-shell", "kafka-metadata-diff", "kraft-server")
NOT_SHIPPED = {".git", ".venv", "venv", "build", "dist", "__pycache__", ".pytest_cache", ".mypy_cache",
               ".ruff_cache", ".hypothesis", "spark-warehouse", "metastore_db"}


@dataclass(frozen=True)
class Installed:
    """The built files and the environment the wheel went into."""

    sdist: Path
    wheel: Path
    bin: Path
    work: Path

    def env(self) -> dict[str, str]:
        """A minimal environment: system directories on PATH, nothing pointing back at the checkout."""
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(self.work / "home"), "LANG": "C.UTF-8",
               "PYTHONNOUSERSITE": "1", "PYTHONDONTWRITEBYTECODE": "1"}
        if "JAVA_HOME" in os.environ:
            env["JAVA_HOME"] = os.environ["JAVA_HOME"]
        return env

    def run(self, program: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """Run a program of the new environment from a directory outside the checkout."""
        return subprocess.run([str(self.bin / program), *args], capture_output=True, text=True,
                              timeout=timeout, cwd=self.work, env=self.env(), stdin=subprocess.DEVNULL)


def _ignore(directory: str, names: list[str]) -> set[str]:
    return {name for name in names if name in NOT_SHIPPED or name.endswith(".egg-info")}


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    work = tmp_path_factory.mktemp("packaging")
    source = work / "source"
    shutil.copytree(ROOT, source, ignore=_ignore)  # the build writes egg-info: keep it out of the checkout
    dist = work / "dist"
    built = subprocess.run([sys.executable, "-m", "build", "--outdir", str(dist), str(source)],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (sdist,) = dist.glob("*.tar.gz")
    (wheel,) = dist.glob("*.whl")
    target = work / "venv"
    venv.EnvBuilder(with_pip=True).create(target)
    (work / "home").mkdir()
    install = subprocess.run([str(target / "bin" / "python"), "-m", "pip", "install", "--quiet",
                              f"{wheel}[spark,pytest]"], capture_output=True, text=True, timeout=900,
                             env={**os.environ, "PYTHONNOUSERSITE": "1"})
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    yield Installed(sdist, wheel, target / "bin", work)


def _modules_in_repository() -> set[str]:
    """Every module of the three packages, under its installed name."""
    modules = set()
    for package, folder in PACKAGE_DIRS.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules.add(".".join((package, *parts)))
    return modules


def _wheel_files(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def test_the_wheel_holds_every_package_its_data_and_only_the_project_names(installed: Installed) -> None:
    files = _wheel_files(installed.wheel)
    top_level = {name.split("/")[0] for name in files}
    dist_info = {name for name in top_level if name.endswith(".dist-info")}
    assert top_level - dist_info == set(PACKAGE_DIRS)  # no top-level `cli`, `reference_server` or `tests`
    shipped = {name.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
               for name in files if name.endswith(".py")}
    assert shipped == _modules_in_repository()
    for package, folder in PACKAGE_DIRS.items():
        assert f"{package}/py.typed" in files
        for data in (ROOT / folder).rglob("*"):
            if data.is_file() and data.suffix in (".kspec", ".tsv", ".typed"):
                assert f"{package}/{data.relative_to(ROOT / folder).as_posix()}" in files
    (metadata,) = [name for name in files if name.endswith(".dist-info/entry_points.txt")]
    with zipfile.ZipFile(installed.wheel) as archive:
        entry_points = archive.read(metadata).decode()
    for script in CONSOLE_SCRIPTS:
        assert re.search(rf"^{script} = kafka_admin_kraft_(cli|server)[.:]", entry_points, re.M), script
    plugin = r"^\[pytest11\]\nkafka_admin_kraft = kafka_admin_kraft_server\.testing\.plugin$"
    assert re.search(plugin, entry_points, re.M)


def test_the_sdist_holds_the_sources_the_tests_and_the_readme(installed: Installed) -> None:
    with tarfile.open(installed.sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert {"README.md", "pyproject.toml", "cli/py.typed", "reference_server/py.typed",
            "kafka_admin_kraft/protocol/specs/errors.tsv"} <= names


@pytest.mark.parametrize("script", CONSOLE_SCRIPTS)
def test_each_console_script_runs_from_the_wheel(installed: Installed, script: str) -> None:
    result = installed.run(script, "--help")
    assert result.returncode == 0, result.stderr
    assert "usage" in result.stdout.lower() and "Traceback" not in result.stderr


def test_python_m_entry_points_run_from_the_wheel(installed: Installed) -> None:
    server = installed.run("python", "-m", "kafka_admin_kraft_server", "--help")
    assert server.returncode == 0 and "usage: kraft-server" in server.stdout, server.stderr
    audit = installed.run("python", "-m", "kafka_admin_kraft_cli.kafka_metadata_audit", "--help")
    assert audit.returncode == 0 and "Usage: kafka-metadata-audit" in audit.stdout, audit.stderr
    # Regenerating completions/ is for a source checkout; an installed package says so and exits 2.
    regenerate = installed.run("python", "-m", "kafka_admin_kraft_cli.completions", "--check")
    assert regenerate.returncode == 2 and "source checkout" in regenerate.stderr


def test_the_completions_installer_writes_every_tool_for_each_shell(installed: Installed) -> None:
    for shell, names in {"bash": ["kafka-storage"], "zsh": ["_kafka-storage"],
                         "fish": ["kafka-storage.fish"]}.items():
        target = installed.work / "completions" / shell
        result = installed.run("python", "-m", "kafka_admin_kraft_cli.completions", "install",
                               "--shell", shell, "--dir", str(target))
        assert result.returncode == 0, result.stderr
        assert len(list(target.iterdir())) == len(COMPLETED_TOOLS)
        for name in names:
            assert "_KAFKA_STORAGE_COMPLETE" in (target / name).read_text()


def test_every_module_imports_from_the_wheel_not_the_checkout(installed: Installed) -> None:
    modules = sorted(_modules_in_repository())
    program = ("import importlib, sys\n"
               "for name in sys.argv[1:]:\n"
               "    module = importlib.import_module(name)\n"
               "    assert 'site-packages' in module.__file__, (name, module.__file__)\n"
               "print(len(sys.argv) - 1)\n")
    result = installed.run("python", "-c", program, *modules)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(len(modules))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_controller_formatted_started_described_and_audited_with_the_installed_tools(
        installed: Installed) -> None:
    port = _free_port()
    logs = installed.work / "controller-logs"
    config = installed.work / "controller.properties"
    config.write_text(f"process.roles=controller\nnode.id=1\nlisteners=CONTROLLER://127.0.0.1:{port}\n"
                      f"controller.listener.names=CONTROLLER\n"
                      f"controller.quorum.bootstrap.servers=127.0.0.1:{port}\nlog.dirs={logs}\n")
    cluster_id = installed.run("kafka-storage", "random-uuid").stdout.strip()
    formatted = installed.run("kafka-storage", "format", "-c", str(config), "-t", cluster_id, "--standalone")
    assert formatted.returncode == 0, formatted.stderr
    server = subprocess.Popen([str(installed.bin / "kraft-server"), "--config", str(config)],
                              cwd=installed.work, env=installed.env(), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        status = installed.run("kafka-metadata-quorum", "--bootstrap-controller", f"127.0.0.1:{port}",
                               "describe", "--status")
        while f"{'LeaderId:':<24}1" not in status.stdout and time.monotonic() < deadline:
            time.sleep(0.2)
            status = installed.run("kafka-metadata-quorum", "--bootstrap-controller", f"127.0.0.1:{port}",
                                   "describe", "--status")
        assert f"{'ClusterId:':<24}{cluster_id}" in status.stdout, status.stdout + status.stderr
        features = installed.run("kafka-features", "--bootstrap-controller", f"127.0.0.1:{port}", "describe")
        assert features.returncode == 0 and "Feature: metadata.version" in features.stdout, features.stderr
    finally:
        server.send_signal(signal.SIGTERM)
        _, errors = server.communicate(timeout=30)
    assert "Traceback" not in errors.decode()
    if shutil.which("java") is None and "JAVA_HOME" not in os.environ:
        pytest.fail("the audit needs a Java runtime (apt-get install openjdk-17-jre-headless)")
    audit = installed.run("kafka-metadata-audit", "-o", str(installed.work / "audit"), str(logs), timeout=300)
    assert audit.returncode == 0, audit.stdout[-2000:] + audit.stderr[-2000:]
    report = (installed.work / "audit" / "report.md").read_text()
    assert cluster_id in report


def test_the_pytest_plugin_gives_a_users_test_a_quorum(installed: Installed) -> None:
    tests = installed.work / "user-tests"
    tests.mkdir(exist_ok=True)
    (tests / "test_user.py").write_text(
        "import pytest\n\n\n"
        "@pytest.mark.kraft_quorum(size=1)\n"
        "def test_quorum(quorum):\n"
        "    assert quorum.admin.describe_metadata_quorum().leader_id == 1\n")
    result = installed.run("python", "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "1 passed" in result.stdout
