"""Shell completions: the committed scripts match the click apps, and they complete for real."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from console_scripts import console_script

from kafka_admin_kraft_cli import completions, output

ROOT = Path(__file__).resolve().parents[2]
SUBCOMMANDS = {
    "kafka-metadata-quorum": {"describe", "add-controller", "remove-controller"},
    "kafka-storage": {"format", "info", "random-uuid", "version-mapping", "feature-dependencies"},
    "kafka-features": {"describe", "upgrade", "downgrade", "disable", "version-mapping",
                       "feature-dependencies"},
    "kafka-cluster": {"cluster-id", "unregister", "list-endpoints", "api-versions", "unregister-controller"},
}


def test_committed_scripts_are_what_the_apps_generate(tmp_path: Path) -> None:
    assert completions.generate(completions.COMPLETIONS_DIR, check=True) == []
    # ... and the check does notice a script that no longer matches.
    assert completions.generate(tmp_path, check=False)
    stale = tmp_path / "kafka-storage.bash"
    stale.write_text(stale.read_text().replace("_KAFKA_STORAGE_COMPLETE", "_OTHER_COMPLETE"))
    assert completions.generate(tmp_path, check=True) == [str(stale)]


def bash_complete(tool: str, words: list[str]) -> set[str]:
    """What the tool itself answers to the completion protocol the bash script speaks."""
    env = {**os.environ, output.complete_var(tool): "bash_complete",
           "COMP_WORDS": " ".join([tool, *words]), "COMP_CWORD": str(len(words))}
    result = subprocess.run([console_script(tool)], env=env, capture_output=True, text=True, timeout=30,
                            check=True)
    return {line.split(",", 1)[1] for line in result.stdout.splitlines() if "," in line}


@pytest.mark.parametrize("tool", sorted(SUBCOMMANDS))
def test_subcommands_complete(tool: str) -> None:
    assert SUBCOMMANDS[tool] <= bash_complete(tool, [""])


def test_options_complete() -> None:
    assert {"--bootstrap-server", "--bootstrap-controller", "--command-config"} <= bash_complete(
        "kafka-features", ["--"])
    assert {"--release-version", "--feature", "--dry-run"} <= bash_complete(
        "kafka-features", ["--bootstrap-server", "h:9092", "upgrade", "--"])
    assert {"--standalone", "--initial-controllers", "--cluster-id"} <= bash_complete(
        "kafka-storage", ["format", "--"])
    assert {"--status", "--replication"} <= bash_complete(
        "kafka-metadata-quorum", ["--bootstrap-controller", "h:9093", "describe", "--"])
    assert {"--bootstrap-server", "--bootstrap-controller", "--command-config",
            "--include-fenced-brokers"} <= bash_complete("kafka-cluster", ["list-endpoints", "--"])
    assert "--unregister" in bash_complete(
        "kafka-metadata-quorum", ["--bootstrap-controller", "h:9093", "remove-controller", "--"])


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_the_bash_script_completes_in_bash() -> None:
    script = completions.COMPLETIONS_DIR / "kafka-storage.bash"
    bin_dir = str(Path(console_script("kafka-storage")).parent)
    program = (f'source "{script}"; COMP_WORDS=(kafka-storage for); COMP_CWORD=1; '
               '_kafka_storage_completion kafka-storage for kafka-storage; printf "%s\\n" "${COMPREPLY[@]}"')
    result = subprocess.run(["bash", "-c", program], capture_output=True, text=True, timeout=30, check=True,
                            env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"})
    assert result.stdout.split() == ["format"]


def test_install_writes_each_shells_file_names(tmp_path: Path) -> None:
    for shell in completions.SHELLS:
        assert completions.main(["install", "--shell", shell, "--dir", str(tmp_path / shell)]) == 0
    assert (tmp_path / "bash" / "kafka-features").read_text() == completions.script("kafka-features", "bash")
    assert (tmp_path / "zsh" / "_kafka-storage").exists()
    assert (tmp_path / "fish" / "kafka-metadata-quorum.fish").exists()
