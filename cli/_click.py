"""click classes that parse arguments the way Kafka's tools (argparse4j) do.

Scripts written against Kafka's tools rely on argparse4j's behaviour, which click does not share:

* a long option may be shortened to any unambiguous prefix (``--clu`` for ``--cluster-id``);
  options listed in ``exact_only`` (additions of this project) are left out of the matching, so
  that they never make one of Kafka's abbreviations ambiguous;
* a parse error prints the usage line and ``<prog>: error: <message>`` on stderr and exits with 1;
* ``-h``/``--help`` prints the help and exits with 0;
* options that argparse4j puts in a mutually exclusive group are refused together
  (``exclusive`` groups, optionally ``required``); a required group is shown at the end of the usage
  line as ``(--a A | --b B)`` and named by all its flags when missing, as argparse4j does;
* with ``from_file_prefix="@"``, an argument ``@path`` is replaced by the lines of that file.

Use :class:`KafkaGroup` for the tool and :class:`KafkaCommand` (its default) for the subcommands;
call the group's ``main`` as a console-script entry point.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple, NoReturn

import click
from click.core import ParameterSource

HELP_OPTIONS = ("-h", "--help")
CONTEXT_SETTINGS: Mapping[str, Any] = {"help_option_names": list(HELP_OPTIONS), "max_content_width": 100}
"""Pass as ``context_settings`` of the group: ``-h`` as well as ``--help``."""


class Exclusive(NamedTuple):
    """Options (by parameter name) that may not be given together; ``required``: one must be given.
    (A named tuple, as the tools' other values made at start-up: a tenth of a frozen dataclass's cost.)"""

    names: tuple[str, ...]
    required: bool = False


def _option_label(param: click.Parameter) -> str:
    """argparse4j names an option by all its flags, in declaration order: ``--config/-c``."""
    if isinstance(param, click.Option):
        return "/".join(param.opts + param.secondary_opts)
    return param.human_readable_name


def _takes_value(param: click.Parameter | None) -> bool:
    return isinstance(param, click.Option) and not param.is_flag and not param.count


class _KafkaParsing:
    """Prefix matching and argparse-style usage, shared by the command and the group classes."""

    exact_only: frozenset[str] = frozenset()

    def _expand_prefixes(self, ctx: click.Context, args: list[str],
                         stop_at_positional: bool) -> tuple[list[str], bool]:
        """Spell out abbreviated long options; values that follow an option are left alone. Also says
        whether a positional argument (for a group: the subcommand) was seen."""
        assert isinstance(self, click.Command)
        flags: dict[str, click.Parameter] = {}
        for param in self.get_params(ctx):
            for flag in (*param.opts, *param.secondary_opts):
                flags[flag] = param
        out: list[str] = []
        index = 0
        while index < len(args):
            token = args[index]
            index += 1
            if token == "--":
                return out + args[index - 1:], index < len(args)
            if token.startswith("--"):
                name, equals, value = token.partition("=")
                if name not in flags:
                    matches = sorted(flag for flag in flags if flag.startswith("--")
                                     and flag.startswith(name) and flag not in self.exact_only)
                    if len({id(flags[flag]) for flag in matches}) > 1:
                        raise click.UsageError(f"ambiguous option: {name} could match {', '.join(matches)}",
                                               ctx)
                    name = matches[0] if matches else name
                out.append(name + equals + value)
                if not equals and _takes_value(flags.get(name)) and index < len(args):
                    out.append(args[index])
                    index += 1
            elif token.startswith("-") and len(token) > 1:
                out.append(token)
                if len(token) == 2 and _takes_value(flags.get(token)) and index < len(args):
                    out.append(args[index])
                    index += 1
            else:
                out.append(token)
                if stop_at_positional:
                    return out + args[index:], True
        return out, False

    def _usage_options(self, ctx: click.Context) -> list[click.Option]:
        """The options the usage line shows, in declaration order (not help, not hidden ones)."""
        assert isinstance(self, click.Command)
        return [param for param in self.get_params(ctx) if isinstance(param, click.Option)
                and not set(param.opts) & set(HELP_OPTIONS) and not param.hidden]

    def _usage_pieces(self, ctx: click.Context) -> list[str]:
        """``[-h] --config CONFIG [--feature FEATURE] [--standalone]``: help first, then in order."""
        return ["[-h]", *(_usage_piece(param) for param in self._usage_options(ctx))]

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write("usage: " + " ".join([ctx.command_path, *self._usage_pieces(ctx)]) + "\n")


def _usage_syntax(param: click.Option) -> str:
    """``--config CONFIG``: the first flag and, for an option that takes a value, its metavar."""
    text = param.opts[0]
    if _takes_value(param):
        choices = param.type.choices if isinstance(param.type, click.Choice) else None
        text += " " + (param.metavar or ("{" + ",".join(map(str, choices)) + "}" if choices
                                         else (param.name or "").upper()))
    return text


def _usage_piece(param: click.Option) -> str:
    return _usage_syntax(param) if param.required else f"[{_usage_syntax(param)}]"



_GIVEN = (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)


def _with_context(ctx: click.Context, parse: Callable[[], list[str]]) -> list[str]:
    """click's option parser raises some usage errors without a context: attach the command's, so
    that the report shows its usage line and name."""
    try:
        return parse()
    except click.UsageError as exc:
        if exc.ctx is None:
            exc.ctx = ctx
        raise


class KafkaCommand(_KafkaParsing, click.Command):
    """A subcommand with Kafka's option parsing (see the module docstring)."""

    def __init__(self, *args: Any, exclusive: Sequence[Exclusive] = (), exact_only: Sequence[str] = (),
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.exclusive = tuple(exclusive)
        self.exact_only = frozenset(exact_only)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        expanded = self._expand_prefixes(ctx, args, stop_at_positional=False)[0]
        ctx.allow_extra_args = True
        rest = _with_context(ctx, lambda: super(KafkaCommand, self).parse_args(ctx, expanded))
        if ctx.resilient_parsing:  # shell completion parses partial command lines
            return rest
        if rest:
            raise click.UsageError(f"unrecognized arguments: '{' '.join(rest)}'", ctx)
        params = {param.name: param for param in self.get_params(ctx)}
        for group in self.exclusive:
            given = [name for name in group.names if ctx.get_parameter_source(name) in _GIVEN]
            if len(given) > 1:
                raise click.UsageError(f"argument {_option_label(params[given[1]])}: not allowed with "
                                       f"argument {_option_label(params[given[0]])}", ctx)
            if group.required and not given:
                labels = " ".join(_option_label(params[name]) for name in group.names)
                raise click.UsageError(f"one of the arguments {labels} is required", ctx)
        return rest

    def _usage_pieces(self, ctx: click.Context) -> list[str]:
        """argparse4j's order: the other options, then each required exclusive group as
        ``(--a A | --b B)``."""
        grouped = {name for group in self.exclusive if group.required for name in group.names}
        options = self._usage_options(ctx)
        pieces = ["[-h]", *(_usage_piece(param) for param in options if param.name not in grouped)]
        for group in self.exclusive:
            if group.required:
                members = [param for name in group.names for param in options if param.name == name]
                pieces.append("(" + " | ".join(_usage_syntax(param) for param in members) + ")")
        return pieces


class KafkaGroup(_KafkaParsing, click.Group):
    """The tool: subcommands are :class:`KafkaCommand` unless said otherwise; ``main`` turns parse errors
    into argparse4j's output and exit code 1."""

    command_class = KafkaCommand

    def __init__(self, *args: Any, from_file_prefix: str | None = None, exact_only: Sequence[str] = (),
                 **kwargs: Any) -> None:
        kwargs.setdefault("no_args_is_help", False)
        super().__init__(*args, **kwargs)
        self.from_file_prefix = from_file_prefix
        self.exact_only = frozenset(exact_only)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """argparse4j requires the subcommand: without one it is a parse error, not the help (which
        ``-h`` still prints, while the options are parsed)."""
        expanded, has_command = self._expand_prefixes(ctx, args, stop_at_positional=True)
        rest = _with_context(ctx, lambda: super(KafkaGroup, self).parse_args(ctx, expanded))
        if not has_command and not ctx.resilient_parsing:
            raise click.UsageError("too few arguments", ctx)
        return rest

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None,
                                                                          list[str]]:
        name = args[0]
        if self.get_command(ctx, name) is None:
            choices = ", ".join(f"'{command}'" for command in self.list_commands(ctx))
            raise click.UsageError(f"invalid choice: '{name}' (choose from {choices})", ctx)
        return super().resolve_command(ctx, args)

    def list_commands(self, ctx: click.Context) -> list[str]:
        """In the order they were added, as argparse4j lists them."""
        return list(self.commands)

    def _usage_pieces(self, ctx: click.Context) -> list[str]:
        return ["[-h]", "{" + ",".join(self.list_commands(ctx)) + "}", "..."]

    def _expand_files(self, args: list[str]) -> list[str]:
        """``@path`` becomes the lines of ``path``, one argument per line."""
        if self.from_file_prefix is None:
            return args
        expanded: list[str] = []
        for token in args:
            if token.startswith(self.from_file_prefix) and len(token) > len(self.from_file_prefix):
                path = token[len(self.from_file_prefix):]
                try:
                    with open(path, encoding="utf-8") as stream:
                        expanded += stream.read().splitlines()
                except OSError as exc:
                    raise click.UsageError(f"Could not read arguments from file {path}: "
                                           f"{exc.strerror}") from None
                except UnicodeDecodeError as exc:
                    byte = exc.object[exc.start]
                    raise click.UsageError(f"Could not read arguments from file {path}: not UTF-8 text "
                                           f"(byte 0x{byte:02x} at offset {exc.start})") from None
            else:
                expanded.append(token)
        return expanded

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,  # type: ignore[override]
             **extra: Any) -> NoReturn:
        """Run the tool and exit: 0 on success and help, 1 on parse errors and refusals."""
        prog = prog_name or self.name or "kafka"
        arguments = list(sys.argv[1:] if args is None else args)
        run_tool(lambda: super(KafkaGroup, self).main(self._expand_files(arguments), prog,
                                                      standalone_mode=False, **extra), prog)


