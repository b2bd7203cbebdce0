"""The shell's command language as Kafka's ``Commands`` parses it with argparse4j (0.7.0, Kafka's
version), and the help text argparse4j prints for it.

Kafka builds one argparse4j parser whose subparsers are the commands, sorted by name
(``Commands.TYPES`` is a ``TreeMap``); without a terminal only ``cat``, ``find``, ``ls`` and ``tree``
exist (the others are ``shellOnly``). What argparse4j does with a command line, and Kafka with its
result (``Commands.parseCommand``):

* trailing empty words are dropped; nothing left is no command at all;
* a command may be shortened to a prefix of one command (``l`` is ``ls``), which Kafka then refuses
  with ``invalid choice: 'l': did you mean 'ls'?``; a prefix of several is ``ambiguous command: c
  could match cat, cd``; anything else ``invalid choice: 'x' (choose from 'cat', 'find', 'ls', 'tree')``;
* ``-h``/``--help`` (or a prefix of ``--help``) prints the command's help; another word starting with
  ``-`` (but not ``-`` alone or a negative number) is ``unrecognized arguments: '-x'``, as are words
  past the last positional argument; a missing one is ``too few arguments``; ``--`` ends the options;
* ``history``'s count must be an int (``argument numEntriesToShow: could not convert 'x' to Integer``).

Help text follows argparse4j's ``printHelp``: ``usage:`` lines wrapped at the format width, then
``positional arguments:`` with each title in two spaces and its help from column 25, wrapped and
justified as ``TextHelper.wrap`` and ``adjustSpace`` do. The format width is argparse4j's
``TerminalWidth``: ``$COLUMNS``, else the controlling terminal's columns, else 75.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Final

DEFAULT_FORMAT_WIDTH: Final = 75
INDENT_WIDTH: Final = 25
HELP_FLAGS: Final = ("-h", "--help")
_NEGATIVE_NUMBER: Final = re.compile(r"-\d+")
INT_MIN: Final = -(1 << 31)
INT_MAX: Final = (1 << 31) - 1


@dataclass(frozen=True)
class Argument:
    """A positional argument: its name, argparse4j's nargs (``*``, ``+``, ``?`` or ``1``) and help."""

    name: str
    nargs: str
    help: str
    integer: bool = False

    def syntax(self) -> str:
        """argparse4j's ``formatMetavar``."""
        if self.nargs == "?":
            return f"[{self.name}]"
        if self.nargs == "*":
            return f"[{self.name} [{self.name} ...]]"
        if self.nargs == "+":
            return f"{self.name} [{self.name} ...]"
        return self.name


@dataclass(frozen=True)
class CommandType:
    name: str
    description: str
    shell_only: bool
    argument: Argument | None = None


TYPES: Final = {command.name: command for command in sorted([
    CommandType("cat", "Show the contents of metadata files.", False,
                Argument("targets", "+", "The metadata files to display.")),
    CommandType("cd", "Set the current working directory.", True,
                Argument("target", "?", "The directory to change to.")),
    CommandType("exit", "Exit the metadata shell.", True),
    CommandType("find", "Search for nodes in the directory hierarchy.", False,
                Argument("paths", "*", "The paths to start at.")),
    CommandType("help", "Display this help message.", True),
    CommandType("history", "Print command history.", True,
                Argument("numEntriesToShow", "?", "The number of entries to show.", integer=True)),
    CommandType("ls", "List metadata nodes.", False,
                Argument("targets", "*", "The metadata node paths to list.")),
    CommandType("man", "Show the help text for a specific command.", True,
                Argument("cmd", "1", "The command to get help text for.")),
    CommandType("pwd", "Print the current working directory.", True),
    CommandType("tree", "Show the contents of metadata nodes in a tree structure.", False,
                Argument("targets", "+", "The metadata nodes to display.")),
], key=lambda command: command.name)}
"""Kafka's command handlers' ``TYPE``s: name, description, shell only, arguments (``Commands.TYPES``)."""


