"""Golden wire vectors, worked out by hand, for broker registration: BrokerRegistration (API 62),
BrokerHeartbeat (API 63), the records that register and fence brokers, and the serialized principal
a broker puts in an Envelope.

Every vector is checked both ways: the object encodes to exactly these bytes, and the bytes decode
to an object equal to it. All of these messages are flexible from version 0: compact lengths hold
N+1, and every struct ends with its tagged fields (count, then tag / size / value).
"""

from __future__ import annotations

import pytest

from golden.golden_testlib import golden_tests
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.exceptions import EncodeError
from kafka_admin_kraft.protocol.primitives import Uuid

UUID_A_BYTES = b"\x6d\x2a\x1f\x0e\x43\x5c\x4b\x8a\x9e\x01\x23\x45\x67\x89\xab\xcd"
UUID_A = Uuid(UUID_A_BYTES)
REQ = messages.BrokerRegistrationRequest

BROKER_REGISTRATION_REQUEST_V4 = b"".join([
    b"\x00\x00\x00\x64",      # BrokerId int32 = 100
    b"\x04" b"abc",           # ClusterId compact string, 3 bytes
    UUID_A_BYTES,             # IncarnationId uuid
    b"\x02",                  # Listeners compact array, 1 element
    b"\x02" b"B",             #   Name
    b"\x02" b"h",             #   Host
    b"\x23\x84",              #   Port uint16 = 9092
    b"\x00\x03",              #   SecurityProtocol int16 = 3 SASL_SSL
    b"\x00",                  #   tagged fields: none
    b"\x02",                  # Features compact array, 1 element
    b"\x02" b"m",             #   Name
    b"\x00\x07",              #   MinSupportedVersion int16 = 7
    b"\x00\x1d",              #   MaxSupportedVersion int16 = 29
    b"\x00",                  #   tagged fields: none
    b"\x00",                  # Rack compact nullable string = null
    b"\x00",                  # IsMigratingZkBroker bool (v1+) = false
    b"\x02", UUID_A_BYTES,    # LogDirs compact array of uuid (v2+), 1 element
    b"\xff" * 8,              # PreviousBrokerEpoch int64 (v3+) = -1
    b"\x00",                  # tagged fields: none
])

BROKER_REGISTRATION_REQUEST_V0 = b"".join([
    b"\x00\x00\x00\x64", b"\x04" b"abc", UUID_A_BYTES,
    b"\x01",                  # Listeners compact array, empty
    b"\x01",                  # Features compact array, empty
    b"\x02" b"r",             # Rack compact nullable string "r"
    b"\x00",                  # tagged fields: none (v0 stops here)
])

BROKER_REGISTRATION_RESPONSE_V4 = b"".join([
    b"\x00\x00\x00\x00",                  # ThrottleTimeMs int32 = 0
    b"\x00\x00",                          # ErrorCode int16 = 0
    b"\x00\x00\x00\x00\x00\x00\x00\x2a",  # BrokerEpoch int64 = 42
    b"\x00",                              # tagged fields: none
])

BROKER_HEARTBEAT_REQUEST_V1 = b"".join([
    b"\x00\x00\x00\x64",                  # BrokerId int32 = 100
    b"\x00\x00\x00\x00\x00\x00\x00\x2a",  # BrokerEpoch int64 = 42
    b"\x00\x00\x00\x00\x00\x00\x00\x32",  # CurrentMetadataOffset int64 = 50
    b"\x00",                              # WantFence bool = false
    b"\x01",                              # WantShutDown bool = true
    b"\x01",                              # tagged fields: 1
    b"\x00\x11",                          #   tag 0 (OfflineLogDirs), 17 bytes
    b"\x02", UUID_A_BYTES,                #   compact array of uuid, 1 element
])

