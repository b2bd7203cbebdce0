"""Golden vectors of kafka-dump-log's text: Kafka's JSON of metadata and control records from bytes laid
out by hand (one comment per field, from the record specs), the decoder's error messages word for word
(``AbstractApiMessageSerde``, ``MetadataRecordType``), and a control batch whose output Kafka itself
printed (the pull request of KAFKA-19069 shows ``kafka-dump-log.sh`` on it)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from unit.protocol.strategies import MessageStrategies

from kafka_admin_kraft.codegen.dump import type_name
from kafka_admin_kraft.dump.dumper import Dumper, DumpOptions
from kafka_admin_kraft.dump.json_text import double_json, json_string
from kafka_admin_kraft.dump.payload import message_spec, metadata_payload, struct_json
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.protocol.spec import all_messages
from kafka_admin_kraft.records import (
    ApiMessageAndVersion,
    SegmentWriter,
    control_batch,
    encode_metadata_record,
)


def hx(text: str) -> bytes:
    """Bytes from commented hex: everything after ``#`` on a line is a comment."""
    return bytes.fromhex("".join(line.split("#", 1)[0] for line in text.splitlines()))


TOPIC_ID = "tpx8pd1IQDqJwMfGzXj6GA"
TOPIC_ID_HEX = "b69c7ca5dd48403a89c0c7c6cd78fa18"  # the 16 bytes of TOPIC_ID (URL-safe base64)

