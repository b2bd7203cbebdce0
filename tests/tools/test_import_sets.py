"""What each tool's hot path imports: the installed console script run as a fresh process, against a
reference quorum where it talks to one, with an import hook that records every module loaded and the
module whose code asked for it.

A fresh process pays for every module it loads (BENCHMARKS.md, "Command-line tools: start-up to
answer"), so a module a command does not need must not be on its path: pydantic and the result models
on the commands that only read and print (they print the operations' plain answers), the generated
messages other than the ones a command sends, and everything heavy (rich, TLS, asyncio, the storage
and log code, ...) wherever it is not used. This test guards the sets, not the times: a failure names
the module and the chain of modules that pulled it in.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from console_scripts import console_script
from integration.harness import Cluster
from unit.dump.dump_testlib import write_segment

from tools.cluster_util import start_quorum

HOOK = """
import sys
out, script = sys.argv[1], sys.argv[2]
importers = {}


class Recorder:
    def find_spec(self, name, path=None, target=None):
        if name not in importers:
            frame = sys._getframe(1)
            while frame is not None and (
                frame.f_code.co_filename.startswith("<frozen") or "importlib" in frame.f_code.co_filename
            ):
                frame = frame.f_back
            importers[name] = frame.f_globals.get("__name__") if frame is not None else None
        return None


recorder = Recorder()
sys.meta_path.insert(0, recorder)


def dump():
    sys.meta_path.remove(recorder)
    import json

    with open(out, "w") as stream:
        json.dump(importers, stream)


import atexit

atexit.register(dump)
sys.argv = [script, *sys.argv[3:]]
with open(script) as stream:
    code = compile(stream.read(), script, "exec")
exec(code, {"__name__": "__main__"})
"""
"""Runs a console script as ``__main__`` with a finder first on ``sys.meta_path`` that records each
module's first import and who asked (the first frame outside the import machinery); at exit it writes
``{module: importer}`` as JSON. Nothing is imported before the script but ``sys`` and ``atexit``."""

HEAVY = (
    "rich", "pyspark", "pyarrow", "numpy", "cryptography", "asyncio", "ssl", "yaml", "bcrypt",
    "prometheus_client", "requests", "tabulate", "prompt_toolkit", "http", "tomllib",
    "kafka_admin_kraft.records", "kafka_admin_kraft.storage", "kafka_admin_kraft.dump",
    "kafka_admin_kraft.image", "kafka_admin_kraft.pipeline", "kafka_admin_kraft.voters",
    "kafka_admin_kraft.acl", "kafka_admin_kraft.codegen",
)
"""Never on any of the hot paths below."""
MODELS = ("pydantic", "pydantic_core", "kafka_admin_kraft.models", "kafka_admin_kraft.health")
"""pydantic and what is built on it: none of the commands below loads them."""
NO_CLIENT = ("kafka_admin_kraft.client", "kafka_admin_kraft.admin", "kafka_admin_kraft.protocol.messages",
             "socket", "json")
"""What a command that talks to no cluster and prints no JSON does not load."""
MESSAGES = "kafka_admin_kraft.protocol.messages."
HEADERS = {"request_header", "response_header"}


def run_recorded(tmp_path: Path, tool: str, *args: str) -> dict[str, str | None]:
    """Run ``tool args`` under the recording hook; {module: the module that imported it}."""
    out = tmp_path / "imports.json"
    result = subprocess.run([sys.executable, "-c", HOOK, str(out), console_script(tool), *args],
                            capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    recorded: dict[str, str | None] = json.loads(out.read_text())
    return recorded


def pulled_in_by(module: str, importers: Mapping[str, str | None]) -> str:
    """``module <- importer <- its importer ...`` up to the script."""
    chain = [module]
    while (importer := importers.get(chain[-1])) is not None and importer not in chain:
        chain.append(importer)
    return " <- ".join(chain)


def under(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == package or module.startswith(package + ".") for package in packages)


def assert_not_loaded(importers: Mapping[str, str | None], forbidden: tuple[str, ...]) -> None:
    loaded = [pulled_in_by(module, importers) for module in sorted(importers) if under(module, forbidden)]
    assert loaded == [], "loaded, and not needed here:\n" + "\n".join(loaded)


def assert_messages(importers: Mapping[str, str | None], sent: set[str], maybe: frozenset[str] = frozenset()
                    ) -> None:
    """Only the generated messages of the requests the command sends (and the headers, and those it
    sends only in some states of the cluster: ``maybe``) are loaded."""
    loaded = {module[len(MESSAGES):] for module in importers if module.startswith(MESSAGES)}
    extra = [pulled_in_by(MESSAGES + name, importers) for name in sorted(loaded - sent - maybe - HEADERS)]
    assert extra == [], "messages the command does not send:\n" + "\n".join(extra)
    assert sent <= loaded, f"the hook missed messages the command sends: {sorted(sent - loaded)}"


@pytest.fixture(scope="module")
def quorum(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    cluster = start_quorum(tmp_path_factory.mktemp("imports"))
    try:
        yield cluster
    finally:
        cluster.close()


@pytest.mark.parametrize("flag", ["--status", "--replication"])
def test_describe_loads_neither_pydantic_nor_the_models(quorum: Cluster, tmp_path: Path, flag: str) -> None:
    importers = run_recorded(tmp_path, "kafka-metadata-quorum", "--bootstrap-controller",
                             quorum.bootstrap_servers(), "describe", flag)
    assert "kafka_admin_kraft_cli.metadata_quorum.describe_text" in importers
    assert_not_loaded(importers, HEAVY + MODELS)
    assert_messages(importers, {"api_versions", "describe_cluster", "describe_quorum"})


def test_features_describe_loads_neither_pydantic_nor_the_models(quorum: Cluster, tmp_path: Path) -> None:
    importers = run_recorded(tmp_path, "kafka-features", "--bootstrap-controller", quorum.bootstrap_servers(),
                             "describe")
    assert "kafka_admin_kraft.client.operations.describe_features" in importers
    assert_not_loaded(importers, HEAVY + MODELS)
    assert_messages(importers, {"api_versions", "describe_cluster"})


@pytest.mark.parametrize("args", [(), ("--output", "json")])
def test_check_loads_neither_pydantic_nor_the_models(quorum: Cluster, tmp_path: Path, args: tuple[str, ...]
                                                     ) -> None:
    """The health rules run on the operation's plain answers (``kafka_admin_kraft.health_rules``)."""
    importers = run_recorded(tmp_path, "kafka-metadata-quorum", "--bootstrap-controller",
                             quorum.bootstrap_servers(), "check", *args)
    assert "kafka_admin_kraft.health_rules" in importers
    assert_not_loaded(importers, HEAVY + MODELS)
    # UpdateFeatures (validateOnly) only when every node supports a newer metadata.version.
    assert_messages(importers, {"api_versions", "describe_cluster", "describe_quorum"},
                    maybe=frozenset({"update_features"}))