@dataclass(frozen=True)
class Parsed:
    """A parsed command line: the command and its argument values (a list for ``*``/``+``)."""

    command: CommandType
    values: tuple[str | int, ...]


@dataclass(frozen=True)
class ParseError:
    """What Kafka prints for a command line argparse4j refuses (``ErroneousCommandHandler``)."""

    message: str


@dataclass(frozen=True)
class HelpRequest:
    """``-h`` on a command: argparse4j prints its help, Kafka then does nothing."""

    command: CommandType


def available(shell: bool) -> list[CommandType]:
    return [command for command in TYPES.values() if shell or not command.shell_only]


def _is_flag(word: str) -> bool:
    return len(word) > 1 and word.startswith("-") and not _NEGATIVE_NUMBER.fullmatch(word)


def _unrecognized(words: list[str]) -> ParseError:
    return ParseError(f"unrecognized arguments: '{' '.join(words)}'")


def parse(words: list[str], *, shell: bool) -> Parsed | ParseError | HelpRequest | None:
    """A command line as ``Commands.parseCommand`` reads it; None when it holds no command."""
    words = list(words)
    while words and not words[-1]:
        words.pop()
    if not words:
        return None
    commands = available(shell)
    first = words[0]
    if first != "--" and _is_flag(first):
        return _unrecognized([first])
    if first == "--":
        words = words[1:]
        if not words:
            return ParseError("too few arguments")
        first = words[0]
    command = next((c for c in commands if c.name == first), None)
    if command is None and first:
        matches = [c for c in commands if c.name.startswith(first)]
        if len(matches) > 1:
            return ParseError(f"ambiguous command: {first} could match {', '.join(c.name for c in matches)}")
        command = matches[0] if matches else None
    if command is None:
        choices = ", ".join(f"'{c.name}'" for c in commands)
        return ParseError(f"invalid choice: '{first}' (choose from {choices})")
    result = _parse_arguments(command, words[1:])
    if isinstance(result, Parsed) and command.name != first:
        return ParseError(f"invalid choice: '{first}': did you mean '{command.name}'?")
    return result


def _parse_arguments(command: CommandType, words: list[str]) -> Parsed | ParseError | HelpRequest:
    positional: list[str] = []
    separated = False
    for word in words:
        if not separated and word == "--":
            separated = True
        elif not separated and _is_flag(word):
            if word == "-h" or (word.startswith("--") and len(word) > 2 and "--help".startswith(word)):
                return HelpRequest(command)
            return _unrecognized([word])
        else:
            positional.append(word)
    argument = command.argument
    if argument is None:
        return _unrecognized(positional) if positional else Parsed(command, ())
    low, high = {"*": (0, None), "+": (1, None), "?": (0, 1), "1": (1, 1)}[argument.nargs]
    if len(positional) < low:
        return ParseError("too few arguments")
    if high is not None and len(positional) > high:
        return _unrecognized(positional[high:])
    if argument.integer and positional:
        value = _java_int(positional[0])
        if value is None:
            return ParseError(f"argument {argument.name}: could not convert '{positional[0]}' to Integer")
        return Parsed(command, (value,))
    return Parsed(command, tuple(positional))


def _java_int(text: str) -> int | None:
    """``Integer.valueOf``: an optional sign and ASCII digits, in the int range."""
    digits = text[1:] if text[:1] in "+-" else text
    if not (digits.isascii() and digits.isdigit()):
        return None
    value = int(text)
    return value if INT_MIN <= value <= INT_MAX else None


# --------------------------------------------------------------------------- help text

def format_width() -> int:
    """argparse4j's ``TerminalWidth``: ``$COLUMNS``, else the terminal's columns, else 75."""
    columns = os.environ.get("COLUMNS")
    if columns is not None:
        value = _java_int(columns)
        return value if value is not None and value > 0 else DEFAULT_FORMAT_WIDTH
    try:
        descriptor = os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY)
    except OSError:
        return DEFAULT_FORMAT_WIDTH
    try:
        return os.get_terminal_size(descriptor).columns or DEFAULT_FORMAT_WIDTH
    except OSError:
        return DEFAULT_FORMAT_WIDTH
    finally:
        os.close(descriptor)