BROKER_HEARTBEAT_REQUEST_V2 = b"".join([
    b"\x00\x00\x00\x64",                  # BrokerId int32 = 100
    b"\x00\x00\x00\x00\x00\x00\x00\x2a",  # BrokerEpoch int64 = 42
    b"\x00\x00\x00\x00\x00\x00\x00\x32",  # CurrentMetadataOffset int64 = 50
    b"\x00",                              # WantFence bool = false
    b"\x00",                              # WantShutDown bool = false
    b"\x01",                              # tagged fields: 1 (OfflineLogDirs empty is the default)
    b"\x01\x11",                          #   tag 1 (CordonedLogDirs, v2+, KIP-1066), 17 bytes
    b"\x02", UUID_A_BYTES,                #   compact nullable array of uuid, 1 element
])

BROKER_HEARTBEAT_REQUEST_V2_NONE_CORDONED = b"".join([
    b"\x00\x00\x00\x64", b"\x00\x00\x00\x00\x00\x00\x00\x2a",  # BrokerId 100, BrokerEpoch 42
    b"\x00\x00\x00\x00\x00\x00\x00\x32",  # CurrentMetadataOffset int64 = 50
    b"\x00", b"\x00",                     # WantFence false, WantShutDown false
    b"\x01",                              # tagged fields: 1
    b"\x01\x01",                          #   tag 1 (CordonedLogDirs), 1 byte
    b"\x01",                              #   compact nullable array, empty (not null: none cordoned)
])

BROKER_HEARTBEAT_REQUEST_V2_NOT_CAUGHT_UP = BROKER_HEARTBEAT_REQUEST_V2_NONE_CORDONED[:-4] + b"".join([
    b"\x00",                              # tagged fields: none (CordonedLogDirs null is the default)
])

BROKER_HEARTBEAT_REQUEST_V0 = b"".join([
    b"\x00\x00\x00\x64", b"\xff" * 8,     # BrokerId 100, BrokerEpoch -1 (the default)
    b"\x00" * 8,                          # CurrentMetadataOffset int64 = 0
    b"\x01", b"\x00",                     # WantFence true, WantShutDown false
    b"\x00",                              # tagged fields: none
])

BROKER_HEARTBEAT_RESPONSE_V1 = b"".join([
    b"\x00\x00\x00\x00",  # ThrottleTimeMs int32 = 0
    b"\x00\x4d",          # ErrorCode int16 = 77 STALE_BROKER_EPOCH
    b"\x01",              # IsCaughtUp bool = true
    b"\x00",              # IsFenced bool = false
    b"\x00",              # ShouldShutDown bool = false
    b"\x00",              # tagged fields: none
])

BROKER_REGISTRATION_CHANGE_RECORD_V0_UNFENCE = b"".join([
    b"\x00\x00\x00\x64",                  # BrokerId int32 = 100
    b"\x00\x00\x00\x00\x00\x00\x00\x2a",  # BrokerEpoch int64 = 42
    b"\x01",                              # tagged fields: 1
    b"\x00\x01\xff",                      #   tag 0 (Fenced), 1 byte: int8 -1 = unfenced
])

BROKER_REGISTRATION_CHANGE_RECORD_V3_CORDONED = b"".join([
    b"\x00\x00\x00\x64",                  # BrokerId int32 = 100
    b"\x00\x00\x00\x00\x00\x00\x00\x2a",  # BrokerEpoch int64 = 42
    b"\x01",                              # tagged fields: 1 (Fenced 0, InControlledShutdown 0, LogDirs
                                          # empty are defaults)
    b"\x03\x11",                          #   tag 3 (CordonedLogDirs, v3+, KIP-1066), 17 bytes
    b"\x02", UUID_A_BYTES,                #   compact nullable array of uuid, 1 element
])

BROKER_REGISTRATION_CHANGE_RECORD_V3_UNCORDONED = b"".join([
    b"\x00\x00\x00\x64", b"\x00\x00\x00\x00\x00\x00\x00\x2a",  # BrokerId 100, BrokerEpoch 42
    b"\x01",                              # tagged fields: 1
    b"\x03\x01",                          #   tag 3 (CordonedLogDirs), 1 byte
    b"\x01",                              #   compact nullable array, empty: none cordoned any more
])

