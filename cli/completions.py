"""Shell completion scripts for the tools, generated from the click apps into ``completions/``.

    python -m kafka_admin_kraft_cli.completions install [--shell bash|zsh|fish] [--dir DIR]
        copy the scripts where the shell looks for completions
    python -m kafka_admin_kraft_cli.completions [--check]
        (in a source checkout) regenerate completions/<tool>.{bash,zsh,fish}, or with --check fail
        when a committed script differs from what the apps give

The scripts ask the installed tool itself for candidates (click's ``_<TOOL>_COMPLETE`` protocol), so
options and subcommands always match the version installed; the committed files pin the protocol.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path

import click
from click.shell_completion import get_completion_class

from .output import complete_var

TOOLS = {
    "kafka-metadata-quorum": "kafka_admin_kraft_cli.metadata_quorum",
    "kafka-storage": "kafka_admin_kraft_cli.kafka_storage",
    "kafka-features": "kafka_admin_kraft_cli.kafka_features",
    "kafka-dump-log": "kafka_admin_kraft_cli.kafka_dump_log",
    "kafka-cluster": "kafka_admin_kraft_cli.kafka_cluster",
    "kafka-metadata-shell": "kafka_admin_kraft_cli.metadata_shell",
    "kafka-metadata-diff": "kafka_admin_kraft_cli.kafka_metadata_diff",
}
SHELLS = ("bash", "zsh", "fish")
PROG = "python -m kafka_admin_kraft_cli.completions"
COMPLETIONS_DIR = Path(__file__).resolve().parent.parent / "completions"


def script(tool: str, shell: str) -> str:
    module = importlib.import_module(TOOLS[tool])
    app = module.click_app() if hasattr(module, "click_app") else module.main
    assert isinstance(app, click.Command)
    completion_class = get_completion_class(shell)
    assert completion_class is not None, shell
    return completion_class(app, {}, tool, complete_var(tool)).source().rstrip("\n") + "\n"


def file_name(tool: str, shell: str) -> str:
    return f"{tool}.{shell}"


def generate(directory: Path, *, check: bool) -> list[str]:
    """Write every script (or, with ``check``, list those that differ) under ``directory``."""
    stale = []
    for tool in TOOLS:
        for shell in SHELLS:
            path = directory / file_name(tool, shell)
            text = script(tool, shell)
            if path.exists() and path.read_text() == text:
                continue
            stale.append(str(path))
            if not check:
                directory.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
    return stale


def install_dir(shell: str) -> Path:
    """Where each shell looks for per-user completion scripts."""
    home = Path.home()
    if shell == "bash":
        data = Path(os.environ.get("XDG_DATA_HOME", home / ".local" / "share"))
        return data / "bash-completion" / "completions"
    if shell == "zsh":
        return home / ".zfunc"
    return Path(os.environ.get("XDG_CONFIG_HOME", home / ".config")) / "fish" / "completions"


def installed_name(tool: str, shell: str) -> str:
    return {"bash": tool, "zsh": f"_{tool}", "fish": f"{tool}.fish"}[shell]


def install(shell: str, directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for tool in TOOLS:
        target = directory / installed_name(tool, shell)
        target.write_text(script(tool, shell))
        print(f"installed {target}")
    if shell == "zsh":
        print(f"add to ~/.zshrc (before compinit): fpath=({directory} $fpath)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="fail when a committed script is stale")
    commands = parser.add_subparsers(dest="command")
    installer = commands.add_parser("install", help="install the scripts for one shell")
    installer.add_argument("--shell", choices=SHELLS, default=Path(os.environ.get("SHELL", "bash")).name)
    installer.add_argument("--dir", type=Path, help="install here instead of the shell's usual place")
    args = parser.parse_args(argv)
    if args.command == "install":
        if args.shell not in SHELLS:
            parser.error(f"unsupported shell {args.shell!r}: choose one of {', '.join(SHELLS)}")
        install(args.shell, args.dir or install_dir(args.shell))
        return 0
    if not (COMPLETIONS_DIR.parent / "pyproject.toml").is_file():
        parser.error("regenerating completions/ needs a source checkout; an installed package can only "
                     "'install' them")
    stale = generate(COMPLETIONS_DIR, check=args.check)
    if args.check and stale:
        print(f"stale completion scripts (run {PROG}):", *stale, sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
