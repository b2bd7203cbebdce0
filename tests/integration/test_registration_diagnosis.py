"""The registrations that hold an upgrade back, diagnosed and cleared with the tools on real processes:
each command a tool prints is run as printed, and the upgrade it blocked then succeeds.

A ghost controller: four controllers formatted at Kafka 4.2's levels (4.2-IV1), node 3 running Kafka 4.2,
the others Kafka 4.4. Node 3 stops and ``reconcile`` removes it from the voters; its registration stays
(it notes why: unregistering needs 4.4-IV2, the very level it blocks), so ``kafka-features upgrade
--release-version 4.4`` is refused and says who holds it back and what clears it, and ``check`` says the
same. Below 4.4-IV2 what clears it is a Kafka 4.4 controller started under the ghost's id (here on a new
disk, the old one gone): it registers again with 4.4's ranges, the upgrade ``check`` then offers goes
through, and once it is stopped again ``check`` finds the registration left behind and prints the
``kafka-cluster unregister-controller`` that removes it. A voter cannot be unregistered.

A fenced broker: a Kafka 4.2 broker stopped for good stays registered, fenced, and holds the upgrade
back; through the brokers ``check`` finds it (a warning for ``watch`` once fenced longer than its
threshold) and ``kafka-features`` names it, both with the ``kafka-cluster unregister`` that removes it.
"""
# ruff: noqa: E501

from __future__ import annotations

import json
import shlex
import shutil
import signal
from collections.abc import Callable
from typing import Any

from console_scripts import console_script

from integration.harness import FAST_ELECTIONS, Cluster, wait_until
from integration.test_health import run, run_fix
from kafka_admin_kraft import Admin, FeatureUpdate
from kafka_admin_kraft.errors import KafkaApiError

Make = Callable[..., Cluster]
GHOST = 3
CONTROLLERS = (1, 2, 4)
OLD_BROKER, BROKER = 101, 102
STAYS = ("Note: the registration of controller 3 stays: unregistering needs metadata.version 4.4-IV2 (33) or "
         "later, and it is 29; until then its supported feature levels hold back feature upgrades")


def refusal(admin: Admin) -> str | None:
    """The active controller's verdict on metadata.version 33 (validate only): its refusal, or None."""
    try:
        admin.update_features({"metadata.version": FeatureUpdate(level=33)}, validate_only=True)
    except KafkaApiError as exc:  # UpdateFeatures v2: one error for the request
        return exc.message
    return None


def check(*connection: str) -> tuple[int, dict[str, Any]]:
    done = run([console_script("kafka-metadata-quorum"), *connection, "check", "--output", "json"])
    return done.returncode, json.loads(done.stdout)


def findings(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["code"]: f for f in document["findings"]}


def check_until(connection: tuple[str, ...], accept: Callable[[dict[str, Any]], bool], what: str,
                within: float = 30) -> dict[str, Any]:
    return wait_until(lambda: (lambda d: d if accept(d) else None)(check(*connection)[1]), within, what,
                      interval=0.3)


def features(*args: str) -> Any:
    return run([console_script("kafka-features"), *args])


