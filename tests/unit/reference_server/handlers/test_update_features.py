"""UpdateFeatures (API 57) on the controller: Kafka's rules and messages, each version's response, and
the runtime holding the answer until the records are committed."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_admin_kraft import features
from kafka_admin_kraft.protocol import framing, messages
from kafka_admin_kraft_server.handlers import ServerView, update_features
from kafka_admin_kraft_server.kafka_line import LINES
from kafka_admin_kraft_server.raft.api import ReplicaKey, VoterInfo, VoterSet
from kafka_admin_kraft_server.raft.core import KRaftUpgradeError
from unit.reference_server.fakes import FakeCore, voter_set
from unit.reference_server.runtime_testlib import make_runtime, running, wait_for

R = messages.UpdateFeaturesRequest
PREFIX = "The update failed for all features since the following feature had an error: "
DEFAULTS = {"metadata.version": 29, "transaction.version": 2, "group.version": 1,
            "eligible.leader.replicas.version": 1, "share.version": 1, "streams.version": 1}


def view(levels: dict[str, int] | None = None, **overrides: Any) -> ServerView:
    finalized = dict(DEFAULTS if levels is None else levels)
    fields: dict[str, Any] = dict(cluster_id="MkU3OEVBNTcwNTJENDM2Qk", node_id=1, leader_id=1,
                                  voters=voter_set(1, 2, 3), listener="CONTROLLER",
                                  finalized_features=finalized, finalized_features_epoch=42,
                                  metadata_version=finalized.get("metadata.version"))
    fields.update(overrides)
    return ServerView(**fields)


def request(*updates: tuple[str, int, int], validate_only: bool = False) -> messages.UpdateFeaturesRequest:
    return R(timeout_ms=60000, validate_only=validate_only, feature_updates=[
        R.FeatureUpdateKey(feature=name, max_version_level=level, upgrade_type=kind)
        for name, level, kind in updates])


def decide(*updates: tuple[str, int, int], version: int = 2, validate_only: bool = False,
           **view_overrides: Any) -> update_features.Outcome:
    return update_features.handle(request(*updates, validate_only=validate_only), version,
                                  view(**view_overrides), active=True)


UP, SAFE, UNSAFE = 1, 2, 3


def refusal(outcome: update_features.Outcome) -> str:
    """The reason of a refused request (top-level message without Kafka's prefix)."""
    response = outcome.response
    assert response.error_code == 95 and not outcome.needs_commit
    assert response.error_message.startswith(PREFIX)
    return str(response.error_message[len(PREFIX):])


# ------------------------------------------------------------------ refusals, one per rule

@pytest.mark.parametrize(("update", "reason"), [
    (("group.version", 1, 0),
     "group.version: The controller does not support the given upgrade type."),
    (("group.version", 1, 7),
     "group.version: The controller does not support the given upgrade type."),
    (("group.version", -1, SAFE),
     "group.version: A feature version cannot be less than 0."),
    (("group.version", 2, UP),
     "group.version: Local controller 1 only supports versions 0-1"),
    (("metadata.version", 34, UP),
     "metadata.version: Local controller 1 only supports versions 7-33"),
    (("metadata.version", 0, SAFE),
     "metadata.version: Local controller 1 only supports versions 7-33"),
    (("no.such.feature", 1, UP),
     "no.such.feature: Local controller 1 does not support this feature."),
    (("no.such.feature", 0, SAFE),
     "no.such.feature: Feature no.such.feature not found."),
    (("group.version", 0, UP),
     "group.version: Can't downgrade the version of this feature without setting the upgrade type to either "
     "safe or unsafe downgrade."),
    (("metadata.version", 24, UP),
     "metadata.version: Can't downgrade the version of this feature without setting the upgrade type to "
     "either safe or unsafe downgrade."),
    (("kraft.version", 1, SAFE),
     "kraft.version: Can't downgrade to a newer version."),
    (("metadata.version", 22, SAFE),
     "=Unsupported metadata.version downgrade from 29 to 22. Refusing to perform the requested downgrade "
     "because it might delete metadata information."),
    (("metadata.version", 7, UNSAFE),
     "=Unsupported metadata.version downgrade from 29 to 7. Unsafe metadata downgrade is not supported in "
     "this version."),
])
def test_each_refusal_has_kafkas_error_and_message(update: tuple[str, int, int], reason: str) -> None:
    """``name: reason`` stands for ``Invalid update version <level> for feature <name>. <reason>``;
    ``=text`` is the whole message."""
    if reason.startswith("="):
        expected = reason[1:]
    else:
        name, text = reason.split(": ", 1)
        expected = f"Invalid update version {update[1]} for feature {name}. {text}"
    assert refusal(decide(update)) == expected


def test_a_node_with_unstable_feature_versions_accepts_the_testing_metadata_version() -> None:
    assert decide(("metadata.version", 34, UP), unstable_feature_versions=True).response.error_code == 0


def test_kraft_version_downgrade_is_refused() -> None:
    levels = {**DEFAULTS, "kraft.version": 1}
    for kind in (SAFE, UNSAFE):
        assert refusal(decide(("kraft.version", 0, kind), levels=levels)) == (
            "Invalid update version 0 for feature kraft.version. Can't downgrade the version of this "
            "feature.")
    # the same level with a downgrade type is not an upgrade either
    assert refusal(decide(("kraft.version", 1, SAFE), levels=levels)) == (
        "Invalid update version 1 for feature kraft.version. Can't downgrade the version of this feature.")


def test_dependency_violation_uses_the_proposed_levels() -> None:
    levels = {**DEFAULTS, "metadata.version": 22, "eligible.leader.replicas.version": 0}
    assert refusal(decide(("eligible.leader.replicas.version", 1, UP), levels=levels)) == (
        "Invalid update version 1 for feature eligible.leader.replicas.version. "
        "eligible.leader.replicas.version could not be set to 1 because it depends on metadata.version "
        "level 23")
    # metadata.version raised in the same request (after it, even) satisfies the dependency
    outcome = decide(("eligible.leader.replicas.version", 1, UP), ("metadata.version", 23, UP), levels=levels)
    assert outcome.response.error_code == 0
    assert [(r.name, r.feature_level) for r in outcome.records] == [
        ("eligible.leader.replicas.version", 1), ("metadata.version", 23)]


def test_metadata_version_downgrade_without_a_format_change_is_allowed() -> None:
    for kind in (SAFE, UNSAFE):
        outcome = decide(("metadata.version", 23, kind))
        assert outcome.response.error_code == 0
        assert [(r.name, r.feature_level) for r in outcome.records] == [("metadata.version", 23)]
    assert features.metadata_changed(29, 22) and not features.metadata_changed(29, 23)


def test_first_failure_fails_the_whole_request_and_nothing_is_written() -> None:
    outcome = decide(("streams.version", 0, SAFE), ("group.version", 5, UP), ("share.version", 0, SAFE))
    assert refusal(outcome).startswith("Invalid update version 5 for feature group.version.")
    assert outcome.records == () and outcome.changes == {}


# ------------------------------------------------------------------ success, validate-only, versions

def test_upgrade_downgrade_and_disabling_write_feature_level_records() -> None:
    levels = {"metadata.version": 21}
    outcome = decide(("metadata.version", 29, UP), ("group.version", 1, UP), levels=levels)
    assert outcome.response.error_code == 0 and outcome.response.error_message is None
    assert [(type(r).__name__, r.name, r.feature_level) for r in outcome.records] == [
        ("FeatureLevelRecord", "metadata.version", 29), ("FeatureLevelRecord", "group.version", 1)]
    assert outcome.changes == {"metadata.version": 29, "group.version": 1}
    disable = decide(("streams.version", 0, SAFE), ("share.version", 0, UNSAFE))
    assert [(r.name, r.feature_level) for r in disable.records] == [("streams.version", 0),
                                                                    ("share.version", 0)]


def test_validate_only_checks_but_writes_nothing() -> None:
    ok = decide(("streams.version", 0, SAFE), validate_only=True)
    assert ok.response.error_code == 0 and not ok.needs_commit
    bad = decide(("metadata.version", 20, SAFE), validate_only=True, version=1)
    assert bad.response.error_code == 95 and not bad.needs_commit


def test_kraft_version_upgrade_goes_to_the_core_and_needs_every_voter() -> None:
    outcome = decide(("kraft.version", 1, UP), ("metadata.version", 29, UP))
    assert outcome.upgrade_kraft_version and outcome.changes == {"kraft.version": 1, "metadata.version": 29}
    assert [r.name for r in outcome.records] == ["metadata.version"]
    two = voter_set(1, 2)
    old = VoterSet({**two.voters, 3: VoterInfo(ReplicaKey(3), two.voters[1].endpoints, 0, 0)})
    assert refusal(decide(("kraft.version", 1, UP), voters=old)).startswith(
        "Invalid update version 1 for feature kraft.version. The voter set [1, 2, 3] doesn't support")
    # already at 1: an UPGRADE to 1 changes nothing
    same = decide(("kraft.version", 1, UP), levels={**DEFAULTS, "kraft.version": 1})
    assert same.response.error_code == 0 and not same.needs_commit


def test_not_the_active_controller() -> None:
    for leader, text in ((2, "The active controller appears to be node 2."),
                         (-1, "No controller appears to be active.")):
        outcome = update_features.handle(request(("group.version", 1, UP)), 1, view(leader_id=leader),
                                         active=False)
        assert (outcome.response.error_code, outcome.response.error_message) == (41, text)
        assert outcome.response.results == [] and not outcome.needs_commit


@pytest.mark.parametrize("version", [0, 1, 2])
def test_response_shape_per_version(version: int) -> None:
    updates = [("streams.version", 1, UP), ("group.version", 1, UP)]
    ok = decide(*updates, version=version).response
    bad = decide(("streams.version", 1, UP), ("group.version", 3, UP), version=version).response
    assert (ok.error_code, ok.error_message) == (0, None)
    assert bad.error_code == 95 and bad.error_message.startswith(PREFIX)
    if version < 2:
        assert [(r.feature, r.error_code, r.error_message) for r in ok.results] == [
            ("streams.version", 0, "NONE"), ("group.version", 0, "NONE")]
        assert [(r.feature, r.error_code, r.error_message) for r in bad.results] == [
            ("streams.version", 95, bad.error_message), ("group.version", 95, bad.error_message)]
    else:
        assert ok.results == [] and bad.results == []
    for body in (ok, bad):  # each encodes at its version and decodes back the same
        frame = framing.encode_response(body, version, 3)
        _, decoded = framing.decode_response(frame[4:], 57, version)
        assert decoded.error_code == body.error_code and len(decoded.results) == len(body.results)


def test_v0_ignores_allow_downgrade() -> None:
    body = R(feature_updates=[R.FeatureUpdateKey(feature="group.version", max_version_level=0,
                                                 allow_downgrade=True)])
    decoded = R.decode(body.encode(0), 0)
    outcome = update_features.handle(decoded, 0, view(), active=True)
    assert "without setting the upgrade type" in str(outcome.response.error_message)


# ------------------------------------------------------------------ the runtime

class HoldingCore(FakeCore):
    """A fake core whose image applies only up to ``commit_limit`` and that can upgrade kraft.version."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commit_limit: int | None = None
        self.kraft_upgrades = 0
        self.kraft_error: str | None = None

    def _catch_up(self) -> None:
        for batch in list(self.log.batches(self.image.next_offset)):
            if self.commit_limit is not None and batch.last_offset >= self.commit_limit:
                return
            self.image.apply_batch(batch)

    def upgrade_kraft_version(self, now_ms: int) -> int:
        if self.kraft_error:
            raise KRaftUpgradeError(self.kraft_error)
        self.kraft_upgrades += 1
        return self.append([messages.NoOpRecord()], now_ms)


def holding_runtime() -> Any:
    runtime = make_runtime()
    core = HoldingCore(1, runtime.log)
    runtime.core = core
    return runtime, core


def send_update(server: Any, *updates: tuple[str, int, int], version: int = 1,
                validate_only: bool = False) -> Any:
    with server.client() as client:
        return client.request(request(*updates, validate_only=validate_only), version)


def test_runtime_appends_and_answers_once_committed() -> None:
    runtime, core = holding_runtime()
    with running(runtime) as server:
        wait_for(lambda: core.committed_features().metadata_version == 33)
        client = server.client()
        core.commit_limit = core.log.end_offset()  # nothing from here on gets committed
        client.send(request(("streams.version", 0, SAFE)), 1)
        wait_for(lambda: any(r and type(r[0]).__name__ == "FeatureLevelRecord" for r in core.appended))
        client.sock.settimeout(0.3)
        with pytest.raises(OSError):
            client.recv_frame()  # held: not committed yet
        client.sock.settimeout(5)
        server.call(lambda: setattr(core, "commit_limit", None))
        server.call(runtime._wake.set)
        _, body = client.receive(57, 1)
        assert (body.error_code, [(r.feature, r.error_message) for r in body.results]) == (
            0, [("streams.version", "NONE")])
        client.close()
        assert "streams.version" not in core.committed_features().levels
        with server.client() as c:
            finalized = {f.name: f.max_version_level for f in c.api_versions().finalized_features}
        assert "streams.version" not in finalized and finalized["metadata.version"] == 33


def test_runtime_validate_only_and_refusals_append_nothing() -> None:
    runtime, core = holding_runtime()
    with running(runtime) as server:
        wait_for(lambda: core.committed_features().metadata_version == 33)
        appended = len(core.appended)
        ok = send_update(server, ("group.version", 1, UP), validate_only=True)
        bad = send_update(server, ("metadata.version", 20, SAFE))
        assert ok.error_code == 0 and bad.error_code == 95
        assert [type(r).__name__ for batch in core.appended[appended:] for r in batch
                if type(r).__name__ != "NoOpRecord"] == []
        assert core.committed_features().metadata_version == 33


def test_runtime_kraft_version_upgrade_calls_the_core() -> None:
    runtime, core = holding_runtime()
    with running(runtime) as server:
        wait_for(lambda: core.committed_features().metadata_version == 33)
        core.kraft_error = "Cannot upgrade kraft.version to 1: voters [2] have not reported support"
        refused = send_update(server, ("kraft.version", 1, UP), version=2)
        assert refused.error_code == 95 and refused.error_message == (
            PREFIX + "Invalid update version 1 for feature kraft.version. " + core.kraft_error)
        core.kraft_error = None
        done = send_update(server, ("kraft.version", 1, UP), version=2)
        assert done.error_code == 0 and core.kraft_upgrades == 1


def test_runtime_follower_answers_not_controller() -> None:
    with running(make_runtime(lead=False)) as server:
        body = send_update(server, ("group.version", 1, UP))
        assert (body.error_code, body.error_message, body.results) == (
            41, "No controller appears to be active.", [])


def test_runtime_leadership_lost_while_waiting_answers_not_controller() -> None:
    runtime, core = holding_runtime()
    with running(runtime) as server:
        wait_for(lambda: core.committed_features().metadata_version == 33)
        client = server.client()
        core.commit_limit = core.log.end_offset()
        client.send(request(("streams.version", 0, SAFE)), 2)
        wait_for(lambda: bool(runtime._commit_waits))

        def lose() -> None:
            core.lead = False
            core._leader = 2
            runtime._wake.set()
        server.call(lose)
        _, body = client.receive(57, 2)
        assert (body.error_code, body.error_message) == (41, "The active controller appears to be node 2.")
        client.close()


def test_api_versions_advertises_update_features() -> None:
    from kafka_admin_kraft_server.handlers import api_versions
    response, _ = api_versions.handle(messages.ApiVersionsRequest(client_software_name="a",
                                                                  client_software_version="1"), 4, view())
    assert {(e.api_key, e.min_version, e.max_version) for e in response.api_keys} >= {(57, 0, 2)}


# ------------------------------------------------------------------ the rules of each line

def test_kraft_version_on_3_9_and_4_0_is_a_feature_level_record_that_upgrades_nothing() -> None:
    """Before 4.1 (KAFKA-16538) a controller has no kraft.version rule: the update passes the range check
    and writes a FeatureLevelRecord, the quorum stays static (KAFKA-18979: the level is the control
    records'). From 4.1 the same update starts the upgrade and writes no such record."""
    for name in ("3.9", "4.0"):
        outcome = decide(("kraft.version", 1, UP), levels={"metadata.version": 21}, line=LINES[name])
        assert outcome.response.error_code == 0 and not outcome.upgrade_kraft_version, name
        assert [(r.name, r.feature_level) for r in outcome.records] == [("kraft.version", 1)], name
    for name in ("4.1", "4.2", "4.3", "4.4"):
        outcome = decide(("kraft.version", 1, UP), levels={"metadata.version": 21}, line=LINES[name])
        assert outcome.upgrade_kraft_version and outcome.records == (), name
    downgrade = decide(("kraft.version", 0, SAFE), levels={"metadata.version": 21, "kraft.version": 1},
                       line=LINES["4.0"])
    assert [(r.name, r.feature_level) for r in downgrade.records] == [("kraft.version", 0)]
    newest = decide(("kraft.version", 0, SAFE), levels={"metadata.version": 21, "kraft.version": 1})
    assert refusal(newest) == ("Invalid update version 0 for feature kraft.version. Can't downgrade the "
                               "version of this feature.")


def test_kafka_3_9_decides_each_feature_alone() -> None:
    """3.9's FeatureControlManager: a refused feature gets its own result, the top level says NONE and
    the features that passed are written; no dependency is checked."""
    outcome = decide(("metadata.version", 22, UP), ("kraft.version", 1, UP), ("group.version", 1, UP),
                     version=1, levels={"metadata.version": 21}, line=LINES["3.9"])
    response = outcome.response
    assert (response.error_code, response.error_message) == (0, None)
    assert [(r.feature, r.error_code, r.error_message) for r in response.results] == [
        ("metadata.version", 95, "Invalid update version 22 for feature metadata.version. Local controller "
                                 "1 only supports versions 1-21"),
        ("kraft.version", 0, None),
        ("group.version", 95, "Invalid update version 1 for feature group.version. Local controller 1 does "
                              "not support this feature.")]
    assert [(r.name, r.feature_level) for r in outcome.records] == [("kraft.version", 1)]
    assert outcome.changes == {"kraft.version": 1}
    assert decide(("metadata.version", 20, SAFE), version=1, validate_only=True,
                  levels={"metadata.version": 21}, line=LINES["3.9"]).records == ()


def test_dependencies_are_checked_from_4_0() -> None:
    """ELR 1 needs metadata.version 4.0-IV1 (KIP-966); 4.0 checks it (Feature.validateVersion)."""
    outcome = decide(("eligible.leader.replicas.version", 1, UP), levels={"metadata.version": 22},
                     line=LINES["4.0"])
    assert refusal(outcome) == ("Invalid update version 1 for feature eligible.leader.replicas.version. "
                                "eligible.leader.replicas.version could not be set to 1 because it depends "
                                "on metadata.version level 23")


@pytest.mark.parametrize(("line", "level", "message"), [
    ("4.2", 30, "7-29"),
    ("4.3", 31, "7-30"),
    ("4.0", 26, "7-25"),
])
def test_metadata_version_range_is_the_lines(line: str, level: int, message: str) -> None:
    outcome = decide(("metadata.version", level, UP), levels={"metadata.version": 21}, line=LINES[line])
    assert refusal(outcome) == (f"Invalid update version {level} for feature metadata.version. Local "
                                f"controller 1 only supports versions {message}")
    unstable = decide(("metadata.version", level, UP), levels={"metadata.version": 21}, line=LINES[line],
                      unstable_feature_versions=True)
    assert unstable.response.error_code == 0


# ------------------------------------------------------------------ the registered nodes' ranges

OLD_CONTROLLER = {"metadata.version": (1, 21), "kraft.version": (0, 1)}
"""What a Kafka 3.9 controller registers (metadata.version 3.0-IV1 to 3.9-IV0)."""


def decide_registered(*updates: tuple[str, int, int], registered: update_features.Registered,
                      **view_overrides: Any) -> update_features.Outcome:
    return update_features.handle(request(*updates), 2, view(**view_overrides), active=True,
                                  registered=registered)


def test_a_level_a_registered_controller_lacks_is_refused() -> None:
    """Kafka's FeatureControlManager.reasonNotSupported: a 4.4 leader does not finalize what a 3.9
    voter, running or stopped mid-upgrade, cannot run; a feature it does not list is 0-0."""
    registered = update_features.Registered(controllers={2: OLD_CONTROLLER, 3: {"metadata.version": (7, 33)}})
    assert refusal(decide_registered(("metadata.version", 22, UP), registered=registered,
                                     levels={"metadata.version": 21})) == (
        "Invalid update version 22 for feature metadata.version. Controller 2 only supports versions 1-21")
    assert refusal(decide_registered(("group.version", 1, UP), registered=registered,
                                     levels={"metadata.version": 21})) == (
        "Invalid update version 1 for feature group.version. Controller 2 does not support this feature.")
    # what every registered controller supports passes, and so does the level the 3.9 one knows
    ok = decide_registered(("metadata.version", 20, SAFE), registered=registered,
                           levels={"metadata.version": 21})
    assert ok.response.error_code == 0 and [(r.name, r.feature_level) for r in ok.records] == [
        ("metadata.version", 20)]


def test_brokers_are_checked_first_and_the_local_registration_is_skipped() -> None:
    registered = update_features.Registered(brokers={100: {"metadata.version": (7, 29)}},
                                            controllers={1: {"metadata.version": (7, 21)}, 2: OLD_CONTROLLER})
    assert refusal(decide_registered(("metadata.version", 33, UP), registered=registered)) == (
        "Invalid update version 33 for feature metadata.version. Broker 100 only supports versions 7-29")
    # node 1 (this controller) registered an older range once: its own range is what counts
    mine = update_features.Registered(controllers={1: {"metadata.version": (7, 21)}})
    assert decide_registered(("metadata.version", 33, UP), registered=mine).response.error_code == 0


def test_controllers_are_checked_from_3_7_iv0_when_they_register() -> None:
    """Below metadata.version 3.7-IV0 (15) controllers do not register (KIP-919): only brokers count.
    A 3.9 controller answers each feature alone (v1)."""
    registered = update_features.Registered(controllers={2: {"metadata.version": (1, 14)}})

    def results(current: int) -> list[tuple[int, str | None]]:
        outcome = update_features.handle(request(("metadata.version", 16, UP)), 1,
                                         view({"metadata.version": current}, line=LINES["3.9"]), active=True,
                                         registered=registered)
        return [(r.error_code, r.error_message) for r in outcome.response.results]

    assert results(14) == [(0, None)]
    assert results(15) == [
        (95, "Invalid update version 16 for feature metadata.version. Controller 2 only supports versions "
             "1-14")]


def test_registered_ranges_are_read_from_the_registration_records() -> None:
    C, B = messages.RegisterControllerRecord, messages.RegisterBrokerRecord
    registered = update_features.Registered.of(
        [B(broker_id=100, features=[B.BrokerFeature(name="metadata.version", min_supported_version=7,
                                                    max_supported_version=29)])],
        [C(controller_id=2, features=[C.ControllerFeature(name="metadata.version", min_supported_version=1,
                                                          max_supported_version=21)])])
    assert registered == update_features.Registered(brokers={100: {"metadata.version": (7, 29)}},
                                                    controllers={2: {"metadata.version": (1, 21)}})


def test_runtime_checks_what_the_registered_controllers_support() -> None:
    runtime, core = holding_runtime()
    C = messages.RegisterControllerRecord
    old = C(controller_id=2, features=[C.ControllerFeature(name="metadata.version", min_supported_version=1,
                                                           max_supported_version=21)])
    core.registered_controllers = lambda: [old]  # type: ignore[method-assign]
    with running(runtime) as server:
        wait_for(lambda: core.committed_features().metadata_version == 33)
        refused = send_update(server, ("share.version", 1, SAFE), ("metadata.version", 30, SAFE), version=2)
    assert refused.error_code == 95 and refused.error_message == (
        PREFIX + "Invalid update version 1 for feature share.version. Controller 2 does not support this "
        "feature.")
