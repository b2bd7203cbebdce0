"""`kafka-dump-log`: print the batches and records of KRaft metadata log segments, snapshots and
indexes, as Kafka's `kafka-dump-log.sh` (`DumpLogSegments`, Kafka 4.2) prints them.

Options are parsed the way Kafka's tool parses them (jopt-simple, no abbreviations): `--files` takes
a comma-separated list, flags take no value, `--key-decoder-class`/`--value-decoder-class` take an
optional class name, arguments that are not options are ignored. Addition: `--output json`, one JSON
object per line.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, NoReturn

import click

PROG = "kafka-dump-log"
DESCRIPTION = ("This tool helps to parse a log file and dump its contents to the console, useful for "
               "debugging a seemingly corrupt log segment.")
INT32_MAX = 0x7FFFFFFF
STRING_DECODER = "org.apache.kafka.tools.api.StringDecoder"
UNSUPPORTED_DECODERS = ("offsets-decoder", "transaction-log-decoder")
"""Decoders Kafka picks before --cluster-metadata-decoder; their topics are not metadata logs."""
LATER_DECODERS = ("remote-log-metadata-decoder", "share-group-state-decoder")
"""Decoders Kafka picks only without --cluster-metadata-decoder."""


class ArgumentError(Exception):
    """A command line Kafka's tool refuses; ``usage`` says whether it prints its help as well."""

    def __init__(self, message: str, *, usage: bool = False) -> None:
        super().__init__(message)
        self.usage = usage


class JoptCommand(click.Command):
    """A command whose arguments are parsed as jopt-simple parses Kafka's ``CommandDefaultOptions``:
    ``--name value``, ``--name=value`` or ``-name``; no prefix matching; a required argument takes
    the next word whatever it looks like, an optional one only a word not starting with ``-``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if ctx.resilient_parsing:  # shell completion: click's own parsing of a partial line
            return super().parse_args(ctx, args)
        flags = {opt[2:]: param for param in self.params if isinstance(param, click.Option)
                 for opt in param.opts}
        given: dict[str, list[str | None]] = {}
        index = 0
        while index < len(args):
            token = args[index]
            index += 1
            if token == "--":
                break
            if not token.startswith("-") or token == "-":
                continue
            name, equals, inline = token.lstrip("-").partition("=")
            param = flags.get(name)
            if param is None:
                raise ArgumentError(f"{name} is not a recognized option")
            values = given.setdefault(name, [])
            if param.is_flag:
                if equals:
                    raise ArgumentError(f"Option {name} does not take an argument")
                values.append(None)
            elif equals:
                values.append(inline)
            elif _optional_value(param):
                takes = index < len(args) and not args[index].startswith("-")
                values.append(args[index] if takes else None)
                index += int(takes)
            elif index < len(args):
                values.append(args[index])
                index += 1
            else:
                raise ArgumentError(f"Option {name} requires an argument")
        ctx.params.update(_values(self, given))
        ctx.meta["given"] = set(given)
        if not args:
            raise ArgumentError(DESCRIPTION, usage=True)
        return []

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,  # type: ignore[override]
             **extra: Any) -> NoReturn:
        arguments = list(sys.argv[1:] if args is None else args)
        try:
            code = super().main(arguments, prog_name or PROG, standalone_mode=False, **extra)
        except KeyboardInterrupt:
            sys.exit(130)
        except ArgumentError as exc:
            if exc.usage:
                sys.stderr.write(f"{exc}\n{help_text(self)}")
            else:
                sys.stderr.write(f"Error: {exc}\n")
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


def _optional_value(param: click.Option) -> bool:
    return param.name in ("key_decoder_class", "value_decoder_class")


def _values(command: click.Command, given: dict[str, list[str | None]]) -> dict[str, Any]:
    """The callback's arguments: flags as booleans, values converted as jopt converts them."""
    params: dict[str, Any] = {}
    for param in command.params:
        if not isinstance(param, click.Option) or param.name is None:
            continue
        name = param.opts[0][2:]
        values = given.get(name, [])
        if param.is_flag:
            params[param.name] = bool(values)
            continue
        if len(values) > 1:
            raise ArgumentError(f"Found multiple arguments for option {name}, but you asked for only one")
        value = values[0] if values else None
        if value is None:
            params[param.name] = _default(param)
        elif isinstance(param.type, click.types.IntParamType):
            params[param.name] = _java_int(value, name)
        elif isinstance(param.type, click.Choice) and value not in param.type.choices:
            raise ArgumentError(f"Cannot parse argument '{value}' of option {name} "
                                f"(one of {', '.join(map(str, param.type.choices))})")
        else:
            params[param.name] = value
    return params