def run_tool(main: Callable[[], Any], prog: str) -> NoReturn:
    """Run a click tool's ``main(standalone_mode=False)`` and exit as argparse4j tools do: 0 on success
    and help, 1 on parse errors (usage and ``<prog>: error: <message>``) and refusals."""
    try:
        code = main()
    except click.UsageError as exc:
        _parse_error(exc, prog)
    except click.Abort:
        sys.stderr.write("Aborted!\n")
        sys.exit(1)
    except click.ClickException as exc:
        sys.stderr.write(exc.format_message() + "\n")
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)


def _parse_error(exc: click.UsageError, prog: str) -> NoReturn:
    """argparse4j's report: the usage of the (sub)command, then ``<prog>: error: <message>``."""
    ctx = exc.ctx
    usage = ctx.command.get_usage(ctx) + "\n" if ctx is not None else ""
    path = ctx.command_path if ctx is not None else prog
    sys.stderr.write(f"{usage}{path}: error: {_argparse_message(exc)}\n")
    sys.stderr.flush()
    sys.exit(1)


def _argparse_message(exc: click.UsageError) -> str:
    """click's messages in argparse4j's words where they differ."""
    if isinstance(exc, click.MissingParameter) and exc.param is not None:
        return f"argument {_option_label(exc.param)} is required"
    if isinstance(exc, click.NoSuchOption):
        return f"unrecognized arguments: '{exc.option_name}'"
    if isinstance(exc, click.BadOptionUsage) and exc.ctx is not None:
        param = next((p for p in exc.ctx.command.get_params(exc.ctx)
                      if exc.option_name in (*p.opts, *p.secondary_opts)), None)
        if param is not None and _takes_value(param):
            return f"argument {_option_label(param)}: expected one argument"
        if param is not None:
            return f"argument {_option_label(param)}: ignored explicit argument"
    return exc.format_message()
