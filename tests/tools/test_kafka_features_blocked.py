"""kafka-features upgrade refused because a registered node does not support the level: Kafka's text
unchanged, then one ``Note:`` line naming the node and what clears it (over the in-memory network)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner
from unit.client.fake import FakeNetwork, FakeNode, admin, describe_cluster

from kafka_admin_kraft import Admin
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft_cli import kafka_features

REFUSAL = ("The update failed for all features since the following feature had an error: Invalid update "
           "version 33 for feature metadata.version. Controller 4 only supports versions 7-29")


def network(refusal: str) -> FakeNetwork:
    """Three controllers that list a registration of controller 4 (neither voting nor fetching) and
    refuse every UpdateFeatures with ``refusal``."""
    net = FakeNetwork(3, leader=1)

    def listed(node: FakeNode, version: int, body: Any) -> Any:
        response = describe_cluster(node, version, body)
        broker = messages.DescribeClusterResponse.DescribeClusterBroker
        response.brokers.append(broker(broker_id=4, host="10.0.0.9", port=9999))
        return response

    def refused(node: FakeNode, version: int, body: Any) -> Any:
        return messages.UpdateFeaturesResponse(error_code=95, error_message=refusal)

    for node in net.nodes.values():
        node.handlers[60] = listed
        node.handlers[57] = refused
    return net


def upgrade(monkeypatch: pytest.MonkeyPatch, net: FakeNetwork, *args: str) -> Any:
    clients: list[Admin] = []

    def connect(ctx: Any) -> Admin:
        clients.append(admin(net))
        return clients[-1]

    monkeypatch.setattr(kafka_features, "_connect", connect)
    return CliRunner().invoke(kafka_features.main, ["--bootstrap-controller", "c1:9093", "upgrade", *args],
                              prog_name="kafka-features")


def test_the_refusal_is_kafkas_text_then_a_note_naming_the_registration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    result = upgrade(monkeypatch, network(REFUSAL), "--feature", "metadata.version=33")
    assert result.exit_code == 1
    assert result.stdout == f"Could not upgrade metadata.version to 33. {REFUSAL}\n"
    first, note = result.stderr.splitlines()
    assert first == "1 out of 1 operation(s) failed."
    assert note == (
        "Note: metadata.version 33 (4.4-IV2) is held back by controller 4, registered as supporting "
        "metadata.version 7-29 but neither a voter nor fetching (a registration left behind), which only "
        "metadata.version 4.4-IV2 lets be unregistered: start controller 4 again on Kafka 4.4 or later (it "
        "registers again with that release's ranges), upgrade, then stop it and unregister it; fix: "
        "kafka-storage format --cluster-id MkU3OEVBNTcwNTJENDM2Qg --config <controller-4.properties> "
        "--release-version 4.2-IV1 --ignore-formatted && kafka-server-start <controller-4.properties>")


def test_a_dry_run_and_json_get_the_note_too_and_only_once(monkeypatch: pytest.MonkeyPatch) -> None:
    options = ["--release-version", "4.4", "--dry-run", "--output", "json"]
    result = upgrade(monkeypatch, network(REFUSAL), *options)
    assert result.exit_code == 1
    failed = [r for r in json.loads(result.stdout)["results"] if not r["ok"]]
    assert len(failed) > 1 and {r["error"] for r in failed} == {REFUSAL}
    lines = result.stderr.splitlines()
    assert lines[0].endswith("operation(s) failed.") and len(lines) == 2
    assert lines[1].startswith("Note: metadata.version 33 (4.4-IV2) is held back by controller 4")


def test_a_refusal_naming_no_node_gets_kafkas_text_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    other = "Invalid metadata.version 99. Valid versions are from 7 to 34."
    result = upgrade(monkeypatch, network(other), "--feature", "metadata.version=99")
    assert (result.exit_code, result.stderr) == (1, "1 out of 1 operation(s) failed.\n")