BROKER_REGISTRATION_CHANGE_RECORD_V2_NO_CHANGE = b"".join([
    b"\x00\x00\x00\x64", b"\x00\x00\x00\x00\x00\x00\x00\x2a",
    b"\x00",                              # tagged fields: none (Fenced 0 and the rest default)
])

REGISTER_BROKER_RECORD_V4 = b"".join([
    b"\x00\x00\x00\x64",                  # BrokerId int32 = 100
    b"\x00",                              # IsMigratingZkBroker bool (v2+) = false
    UUID_A_BYTES,                         # IncarnationId uuid
    b"\x00\x00\x00\x00\x00\x00\x00\x2a",  # BrokerEpoch int64 = 42
    b"\x02",                              # EndPoints compact array, 1 element
    b"\x02" b"B", b"\x02" b"h",            #   Name, Host
    b"\x23\x84", b"\x00\x00",              #   Port uint16 = 9092, SecurityProtocol int16 = 0
    b"\x00",                              #   tagged fields: none
    b"\x02",                              # Features compact array, 1 element
    b"\x02" b"m", b"\x00\x07", b"\x00\x1e",  #   Name, MinSupportedVersion 7, MaxSupportedVersion 30
    b"\x00",                              #   tagged fields: none
    b"\x00",                              # Rack compact nullable string = null
    b"\x01",                              # Fenced bool = true
    b"\x00",                              # InControlledShutdown bool (v1+) = false
    b"\x02",                              # tagged fields: 2
    b"\x00\x11", b"\x02", UUID_A_BYTES,    #   tag 0 (LogDirs, v3+), 17 bytes: compact array of 1 uuid
    b"\x01\x11", b"\x02", UUID_A_BYTES,    #   tag 1 (CordonedLogDirs, v4+, KIP-1066), 17 bytes: 1 uuid
])

FENCE_BROKER_RECORD_V0 = b"".join([
    b"\x00\x00\x00\x64",                  # Id int32 = 100
    b"\x00\x00\x00\x00\x00\x00\x00\x2a",  # Epoch int64 = 42
    b"\x00",                              # tagged fields: none
])

DEFAULT_PRINCIPAL_DATA_V0 = b"".join([
    b"\x05" b"User",   # Type compact string, 4 bytes
    b"\x06" b"alice",  # Name compact string, 5 bytes
    b"\x00",           # TokenAuthenticated bool = false
    b"\x00",           # tagged fields: none
])

RECORD = messages.RegisterBrokerRecord


def register_broker_record(**overrides: object) -> messages.RegisterBrokerRecord:
    fields: dict[str, object] = dict(
        broker_id=100, incarnation_id=UUID_A, broker_epoch=42,
        end_points=[RECORD.BrokerEndpoint(name="B", host="h", port=9092, security_protocol=0)],
        features=[RECORD.BrokerFeature(name="m", min_supported_version=7, max_supported_version=30)],
        rack=None, fenced=True, log_dirs=[UUID_A])
    fields.update(overrides)
    return RECORD(**fields)  # type: ignore[arg-type]