GOLDEN = [
    ("FeatureLevelRecord v0", hx("""
        01 0c 00                          # frame version 1, api key 12, version 0
        11 6d657461646174612e76657273696f6e   # Name: compact string, 16 bytes "metadata.version"
        0015                              # FeatureLevel int16 21
        00                                # no tagged fields
     """), '{"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"metadata.version",'
           '"featureLevel":21}}'),
    ("TopicRecord v0", hx(f"""
        01 02 00                          # frame, api key 2, version 0
        04 666f6f                         # Name "foo"
        {TOPIC_ID_HEX}                    # TopicId
        00                                # no tagged fields
     """), f'{{"type":"TOPIC_RECORD","version":0,"data":{{"name":"foo","topicId":"{TOPIC_ID}"}}}}'),
    ("PartitionRecord v2, tagged fields in schema order", hx(f"""
        01 03 02                          # frame, api key 3, version 2
        00000007                          # PartitionId 7
        {TOPIC_ID_HEX}                    # TopicId
        03 00000001 00000002              # Replicas [1,2]
        02 00000001                       # Isr [1]
        01                                # RemovingReplicas []
        01                                # AddingReplicas []
        00000001                          # Leader 1
        00000005                          # LeaderEpoch 5
        00000009                          # PartitionEpoch 9
        01                                # Directories []
        02                                # two tagged fields
        00 01 01                          #   tag 0 LeaderRecoveryState, 1 byte: 1
        01 05 02 00000002                 #   tag 1 EligibleLeaderReplicas, 5 bytes: [2]
     """), f'{{"type":"PARTITION_RECORD","version":2,"data":{{"partitionId":7,"topicId":"{TOPIC_ID}",'
          '"replicas":[1,2],"isr":[1],"removingReplicas":[],"addingReplicas":[],"leader":1,'
          '"leaderRecoveryState":1,"leaderEpoch":5,"partitionEpoch":9,"directories":[],'
          '"eligibleLeaderReplicas":[2]}}'),
    ("PartitionRecord v0, a tagged field at its default is left out", hx(f"""
        01 03 00                          # frame, api key 3, version 0
        00000000 {TOPIC_ID_HEX}           # PartitionId 0, TopicId
        02 00000003 02 00000003 01 01     # Replicas [3], Isr [3], RemovingReplicas [], AddingReplicas []
        00000003 00000000 00000000        # Leader 3, LeaderEpoch 0, PartitionEpoch 0
        01 00 01 00                       # one tagged field: tag 0 LeaderRecoveryState, 1 byte: 0
     """), f'{{"type":"PARTITION_RECORD","version":0,"data":{{"partitionId":0,"topicId":"{TOPIC_ID}",'
          '"replicas":[3],"isr":[3],"removingReplicas":[],"addingReplicas":[],"leader":3,"leaderEpoch":0,'
          '"partitionEpoch":0}}'),
    ("ConfigRecord v0 deleting a key (null value), with escapes", hx("""
        01 04 00                          # frame, api key 4, version 0
        02                                # ResourceType 2 (topic)
        04 612262                         # ResourceName 'a"b'
        05 0a5c0109                       # Name "\\n\\\\\\x01\\t"
        00                                # Value null
        00                                # no tagged fields
     """), '{"type":"CONFIG_RECORD","version":0,"data":{"resourceType":2,"resourceName":"a\\"b",'
           '"name":"\\n\\\\\\u0001\\t","value":null}}'),
    ("PartitionChangeRecord v0: only what changed", hx(f"""
        01 05 00                          # frame, api key 5, version 0
        00000004 {TOPIC_ID_HEX}           # PartitionId 4, TopicId
        02                                # two tagged fields
        00 09 03 00000001 00000002        #   tag 0 Isr, 9 bytes: [1,2]
        01 04 fffffffe                    #   tag 1 Leader, 4 bytes: -2 (the default: unchanged)
     """), f'{{"type":"PARTITION_CHANGE_RECORD","version":0,"data":{{"partitionId":4,"topicId":"{TOPIC_ID}",'
          '"isr":[1,2]}}'),
    ("ClientQuotaRecord v0: float64 and a null entity name", hx("""
        01 0e 00                          # frame, api key 14, version 0
        02 05 75736572 00 00              # Entity [{EntityType "user", EntityName null, no tags}]
        13 70726f64756365725f627974655f72617465   # Key "producer_byte_rate"
        4130000000000000                  # Value 1048576.0
        00 00                             # Remove false, no tagged fields
     """), '{"type":"CLIENT_QUOTA_RECORD","version":0,"data":{"entity":[{"entityType":"user",'
           '"entityName":null}],"key":"producer_byte_rate","value":1048576.0,"remove":false}}'),
    ("UserScramCredentialRecord v0: bytes as base64", hx("""
        01 0b 00                          # frame, api key 11, version 0
        06 616c696365                     # Name "alice"
        01                                # Mechanism 1 (SCRAM-SHA-256)
        04 000102                         # Salt 00 01 02
        01                                # StoredKey (empty)
        03 ffff                           # ServerKey ff ff
        00001000                          # Iterations 4096
        00                                # no tagged fields
     """), '{"type":"USER_SCRAM_CREDENTIAL_RECORD","version":0,"data":{"name":"alice","mechanism":1,'
           '"salt":"AAEC","storedKey":"","serverKey":"//8=","iterations":4096}}'),
    ("BrokerRegistrationChangeRecord v1, unknown tagged field skipped", hx("""
        01 11 01                          # frame, api key 17, version 1
        00000002 0000000000000064         # BrokerId 2, BrokerEpoch 100
        02                                # two tagged fields
        01 01 01                          #   tag 1 InControlledShutdown, 1 byte: 1
        1e 02 abcd                        #   tag 30 (unknown), 2 bytes
     """), '{"type":"BROKER_REGISTRATION_CHANGE_RECORD","version":1,"data":{"brokerId":2,"brokerEpoch":100,'
           '"inControlledShutdown":1}}'),
    ("NoOpRecord v0", hx("01 14 00 00"), '{"type":"NO_OP_RECORD","version":0,"data":{}}'),
    ("UnregisterBrokerRecord v0", hx("""
        01 01 00                          # frame, api key 1, version 0
        00000065 000000000000012c         # BrokerId 101, BrokerEpoch 300
        00                                # no tagged fields
     """), '{"type":"UNREGISTER_BROKER_RECORD","version":0,"data":{"brokerId":101,"brokerEpoch":300}}'),
    ("UnregisterControllerRecord v0 (Kafka 4.4, KIP-1312)", hx("""
        01 1d 00                          # frame, api key 29, version 0
        00000003                          # ControllerId 3
        00                                # no tagged fields
     """), '{"type":"UNREGISTER_CONTROLLER_RECORD","version":0,"data":{"controllerId":3}}'),
    ("a version above the range reads as the highest one (Kafka's generated checks)", hx("""
        01 0c 07 04 6d7676 0003 00        # FeatureLevelRecord at version 7: Name "mvv", FeatureLevel 3
     """), '{"type":"FEATURE_LEVEL_RECORD","version":7,"data":{"name":"mvv","featureLevel":3}}'),
]