def _default(param: click.Option) -> Any:
    """The declared default; None where there is none (click's own marker for that is not a value)."""
    return param.default if isinstance(param.default, str | int) else None


def _java_int(text: str, option: str) -> int:
    """``Integer.valueOf``: an optional sign and ASCII digits, in the int range."""
    digits = text[1:] if text[:1] in "+-" else text
    if digits.isascii() and digits.isdigit():
        value = int(text)
        if -INT32_MAX - 1 <= value <= INT32_MAX:
            return value
    raise ArgumentError(f"Cannot parse argument '{text}' of option {option}")


def help_text(command: click.Command) -> str:
    """jopt-simple's help table: options sorted by name, argument and default after the name."""
    rows = []
    for param in sorted((p for p in command.params if isinstance(p, click.Option)), key=lambda p: p.opts[0]):
        name = param.opts[0]
        if not param.is_flag:
            metavar = param.metavar or "String"
            name += f" [{metavar}]" if _optional_value(param) else f" <{metavar}>"
        text = param.help or ""
        if _default(param) is not None and not param.is_flag:
            text += f" (default: {param.default})"
        rows.append((name, text))
    width = max(len(name) for name, _ in rows) + 2
    lines = [f"{'Option':<{width}}Description", f"{'------':<{width}}-----------"]
    for name, text in rows:
        wrapped = _wrap(text, 100 - width)
        lines.append(f"{name:<{width}}{wrapped[0]}".rstrip())
        lines += [f"{'':<{width}}  {line}" for line in wrapped[1:]]
    return "\n".join(lines) + "\n"


def _wrap(text: str, width: int) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width) or [""]


@click.command(PROG, cls=JoptCommand, add_help_option=False, help=DESCRIPTION)
@click.option("--files", metavar="String: file1, file2, ...", type=click.Path(),
              help="REQUIRED: The comma separated list of data and index log files to be dumped.")
@click.option("--print-data-log", is_flag=True,
              help="If set, printing the messages content when dumping data logs. Automatically set if any "
                   "decoder option is specified.")
@click.option("--deep-iteration", is_flag=True,
              help="If set, uses deep instead of shallow iteration. Automatically set if print-data-log is "
                   "enabled.")
@click.option("--cluster-metadata-decoder", is_flag=True,
              help="If set, log data will be parsed as cluster metadata records.")
@click.option("--skip-record-metadata", is_flag=True,
              help="Skip metadata when printing records. This flag also skips control records.")
@click.option("--max-bytes", metavar="Integer: size", type=int, default=INT32_MAX,
              help="Limit the amount of total batches read in bytes avoiding reading the whole .log file(s).")
@click.option("--max-message-size", metavar="Integer: size", type=int, default=5 * 1024 * 1024,
              help="Size of largest message.")
@click.option("--verify-index-only", is_flag=True,
              help="If set, just verify the index log without printing its content.")
@click.option("--index-sanity-check", is_flag=True,
              help="If set, just checks the index sanity without printing its content. This is the same "
                   "check that is executed on broker startup to determine if an index needs rebuilding or "
                   "not.")
@click.option("--value-decoder-class", metavar="String", default=STRING_DECODER,
              help="If set, used to deserialize the messages. This class should implement "
                   "org.apache.kafka.tools.api.Decoder trait. Custom jar should be available in kafka/libs "
                   "directory.")
@click.option("--key-decoder-class", metavar="String", default=STRING_DECODER,
              help="If set, used to deserialize the keys. This class should implement "
                   "org.apache.kafka.tools.api.Decoder trait. Custom jar should be available in kafka/libs "
                   "directory.")