def test_a_ghost_controller_below_4_4_iv2_is_replaced_then_unregistered_with_the_printed_commands(
    make_cluster: Make,
) -> None:
    cluster = make_cluster(4, properties=dict(FAST_ELECTIONS), lines={GHOST: "4.2"},
                           format_release_version="4.2").format()
    for node_id in CONTROLLERS:
        cluster.start(node_id)
    cluster.wait_for_leader(30, candidates=CONTROLLERS)
    cluster.start(GHOST)
    connection = ("--bootstrap-controller", cluster.bootstrap_servers())
    with cluster.admin() as admin:
        wait_until(lambda: "Controller 3 only supports versions 7-29" in (refusal(admin) or ""), 30,
                   "node 3's registration to hold metadata.version 33 back")

    # It stops for good and leaves the voters: below 4.4-IV2 its registration stays, and reconcile says so.
    cluster.kill(GHOST, signal.SIGKILL)
    reconciled = run([console_script("kafka-metadata-quorum"), *connection, "reconcile", "--voters", "1,2,4",
                      "--yes"])
    assert reconciled.returncode == 0, reconciled.stdout + reconciled.stderr
    assert STAYS in reconciled.stdout.splitlines() and "Unregistered" not in reconciled.stdout

    # Once the leader has not seen it fetch for --max-lag-ms, the upgrade is refused: Kafka's text, then
    # who holds it back and what clears it.
    check_until(connection, lambda d: "GHOST_CONTROLLER_REGISTRATION" in findings(d), "node 3 to stop fetching")
    upgraded = features(*connection, "upgrade", "--release-version", "4.4")
    assert upgraded.returncode == 1
    assert ("Could not upgrade metadata.version to 33. The update failed for all features since the "
            "following feature had an error: Invalid update version 33 for feature metadata.version. "
            "Controller 3 only supports versions 7-29\n") in upgraded.stdout
    failed, note = upgraded.stderr.splitlines()
    assert failed.endswith(" operation(s) failed.")
    restart = (f"kafka-storage format --cluster-id {cluster.cluster_id} --config <controller-3.properties> "
               "--release-version 4.2-IV1 --no-initial-controllers --ignore-formatted && kafka-server-start "
               "<controller-3.properties>")
    assert note == (
        "Note: metadata.version 33 (4.4-IV2) is held back by controller 3, registered as supporting "
        "metadata.version 7-29 but neither a voter nor fetching (a registration left behind), which only "
        "metadata.version 4.4-IV2 lets be unregistered: start controller 3 again on Kafka 4.4 or later (it "
        f"registers again with that release's ranges), upgrade, then stop it and unregister it; fix: {restart}")

    # check names it the same way; the registration itself cannot go yet.
    code, document = check(*connection)
    assert (code, document["status"], document["registered_controllers"]) == (0, "OK", [1, 2, 3, 4])
    found = findings(document)
    assert set(found) == {"FEATURE_UPGRADE_BLOCKED", "GHOST_CONTROLLER_REGISTRATION"}
    assert (found["FEATURE_UPGRADE_BLOCKED"]["node_id"], found["FEATURE_UPGRADE_BLOCKED"]["fix"]) == (3, restart)
    assert found["FEATURE_UPGRADE_BLOCKED"]["message"] == note.removeprefix("Note: ").split("; fix: ")[0]
    ghost = found["GHOST_CONTROLLER_REGISTRATION"]
    assert (ghost["node_id"], ghost["fix"]) == (3, None)
    assert ghost["message"].endswith(
        "it can be unregistered from metadata.version 4.4-IV2 on (metadata.version is 29); until then, should it "
        "hold an upgrade back, a controller of a newer release started under its id takes its place "
        "(FEATURE_UPGRADE_BLOCKED then says how)")

    # The printed fix, its old disk gone: format a new one, then start it as Kafka 4.4 (what
    # kafka-server-start does here is the harness starting the 4.4 server on that file).
    shutil.rmtree(cluster.nodes[GHOST].metadata_dir)
    config = str(cluster.nodes[GHOST].config_path)
    format_command, start_command = restart.replace("<controller-3.properties>", config).split(" && ")
    tool, *args = shlex.split(format_command)
    formatted = run([console_script(tool), *args])
    assert formatted.returncode == 0, formatted.stdout + formatted.stderr
    assert shlex.split(start_command) == ["kafka-server-start", config]
    cluster.start(GHOST, line="4.4")

    # Registered again with 4.4's ranges, as an observer: check offers the upgrade, and it goes through.
    document = check_until(connection, lambda d: "METADATA_VERSION_UPGRADE_AVAILABLE" in findings(d),
                           "the upgrade to be offered once node 3 runs Kafka 4.4")
    assert "FEATURE_UPGRADE_BLOCKED" not in findings(document)
    offered = findings(document)["METADATA_VERSION_UPGRADE_AVAILABLE"]
    assert offered["fix"] == f"kafka-features {shlex.join(connection)} upgrade --feature metadata.version=33"
    run_fix(offered["fix"])
    upgraded = features(*connection, "upgrade", "--release-version", "4.4")
    assert (upgraded.returncode, upgraded.stderr) == (0, ""), upgraded.stdout + upgraded.stderr
    for node_id in (*CONTROLLERS, GHOST):
        wait_until(lambda n=node_id: cluster.finalized(n)["metadata.version"] == 33, 20,  # type: ignore[misc]
                   f"node {node_id} to finalize 4.4-IV2")

    # Stopped again, it is a registration left behind, which 4.4-IV2 lets be unregistered.
    cluster.kill(GHOST, signal.SIGTERM)
    document = check_until(connection, lambda d: "GHOST_CONTROLLER_REGISTRATION" in findings(d),
                           "node 3 to be found neither voting nor fetching")
    ghost = findings(document)["GHOST_CONTROLLER_REGISTRATION"]
    assert ghost["fix"] == f"kafka-cluster unregister-controller {shlex.join(connection)} --id 3"
    run_fix(ghost["fix"])
    code, document = check(*connection)
    assert (code, document["findings"], document["registered_controllers"]) == (0, [], [1, 2, 4])

    # A voter is refused, as Kafka refuses it.
    refused = run([console_script("kafka-cluster"), "unregister-controller", *connection, "--id", "1"])
    assert (refused.returncode, refused.stdout) == (1, "")
    assert refused.stderr.splitlines()[0] == ("org.apache.kafka.common.errors.InvalidRequestException: Cannot "
                                              "unregister controller 1 because it is part of the voter set.")
    cluster.assert_running()


