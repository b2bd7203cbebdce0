"""The shell's commands, as Kafka's command handlers run them (``org.apache.kafka.shell.command``),
with their text byte for byte, and a JSON form of ``cat``, ``ls``, ``find`` and ``tree``.

Paths are globs (``GlobVisitor`` and ``GlobComponent``): relative to the working directory, ``.`` and
``..`` resolved, ``//`` and a trailing ``/`` ignored; in a component ``*``, ``?``, ``[...]``
(``[!...]`` negated) and ``{a,b}`` match names, anything else is a literal name. A glob that matches
nothing is an error of the command, printed on the output as Kafka does:

* ``ls: <path>: no such file or directory.`` then the listing (files first, then each directory
  under ``<name>:`` when there is more than one thing to list); columns fit the screen in the shell,
  one name a line otherwise (``LsCommandHandler``);
* ``cat: <path>: No such file or directory.`` and ``cat: <path>: Is a directory``;
* ``find: <path>: no such file or directory.``; ``find`` prints the path as given, then each node
  under it (``FindCommandHandler``);
* ``tree: <path>: No such file or directory.``; ``tree`` prints ``name:`` lines indented two spaces a
  level and the leaves' text (``ShellNodePrinter``);
* ``cd: <path>: no such directory.`` and ``cd: <path>: not a directory.``;
* ``man: unknown command <x>. Type help to get a list of commands.``; ``history`` prints each entry
  as ``% 5d  %s``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from kafka_admin_kraft.image.nodes import Node
from kafka_admin_kraft.image.text import java_sorted

from .parsing import (
    TYPES,
    HelpRequest,
    Parsed,
    ParseError,
    command_help,
    format_width,
    man_text,
    parse,
    shell_help,
)

JSON_COMMANDS = ("cat", "ls", "find", "tree")


class Shell(Protocol):
    """What only the interactive shell has: a screen, a history, an end."""

    def screen_width(self) -> int: ...

    def history(self) -> list[str]: ...

    def exit(self) -> None: ...


@dataclass
class State:
    """The shell's state (``MetadataShellState``): the tree and the working directory."""

    root: Node
    working_directory: str = "/"


# --------------------------------------------------------------------------- globs

_REGEX_SPECIAL = set("$()+.[]^{|")
_GLOB_SPECIAL = set("*?\\{}[]")


class _Malformed(Exception):
    pass


def glob_regex(glob: str) -> str | None:
    """``GlobComponent.toRegularExpression``: the regular expression of a glob component, None for a
    literal one. Raises _Malformed for a nested or unterminated group or class."""
    out = "^"
    literal = True
    group = False
    i = 0
    while i < len(glob):
        c = glob[i]
        i += 1
        if c == "?":
            literal, out = False, out + "."
        elif c == "*":
            literal, out = False, out + ".*"
        elif c == "\\":
            if i == len(glob):
                out += "\\\\"
            else:
                following = glob[i]
                i += 1
                special = following in _GLOB_SPECIAL or following in _REGEX_SPECIAL
                out += ("\\" if special else "") + following
        elif c == "{":
            if group:
                raise _Malformed("Can't nest glob groups.")
            literal, group, out = False, True, out + "(?:(?:"
        elif c == "," and group:
            literal, out = False, out + ")|(?:"
        elif c == "}" and group:
            literal, group, out = False, False, out + "))"
        elif c == "[":
            literal = False
            i, out = _bracket(glob, i, out)
        else:
            out += ("\\" if c in _REGEX_SPECIAL else "") + c
    if group:
        raise _Malformed("Unterminated glob group.")
    return None if literal else out + "$"


def _bracket(glob: str, i: int, out: str) -> tuple[int, str]:
    out += "["
    if i < len(glob) and glob[i] in "!^":
        out += "^"
        i += 1
    if i < len(glob) and glob[i] == "]":
        out += "\\]"
        i += 1
    while i < len(glob):
        c = glob[i]
        i += 1
        if c == "]":
            return i, out + "]"
        if c == "\\" and i < len(glob):
            escaped = glob[i]
            i += 1
            out += ("\\" if escaped in "][\\-^" else "") + escaped
        else:
            out += "\\" + c if c in "[\\" else c
    raise _Malformed("Unterminated character class.")


def _component_pattern(component: str) -> re.Pattern[str] | None:
    """The compiled pattern of a component; None when it is matched literally (as Kafka does for a
    malformed glob too)."""
    try:
        regex = glob_regex(component)
        return None if regex is None else re.compile(regex, re.DOTALL)
    except (_Malformed, re.error):
        return None


def split_path(path: str) -> list[str]:
    """``CommandUtils.splitPath`` then ``stripDotPathComponents``."""
    out: list[str] = []
    for part in path.split("/"):
        if part == "..":
            if out:
                out.pop()
        elif part and part != ".":
            out.append(part)
    return out