@click.option("--offsets-decoder", is_flag=True,
              help="If set, log data will be parsed as offset data from the __consumer_offsets topic. (Not "
                   "supported here: this tool reads metadata logs.)")
@click.option("--transaction-log-decoder", is_flag=True,
              help="If set, log data will be parsed as transaction metadata from the __transaction_state "
                   "topic. (Not supported here.)")
@click.option("--remote-log-metadata-decoder", is_flag=True,
              help="If set, log data will be parsed as TopicBasedRemoteLogMetadataManager (RLMM) metadata "
                   "records. (Not supported here.)")
@click.option("--share-group-state-decoder", is_flag=True,
              help="If set, log data will be parsed as share group state data from the __share_group_state "
                   "topic. (Not supported here.)")
@click.option("--output", "output_format", metavar="String: text|json", type=click.Choice(["text", "json"]),
              default="text",
              help="text: Kafka's output; json: one JSON object per line (file, batch, record, ...), the "
                   "same information.")
@click.option("--help", "show_help", is_flag=True, help="Print usage information.")
@click.option("--version", "show_version", is_flag=True,
              help="Display the version of this tool (kafka-admin-kraft).")
@click.pass_context
def main(ctx: click.Context, files: str | None, print_data_log: bool, deep_iteration: bool,
         cluster_metadata_decoder: bool, skip_record_metadata: bool, max_bytes: int, max_message_size: int,
         verify_index_only: bool, index_sanity_check: bool, value_decoder_class: str, key_decoder_class: str,
         offsets_decoder: bool, transaction_log_decoder: bool, remote_log_metadata_decoder: bool,
         share_group_state_decoder: bool, output_format: str, show_help: bool, show_version: bool) -> int:
    """Dump log segments, snapshots and indexes."""
    given: set[str] = ctx.meta.get("given", set())
    if show_help:
        raise ArgumentError(DESCRIPTION, usage=True)
    if show_version:
        from kafka_admin_kraft import __version__

        click.echo(__version__)
        return 0
    if files is None:
        raise ArgumentError('Missing required argument "[files]"', usage=True)
    for name in UNSUPPORTED_DECODERS + (() if cluster_metadata_decoder else LATER_DECODERS):
        if name in given:
            raise ArgumentError(f"--{name} is not supported: kafka-dump-log reads KRaft metadata logs "
                                "(use --cluster-metadata-decoder)")

    from kafka_admin_kraft.dump.dumper import DECODERS, Dumper, DumpOptions, split_files

    decoder_given = bool(given & {"value-decoder-class", "key-decoder-class"})
    print_contents = print_data_log or cluster_metadata_decoder or decoder_given
    bad_decoder = None
    if not cluster_metadata_decoder:
        for class_name in (value_decoder_class, key_decoder_class):
            if class_name not in DECODERS:
                bad_decoder = _decoder_problem(class_name)
                break
    options = DumpOptions(
        print_contents=print_contents,
        deep_iteration=deep_iteration or print_contents,
        skip_record_metadata=skip_record_metadata,
        metadata_decoder=cluster_metadata_decoder,
        key_decoder=DECODERS.get(key_decoder_class, DECODERS[STRING_DECODER]),
        value_decoder=DECODERS.get(value_decoder_class, DECODERS[STRING_DECODER]),
        max_bytes=max_bytes,
        max_message_size=max_message_size,
        verify_index_only=verify_index_only,
        index_sanity_check=index_sanity_check,
        json=output_format == "json",
        decoder_problem=bad_decoder,
    )
    dumper = Dumper(options, sys.stdout.buffer, _stderr)
    return dumper.run(split_files(files))


def _decoder_problem(class_name: str) -> str:
    if class_name == "org.apache.kafka.tools.api.DefaultDecoder":
        return (f"{class_name} prints Java byte arrays by identity ([B@...), which cannot be reproduced; use "
                "org.apache.kafka.tools.api.StringDecoder")
    return f"java.lang.ClassNotFoundException: {class_name}"


def _stderr(text: str) -> None:
    sys.stdout.flush()
    sys.stderr.write(text)
    sys.stderr.flush()
