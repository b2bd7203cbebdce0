"""Command lines as Kafka's ``Commands`` parses them with argparse4j, and argparse4j's help text."""

from __future__ import annotations

import pytest

from kafka_admin_kraft_cli.metadata_shell.parsing import (
    TYPES,
    HelpRequest,
    Parsed,
    ParseError,
    command_help,
    format_width,
    man_text,
    parse,
    shell_help,
    wrap,
)


@pytest.mark.parametrize(
    ("words", "shell", "message"),
    [
        (["pwd"], False, "invalid choice: 'pwd' (choose from 'cat', 'find', 'ls', 'tree')"),
        (["l"], False, "invalid choice: 'l': did you mean 'ls'?"),
        (["c"], False, "too few arguments"),  # cat's own parser refuses first
        (["c", "/image"], False, "invalid choice: 'c': did you mean 'cat'?"),
        (["c"], True, "ambiguous command: c could match cat, cd"),
        (["h"], True, "ambiguous command: h could match help, history"),
        (
            ["nope"],
            True,
            "invalid choice: 'nope' (choose from 'cat', 'cd', 'exit', 'find', 'help', 'history', 'ls', "
            "'man', 'pwd', 'tree')",
        ),
        (["-x"], True, "unrecognized arguments: '-x'"),
        (["cat"], False, "too few arguments"),
        (["man"], True, "too few arguments"),
        (["man", "ls", "cat"], True, "unrecognized arguments: 'cat'"),
        (["pwd", "a", "b"], True, "unrecognized arguments: 'a b'"),
        (["ls", "-l"], False, "unrecognized arguments: '-l'"),
        (["history", "abc"], True, "argument numEntriesToShow: could not convert 'abc' to Integer"),
        (
            ["history", "99999999999"],
            True,
            "argument numEntriesToShow: could not convert '99999999999' to Integer",
        ),
    ],
)
def test_refused_command_lines_give_argparse4js_words(words: list[str], shell: bool, message: str) -> None:
    assert parse(words, shell=shell) == ParseError(message)


def test_accepted_command_lines() -> None:
    assert parse(["ls", "/image", ""], shell=False) == Parsed(TYPES["ls"], ("/image",))
    assert parse([], shell=True) is None and parse(["", ""], shell=True) is None
    assert parse(["history", "-5"], shell=True) == Parsed(TYPES["history"], (-5,))  # a number, not a flag
    assert parse(["cat", "--", "-weird"], shell=False) == Parsed(TYPES["cat"], ("-weird",))
    assert parse(["tree", "-h"], shell=False) == HelpRequest(TYPES["tree"])
    assert parse(["cd", "--he"], shell=True) == HelpRequest(TYPES["cd"])


def test_help_wraps_and_justifies_as_argparse4j() -> None:
    text = shell_help(75)
    assert text.startswith(
        "Welcome to the Apache Kafka metadata shell.\n\n"
        "usage:  {cat,cd,exit,find,help,history,ls,man,pwd,tree} ...\n\n"
        "positional arguments:\n"
        "  {cat,cd,exit,find,help,history,ls,man,pwd,tree}\n"
        "    cat                  Show the contents of metadata files.\n"
    )
    assert text.endswith(
        "    tree                 Show the contents  of  metadata  nodes  in  a tree\n"
        "                         structure.\n"
    )
    assert shell_help(120).endswith(
        "    tree                 Show the contents of metadata nodes in a tree structure.\n"
    )


def test_man_and_command_help() -> None:
    assert man_text(TYPES["history"], 75) == (
        "history: Print command history.\n\n"
        "usage: history [numEntriesToShow]\n\n"
        "positional arguments:\n"
        "  numEntriesToShow       The number of entries to show.\n"
    )
    assert man_text(TYPES["pwd"], 75) == "pwd: Print the current working directory.\n\nusage: pwd\n"
    assert man_text(TYPES["cat"], 75).splitlines()[2] == "usage: cat targets [targets ...]"
    assert command_help(TYPES["ls"], 75) == (
        "usage:  ls [-h] [targets [targets ...]]\n\n"
        "positional arguments:\n"
        "  targets                The metadata node paths to list.\n\n"
        "named arguments:\n"
        "  -h, --help             show this help message and exit\n"
    )


def test_wrap_breaks_long_words_onto_their_own_lines() -> None:
    assert wrap("a " + "b" * 80, 75, 25, "  ") == "a\n  " + "b" * 80


def test_format_width_follows_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    assert format_width() == 120
    monkeypatch.setenv("COLUMNS", "wide")
    assert format_width() == 75