@pytest.mark.parametrize("value, expected", [case[1:] for case in GOLDEN], ids=[case[0] for case in GOLDEN])
def test_metadata_record_json(value: bytes, expected: str) -> None:
    assert metadata_payload(value, 42) == expected


ERRORS = [
    (None, "Error while reading frame version"),
    (b"", "Error while reading frame version"),
    (hx("00"), "Could not deserialize metadata record with frame version 0. Note that upgrades from the "
               "preview release of KRaft in 2.8 to newer versions are not supported."),
    (hx("904e 904e"), "Could not deserialize metadata record due to unknown frame version 10000(only frame "
                      "version 1 is supported)"),
    (hx("01 ffff03"), "Value for type was too large."),
    (hx("01 06"), "Error while reading version"),
    (hx("01 06 00 00"), "org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id 6"),
    (hx("01 02 00 04 666f6f"), "Failed to deserialize record with type 2"),  # TopicRecord cut short
    (hx("01 14 00 00 abcd"), "Found 2 byte(s) of garbage after 20"),
    (hx("01 0c 00 00 0001 00"), "Failed to deserialize record with type 12"),  # null non-nullable Name
    (hx("01 04 00 02 80800202"), "Failed to deserialize record with type 4"),  # string longer than 32767
]


@pytest.mark.parametrize("value, reason", ERRORS)
def test_undecodable_records_read_as_kafka_reports_them(value: bytes | None, reason: str) -> None:
    assert metadata_payload(value, 1234) == f"Error at 1234, skipping. {reason}"


def test_json_text_of_doubles_and_strings_follows_java_and_jackson() -> None:
    assert [double_json(value) for value in (1.0, 1048576.0, 1e7, 0.001, 1e-4, -0.0, 2.5e-8, 1.25e20)] == [
        "1.0", "1048576.0", "1.0E7", "0.001", "1.0E-4", "-0.0", "2.5E-8", "1.25E20"]
    assert [double_json(value) for value in (float("nan"), float("inf"), float("-inf"))] == [
        '"NaN"', '"Infinity"', '"-Infinity"']
    assert json_string('a"b\\c\x08\x0c\n\r\t\x1f\x7fé/') == '"a\\"b\\\\c\\b\\f\\n\\r\\t\\u001F\x7fé/"'


def test_a_malformed_utf8_string_becomes_replacement_characters() -> None:
    value = hx("01 02 00 03 ff41 00000000000000000000000000000000 00")  # TopicRecord named ff 41
    assert metadata_payload(value, 0) == ('{"type":"TOPIC_RECORD","version":0,"data":{"name":"\ufffdA",'
                                          '"topicId":"AAAAAAAAAAAAAAAAAAAAAA"}}')


MODELLED = [spec for spec in all_messages() if spec.kind == "metadata"]


@pytest.mark.parametrize("spec", MODELLED, ids=[spec.name for spec in MODELLED])
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_generated_readers_agree_with_the_codec_for_every_version(spec: object, data: st.DataObject) -> None:
    """The straight-line readers and the spec-driven writer over the project's decoded objects are two
    separate paths to Kafka's JSON; every version of every modelled record must come out the same."""
    assert spec is not None
    strategies = MessageStrategies(spec)  # type: ignore[arg-type]
    version = data.draw(st.sampled_from(strategies.spec.version_list))
    message = data.draw(strategies.message(version))
    value = encode_metadata_record(ApiMessageAndVersion(message, version))
    decoded = strategies.cls.decode(value[3:] if value[1] < 0x80 else value[4:], version)
    expected_data = struct_json(decoded, message_spec(strategies.cls).fields, strategies.spec.struct_fields(),
                                version)
    assert metadata_payload(value, 0) == (f'{{"type":"{type_name(spec.name)}","version":{version},'  # type: ignore[attr-defined]
                                          f'"data":{expected_data}}}')