CASES = [
    pytest.param(REQ, 4, REQ(broker_id=100, cluster_id="abc", incarnation_id=UUID_A, listeners=[
        REQ.Listener(name="B", host="h", port=9092, security_protocol=3)], features=[
        REQ.Feature(name="m", min_supported_version=7, max_supported_version=29)], rack=None,
        log_dirs=[UUID_A]), BROKER_REGISTRATION_REQUEST_V4, id="BrokerRegistrationRequest-v4"),
    pytest.param(REQ, 0, REQ(broker_id=100, cluster_id="abc", incarnation_id=UUID_A, rack="r"),
                 BROKER_REGISTRATION_REQUEST_V0, id="BrokerRegistrationRequest-v0"),
    pytest.param(messages.BrokerRegistrationResponse, 4, messages.BrokerRegistrationResponse(broker_epoch=42),
                 BROKER_REGISTRATION_RESPONSE_V4, id="BrokerRegistrationResponse-v4"),
    pytest.param(messages.BrokerHeartbeatRequest, 1, messages.BrokerHeartbeatRequest(
        broker_id=100, broker_epoch=42, current_metadata_offset=50, want_fence=False, want_shut_down=True,
        offline_log_dirs=[UUID_A]), BROKER_HEARTBEAT_REQUEST_V1, id="BrokerHeartbeatRequest-v1"),
    pytest.param(messages.BrokerHeartbeatRequest, 2, messages.BrokerHeartbeatRequest(
        broker_id=100, broker_epoch=42, current_metadata_offset=50, want_fence=False,
        cordoned_log_dirs=[UUID_A]), BROKER_HEARTBEAT_REQUEST_V2, id="BrokerHeartbeatRequest-v2"),
    pytest.param(messages.BrokerHeartbeatRequest, 2, messages.BrokerHeartbeatRequest(
        broker_id=100, broker_epoch=42, current_metadata_offset=50, want_fence=False,
        cordoned_log_dirs=[]), BROKER_HEARTBEAT_REQUEST_V2_NONE_CORDONED,
        id="BrokerHeartbeatRequest-v2-none-cordoned"),
    pytest.param(messages.BrokerHeartbeatRequest, 2, messages.BrokerHeartbeatRequest(
        broker_id=100, broker_epoch=42, current_metadata_offset=50, want_fence=False),
        BROKER_HEARTBEAT_REQUEST_V2_NOT_CAUGHT_UP, id="BrokerHeartbeatRequest-v2-not-caught-up"),
    pytest.param(messages.BrokerHeartbeatResponse, 2, messages.BrokerHeartbeatResponse(
        error_code=77, is_caught_up=True, is_fenced=False), BROKER_HEARTBEAT_RESPONSE_V1,
        id="BrokerHeartbeatResponse-v2"),
    pytest.param(messages.BrokerHeartbeatRequest, 0, messages.BrokerHeartbeatRequest(
        broker_id=100, want_fence=True), BROKER_HEARTBEAT_REQUEST_V0, id="BrokerHeartbeatRequest-v0"),
    pytest.param(messages.BrokerHeartbeatResponse, 1, messages.BrokerHeartbeatResponse(
        error_code=77, is_caught_up=True, is_fenced=False), BROKER_HEARTBEAT_RESPONSE_V1,
        id="BrokerHeartbeatResponse-v1"),
    pytest.param(messages.BrokerRegistrationChangeRecord, 0, messages.BrokerRegistrationChangeRecord(
        broker_id=100, broker_epoch=42, fenced=-1), BROKER_REGISTRATION_CHANGE_RECORD_V0_UNFENCE,
        id="BrokerRegistrationChangeRecord-v0"),
    pytest.param(messages.BrokerRegistrationChangeRecord, 2, messages.BrokerRegistrationChangeRecord(
        broker_id=100, broker_epoch=42), BROKER_REGISTRATION_CHANGE_RECORD_V2_NO_CHANGE,
        id="BrokerRegistrationChangeRecord-v2"),
    pytest.param(messages.BrokerRegistrationChangeRecord, 3, messages.BrokerRegistrationChangeRecord(
        broker_id=100, broker_epoch=42, cordoned_log_dirs=[UUID_A]),
        BROKER_REGISTRATION_CHANGE_RECORD_V3_CORDONED, id="BrokerRegistrationChangeRecord-v3"),
    pytest.param(messages.BrokerRegistrationChangeRecord, 3, messages.BrokerRegistrationChangeRecord(
        broker_id=100, broker_epoch=42, cordoned_log_dirs=[]),
        BROKER_REGISTRATION_CHANGE_RECORD_V3_UNCORDONED, id="BrokerRegistrationChangeRecord-v3-uncordoned"),
    pytest.param(messages.BrokerRegistrationChangeRecord, 3, messages.BrokerRegistrationChangeRecord(
        broker_id=100, broker_epoch=42), BROKER_REGISTRATION_CHANGE_RECORD_V2_NO_CHANGE,
        id="BrokerRegistrationChangeRecord-v3-no-change"),
    pytest.param(RECORD, 4, register_broker_record(cordoned_log_dirs=[UUID_A]), REGISTER_BROKER_RECORD_V4,
                 id="RegisterBrokerRecord-v4"),
    pytest.param(messages.FenceBrokerRecord, 0, messages.FenceBrokerRecord(id=100, epoch=42),
                 FENCE_BROKER_RECORD_V0, id="FenceBrokerRecord-v0"),
    pytest.param(messages.UnfenceBrokerRecord, 0, messages.UnfenceBrokerRecord(id=100, epoch=42),
                 FENCE_BROKER_RECORD_V0, id="UnfenceBrokerRecord-v0"),
    pytest.param(messages.DefaultPrincipalData, 0, messages.DefaultPrincipalData(type="User", name="alice"),
                 DEFAULT_PRINCIPAL_DATA_V0, id="DefaultPrincipalData-v0"),
]


