"""`--bootstrap-server` / `--bootstrap-controller` / `--command-config`, shared by the tools that talk
to a cluster, and the translation of SDK exceptions into the text Kafka's tools print.

Kafka's tools build an Admin client from the `--command-config` properties with the chosen bootstrap
option on top; the file may hold anything (for `add-controller` it is a whole controller config), and
the Java client ignores what it does not use. The SDK refuses unknown properties by design, so only
the client settings it knows are passed on, and `ssl.*` / `sasl.*` only when `security.protocol` uses
them, which is what the Java client effectively does.

Nothing here imports the SDK at module level: the tools import this module to declare their options,
and `--help` must stay fast.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, NamedTuple, TypeVar

import click

from . import output

if TYPE_CHECKING:
    from kafka_admin_kraft.admin import Admin
    from kafka_admin_kraft.errors import KafkaAdminError, Refusal

F = TypeVar("F", bound=Callable[..., object])

JAVA_ERRORS_PACKAGE = "org.apache.kafka.common.errors."


if TYPE_CHECKING:
    _IntType = click.ParamType[int]
else:  # click before 8.2 has no generic ParamType
    _IntType = click.ParamType


class JavaInt(_IntType):
    """An int option that fails the way argparse4j's Integer type does, as a parse error."""

    name = "integer"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        text = str(value)
        digits = text[1:] if text[:1] in "+-" else text
        if digits.isascii() and digits.isdigit() and -(2**31) <= int(text) < 2**31:
            return int(text)
        label = "/".join(param.opts) if param is not None else "value"
        raise click.UsageError(
            f"argument {label}: could not convert '{text}' to Integer (For input string: \"{text}\")", ctx
        )


JAVA_INT = JavaInt()


