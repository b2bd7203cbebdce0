"""How a controller's properties file is read (`controller_identity`), as `kafka-metadata-quorum
add-controller --dry-run` reports it in-process: the endpoints from listeners and advertised listeners
in Kafka's grammar, the metadata directory, and each configuration mistake with Kafka's message; and
its `controller.quorum.auto.join.enable`, which the voter commands read (`auto_join_enabled`)."""
# ruff: noqa: E501

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_admin_kraft_cli.metadata_quorum.controller_identity import auto_join_enabled
from tools.metadata_quorum.quorum_util import NOWHERE, add_dry_run, controller_config, refused, run

INVALID = "Is this a valid controller configuration file?"


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


def test_auto_join_is_read_as_kafka_reads_a_boolean() -> None:
    key = "controller.quorum.auto.join.enable"
    assert auto_join_enabled({}) is False  # Kafka's default
    assert auto_join_enabled({key: " TRUE "}) is True
    assert auto_join_enabled({key: "False"}) is False


@pytest.mark.parametrize("value", ["yes", "1", ""])
def test_voter_commands_refuse_an_auto_join_value_that_is_no_boolean(tmp_path: Path, value: str) -> None:
    config = controller_config(tmp_path, {"controller.quorum.auto.join.enable": value})
    refused(run("--bootstrap-controller", NOWHERE, "reconcile", "--voters", "5", "--controller-config", str(config)),
            f"Invalid value {value} for configuration controller.quorum.auto.join.enable: Expected value to be "
            "either true or false")
    # Kafka's add-controller does not read the setting
    assert add_dry_run(config).exit_code == 0
