"""`kafka-dump-log`: print the batches and records of KRaft metadata log segments, snapshots and
indexes, as Kafka's `kafka-dump-log.sh` (`DumpLogSegments`, Kafka 4.2) prints them.

Options are parsed the way Kafka's tool parses them (jopt-simple, no abbreviations): `--files` takes
a comma-separated list, flags take no value, `--key-decoder-class`/`--value-decoder-class` take an
optional class name, arguments that are not options are ignored. Addition: `--output json`, one JSON
object per line.

The options are a plain table (:data:`OPTIONS`) parsed here, so that the tool does not load click (a
fifth of its start-up, which is most of the time a small file takes); click gets the same table only
to answer shell completion (:func:`click_app`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn

from .output import complete_var

if TYPE_CHECKING:
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


class Option(NamedTuple):
    """One of the tool's options as jopt-simple declares it in ``DumpLogSegmentsOptions``."""

    name: str
    """Its name without the dashes."""
    dest: str
    """The name its value is passed on as."""
    help: str
    metavar: str | None = None
    """The argument's description; None for a flag, which takes none."""
    default: str | int | None = None
    convert: str = "string"
    """``string``; ``optional``: a string that may be left out; ``int``: Java's ``Integer.valueOf``;
    ``choice``: one of ``choices``."""
    choices: tuple[str, ...] = ()


OPTIONS: tuple[Option, ...] = (
    Option("files", "files", "REQUIRED: The comma separated list of data and index log files to be dumped.",
           "String: file1, file2, ..."),
    Option("print-data-log", "print_data_log",
           "If set, printing the messages content when dumping data logs. Automatically set if any decoder "
           "option is specified."),
    Option("deep-iteration", "deep_iteration",
           "If set, uses deep instead of shallow iteration. Automatically set if print-data-log is enabled."),
    Option("cluster-metadata-decoder", "cluster_metadata_decoder",
           "If set, log data will be parsed as cluster metadata records."),
    Option("skip-record-metadata", "skip_record_metadata",
           "Skip metadata when printing records. This flag also skips control records."),
    Option("max-bytes", "max_bytes",
           "Limit the amount of total batches read in bytes avoiding reading the whole .log file(s).",
           "Integer: size", INT32_MAX, "int"),
    Option("max-message-size", "max_message_size", "Size of largest message.", "Integer: size",
           5 * 1024 * 1024, "int"),
    Option("verify-index-only", "verify_index_only",
           "If set, just verify the index log without printing its content."),
    Option("index-sanity-check", "index_sanity_check",
           "If set, just checks the index sanity without printing its content. This is the same check that "
           "is executed on broker startup to determine if an index needs rebuilding or not."),
    Option("value-decoder-class", "value_decoder_class",
           "If set, used to deserialize the messages. This class should implement "
           "org.apache.kafka.tools.api.Decoder trait. Custom jar should be available in kafka/libs "
           "directory.", "String", STRING_DECODER, "optional"),
    Option("key-decoder-class", "key_decoder_class",
           "If set, used to deserialize the keys. This class should implement "
           "org.apache.kafka.tools.api.Decoder trait. Custom jar should be available in kafka/libs "
           "directory.", "String", STRING_DECODER, "optional"),
    Option("offsets-decoder", "offsets_decoder",
           "If set, log data will be parsed as offset data from the __consumer_offsets topic. (Not "
           "supported here: this tool reads metadata logs.)"),
    Option("transaction-log-decoder", "transaction_log_decoder",
           "If set, log data will be parsed as transaction metadata from the __transaction_state topic. "
           "(Not supported here.)"),
    Option("remote-log-metadata-decoder", "remote_log_metadata_decoder",
           "If set, log data will be parsed as TopicBasedRemoteLogMetadataManager (RLMM) metadata records. "
           "(Not supported here.)"),
    Option("share-group-state-decoder", "share_group_state_decoder",
           "If set, log data will be parsed as share group state data from the __share_group_state topic. "
           "(Not supported here.)"),
    Option("output", "output_format",
           "text: Kafka's output; json: one JSON object per line (file, batch, record, ...), the same "
           "information.", "String: text|json", "text", "choice", ("text", "json")),
    Option("help", "show_help", "Print usage information."),
    Option("version", "show_version", "Display the version of this tool (kafka-admin-kraft)."),
)
BY_NAME = {option.name: option for option in OPTIONS}


def parse(args: Sequence[str]) -> tuple[dict[str, Any], set[str]]:
    """The options' values by ``dest`` and the names given, parsed as jopt-simple parses Kafka's
    ``CommandDefaultOptions``: ``--name value``, ``--name=value`` or ``-name``; no prefix matching; a
    required argument takes the next word whatever it looks like, an optional one only a word not
    starting with ``-``."""
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
        option = BY_NAME.get(name)
        if option is None:
            raise ArgumentError(f"{name} is not a recognized option")
        values = given.setdefault(name, [])
        if option.metavar is None:
            if equals:
                raise ArgumentError(f"Option {name} does not take an argument")
            values.append(None)
        elif equals:
            values.append(inline)
        elif option.convert == "optional":
            takes = index < len(args) and not args[index].startswith("-")
            values.append(args[index] if takes else None)
            index += int(takes)
        elif index < len(args):
            values.append(args[index])
            index += 1
        else:
            raise ArgumentError(f"Option {name} requires an argument")
    return {option.dest: _value(option, given.get(option.name, [])) for option in OPTIONS}, set(given)


