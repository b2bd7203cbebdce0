"""UnregisterBroker and UnregisterController (KIP-1312) on the controller: the decisions in Kafka's
order with Kafka's messages, and what a running active controller answers and writes, a stopped
controller of an older line ("ghost") blocking a metadata.version upgrade included."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.records import ApiMessageAndVersion, metadata_batches
from kafka_admin_kraft.storage import BootstrapMetadata
from kafka_admin_kraft_server.handlers import BROKER_APIS, CONTROLLER_APIS, unregister, update_features
from kafka_admin_kraft_server.raft.image import SnapshotImage
from unit.reference_server.handlers.handlers_testlib import REQ, registration
from unit.reference_server.runtime_testlib import Running, lone_runtime, running, wait_for

UB = messages.UnregisterBrokerRequest
UC = messages.UnregisterControllerRequest
BROKER = messages.RegisterBrokerRecord

VOTER = "Cannot unregister controller {} because it is part of the voter set."
TOO_OLD = "The current MetadataVersion is too old to support controller unregistration."
NOT_REGISTERED = "Controller ID {} is not currently registered."


def broker(broker_id: int, epoch: int) -> messages.RegisterBrokerRecord:
    return BROKER(broker_id=broker_id, incarnation_id=Uuid(b"\x05" * 16), broker_epoch=epoch, fenced=False)


# ------------------------------------------------------------------------------------------- UnregisterBroker


def test_unregister_broker_writes_the_record_with_the_registrations_epoch() -> None:
    decision = unregister.unregister_broker(UB(broker_id=100), active=True,
                                            registered={100: broker(100, 42)})
    assert decision.response == messages.UnregisterBrokerResponse(throttle_time_ms=0, error_code=0,
                                                                  error_message="")
    assert decision.record == ApiMessageAndVersion(
        messages.UnregisterBrokerRecord(broker_id=100, broker_epoch=42), 0)


@pytest.mark.parametrize(("active", "code"), [(False, 41), (True, 102)])
def test_unregister_broker_refusals_carry_only_the_code(active: bool, code: int) -> None:
    """Kafka's ControllerApis.handleUnregisterBroker sets the error code alone: ErrorMessage stays ""."""
    decision = unregister.unregister_broker(UB(broker_id=7), active=active,
                                            registered={100: broker(100, 42)})
    response = decision.response
    assert (response.error_code, response.error_message, decision.record) == (code, "", None)


# ------------------------------------------------------------------------------------- UnregisterController


def decide(controller_id: int, *, active: bool = True, level: int = 33,
           voters: tuple[int, ...] = (1, 2, 3)) -> tuple[int, str | None, object]:
    decision = unregister.unregister_controller(UC(controller_id=controller_id), active=active, node_id=1,
                                                leader_id=1 if active else 2, voters=voters,
                                                metadata_version=level, registered=(1, 2, 3, 7))
    return decision.response.error_code, decision.response.error_message, decision.record


@pytest.mark.parametrize(("case", "controller_id", "level", "voters", "expected"), [
    ("a voter, even below 4.4-IV2", 2, 32, (1, 2, 3), (42, VOTER.format(2))),
    ("a voter at 4.4-IV2", 3, 33, (1, 2, 3), (42, VOTER.format(3))),
    ("the leader, its removal not committed", 1, 33, (2, 3),
     (42, "Controller cannot unregister itself while it is active.")),
    ("a registered observer below 4.4-IV2", 7, 32, (1, 2, 3), (35, TOO_OLD)),
    ("an unknown id below 4.4-IV2", 9, 32, (1, 2, 3), (35, TOO_OLD)),
    ("an unknown id at 4.4-IV2", 9, 33, (1, 2, 3), (136, NOT_REGISTERED.format(9))),
    ("a negative id at 4.4-IV2", -1, 33, (1, 2, 3), (136, NOT_REGISTERED.format(-1))),
])
def test_unregister_controller_refusals_in_kafkas_order(case: str, controller_id: int, level: int,
                                                        voters: tuple[int, ...],
                                                        expected: tuple[int, str]) -> None:
    assert decide(controller_id, level=level, voters=voters) == (*expected, None)


def test_a_controller_that_is_not_active_names_the_leader() -> None:
    assert decide(7, active=False) == (41, "The active controller appears to be node 2.", None)


def test_a_registered_controller_outside_the_voter_set_is_unregistered() -> None:
    code, message, record = decide(7)
    assert (code, message) == (0, "")
    assert record == ApiMessageAndVersion(messages.UnregisterControllerRecord(controller_id=7), 0)


def test_both_apis_are_served_on_both_listener_kinds_and_forwarded() -> None:
    for key in (64, 94):
        assert key in CONTROLLER_APIS and key in BROKER_APIS
    assert unregister.controller_unreachable(0, 100).error_code == 41
    assert unregister.broker_unreachable(0, 100).error_code == 41


# ------------------------------------------------------------------------------------- a running controller

GHOST = 7
OLD_RANGE = (7, 29)
"""What a stopped Kafka 4.2 controller registered: metadata.version 3.3-IV3 to 4.2-IV1."""