def _adjust_space(text: str, width: int, current: int) -> str:
    """``TextHelper.adjustSpace``: trim, then spread the missing width over the blocks of spaces,
    the extra ones to the middle blocks."""
    stripped = text.strip(" ")
    current -= len(text) - len(stripped)
    parts = re.split(r"( +)", stripped)
    blocks = (len(parts) - 1) // 2
    if blocks == 0:
        return stripped
    need = width - current
    each = int(need / blocks)
    rest = need - each * blocks
    start = (blocks - rest + 1) // 2
    out = []
    for index, part in enumerate(parts):
        if index % 2:
            block = index // 2
            part += " " * max(0, each + (1 if start <= block < start + rest else 0))
        out.append(part)
    return "".join(out)


def wrap(text: str, width: int, offset: int, subsequent: str) -> str:
    """``TextHelper.wrap`` with an empty initial indent; breaks after the spaces that follow a word
    (``BreakIterator``'s line breaks in plain text)."""
    result = ""
    line = ""
    current = offset
    for piece in re.findall(r"\S+ *| +", text):
        current += len(piece)
        if current > width:
            result += _adjust_space(line, width, current - len(piece)) + "\n" + subsequent
            line = ""
            current = len(subsequent) + len(piece)
        line += piece
    return result + line


def help_line(title: str, text: str, width: int) -> str:
    """``TextHelper.printHelp``: the title in two spaces, its help from column 25."""
    if not text:
        return f"  {title}\n"
    pad = " " * (INDENT_WIDTH - len(title) - 2) if len(title) <= 21 else "\n" + " " * INDENT_WIDTH
    return f"  {title}{pad}{wrap(text, width, INDENT_WIDTH, ' ' * INDENT_WIDTH)}\n"


def usage(prog: str, pieces: list[str], width: int) -> str:
    """argparse4j's ``printUsage``: ``usage: <prog>`` and the pieces, wrapped under the prog."""
    head = f"usage: {prog}"
    if len(head) > 30:
        out, offset, first, subsequent = head + "\n", 6, " " * 6, " " * 6
    else:
        out, offset, first, subsequent = head, len(head), "", " " * len(head)
    out += first
    current = offset + len(first)
    for index, piece in enumerate(pieces):
        if index and current + len(piece) + 1 > width:
            out += "\n" + subsequent + " " + piece
            current = len(subsequent) + 1 + len(piece)
        else:
            out += " " + piece
            current += 1 + len(piece)
    return out + "\n"


def man_text(command: CommandType, width: int) -> str:
    """What ``man <command>`` prints (``ManCommandHandler``)."""
    pieces = [command.argument.syntax()] if command.argument else []
    text = f"{command.name}: {command.description}\n\n" + usage(command.name, pieces, width)
    if command.argument is not None:
        text += "\npositional arguments:\n" + help_line(command.argument.name, command.argument.help, width)
    return text


def command_help(command: CommandType, width: int) -> str:
    """What ``<command> -h`` prints: the subparser's help, with its ``-h`` option."""
    pieces = [command.name, "[-h]"] + ([command.argument.syntax()] if command.argument else [])
    text = usage("", pieces, width)
    if command.argument is not None:
        text += "\npositional arguments:\n" + help_line(command.argument.name, command.argument.help, width)
    return text + "\nnamed arguments:\n" + help_line("-h, --help", "show this help message and exit", width)


def shell_help(width: int) -> str:
    """What ``help`` prints (``HelpCommandHandler``): the greeting and the commands' parser help."""
    names = "{" + ",".join(TYPES) + "}"
    text = "Welcome to the Apache Kafka metadata shell.\n\n" + usage("", [names, "..."], width)
    text += "\npositional arguments:\n" + help_line(names, "", width)
    for command in TYPES.values():
        text += help_line(f"  {command.name}", command.description, width)
    return text