test_encode_matches_golden, test_decode_matches_golden = golden_tests(CASES)


def test_register_broker_record_v4_without_cordoned_dirs_is_v3s_bytes() -> None:
    """The tagged CordonedLogDirs is written only when not null (its default, KAFKA-20441), so a
    registration that names none (what the reference controller writes: brokers report cordoned log
    directories in heartbeats) has v3's bytes at v4, and v3 cannot carry one."""
    v3_bytes = REGISTER_BROKER_RECORD_V4[:-19].replace(b"\x02\x00\x11", b"\x01\x00\x11")
    assert register_broker_record().encode(4) == register_broker_record().encode(3) == v3_bytes
    assert RECORD.decode(v3_bytes, 4) == register_broker_record()
    with pytest.raises(EncodeError, match="CordonedLogDirs"):
        register_broker_record(cordoned_log_dirs=[UUID_A]).encode(3)


def test_register_broker_record_v4_empty_cordoned_dirs_are_written() -> None:
    """An empty list is not the (null) default: tag 1 carries an empty compact array (one byte, 0x01)."""
    v3_bytes = register_broker_record().encode(3)
    assert register_broker_record(cordoned_log_dirs=[]).encode(4) == b"".join([
        v3_bytes[:-20],                # v3 up to its tagged fields (count 1, tag 0: 20 bytes)
        b"\x02",                       # tagged fields: 2
        b"\x00\x11", b"\x02", UUID_A_BYTES,  # tag 0 (LogDirs), 17 bytes: 1 uuid
        b"\x01\x01", b"\x01",          # tag 1 (CordonedLogDirs), 1 byte: empty compact array
    ])


def test_cordoned_log_dirs_do_not_fit_older_versions() -> None:
    """Heartbeat v0-1 and BrokerRegistrationChangeRecord v0-2 cannot carry CordonedLogDirs (not ignorable)."""
    with pytest.raises(EncodeError, match="CordonedLogDirs"):
        messages.BrokerHeartbeatRequest(broker_id=1, cordoned_log_dirs=[UUID_A]).encode(1)
    with pytest.raises(EncodeError, match="CordonedLogDirs"):
        messages.BrokerRegistrationChangeRecord(broker_id=1, broker_epoch=2, cordoned_log_dirs=[]).encode(2)


def test_the_api_keys_and_versions() -> None:
    assert (REQ.API_KEY, REQ.VERSIONS) == (62, (0, 4))
    assert (messages.BrokerHeartbeatRequest.API_KEY, messages.BrokerHeartbeatRequest.VERSIONS) == (63, (0, 2))
    assert messages.BrokerHeartbeatResponse.VERSIONS == (0, 2)
    assert (messages.BrokerRegistrationChangeRecord.API_KEY,
            messages.BrokerRegistrationChangeRecord.VERSIONS) == (17, (0, 3))
    assert (RECORD.API_KEY, RECORD.VERSIONS) == (0, (0, 4))
    assert (messages.FenceBrokerRecord.API_KEY, messages.UnfenceBrokerRecord.API_KEY) == (7, 8)