def at(level: int) -> BootstrapMetadata:
    record = messages.FeatureLevelRecord(name="metadata.version", feature_level=level)
    return BootstrapMetadata([ApiMessageAndVersion(record, 0)], level)


def register_ghost(server: Running, high: int) -> None:
    request = registration(GHOST, features=[REQ.Feature(name="metadata.version", min_supported_version=7,
                                                        max_supported_version=high)])
    with server.client() as client:
        assert client.request(request, 0).error_code == 0
    assert ghost_range(server) == (7, high)


def ghost_range(server: Running) -> tuple[int, int] | None:
    for record in server.core.registered_controllers():
        if record.controller_id == GHOST:
            feature = record.features[0]
            return feature.min_supported_version, feature.max_supported_version
    return None


def ask(server: Running, body: Any) -> Any:
    with server.client() as client:
        return client.request(body, 0)


def upgrade(server: Running, level: int) -> Any:
    U = messages.UpdateFeaturesRequest
    update = U.FeatureUpdateKey(feature="metadata.version", max_version_level=level, upgrade_type=1)
    return ask(server, U(feature_updates=[update]))


def test_a_ghost_blocks_4_4_iv2_and_cannot_be_unregistered_below_it() -> None:
    """The deadlock KIP-1312 leaves: below 4.4-IV2 the ghost blocks the upgrade to 4.4-IV2 and cannot be
    unregistered. A 4.4 controller registering under its id (what Kafka's operators do) lifts the block;
    after the upgrade, and once that controller is gone, the registration is removed."""
    with running(lone_runtime(at(29))) as server:
        wait_for(lambda: server.core.committed_features().metadata_version == 29)
        register_ghost(server, OLD_RANGE[1])
        refused = upgrade(server, 33)
        assert refused.error_code == 95 and refused.error_message.endswith(
            "Invalid update version 33 for feature metadata.version. Controller 7 only supports versions "
            "7-29")
        too_old = ask(server, UC(controller_id=GHOST))
        assert (too_old.error_code, too_old.error_message) == (35, TOO_OLD)
        assert ghost_range(server) == OLD_RANGE
        register_ghost(server, 33)  # a 4.4 controller with the ghost's id
        assert upgrade(server, 33).error_code == 0
        wait_for(lambda: server.core.committed_features().metadata_version == 33)
        done = ask(server, UC(controller_id=GHOST))
        assert (done.error_code, done.error_message) == (0, "")
        assert ghost_range(server) is None
        written = [r for batch in server.core.appended for r in batch
                   if isinstance(r, messages.UnregisterControllerRecord)]
        assert written == [messages.UnregisterControllerRecord(controller_id=GHOST)]
        again = ask(server, UC(controller_id=GHOST))
        assert (again.error_code, again.error_message) == (136, NOT_REGISTERED.format(GHOST))
        voter = ask(server, UC(controller_id=1))  # the lone leader is the voter set
        assert (voter.error_code, voter.error_message) == (42, VOTER.format(1))


def test_unregister_broker_removes_the_registration() -> None:
    with running(lone_runtime()) as server:
        wait_for(lambda: server.core.committed_features().metadata_version == 33)
        server.call(lambda: server.core.append([ApiMessageAndVersion(broker(100, 5), 3)], 0))
        wait_for(lambda: [b.broker_id for b in server.core.registered_brokers()] == [100])
        unknown = ask(server, UB(broker_id=101))
        assert (unknown.error_code, unknown.error_message) == (102, "")
        done = ask(server, UB(broker_id=100))
        assert (done.error_code, done.error_message) == (0, "")
        assert server.core.registered_brokers() == []
        written = [r for batch in server.core.appended for r in batch
                   if isinstance(r, messages.UnregisterBrokerRecord)]
        assert written == [messages.UnregisterBrokerRecord(broker_id=100, broker_epoch=5)]


def test_an_unregistered_ghost_stops_blocking() -> None:
    """The UpdateFeatures check reads the registrations of the image: a 4.4 controller that registered
    without the testing levels blocks metadata.version 34 on a leader with
    unstable.feature.versions.enable, until its UnregisterControllerRecord is replayed."""
    C = messages.RegisterControllerRecord
    ghost = C(controller_id=GHOST, incarnation_id=Uuid(b"\x07" * 16), features=[
        C.ControllerFeature(name="metadata.version", min_supported_version=7, max_supported_version=33)])
    image = SnapshotImage()
    for batch in metadata_batches(0, 1, 0, [ApiMessageAndVersion(ghost, 0)]):
        image.apply_batch(batch)

    def check() -> None:
        registered = update_features.Registered.of(image.broker_registrations(),
                                                   image.controller_registrations())
        update_features.check_update("metadata.version", 34, 1, {"metadata.version": 33}, {}, 1, None,
                                     unstable=True, registered=registered)

    with pytest.raises(update_features.FeatureUpdateError, match="Controller 7 only supports versions 7-33"):
        check()
    for batch in metadata_batches(1, 1, 0, [ApiMessageAndVersion(
            messages.UnregisterControllerRecord(controller_id=GHOST), 0)]):
        image.apply_batch(batch)
    check()