@pytest.mark.parametrize("tool, columns", [("kafka-metadata-quorum", "90"), ("kafka-features", "80"),
                                           ("kafka-storage", "80")])
def test_help_loads_no_client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tool: str,
                              columns: str) -> None:
    monkeypatch.setenv("COLUMNS", columns)  # kafka-metadata-quorum's help is kept for 80 and 100, not 90
    importers = run_recorded(tmp_path, tool, "--help")
    assert "click" in importers
    assert_not_loaded(importers, HEAVY + MODELS + NO_CLIENT)


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_quorum_help_loads_not_even_click(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flag: str) -> None:
    """``kafka-metadata-quorum --help`` at a width its text is kept for prints before click is loaded."""
    monkeypatch.setenv("COLUMNS", "80")
    importers = run_recorded(tmp_path, "kafka-metadata-quorum", flag)
    assert "kafka_admin_kraft_cli.quorum_help" in importers
    assert_not_loaded(importers, HEAVY + MODELS + NO_CLIENT + ("click", "kafka_admin_kraft_cli._click",
                                                               "kafka_admin_kraft_cli.metadata_quorum"))


def test_random_uuid_loads_not_even_click(tmp_path: Path) -> None:
    """``kafka-storage random-uuid`` as scripts run it prints before the click app is loaded."""
    importers = run_recorded(tmp_path, "kafka-storage", "random-uuid")
    assert "kafka_admin_kraft.protocol.primitives" in importers
    assert_not_loaded(importers, HEAVY + MODELS + NO_CLIENT + ("click", "kafka_admin_kraft_cli.kafka_storage",
                                                               "kafka_admin_kraft_cli._click"))


def test_dump_log_loads_only_the_batch_format(tmp_path: Path) -> None:
    """``kafka-dump-log`` parses its command line without click, loads the C function of CRC-32C
    without the ``crc32c`` package (whose ``__init__`` looks its version up through
    importlib.metadata) and, of the records package, only the batch format, control records, the
    reader's errors and the segment indexes."""
    segment = write_segment(tmp_path / "log")
    importers = run_recorded(tmp_path, "kafka-dump-log", "--cluster-metadata-decoder", "--files",
                             str(segment))
    assert "kafka_admin_kraft.dump.ordinary" in importers
    read_here = ("kafka_admin_kraft.records", "kafka_admin_kraft.dump")
    forbidden = tuple(module for module in HEAVY if not under(module, read_here))
    unused = ("kafka_admin_kraft.client", "kafka_admin_kraft.admin", "socket", "json", "importlib.metadata",
              "crc32c", "click")
    assert_not_loaded(importers, forbidden + MODELS + unused)
    records = {module for module in importers if module.startswith("kafka_admin_kraft.records.")}
    assert records == {"kafka_admin_kraft.records." + name
                       for name in ("batch", "control", "crc", "reader", "segment")}


def test_the_hook_names_what_pulled_a_module_in(tmp_path: Path) -> None:
    """The assertions above can fail: a command that loads pydantic is caught, with its importers."""
    importers = run_recorded(tmp_path, "kafka-storage", "random-uuid")
    assert importers["kafka_admin_kraft_cli"] == "__main__"
    importers = {**importers, "pydantic": "kafka_admin_kraft.models",
                 "kafka_admin_kraft.models": "kafka_admin_kraft_cli"}
    with pytest.raises(AssertionError, match=r"pydantic <- kafka_admin_kraft.models <- "
                                             r"kafka_admin_kraft_cli <- __main__"):
        assert_not_loaded(importers, MODELS)