@dataclass(frozen=True)
class Match:
    """A node a glob reached (``GlobVisitor.MetadataNodeInfo``)."""

    path: tuple[str, ...]
    node: Node

    @property
    def last_component(self) -> str:
        return self.path[-1] if self.path else "/"

    @property
    def absolute_path(self) -> str:
        return "/" + "/".join(self.path)


def visit(state: State, glob: str) -> list[Match]:
    """Every node ``glob`` reaches, in Kafka's order (``GlobVisitor``)."""
    full = glob if glob.startswith("/") else f"{state.working_directory}/{glob}"
    components = split_path(full)
    found: list[Match] = []

    def accept(index: int, node: Node, path: tuple[str, ...]) -> None:
        if index >= len(components):
            found.append(Match(path, node))
            return
        if not node.is_directory:
            return
        component = components[index]
        pattern = _component_pattern(component)
        if pattern is None:
            child = node.child(component)
            if child is not None:
                accept(index + 1, child, (*path, component))
            return
        for name in java_sorted(node.child_names()):
            if pattern.fullmatch(name):
                child = node.child(name)
                if child is not None:
                    accept(index + 1, child, (*path, name))

    accept(0, state.root, ())
    return found


def effective_paths(paths: tuple[str | int, ...]) -> list[str]:
    """``CommandUtils.getEffectivePaths``: empty paths dropped, ``.`` when none is left."""
    return [str(path) for path in paths if path] or ["."]


# --------------------------------------------------------------------------- output helpers

def print_node(node: Node, write: Callable[[str], None], level: int = 0) -> None:
    """``MetadataNode.print`` through the ``ShellNodePrinter``."""
    indent = "  " * level
    if not node.is_directory:
        write(f"{indent}{node.text()}\n")
        return
    for name in java_sorted(node.child_names()):
        child = node.child(name)
        if child is not None:
            write(f"{indent}{name}:\n")
            print_node(child, write, level + 1)


def find_lines(path: str, node: Node) -> Iterator[str]:
    """``FindCommandHandler.find``: the path, then each node below it."""
    yield path
    if node.is_directory:
        for name in java_sorted(node.child_names()):
            child = node.child(name)
            if child is not None:
                yield from find_lines(path + name if path == "/" else f"{path}/{name}", child)


def tree_value(node: Node) -> Any:
    """A node and everything under it as JSON: directories as objects, leaves as their values."""
    if not node.is_directory:
        return node.value()
    out = {}
    for name in java_sorted(node.child_names()):
        child = node.child(name)
        if child is not None:
            out[name] = tree_value(child)
    return out


