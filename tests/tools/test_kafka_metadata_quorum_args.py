"""Every refusal and bad argument of `kafka-metadata-quorum`: exit code and message. None of these reach
a server (the address given is never contacted, or nothing listens there), so they run in-process."""
# ruff: noqa: E501

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.storage import MetaProperties, write_meta_properties
from kafka_admin_kraft_cli.metadata_quorum import main

PROG = "kafka-metadata-quorum"
NOWHERE = "127.0.0.1:1"
DIRECTORY_ID = "wZoXPqWoSu6F6c8MkmdyAg"
INVALID = "Is this a valid controller configuration file?"


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), prog_name=PROG)


def refused(result: Result, message: str) -> None:
    """Kafka's terse errors: the message alone on stderr, nothing on stdout, exit status 1."""
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", message + "\n")


def parse_error(result: Result, message: str, command: str = PROG) -> None:
    """argparse4j: the usage, then `<prog>: error: <message>`, exit status 1."""
    assert result.exit_code == 1
    assert result.stdout == ""
    usage, error = result.stderr.splitlines()
    assert usage.startswith(f"usage: {command} [-h]")
    assert error == f"{command}: error: {message}"


def test_exactly_one_bootstrap_option() -> None:
    parse_error(run("describe", "--status"),
                "one of the arguments --bootstrap-server --bootstrap-controller is required")
    parse_error(run("--bootstrap-server", "a:1", "--bootstrap-controller", "b:2", "describe", "--status"),
                "argument --bootstrap-controller: not allowed with argument --bootstrap-server")


def test_missing_command_config_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.properties"
    refused(run("--bootstrap-controller", NOWHERE, "--command-config", str(missing), "describe", "--status"),
            f"Properties file {missing} does not exists!")


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ((), "One of --status or --replication must be specified with describe sub-command"),
        (("--status", "--replication"),
         "Only one of --status or --replication should be specified with describe sub-command"),
        (("--status", "--human-readable"), "The option --human-readable is only supported along with --replication"),
        # Unambiguous prefixes are accepted, as argparse4j does.
        (("--stat", "--rep"), "Only one of --status or --replication should be specified with describe sub-command"),
    ],
)
def test_describe_flag_checks(flags: tuple[str, ...], message: str) -> None:
    refused(run("--bootstrap-c", NOWHERE, "describe", *flags), message)


def test_unknown_subcommand_and_option() -> None:
    parse_error(run("--bootstrap-server", NOWHERE, "explain"),
                "invalid choice: 'explain' (choose from 'describe', 'add-controller', 'remove-controller', "
                "'check', 'watch', 'exporter', 'reconcile', 'scale', 'replace-controller')")
    parse_error(run("--bootstrap-server", NOWHERE, "describe", "--statuz"),
                "unrecognized arguments: '--statuz'", f"{PROG} describe")


def test_unreachable_cluster_reports_a_timeout(tmp_path: Path) -> None:
    config = tmp_path / "client.properties"
    config.write_text("request.timeout.ms=300\ndefault.api.timeout.ms=800\n")
    result = run("--bootstrap-controller", NOWHERE, "--command-config", str(config), "describe", "--status")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith("org.apache.kafka.common.errors.TimeoutException: ")


def test_bad_client_setting_is_a_terse_error(tmp_path: Path) -> None:
    config = tmp_path / "client.properties"
    config.write_text("security.protocol=CARRIER_PIGEON\n")
    result = run("--bootstrap-controller", NOWHERE, "--command-config", str(config), "describe", "--status")
    assert result.exit_code == 1
    assert "security.protocol 'CARRIER_PIGEON' is not one of" in result.stderr


# ----------------------------------------------------------------------------- remove-controller


def test_remove_controller_dry_run_prints_kafkas_line() -> None:
    result = run("--bootstrap-controller", NOWHERE, "remove-controller", "-i", "2", "-d", "_KWDkTahTVaiVVVTaugNew",
                 "--dry-run")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == "DRY RUN of removing  KRaft controller 2 with directory id _KWDkTahTVaiVVVTaugNew\n"
    result = run("--bootstrap-controller", NOWHERE, "remove-controller", "--controller-id", "2",
                 "--controller-directory-id", "_KWDkTahTVaiVVVTaugNew", "--dry-run", "--output", "json")
    assert json.loads(result.stdout) == {"node_id": 2, "directory_id": "_KWDkTahTVaiVVVTaugNew", "dry_run": True}


def test_remove_controller_refusals() -> None:
    base = ("--bootstrap-controller", NOWHERE, "remove-controller")
    refused(run(*base, "-i", "-3", "-d", DIRECTORY_ID), "Invalid negative --controller-id: -3")
    result = run(*base, "-i", "3", "-d", "not-a-uuid")
    assert result.exit_code == 1
    assert result.stderr.startswith("Failed to parse --controller-directory-id: ")
    command = f"{PROG} remove-controller"
    parse_error(run(*base, "-i", "x", "-d", DIRECTORY_ID),
                "argument --controller-id/-i: could not convert 'x' to Integer (For input string: \"x\")", command)
    parse_error(run(*base, "-d", DIRECTORY_ID), "argument --controller-id/-i is required", command)
    parse_error(run(*base, "-i", "3"), "argument --controller-directory-id/-d is required", command)


# ----------------------------------------------------------------------------- add-controller


