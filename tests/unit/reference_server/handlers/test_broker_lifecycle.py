"""BrokerRegistration and BrokerHeartbeat decisions on the active controller, and the refusal of a
registration whose listener host is no valid host name or IP address."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kafka_admin_kraft.features import SUPPORTED_FEATURES
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.error_codes import ErrorCode
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft_server.handlers import broker_lifecycle as lifecycle
from kafka_admin_kraft_server.kafka_line import LINES
from unit.reference_server.server_testlib import BAD_HOSTS

CLUSTER = "Q0RHZ3pHbmZTc3FyN2NQTg"
INCARNATION = Uuid(bytes(15) + b"\x01")


def registration_request(incarnation: Uuid = INCARNATION, mv: tuple[int, int] = (7, 29),
                         cluster_id: str = CLUSTER) -> messages.BrokerRegistrationRequest:
    R = messages.BrokerRegistrationRequest
    features = [R.Feature(name=n, min_supported_version=lo, max_supported_version=hi)
                for n, lo, hi in SUPPORTED_FEATURES if n != "metadata.version"]
    features.append(R.Feature(name="metadata.version", min_supported_version=mv[0],
                              max_supported_version=mv[1]))
    listener = R.Listener(name="BROKER", host="h", port=9092, security_protocol=3)
    return R(broker_id=100, cluster_id=cluster_id, incarnation_id=incarnation, listeners=[listener],
             features=features)


def register(request: messages.BrokerRegistrationRequest, *, active: bool = True,
             registered: dict[int, messages.RegisterBrokerRecord] | None = None,
             live: frozenset[int] = frozenset()) -> lifecycle.Decision:
    return lifecycle.register(request, active=active, cluster_id=CLUSTER, metadata_version=29,
                              registered=registered or {}, live=live, next_offset=42)


def registered_record(fenced: bool = True) -> messages.RegisterBrokerRecord:
    record = register(registration_request()).record
    assert record is not None and isinstance(record.message, messages.RegisterBrokerRecord)
    record.message.fenced = fenced
    return record.message


def test_registration_refusals_in_kafka_order() -> None:
    assert register(registration_request(), active=False).response.error_code == ErrorCode.NOT_CONTROLLER
    assert register(registration_request(cluster_id="other")).response.error_code == \
        ErrorCode.INCONSISTENT_CLUSTER_ID
    other = registration_request(incarnation=Uuid(bytes(15) + b"\x02"))
    existing = {100: registered_record()}
    assert register(other, registered=existing, live=frozenset({100})).response.error_code == \
        ErrorCode.DUPLICATE_BROKER_REGISTRATION
    assert register(other, registered=existing).record is not None  # the old session expired
    assert register(registration_request(mv=(7, 28))).response.error_code == ErrorCode.UNSUPPORTED_VERSION
    for refused in (register(registration_request(), active=False),
                    register(registration_request(mv=(7, 28)))):
        assert refused.record is None and refused.response.broker_epoch == -1


def test_a_registration_appends_a_fenced_record_whose_offset_is_the_broker_epoch() -> None:
    decision = register(registration_request())
    assert decision.response.error_code == 0 and decision.response.broker_epoch == 42
    assert decision.record is not None and decision.record.version == 3
    record = decision.record.message
    assert isinstance(record, messages.RegisterBrokerRecord)
    assert (record.broker_id, record.broker_epoch, record.fenced, record.incarnation_id) == (100, 42, True,
                                                                                            INCARNATION)
    assert [(e.name, e.port, e.security_protocol) for e in record.end_points] == [("BROKER", 9092, 3)]


@pytest.mark.parametrize(("line", "metadata_version", "version"), [
    ("4.4", 33, 4), ("4.3", 30, 4), ("4.3", 29, 3), ("4.2", 30, 3), ("3.9", 21, 3)])
def test_the_record_version_follows_the_line_and_the_metadata_version(line: str, metadata_version: int,
                                                                     version: int) -> None:
    """RegisterBrokerRecord v4 (CordonedLogDirs, KIP-1066) from 4.3-IV0 on a 4.3 or later controller;
    4.2 knows 4.3-IV0 only as a placeholder and writes v3."""
    decision = lifecycle.register(registration_request(mv=(1, 33)), active=True, cluster_id=CLUSTER,
                                  metadata_version=metadata_version, registered={}, live=frozenset(),
                                  next_offset=42, line=LINES[line])
    assert decision.record is not None and decision.record.version == version
    assert decision.record.message.encode(version)  # the record has a place at that version


def beat(registration: messages.RegisterBrokerRecord | None, *, epoch: int = 42, offset: int = 42,
         fence: bool = False, shut_down: bool = False, active: bool = True) -> lifecycle.Decision:
    request = messages.BrokerHeartbeatRequest(broker_id=100, broker_epoch=epoch,
                                              current_metadata_offset=offset, want_fence=fence,
                                              want_shut_down=shut_down)
    return lifecycle.heartbeat(request, active=active, registration=registration)


def test_heartbeats_unfence_a_caught_up_broker_and_fence_on_request() -> None:
    fenced, unfenced = registered_record(), registered_record(fenced=False)
    assert beat(fenced, active=False).response.error_code == ErrorCode.NOT_CONTROLLER
    assert beat(None).response.error_code == ErrorCode.BROKER_ID_NOT_REGISTERED
    assert beat(fenced, epoch=7).response.error_code == ErrorCode.STALE_BROKER_EPOCH
    lagging = beat(fenced, offset=41)
    assert lagging.record is None
    assert (lagging.response.is_fenced, lagging.response.is_caught_up) == (True, False)
    unfencing = beat(fenced)
    assert unfencing.record is not None and unfencing.response.is_fenced is False
    change = unfencing.record.message
    assert isinstance(change, messages.BrokerRegistrationChangeRecord) and unfencing.record.version == 0
    assert (change.broker_id, change.broker_epoch, change.fenced) == (100, 42, -1)
    assert beat(unfenced).record is None
    shutting = beat(unfenced, shut_down=True)
    assert shutting.record is not None and shutting.response.should_shut_down is True
    assert shutting.record.message.fenced == 1  # type: ignore[attr-defined]
    assert beat(unfenced, fence=True).response.is_fenced is True
    assert beat(fenced, fence=True).record is None
    leaving = beat(fenced, shut_down=True)
    assert leaving.record is not None and leaving.record.message.fenced == 1  # type: ignore[attr-defined]
    assert (leaving.response.is_fenced, leaving.response.should_shut_down) == (True, True)


@pytest.mark.parametrize("host", [*BAD_HOSTS, ""])
def test_a_broker_registration_with_a_malformed_listener_host_is_an_invalid_request(host: str) -> None:
    request = registration_request()
    request.listeners[0].host = host
    decision = register(request)
    assert decision.response.error_code == ErrorCode.INVALID_REQUEST and decision.record is None


def test_the_controller_decides_a_heartbeat_on_its_own_uncommitted_fencing_changes() -> None:
    """A heartbeat that arrives before the previous one's change is committed sees that change: a broker
    unfenced a moment ago and now shutting down is fenced again, not left unfenced."""
    change = messages.BrokerRegistrationChangeRecord
    appended: list[Struct] = [change(broker_id=100, broker_epoch=42, fenced=-1),
                              change(broker_id=100, broker_epoch=7, fenced=1),  # an older registration's
                              change(broker_id=101, broker_epoch=42, fenced=1)]
    committed = registered_record()
    node = SimpleNamespace(core=SimpleNamespace(registered_brokers=lambda: [committed]),
                           uncommitted_records=lambda: appended)
    seen = lifecycle.controller_registration(node, 100)  # type: ignore[arg-type]
    assert seen is not None and seen.fenced is False
    assert committed.fenced is True  # the committed image is left alone
    shutting = beat(seen, shut_down=True)
    assert shutting.record is not None and shutting.record.message.fenced == 1  # type: ignore[attr-defined]
    assert lifecycle.controller_registration(node, 5) is None  # type: ignore[arg-type]