def _column_widths(entries: list[str], columns: int) -> tuple[list[int], int]:
    per_column = (len(entries) + columns - 1) // columns
    widths = [0] * columns
    for index, entry in enumerate(entries):
        widths[index // per_column] = max(widths[index // per_column], len(entry) + 2)
    return widths, per_column


def ls_entries(entries: list[str], screen_width: int | None) -> str:
    """``LsCommandHandler.printEntries``: one name a line, or columns that fit the screen."""
    if not entries:
        return ""
    widths, per_column = [0], len(entries)
    if screen_width is not None and screen_width // 4 > 1:
        for columns in range(screen_width // 4, 1, -1):
            candidate, candidate_per_column = _column_widths(entries, columns)
            if candidate[-1] != 0 and sum(candidate) <= screen_width:
                widths, per_column = candidate, candidate_per_column
                break
    columns = len(widths)
    lines = []
    for line in range((len(entries) + columns - 1) // columns):
        text = ""
        for column in range(columns):
            index = line + column * per_column
            if index < len(entries):
                entry = entries[index]
                text += entry
                if column < columns - 1:
                    text += " " * (widths[column] - len(entry))
        lines.append(text + "\n")
    return "".join(lines)


# --------------------------------------------------------------------------- running

@dataclass
class Result:
    """What a command printed, and for ``--output json`` its document; ``errors`` counts the targets
    it could not handle."""

    text: str = ""
    document: dict[str, Any] = field(default_factory=dict)
    errors: int = 0


def run(words: list[str], state: State, shell: Shell | None = None) -> Result:
    """Parse and run one command line, as the shell (``shell``) or a one-shot command runs it."""
    parsed = parse(words, shell=shell is not None)
    if parsed is None:
        return Result()
    if isinstance(parsed, ParseError):
        return Result(parsed.message + "\n", {"error": parsed.message}, 1)
    if isinstance(parsed, HelpRequest):
        return Result(command_help(parsed.command, format_width()))
    return _HANDLERS[parsed.command.name](parsed, state, shell)


def _ls(parsed: Parsed, state: State, shell: Shell | None) -> Result:
    result = Result(document={"listings": [], "errors": []})
    files: list[str] = []
    directories: list[tuple[str, list[str]]] = []
    for target in effective_paths(parsed.values):
        matches = visit(state, target)
        if not matches:
            result.text += f"ls: {target}: no such file or directory.\n"
            result.document["errors"].append(f"{target}: no such file or directory")
            result.errors += 1
        for match in matches:
            if match.node.is_directory:
                children = java_sorted(match.node.child_names())
                directories.append((match.last_component, children))
                result.document["listings"].append(
                    {"path": match.absolute_path, "directory": True, "children": children})
            else:
                files.append(match.last_component)
                result.document["listings"].append({"path": match.absolute_path, "directory": False})
    width = shell.screen_width() if shell is not None else None
    result.text += ls_entries(files, width)
    need_intro = bool(files) or len(directories) > 1
    first_intro = not files
    for name, children in directories:
        if children and need_intro:
            result.text += ("" if first_intro else "\n") + f"{name}:\n"
        if need_intro:
            first_intro = False
        result.text += ls_entries(children, width)
    return result


def _cat(parsed: Parsed, state: State, shell: Shell | None) -> Result:
    result = Result(document={"nodes": [], "errors": []})
    for target in map(str, parsed.values):
        matches = visit(state, target)
        if not matches:
            result.text += f"cat: {target}: No such file or directory.\n"
            result.document["errors"].append(f"{target}: no such file or directory")
            result.errors += 1
        for match in matches:
            if match.node.is_directory:
                result.text += f"cat: {target}: Is a directory\n"
                result.document["errors"].append(f"{match.absolute_path}: is a directory")
                result.errors += 1
            else:
                result.text += f"{match.node.text()}\n"
                result.document["nodes"].append({"path": match.absolute_path, "value": match.node.value()})
    return result


def _find(parsed: Parsed, state: State, shell: Shell | None) -> Result:
    result = Result(document={"paths": [], "errors": []})
    for path in effective_paths(parsed.values):
        matches = visit(state, path)
        if not matches:
            result.text += f"find: {path}: no such file or directory.\n"
            result.document["errors"].append(f"{path}: no such file or directory")
            result.errors += 1
        for match in matches:
            lines = list(find_lines(path, match.node))
            result.text += "".join(line + "\n" for line in lines)
            result.document["paths"].extend(find_lines(match.absolute_path, match.node))
    return result


def _tree(parsed: Parsed, state: State, shell: Shell | None) -> Result:
    result = Result(document={"trees": [], "errors": []})
    parts: list[str] = []
    for target in map(str, parsed.values):
        matches = visit(state, target)
        if not matches:
            parts.append(f"tree: {target}: No such file or directory.\n")
            result.document["errors"].append(f"{target}: no such file or directory")
            result.errors += 1
        for match in matches:
            print_node(match.node, parts.append)
            result.document["trees"].append({"path": match.absolute_path, "tree": tree_value(match.node)})
    result.text = "".join(parts)
    return result


def _cd(parsed: Parsed, state: State, shell: Shell | None) -> Result:
    target = str(parsed.values[0]) if parsed.values else "/"
    matches = visit(state, target)
    if not matches:
        return Result(f"cd: {target}: no such directory.\n", errors=1)
    text = ""
    for match in matches:
        if match.node.is_directory:
            state.working_directory = match.absolute_path
        else:
            text += f"cd: {target}: not a directory.\n"
    return Result(text)


def _pwd(parsed: Parsed, state: State, shell: Shell | None) -> Result:
    return Result(state.working_directory + "\n")


def _history(parsed: Parsed, state: State, shell: Shell | None) -> Result:
    """``HistoryCommandHandler`` over ``InteractiveShell.history``: the last N entries (all by
    default), numbered from 0."""
    if shell is None:
        return Result("The history command requires a shell.\n", errors=1)
    entries = shell.history()
    count = len(entries) if not parsed.values else max(0, min(int(parsed.values[0]), len(entries)))
    first = len(entries) - count
    return Result("".join(f"{index: 5d}  {entries[index]}\n" for index in range(first, len(entries))))


def _man(parsed: Parsed, state: State, shell: Shell | None) -> Result:
    name = str(parsed.values[0])
    command = TYPES.get(name)
    if command is None:
        return Result(f"man: unknown command {name}. Type help to get a list of commands.\n", errors=1)
    return Result(man_text(command, format_width()))


def _help(parsed: Parsed, state: State, shell: Shell | None) -> Result:
    return Result(shell_help(format_width()))


def _exit(parsed: Parsed, state: State, shell: Shell | None) -> Result:
    if shell is not None:
        shell.exit()
    return Result()


_HANDLERS: dict[str, Callable[[Parsed, State, Shell | None], Result]] = {
    "cat": _cat, "cd": _cd, "exit": _exit, "find": _find, "help": _help, "history": _history, "ls": _ls,
    "man": _man, "pwd": _pwd, "tree": _tree,
}
