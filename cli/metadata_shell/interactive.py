"""The interactive shell (Kafka's ``InteractiveShell``): the banner ``[ Kafka Metadata Shell ]``, the
prompt ``>> ``, Ctrl-C printing ``^C``, Ctrl-D or ``exit`` leaving.

Built on prompt_toolkit (imported only here): emacs keys, history search (Ctrl-R) and a history
kept in a file across sessions (``$KAFKA_METADATA_SHELL_HISTORY``, default
``~/.kafka_metadata_shell_history``). Tab completes as Kafka's ``MetadataShellCompleter`` does: the
command names for the first word, then paths for ``cat``, ``find``, ``ls`` and ``tree`` (every word)
and ``cd`` (its one word), command names for ``man``; a directory completes with a ``/``. Words are
split as a shell splits them (quotes, backslashes). ``tree`` is drawn with rich.
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Iterable
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.history import FileHistory

from kafka_admin_kraft.image.nodes import lookup
from kafka_admin_kraft.image.text import java_sorted

from ..output import write
from .commands import State, run, split_path
from .parsing import TYPES

HISTORY_VARIABLE = "KAFKA_METADATA_SHELL_HISTORY"
PATH_COMMANDS = ("cat", "find", "ls", "tree")


def history_file() -> Path:
    return Path(os.environ.get(HISTORY_VARIABLE) or Path.home() / ".kafka_metadata_shell_history")


def complete_path(state: State, prefix: str) -> list[tuple[str, bool]]:
    """``CommandUtils.completePath``: (candidate, is a directory) for a path prefix."""
    absolute = prefix if prefix.startswith("/") else f"{state.working_directory}/{prefix}"
    components = split_path(absolute)
    directories = len(components) if prefix.endswith("/") else len(components) - 1
    node = lookup(state.root, "/" + "/".join(components[:max(directories, 0)]))
    if node is None or not node.is_directory:
        return []
    last = components[directories] if 0 <= directories < len(components) else ""
    head = prefix[:prefix.rfind("/") + 1]
    found = []
    for name in java_sorted(node.child_names()):
        if name.startswith(last):
            child = node.child(name)
            is_directory = child is not None and child.is_directory
            found.append((head + name + ("/" if is_directory else ""), is_directory))
    return found


class ShellCompleter(Completer):
    """Kafka's ``MetadataShellCompleter`` over prompt_toolkit."""

    def __init__(self, state: State) -> None:
        self.state = state

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        text = document.text_before_cursor
        words = text.split()
        if text.endswith((" ", "\t")) or not words:
            words.append("")
        current = words[-1]
        if len(words) == 1:
            for name in TYPES:
                if name.startswith(current):
                    yield Completion(name + " ", start_position=-len(current), display=name)
            return
        command = words[0]
        if command in PATH_COMMANDS or (command == "cd" and len(words) == 2):
            for candidate, is_directory in complete_path(self.state, current):
                yield Completion(candidate if is_directory else candidate + " ",
                                 start_position=-len(current), display=candidate)
        elif command == "man" and len(words) == 2:
            for name in TYPES:
                if name.startswith(current):
                    yield Completion(name, start_position=-len(current))


class InteractiveShell:
    """The prompt loop and what commands may ask of it (the screen width, the history, exiting)."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.session: PromptSession[str] = PromptSession(
            history=FileHistory(str(history_file())), completer=ShellCompleter(state),
            complete_while_typing=False)
        self.done = False

    def screen_width(self) -> int:
        return shutil.get_terminal_size().columns

    def history(self) -> list[str]:
        """Every entry, oldest first: the file's and this session's, the current command last."""
        return self.session.history.get_strings()

    def exit(self) -> None:
        self.done = True

    def loop(self) -> int:
        write("[ Kafka Metadata Shell ]\n")
        while not self.done:
            try:
                line = self.session.prompt(">> ")
            except KeyboardInterrupt:
                write("^C\n")
                continue
            except EOFError:
                return 0
            try:
                words = shlex.split(line)
            except ValueError as exc:
                write(f"{exc}\n")
                continue
            result = run(words, self.state, self)
            if words and words[0] == "tree" and result.document.get("trees") and not result.errors:
                from .rich_tree import print_trees

                print_trees(self.state, [word for word in words[1:] if word])
            else:
                write(result.text)
        return 0


def run_shell(state: State) -> int:
    """Run the interactive shell until ``exit`` or end of input; the exit status."""
    return InteractiveShell(state).loop()