def controller_config(tmp_path: Path, lines: dict[str, str | None], *, directory_id: str | None = DIRECTORY_ID,
                      meta: bool = True) -> Path:
    """A controller's properties file; its metadata directory holds a meta.properties (unless told not
    to) with ``directory_id``."""
    metadata_dir = tmp_path / "metadata"
    metadata_dir.mkdir(exist_ok=True)
    if meta:
        write_meta_properties(metadata_dir, MetaProperties(
            version=1, cluster_id="c", node_id=5,
            directory_id=Uuid.from_string(directory_id) if directory_id else None))
    props: dict[str, str | None] = {
        "process.roles": "controller",
        "node.id": "5",
        "controller.listener.names": "CONTROLLER,CONTROLLER_SSL",
        "listeners": "CONTROLLER://:9093,CONTROLLER_SSL://:9094",
        "advertised.listeners": "CONTROLLER://example.com:9093,CONTROLLER_SSL://example.com:9094",
        "metadata.log.dir": str(metadata_dir),
        **lines,
    }
    path = tmp_path / "controller.properties"
    path.write_text("".join(f"{key}={value}\n" for key, value in props.items() if value is not None))
    return path


def add_dry_run(config: Path, *extra: str) -> Result:
    return run("--bootstrap-controller", NOWHERE, "--command-config", str(config), "add-controller", "--dry-run",
               *extra)


def test_add_controller_dry_run_prints_kafkas_line(tmp_path: Path) -> None:
    result = add_dry_run(controller_config(tmp_path, {}))
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == ("DRY RUN of adding controller 5 with directory id wZoXPqWoSu6F6c8MkmdyAg and endpoints: "
                             "CONTROLLER://example.com:9093, CONTROLLER_SSL://example.com:9094\n")
    document = json.loads(add_dry_run(controller_config(tmp_path, {}), "--output", "json").stdout)
    assert document == {"node_id": 5, "directory_id": DIRECTORY_ID, "dry_run": True,
                        "endpoints": ["CONTROLLER://example.com:9093", "CONTROLLER_SSL://example.com:9094"]}


def test_add_controller_endpoints_from_listeners_log_dirs_and_ipv6(tmp_path: Path) -> None:
    metadata_dir = tmp_path / "metadata"
    config = controller_config(tmp_path, {
        "advertised.listeners": "CONTROLLER_SSL://[::1]:9094",
        "metadata.log.dir": None,
        "log.dirs": f"{metadata_dir},{tmp_path / 'other'}",
        "controller.listener.names": "controller,CONTROLLER_SSL",
    })
    result = add_dry_run(config)
    assert result.stdout == ("DRY RUN of adding controller 5 with directory id wZoXPqWoSu6F6c8MkmdyAg and endpoints: "
                             "CONTROLLER://localhost:9093, CONTROLLER_SSL://[::1]:9094\n")


def test_add_controller_reads_listeners_with_kafkas_grammar(tmp_path: Path) -> None:
    """As Kafka's tool: an IPv6 host without brackets, `listeners` entries replaced by the advertised ones
    of the same name, and the last entry of a repeated name."""
    config = controller_config(tmp_path, {
        "listeners": "CONTROLLER://::1:9093,CONTROLLER_SSL://first:1,CONTROLLER_SSL://second:9094",
        "advertised.listeners": "controller://[::2]:9093",
    })
    result = add_dry_run(config)
    assert result.stdout == ("DRY RUN of adding controller 5 with directory id wZoXPqWoSu6F6c8MkmdyAg and endpoints: "
                             "CONTROLLER://[::2]:9093, CONTROLLER_SSL://second:9094\n")


@pytest.mark.parametrize("key", ["listeners", "advertised.listeners"])
def test_add_controller_refuses_an_unparsable_listener(tmp_path: Path, key: str) -> None:
    refused(add_dry_run(controller_config(tmp_path, {key: "CONTROLLER://ctl:9093, CONTROLLER:9094"})),
            "Unable to parse CONTROLLER:9094 as a listener: expected NAME://host:port")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"node.id": None}, f"node.id not found in configuration file. {INVALID}"),
        ({"node.id": "-1"}, f"node.id was negative in configuration file. {INVALID}"),
        ({"node.id": "five"}, 'For input string: "five"'),
        ({"process.roles": "broker"}, f"process.roles did not contain 'controller' in configuration file. {INVALID}"),
        ({"process.roles": None}, f"process.roles did not contain 'controller' in configuration file. {INVALID}"),
        ({"metadata.log.dir": None}, f"Neither metadata.log.dir nor log.dirs were found. {INVALID}"),
        ({"controller.listener.names": None}, f"controller.listener.names was not found. {INVALID}"),
        ({"controller.listener.names": "CONTROLLER,OTHER"},
         "Cannot find information about controller listener name: OTHER"),
    ],
)
def test_add_controller_configuration_mistakes(tmp_path: Path, changes: dict[str, str | None], message: str) -> None:
    refused(add_dry_run(controller_config(tmp_path, changes)), message)


def test_add_controller_metadata_directory_mistakes(tmp_path: Path) -> None:
    metadata_dir = tmp_path / "metadata"
    refused(add_dry_run(controller_config(tmp_path, {}, meta=False)),
            f"Unable to read meta.properties from {metadata_dir}")
    refused(add_dry_run(controller_config(tmp_path, {}, directory_id=None)),
            f"No directory id found in {metadata_dir}")


def test_add_controller_needs_the_controller_configuration() -> None:
    refused(run("--bootstrap-controller", NOWHERE, "add-controller"),
            "You must supply the configuration file of the controller you are adding when using add-controller.")


def test_help_explains_with_examples() -> None:
    for args in (["--help"], ["describe", "-h"], ["add-controller", "--help"], ["remove-controller", "--help"]):
        result = run(*args)
        assert result.exit_code == 0, result.stderr
        assert "Example" in result.stdout and "kafka-metadata-quorum --bootstrap-controller" in result.stdout