def _value(option: Option, values: list[str | None]) -> Any:
    """A flag as a boolean, a value converted as jopt converts it, else the default."""
    if option.metavar is None:
        return bool(values)
    if len(values) > 1:
        raise ArgumentError(f"Found multiple arguments for option {option.name}, but you asked for only one")
    value = values[0] if values else None
    if value is None:
        return option.default
    if option.convert == "int":
        return _java_int(value, option.name)
    if option.convert == "choice" and value not in option.choices:
        raise ArgumentError(f"Cannot parse argument '{value}' of option {option.name} "
                            f"(one of {', '.join(option.choices)})")
    return value


def _java_int(text: str, option: str) -> int:
    """``Integer.valueOf``: an optional sign and ASCII digits, in the int range."""
    digits = text[1:] if text[:1] in "+-" else text
    if digits.isascii() and digits.isdigit():
        value = int(text)
        if -INT32_MAX - 1 <= value <= INT32_MAX:
            return value
    raise ArgumentError(f"Cannot parse argument '{text}' of option {option}")


def help_text() -> str:
    """jopt-simple's help table: options sorted by name, argument and default after the name."""
    rows = []
    for option in sorted(OPTIONS, key=lambda option: option.name):
        name = f"--{option.name}"
        text = option.help
        if option.metavar is not None:
            name += f" [{option.metavar}]" if option.convert == "optional" else f" <{option.metavar}>"
            if option.default is not None:
                text += f" (default: {option.default})"
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


def main(args: Sequence[str] | None = None) -> NoReturn:
    """The console script: the exit status of the dump, 1 for a command line Kafka's tool refuses."""
    if complete_var(PROG) in os.environ:
        click_app().main(args, PROG)
    arguments = list(sys.argv[1:] if args is None else args)
    try:
        values, given = parse(arguments)
        if not arguments:
            raise ArgumentError(DESCRIPTION, usage=True)
        code = dump(values, given)
    except KeyboardInterrupt:
        sys.exit(130)
    except ArgumentError as exc:
        if exc.usage:
            sys.stderr.write(f"{exc}\n{help_text()}")
        else:
            sys.stderr.write(f"Error: {exc}\n")
        sys.exit(1)
    sys.exit(code)


def click_app() -> click.Command:
    """The options as a click command, for shell completion alone: the tool parses its command line
    itself (:func:`parse`)."""
    import click

    params: list[click.Parameter] = [
        click.Option([f"--{option.name}", option.dest], is_flag=option.metavar is None,
                     metavar=option.metavar, help=option.help,
                     type=click.Path() if option.name == "files" else None)
        for option in OPTIONS]
    return click.Command(PROG, params=params, help=DESCRIPTION, add_help_option=False)


def dump(values: dict[str, Any], given: set[str]) -> int:
    """Dump log segments, snapshots and indexes."""
    if values["show_help"]:
        raise ArgumentError(DESCRIPTION, usage=True)
    if values["show_version"]:
        from kafka_admin_kraft import __version__

        sys.stdout.write(f"{__version__}\n")
        return 0
    files = values["files"]
    cluster_metadata_decoder = values["cluster_metadata_decoder"]
    if files is None:
        raise ArgumentError('Missing required argument "[files]"', usage=True)
    for name in UNSUPPORTED_DECODERS + (() if cluster_metadata_decoder else LATER_DECODERS):
        if name in given:
            raise ArgumentError(f"--{name} is not supported: kafka-dump-log reads KRaft metadata logs "
                                "(use --cluster-metadata-decoder)")

    from kafka_admin_kraft.dump.dumper import DECODERS, Dumper, DumpOptions, split_files

    value_decoder_class, key_decoder_class = values["value_decoder_class"], values["key_decoder_class"]
    decoder_given = bool(given & {"value-decoder-class", "key-decoder-class"})
    print_contents = values["print_data_log"] or cluster_metadata_decoder or decoder_given
    bad_decoder = None
    if not cluster_metadata_decoder:
        for class_name in (value_decoder_class, key_decoder_class):
            if class_name not in DECODERS:
                bad_decoder = _decoder_problem(class_name)
                break
    options = DumpOptions(
        print_contents=print_contents,
        deep_iteration=values["deep_iteration"] or print_contents,
        skip_record_metadata=values["skip_record_metadata"],
        metadata_decoder=cluster_metadata_decoder,
        key_decoder=DECODERS.get(key_decoder_class, DECODERS[STRING_DECODER]),
        value_decoder=DECODERS.get(value_decoder_class, DECODERS[STRING_DECODER]),
        max_bytes=values["max_bytes"],
        max_message_size=values["max_message_size"],
        verify_index_only=values["verify_index_only"],
        index_sanity_check=values["index_sanity_check"],
        json=values["output_format"] == "json",
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
