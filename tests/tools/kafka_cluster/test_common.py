"""The options every `kafka-cluster` subcommand shares, in-process: exactly one bootstrap option after
the subcommand (Kafka's argparse4j usage and errors), `--command-config`/`-c` and the deprecated
`--config`, the properties file, an unreachable cluster, the help."""
# ruff: noqa: E501

from __future__ import annotations

from pathlib import Path

import pytest

from tools.kafka_cluster.tool_util import FAST_FAILURE, NOWHERE, PROG, SUBCOMMANDS, run
from tools.metadata_quorum.quorum_util import parse_error, refused

BOOTSTRAP = "(--bootstrap-server BOOTSTRAP_SERVER | --bootstrap-controller BOOTSTRAP_CONTROLLER)"
CONFIGS = "[--config CONFIG] [--command-config COMMAND_CONFIG]"


@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_exactly_one_bootstrap_option_after_the_subcommand(command: str) -> None:
    extra = ["--id", "1"] if command.startswith("unregister") else []
    parse_error(run(command, *extra), "one of the arguments --bootstrap-server/-b --bootstrap-controller/-C is required",
                f"{PROG} {command}")
    parse_error(run(command, "-b", "a:1", "-C", "b:2", *extra),
                "argument --bootstrap-controller/-C: not allowed with argument --bootstrap-server/-b", f"{PROG} {command}")
    # Kafka's tool takes no option before the subcommand
    parse_error(run("--bootstrap-server", NOWHERE, command, *extra), "unrecognized arguments: '--bootstrap-server'",
                PROG)


def test_usage_lines_follow_argparse4j() -> None:
    usage = run("cluster-id").stderr.splitlines()[0]
    assert usage == f"usage: {PROG} cluster-id [-h] {CONFIGS} [--output {{text,json}}] {BOOTSTRAP}"
    usage = run("unregister", "-b", NOWHERE).stderr.splitlines()[0]
    assert usage == f"usage: {PROG} unregister [-h] {CONFIGS} --id ID [--output {{text,json}}] {BOOTSTRAP}"
    usage = run("list-endpoints").stderr.splitlines()[0]
    assert usage == (f"usage: {PROG} list-endpoints [-h] {CONFIGS} [--include-fenced-brokers] "
                     f"[--output {{text,json}}] {BOOTSTRAP}")
    assert run().stderr == (f"usage: {PROG} [-h] {{{','.join(SUBCOMMANDS)}}} ...\n"
                            f"{PROG}: error: too few arguments\n")


def test_ids_and_unknown_subcommands_are_parse_errors() -> None:
    for command in ("unregister", "unregister-controller"):
        parse_error(run(command, "-b", NOWHERE), "argument --id/-i is required", f"{PROG} {command}")
        parse_error(run(command, "-b", NOWHERE, "--id", "x"),
                    "argument --id/-i: could not convert 'x' to Integer (For input string: \"x\")", f"{PROG} {command}")
        refused(run(command, "-b", NOWHERE, "-i", "-2"), "Invalid negative --id: -2")
    choices = ", ".join(f"'{c}'" for c in SUBCOMMANDS)
    parse_error(run("describe", "-b", NOWHERE), f"invalid choice: 'describe' (choose from {choices})", PROG)
    parse_error(run("cluster-id", "-b", NOWHERE, "--include-fenced-brokers"),
                "unrecognized arguments: '--include-fenced-brokers'", f"{PROG} cluster-id")


def test_config_and_command_config(tmp_path: Path) -> None:
    config = tmp_path / "client.properties"
    config.write_text(FAST_FAILURE)
    refused(run("cluster-id", "-C", NOWHERE, "--config", str(config), "--command-config", str(config)),
            "--config and --command-config cannot be specified together.")
    missing = tmp_path / "nope.properties"
    refused(run("cluster-id", "-C", NOWHERE, "-c", str(missing)), f"Properties file {missing} does not exists!")
    deprecated = run("cluster-id", "-C", NOWHERE, "--config", str(config))
    assert deprecated.exit_code == 1
    assert deprecated.stdout == ("Option --config has been deprecated and will be removed in a future version. "
                                 "Use --command-config instead.\n")
    assert deprecated.stderr.startswith("org.apache.kafka.common.errors.TimeoutException: ")
    as_json = run("cluster-id", "-C", NOWHERE, "--config", str(config), "--output", "json")
    assert as_json.stdout == "" and as_json.stderr.startswith("Option --config has been deprecated")


@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_an_unreachable_cluster_is_one_line(tmp_path: Path, command: str) -> None:
    """Kafka 3.9's form (`-c` for the file) and Kafka 4.4's (`--command-config`), `--bootstrap-server=`
    and `-bH:P` alike: one line on stderr, exit status 1, no traceback."""
    config = tmp_path / "client.properties"
    config.write_text(FAST_FAILURE)
    extra = ["--id", "1"] if command.startswith("unregister") else []
    for connection in (["-b", NOWHERE, "-c", str(config)], [f"--bootstrap-server={NOWHERE}", "--command-config", str(config)],
                       [f"-C{NOWHERE}", "-c", str(config)]):
        result = run(command, *connection, *extra)
        assert (result.exit_code, result.stdout) == (1, ""), result.stderr
        assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr
        assert result.stderr.startswith("org.apache.kafka.common.errors.TimeoutException: ")


def test_help() -> None:
    result = run("-h")
    assert result.exit_code == 0 and result.stdout.startswith(f"usage: {PROG} [-h] {{cluster-id,unregister,")
    for command in SUBCOMMANDS:
        for flag in ("-h", "--help", "--he"):
            result = run(command, flag)
            assert result.exit_code == 0, result.stderr
            assert result.stdout.startswith(f"usage: {PROG} {command} [-h]")
            assert "Example" in result.stdout and "--bootstrap-controller" in result.stdout


def test_abbreviated_long_options(tmp_path: Path) -> None:
    config = tmp_path / "client.properties"
    config.write_text(FAST_FAILURE)
    result = run("list-endpoints", "--bootstrap-c", NOWHERE, "--command", str(config), "--include")
    assert (result.exit_code, result.stderr) == (
        1, "The option --include-fenced-brokers is only supported with --bootstrap-server option\n")
    parse_error(run("cluster-id", "--bootstrap", NOWHERE),
                "ambiguous option: --bootstrap could match --bootstrap-controller, --bootstrap-server", f"{PROG} cluster-id")
