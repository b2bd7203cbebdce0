"""Every refusal and bad argument of `kafka-features`: exit code and message, plus the subcommands that
never contact the cluster (version-mapping, feature-dependencies). In-process; nothing listens at the
address given, and it is only contacted where a test says so. The levels are Kafka 4.4's."""
# ruff: noqa: E501

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from kafka_admin_kraft_cli.kafka_features import main

PROG = "kafka-features"
NOWHERE = "127.0.0.1:1"
SUPPORTED = (  # kafka-features parses with unstable versions allowed: up to Kafka 4.4's 4.5-IV0 (PR #23235)
    "3.3-IV3, 3.4-IV0, 3.5-IV0, 3.5-IV1, 3.5-IV2, 3.6-IV0, 3.6-IV1, 3.6-IV2, 3.7-IV0, 3.7-IV1, 3.7-IV2, "
    "3.7-IV3, 3.7-IV4, 3.8-IV0, 3.9-IV0, 4.0-IV0, 4.0-IV1, 4.0-IV2, 4.0-IV3, 4.1-IV0, 4.1-IV1, 4.2-IV0, "
    "4.2-IV1, 4.3-IV0, 4.4-IV0, 4.4-IV1, 4.4-IV2, 4.5-IV0"
)


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["--bootstrap-controller", NOWHERE, *args], prog_name=PROG)


def refused(result: Result, message: str, stdout: str = "") -> None:
    assert (result.exit_code, result.stdout, result.stderr) == (1, stdout, message + "\n")


def test_the_tables_need_no_bootstrap_option_but_the_cluster_commands_do() -> None:
    # Kafka 4.3 made the bootstrap options optional for the two subcommands that contact no cluster
    # (KAFKA-19749, PR #20619); up to 4.2 every subcommand needed one.
    for command in (["version-mapping"], ["feature-dependencies", "--feature", "group.version=1"]):
        result = CliRunner().invoke(main, command, prog_name=PROG)
        assert (result.exit_code, result.stderr) == (0, ""), result.stderr
    assert CliRunner().invoke(main, ["version-mapping"], prog_name=PROG).stdout.splitlines()[0] == (
        "metadata.version=33 (4.4-IV2)")
    for command in (["describe"], ["upgrade", "--release-version", "4.4"], ["disable", "--feature", "x"]):
        result = CliRunner().invoke(main, command, prog_name=PROG)
        assert result.exit_code == 1
        assert result.stderr.splitlines()[-1] == (
            f"{PROG}: error: one of the arguments --bootstrap-server --bootstrap-controller is required")
    both = CliRunner().invoke(main, ["--bootstrap-server", NOWHERE, "--bootstrap-controller", NOWHERE,
                                     "version-mapping"], prog_name=PROG)
    assert both.exit_code == 1
    assert both.stderr.splitlines()[-1] == (
        f"{PROG}: error: argument --bootstrap-controller: not allowed with argument --bootstrap-server")


@pytest.mark.parametrize("operation", ["upgrade", "downgrade"])
def test_release_version_excludes_other_flags(operation: str) -> None:
    message = "Can not specify `release-version` with other feature flags."
    refused(run(operation, "--release-version", "3.9", "--feature", "group.version=1"), message)
    refused(run(operation, "--release-version", "3.9", "--metadata", "3.9"), message)


@pytest.mark.parametrize("operation", ["upgrade", "downgrade", "disable"])
def test_at_least_one_feature(operation: str) -> None:
    refused(run(operation), f"You must specify at least one feature to {operation}")


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        ("group.version", "Can't parse feature=level string group.version: equals sign not found."),
        ("group.version=one", "Can't parse feature=level string group.version=one: unable to parse one as a short."),
        ("group.version=40000",
         "Can't parse feature=level string group.version=40000: unable to parse 40000 as a short."),
    ],
)
def test_feature_level_parse_errors(argument: str, message: str) -> None:
    refused(run("upgrade", "--feature", argument), message)


def test_duplicates_and_upgrading_to_zero() -> None:
    refused(run("upgrade", "--feature", "group.version=1", "--feature", "group.version=1"),
            "Feature group.version was specified more than once.")
    refused(run("disable", "--feature", "group.version", "--feature", "group.version"),
            "Feature group.version was specified more than once.")
    refused(run("upgrade", "--feature", "group.version=0"),
            "The upgradeType flag should be set to SAFE_DOWNGRADE or UNSAFE_DOWNGRADE when the provided "
            "maxVersionLevel:0 is < 1.")
    refused(run("downgrade", "--feature", "group.version=-1"), "Cannot specify a negative version level.")
    refused(run("upgrade", "--feature", "group.version=-1"), "Cannot specify a negative version level.")