def bootstrap_options(command: F) -> F:
    """Add the three connection options to a tool's top-level group."""
    options = [
        click.option(
            "--bootstrap-server",
            metavar="HOSTS",
            help="Brokers to connect to (they forward to the active controller), as host:port[,host:port]. "
            "Example: --bootstrap-server localhost:9092",
        ),
        click.option(
            "--bootstrap-controller",
            metavar="HOSTS",
            help="Controllers to connect to directly, as host:port[,host:port]. "
            "Example: --bootstrap-controller localhost:9093",
        ),
        click.option(
            "--command-config",
            metavar="FILE",
            help="Kafka client properties (security.protocol, ssl.*, sasl.*, timeouts) for the admin client. "
            "Example: --command-config admin.properties",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


class AdminTarget(NamedTuple):
    """Where and how to connect, as given on the command line."""

    bootstrap_server: str | None
    bootstrap_controller: str | None
    command_config: str | None

    def check(self, ctx: click.Context) -> None:
        """Exactly one bootstrap option, with argparse4j's words for a required exclusive group."""
        root = ctx.find_root()
        if self.bootstrap_server is not None and self.bootstrap_controller is not None:
            raise click.UsageError(
                "argument --bootstrap-controller: not allowed with argument --bootstrap-server", root
            )
        if self.bootstrap_server is None and self.bootstrap_controller is None:
            raise click.UsageError(
                "one of the arguments --bootstrap-server --bootstrap-controller is required", root
            )

    def command_properties(self) -> dict[str, str]:
        """The `--command-config` file as read (empty without one)."""
        return {} if self.command_config is None else read_properties_file(self.command_config)

    def connect_options(self) -> str:
        """The connection options as given, for a printed command to repeat so that it runs as it is."""
        if self.bootstrap_server is not None:
            words = ["--bootstrap-server", self.bootstrap_server]
        else:
            words = ["--bootstrap-controller", str(self.bootstrap_controller)]
        if self.command_config is not None:
            words += ["--command-config", self.command_config]
        return shlex.join(words)

    def admin_properties(self, properties: dict[str, str]) -> dict[str, str]:
        """Client properties for the SDK: the settings it uses, plus the chosen bootstrap key."""
        from kafka_admin_kraft.client.config import client_settings

        kept = client_settings(properties)
        kept.pop("bootstrap.servers", None)
        kept.pop("bootstrap.controllers", None)
        if self.bootstrap_server is not None:
            kept["bootstrap.servers"] = self.bootstrap_server
        else:
            kept["bootstrap.controllers"] = str(self.bootstrap_controller)
        return kept


def read_properties_file(path: str) -> dict[str, str]:
    """A properties file named on the command line, loaded as Kafka's tools load it; a missing or
    unreadable file ends the tool with Kafka's message."""
    if not os.path.exists(path):
        output.fail(f"Properties file {path} does not exists!")
    from kafka_admin_kraft.client.config import load_properties
    from kafka_admin_kraft.errors import ConfigError

    try:
        return load_properties(path)
    except ConfigError as exc:
        output.fail(str(exc))


def target(ctx: click.Context) -> AdminTarget:
    """The tool's connection options, checked (subcommands call this first, so that `<cmd> --help`
    works without a bootstrap option, as in Kafka)."""
    found = ctx.find_object(AdminTarget)
    if found is None:
        raise RuntimeError("the tool's group did not record its connection options")
    found.check(ctx)
    return found


def connect(ctx: click.Context) -> tuple[dict[str, str], Admin]:
    """Kafka's order: load `--command-config`, set the bootstrap key, create the Admin client. Returns
    the `--command-config` properties too (add-controller reads the controller's identity there)."""
    where = target(ctx)
    properties = where.command_properties()
    return properties, open_admin(where.admin_properties(properties))


def open_admin(properties: dict[str, str]) -> Admin:
    """An Admin client from client properties; a bad setting is a terse error."""
    from kafka_admin_kraft.admin import Admin
    from kafka_admin_kraft.errors import ConfigError

    try:
        return Admin.from_config(properties)
    except ConfigError as exc:
        output.fail(str(exc))


def error_text(exc: BaseException) -> str:
    """What Kafka's tools print for a failed admin call: `<Java exception class>: <message>`."""
    from kafka_admin_kraft.errors import (
        AuthenticationError,
        BootstrapError,
        ConfigError,
        KafkaApiError,
        KafkaTimeoutError,
        UnknownNodeError,
        UnsupportedOperationError,
    )

    if isinstance(exc, KafkaApiError):
        message = exc.message if exc.refusal is None else refusal_text(exc.refusal)
        return f"{JAVA_ERRORS_PACKAGE}{exc.java_exception}: {message}"
    if isinstance(exc, (KafkaTimeoutError, BootstrapError)):
        return f"{JAVA_ERRORS_PACKAGE}TimeoutException: {exc}"
    if isinstance(exc, UnsupportedOperationError):
        return f"{JAVA_ERRORS_PACKAGE}UnsupportedVersionException: {exc}"
    if isinstance(exc, AuthenticationError):
        return f"{JAVA_ERRORS_PACKAGE}{exc.java_exception}: {exc.reason}"
    if isinstance(exc, (ConfigError, UnknownNodeError)):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


def report_error(exc: KafkaAdminError) -> str:
    """Write Kafka's line for a failed admin call on stderr, then, on a line of its own, what to do when
    the SDK knows (``KafkaApiError.hint``); returns Kafka's line."""
    from kafka_admin_kraft.errors import KafkaApiError

    text = error_text(exc)
    sys.stderr.write(text + "\n")
    if isinstance(exc, KafkaApiError) and exc.hint:
        sys.stderr.write(f"Note: {exc.hint}\n")
    sys.stderr.flush()
    return text


def refusal_text(refusal: Refusal) -> str:
    """An authorization refusal in the tools' terms: who was refused, what grants it, and that the
    read-only commands need only DESCRIBE on the cluster through brokers, where DescribeCluster (what
    ``--bootstrap-controller`` asks first) needs nothing."""
    text = refusal.text("--bootstrap-server")
    if refusal.listener == "controller" and refusal.broker_operation is None:
        text += ", and read-only commands (describe, check, watch) need only DESCRIBE on the cluster"
    return text


@contextmanager
def reported_errors() -> Iterator[None]:
    """Turn SDK errors into Kafka's stderr text and exit status 1."""
    from kafka_admin_kraft.errors import KafkaAdminError

    try:
        yield
    except KafkaAdminError as exc:
        report_error(exc)
        raise SystemExit(1) from None