def test_a_fenced_broker_that_holds_an_upgrade_back_is_found_through_the_brokers_and_unregistered(
    make_cluster: Make,
) -> None:
    cluster = make_cluster(3, properties=dict(FAST_ELECTIONS), lines={OLD_BROKER: "4.2"},
                           format_release_version="4.2").format()
    old, broker = cluster.add_broker(OLD_BROKER), cluster.add_broker(BROKER)
    for node_id in (1, 2, 3):
        cluster.start(node_id)
    cluster.wait_for_leader(30, candidates=(1, 2, 3))
    cluster.start(OLD_BROKER)
    cluster.start(BROKER)
    connection = ("--bootstrap-server", broker.broker_address)
    with Admin(bootstrap_servers=broker.broker_address, default_api_timeout_ms=20000,
               request_timeout_ms=5000) as admin:
        def fenced() -> list[tuple[int, bool]]:
            return [(n.node_id, n.is_fenced) for n in admin.describe_cluster(include_fenced_brokers=True).nodes]

        wait_until(lambda: "Broker 101 only supports versions 7-29" in (refusal(admin) or ""), 30,
                   "broker 101's registration to hold metadata.version 33 back")
        wait_until(lambda: fenced() == [(OLD_BROKER, False), (BROKER, False)], 30, "both brokers to be unfenced")
        cluster.kill(OLD_BROKER, signal.SIGTERM)  # a controlled shutdown fences it at once
        wait_until(lambda: fenced() == [(OLD_BROKER, True), (BROKER, False)], 10, "broker 101 to be fenced")

    unregister = f"kafka-cluster unregister {shlex.join(connection)} --id 101"
    code, document = check(*connection)
    assert (code, document["status"], document["fenced_brokers"][0]["node_id"]) == (0, "OK", OLD_BROKER)
    found = findings(document)
    assert {code: (f["severity"], f["node_id"], f["fix"]) for code, f in found.items()} == {
        "FEATURE_UPGRADE_BLOCKED": ("INFO", OLD_BROKER, unregister),
        "FENCED_BROKER_REGISTERED": ("INFO", OLD_BROKER, unregister),
    }
    assert found["FEATURE_UPGRADE_BLOCKED"]["message"] == (
        "metadata.version 33 (4.4-IV2) is held back by broker 101, registered as supporting metadata.version "
        "7-29, and fenced: unregister it if it is gone for good, else upgrade it to Kafka 4.4 or later")
    upgraded = features(*connection, "upgrade", "--release-version", "4.4")
    assert upgraded.returncode == 1 and "Broker 101 only supports versions 7-29" in upgraded.stdout
    assert upgraded.stderr.splitlines()[-1] == f"Note: {found['FEATURE_UPGRADE_BLOCKED']['message']}; fix: {unregister}"

    # Timed across the checks of watch: a warning once fenced longer than --fenced-broker-ms.
    watched = run([console_script("kafka-metadata-quorum"), *connection, "watch", "--count", "4", "--interval-ms",
                   "400", "--fenced-broker-ms", "600", "--output", "json"])
    events = [json.loads(line) for line in watched.stdout.splitlines()]
    assert events[0]["event"] == "started" and events[0]["status"] == "OK"
    assert {"event": "status_changed", "from": "OK", "to": "WARNING"}.items() <= next(
        e for e in events if e["event"] == "status_changed").items()

    run_fix(unregister)
    upgraded = features(*connection, "upgrade", "--release-version", "4.4")
    assert (upgraded.returncode, upgraded.stderr) == (0, ""), upgraded.stdout + upgraded.stderr
    code, document = check(*connection)
    assert (code, document["findings"], document["fenced_brokers"]) == (0, [], [])
    assert old.process is None
    cluster.assert_running()