def test_unknown_release_versions() -> None:
    refused(run("upgrade", "--release-version", "2.8"),
            f"Unknown metadata.version '2.8'. Supported metadata.version are: {SUPPORTED}")
    # --metadata prints its deprecation notice (with Kafka's leading space) before parsing the value.
    refused(run("upgrade", "--metadata", "nope"),
            f"Unknown metadata.version 'nope'. Supported metadata.version are: {SUPPORTED}",
            stdout=" `metadata` flag is deprecated and may be removed in a future release.\n")


def test_describe_node_id_checks() -> None:
    refused(run("describe", "--node-id", "-1"), "Invalid node id -1: must be non-negative.")
    result = run("describe", "--node-id", "x")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        f"{PROG} describe: error: argument --node-id: could not convert 'x' to Integer (For input string: \"x\")")


def test_unreachable_cluster_fails_every_feature(tmp_path: Path) -> None:
    config = tmp_path / "client.properties"
    config.write_text("request.timeout.ms=300\ndefault.api.timeout.ms=800\n")
    result = CliRunner().invoke(main, ["--bootstrap-controller", NOWHERE, "--command-config", str(config),
                                       "upgrade", "--release-version", "3.9"], prog_name=PROG)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert [line.split(". ", 1)[0] for line in lines] == [
        "Could not upgrade kraft.version to 1", "Could not upgrade metadata.version to 21"]
    assert result.stderr == "2 out of 2 operation(s) failed.\n"


def test_version_mapping() -> None:
    result = run("version-mapping", "--release-version", "3.9")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == (
        "metadata.version=21 (3.9)\nkraft.version=1\ntransaction.version=0\ngroup.version=0\n"
        "eligible.leader.replicas.version=0\nshare.version=0\nstreams.version=0\n")
    # Kafka 4.4's defaults: 4.4-IV2 with share.version 2 (PR #23235); 4.3 is 4.3-IV0 with share.version 1
    assert run("version-mapping").stdout == (
        "metadata.version=33 (4.4-IV2)\nkraft.version=1\ntransaction.version=2\ngroup.version=1\n"
        "eligible.leader.replicas.version=1\nshare.version=2\nstreams.version=1\n")
    assert run("version-mapping", "--release-version", "4.3").stdout == (
        "metadata.version=30 (4.3)\nkraft.version=1\ntransaction.version=2\ngroup.version=1\n"
        "eligible.leader.replicas.version=1\nshare.version=1\nstreams.version=1\n")
    document = json.loads(run("version-mapping", "--release-version", "4.0-IV3", "--output", "json").stdout)
    assert document["metadata_version"] == {"level": 25, "release": "4.0-IV3"}
    refused(run("version-mapping", "--release-version", "1.0"),
            f"Unknown metadata.version '1.0'. Supported metadata.version are: {SUPPORTED}")


def test_feature_dependencies() -> None:
    result = run("feature-dependencies", "--feature", "eligible.leader.replicas.version=1",
                 "--feature", "metadata.version=17", "--feature", "transaction.version=2")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == (
        "eligible.leader.replicas.version=1 requires:\n    metadata.version=23 (4.0-IV1)\n"
        "metadata.version=17 (3.7-IV2) has no dependencies.\ntransaction.version=2 has no dependencies.\n")
    refused(run("feature-dependencies", "--feature", "nope.version=1"), "Unknown feature: nope.version")
    refused(run("feature-dependencies", "--feature", "group.version=9"), "No feature:group.version with feature level 9")
    refused(run("feature-dependencies", "--feature", "metadata.version=99"), "Unknown metadata.version 99")
    refused(run("feature-dependencies", "--feature", "group.version"),
            "Can't parse feature=level string group.version: equals sign not found.")
    result = run("feature-dependencies")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == f"{PROG} feature-dependencies: error: argument --feature is required"


def test_help_explains_with_examples() -> None:
    for command in ("describe", "upgrade", "downgrade", "disable", "version-mapping", "feature-dependencies"):
        result = CliRunner().invoke(main, [command, "--help"], prog_name=PROG)
        assert result.exit_code == 0, result.stderr
        example = (f"kafka-features {command}" if command in ("version-mapping", "feature-dependencies")
                   else f"kafka-features --bootstrap-controller localhost:9093 {command}")
        assert example in result.stdout
