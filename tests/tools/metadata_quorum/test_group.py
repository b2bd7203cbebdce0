"""The group of `kafka-metadata-quorum`: the bootstrap options, the connection, an unknown subcommand or
option and the help. None of these reach a server (the address given is never contacted, or nothing
listens there), so they run in-process."""
# ruff: noqa: E501

from __future__ import annotations

from pathlib import Path

from tools.metadata_quorum.quorum_util import NOWHERE, PROG, parse_error, refused, run


def test_exactly_one_bootstrap_option() -> None:
    parse_error(run("describe", "--status"),
                "one of the arguments --bootstrap-server --bootstrap-controller is required")
    parse_error(run("--bootstrap-server", "a:1", "--bootstrap-controller", "b:2", "describe", "--status"),
                "argument --bootstrap-controller: not allowed with argument --bootstrap-server")


def test_missing_command_config_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.properties"
    refused(run("--bootstrap-controller", NOWHERE, "--command-config", str(missing), "describe", "--status"),
            f"Properties file {missing} does not exists!")


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


def test_help_explains_with_examples() -> None:
    for args in (["--help"], ["describe", "-h"], ["add-controller", "--help"], ["remove-controller", "--help"]):
        result = run(*args)
        assert result.exit_code == 0, result.stderr
        assert "Example" in result.stdout and "kafka-metadata-quorum --bootstrap-controller" in result.stdout
