"""All terminal output of the tools: Kafka's text, JSON for scripts, and progress on a TTY only.

Text that Kafka's tools print is matched byte for byte, so commands build it as strings and hand it
here unchanged. JSON output is one document per command, with stable field names documented in the
README.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NoReturn, TypeVar

OUTPUT_FORMATS = ("text", "json")
F = TypeVar("F", bound=Callable[..., object])


def output_option(command: F) -> F:
    """Add ``--output text|json`` to a command. click is loaded here rather than with the module, so
    that ``kafka-storage random-uuid`` prints through this module without loading it."""
    import click

    return click.option(
        "--output",
        "output_format",
        type=click.Choice(OUTPUT_FORMATS),
        default="text",
        show_default=True,
        help="Print Kafka's text, or one JSON document for scripts (example: --output json).",
    )(command)


def complete_var(tool: str) -> str:
    """The environment variable that carries a shell's request for ``tool``'s completions (click's
    protocol, ``Command.main``)."""
    return f"_{tool.replace('-', '_').upper()}_COMPLETE"


def write(text: str) -> None:
    """Print text exactly as given (callers supply Kafka's newlines). A standard output that cannot take
    it (closed, or a file on a full disk) ends the tool with one line on stderr and exit status 1; a
    reader that went away (a closed pipe) is left to click, which exits quietly with 1."""
    stdout = sys.stdout
    try:
        if stdout is None:
            raise OSError(errno.EBADF, "standard output is closed")
        stdout.write(text)
        stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - so that the exit does not flush again
        fail(f"Cannot write the output: {exc.strerror or exc}")


def write_json(document: Any) -> None:
    """Print one JSON document, keys in the order the command built them."""
    import json  # on use: most commands print text

    write(json.dumps(document, indent=2) + "\n")


def fail(message: str, code: int = 1) -> NoReturn:
    """Print a terse error to stderr and exit, as Kafka's tools do for errors they expect."""
    sys.stderr.write(message.rstrip("\n") + "\n")
    sys.stderr.flush()
    raise SystemExit(code)


@contextmanager
def progress(description: str) -> Iterator[None]:
    """Show a spinner on stderr while waiting, only when stderr is a terminal (never in scripts)."""
    if not sys.stderr.isatty():
        yield
        return
    from rich.console import Console

    with Console(stderr=True).status(description):
        yield