def test_control_batch_as_kafka_printed_it(tmp_path: Path) -> None:
    """The log of KAFKA-19069's pull request (apache/kafka#19729): a new leader's control batch with
    LeaderChange, KRaftVersion and VotersRecord. The batch line, sizes, CRC and the KRaftVersion and
    KRaftVoters lines are copied from Kafka's output there; the LeaderChange line is what Kafka 4.1
    and later print for it (that pull request added it)."""
    leader_change = messages.LeaderChangeMessage
    voters = messages.VotersRecord
    with SegmentWriter(tmp_path, 0) as writer:
        writer.append(control_batch(0, 1, 1747299887693, [
            leader_change(leader_id=1, voters=[leader_change.Voter(voter_id=1)],
                          granting_voters=[leader_change.Voter(voter_id=1)]),
            messages.KRaftVersionRecord(k_raft_version=1),
            voters(voters=[voters.Voter(
                voter_id=1, voter_directory_id=Uuid.from_string(TOPIC_ID),
                endpoints=[voters.Endpoint(name="CONTROLLER", host="localhost", port=9093)],
                k_raft_version_feature=voters.KRaftVersionFeature(min_supported_version=0,
                                                                  max_supported_version=1))])]))
    out = io.BytesIO()
    path = str(tmp_path / "00000000000000000000.log")
    assert Dumper(DumpOptions(print_contents=True, deep_iteration=True, metadata_decoder=True), out,
                  lambda text: None).run([path]) == 0
    assert out.getvalue().decode() == (
        f"Dumping {path}\n"
        "Log starting offset: 0\n"
        "baseOffset: 0 lastOffset: 2 count: 3 baseSequence: -1 lastSequence: -1 producerId: -1 "
        "producerEpoch: -1 partitionLeaderEpoch: 1 isTransactional: false isControl: true "
        "deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1747299887693 size: 174 magic: 2 "
        "compresscodec: none crc: 3714449884 isvalid: true\n"
        "| offset: 0 CreateTime: 1747299887693 keySize: 4 valueSize: 19 sequence: -1 headerKeys: [] "
        'LeaderChange: {"version":0,"leaderId":1,"voters":[{"voterId":1}],"grantingVoters":[{"voterId":1}]}\n'
        "| offset: 1 CreateTime: 1747299887693 keySize: 4 valueSize: 5 sequence: -1 headerKeys: [] "
        'KRaftVersion {"version":0,"kRaftVersion":1}\n'
        "| offset: 2 CreateTime: 1747299887693 keySize: 4 valueSize: 55 sequence: -1 headerKeys: [] "
        'KRaftVoters {"version":0,"voters":[{"voterId":1,"voterDirectoryId":"tpx8pd1IQDqJwMfGzXj6GA",'
        '"endpoints":[{"name":"CONTROLLER","host":"localhost","port":9093}],'
        '"kRaftVersionFeature":{"minSupportedVersion":0,"maxSupportedVersion":1}}]}\n')


def test_control_record_json_uses_its_own_version_field() -> None:
    """``LeaderChangeMessageJsonConverter.write(message, message.version())``: a record whose Version
    field says 1 is written at version 1, with the (zero) directory ids v0 did not carry."""
    from kafka_admin_kraft.dump.payload import control_json

    leader_change = messages.LeaderChangeMessage
    message = leader_change(version=1, leader_id=3, voters=[leader_change.Voter(voter_id=3)],
                            granting_voters=[])
    assert control_json(message) == ('{"version":1,"leaderId":3,"voters":[{"voterId":3,'
                                     '"voterDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA"}],"grantingVoters":[]}')
