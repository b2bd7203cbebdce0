"""The installed ``kafka-dump-log`` console script on segments, snapshots and indexes written by the
project's record writers: Kafka's text for every option, ``--output json`` carrying the same lines,
damaged files printed up to the damage, and Kafka's handling of its arguments."""

from __future__ import annotations

import json
import os
import struct
import subprocess
from pathlib import Path

import crc32c
import pytest
from console_scripts import console_script
from unit.dump.dump_testlib import SEGMENT, T0, batches, record_start, write_segment

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.records import (
    ApiMessageAndVersion,
    Compression,
    Record,
    RecordBatch,
    SnapshotId,
    SnapshotWriter,
    control_batch,
    encode_batch,
    encode_metadata_record,
    make_attributes,
    metadata_batches,
)

TOOL = "kafka-dump-log"


def dump(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([console_script(TOOL), *args], capture_output=True, text=True, timeout=60,
                          check=False, cwd=cwd)


def out_lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    """The output's lines (split at newlines only: payloads may hold other line-breaking bytes)."""
    return result.stdout.removesuffix("\n").split("\n")


def batch_line(data: bytes, position: int, *, valid: bool = True) -> str:
    """Kafka's batch line, from the batch bytes with plain struct unpacking and the crc32c package."""
    (base, _, epoch, magic, crc, attributes, delta, base_ts, max_ts, producer, producer_epoch, sequence,
     count) = struct.unpack_from(">qiibIhiqqqhii", data)
    assert crc32c.crc32c(data[21:]) == crc or not valid
    last_sequence = -1 if sequence == -1 else (sequence + delta) % 2147483648
    boolean = ("false", "true")
    return (f"baseOffset: {base} lastOffset: {base + delta} count: {count} baseSequence: {sequence} "
            f"lastSequence: {last_sequence} producerId: {producer} producerEpoch: {producer_epoch} "
            f"partitionLeaderEpoch: {epoch} isTransactional: {boolean[attributes >> 4 & 1]} "
            f"isControl: {boolean[attributes >> 5 & 1]} deleteHorizonMs: OptionalLong.empty "
            f"position: {position} {'LogAppendTime' if attributes & 8 else 'CreateTime'}: {max_ts} "
            f"size: {len(data)} magic: {magic} compresscodec: none crc: {crc} isvalid: {boolean[valid]}")


def record_lines(decoder: bool) -> list[list[str]]:
    """The record lines of each batch of :func:`batches`, with the decoder's payloads or without."""
    def line(offset: int, timestamp: int, key: int, value: int, rest: str, sequence: int = -1,
             headers: str = "") -> str:
        return (f"| offset: {offset} {'LogAppendTime' if offset >= 10 else 'CreateTime'}: {timestamp} "
                f"keySize: {key} valueSize: {value} sequence: {sequence} headerKeys: [{headers}]{rest}")

    def payload(text: str) -> str:
        return f" payload: {text}" if decoder else ""

    no_op = payload('{"type":"NO_OP_RECORD","version":0,"data":{}}')
    return [
        [line(0, T0, 4, 19, ' LeaderChange: {"version":0,"leaderId":1,"voters":[{"voterId":1}],'
                            '"grantingVoters":[{"voterId":1}]}'),
         line(1, T0, 4, 5, ' KRaftVersion {"version":0,"kRaftVersion":1}'),
         line(2, T0, 4, 55, ' KRaftVoters {"version":0,"voters":[{"voterId":1,"voterDirectoryId":'
                            '"tpx8pd1IQDqJwMfGzXj6GA","endpoints":[{"name":"CONTROLLER","host":"localhost",'
                            '"port":9093}],"kRaftVersionFeature":{"minSupportedVersion":0,'
                            '"maxSupportedVersion":1}}]}')],
        [line(3, T0 + 107, -1, 23, payload('{"type":"FEATURE_LEVEL_RECORD","version":0,"data":'
                                           '{"name":"metadata.version","featureLevel":21}}')),
         line(4, T0 + 107, -1, 24, payload('{"type":"TOPIC_RECORD","version":0,"data":{"name":"foo",'
                                           '"topicId":"tpx8pd1IQDqJwMfGzXj6GA"}}')),
         line(5, T0 + 107, -1, 85, payload('{"type":"PARTITION_RECORD","version":1,"data":{"partitionId":0,'
                                           '"topicId":"tpx8pd1IQDqJwMfGzXj6GA","replicas":[1,2],"isr":[1],'
                                           '"removingReplicas":[],"addingReplicas":[],"leader":1,'
                                           '"leaderEpoch":0,"partitionEpoch":0,"directories":'
                                           '["AAAAAAAAAAAAAAAAAAAAAQ","AAAAAAAAAAAAAAAAAAAAAQ"]}}')),
         line(6, T0 + 107, -1, 32, payload('{"type":"CONFIG_RECORD","version":0,"data":{"resourceType":2,'
                                           '"resourceName":"foo","name":"cleanup.policy","value":"compact"}}'))],
        [line(7, T0 + 200, 3, 4, no_op, headers="h1,h2")],
        [line(8, T0 + 300, 4, 6, " endTxnMarker: COMMIT coordinatorEpoch: 5")],
        [line(9, T0 + 400, 4, 1, " controlType: UNKNOWN(9)")],
        [line(10, T0 + 999, -1, 4, no_op, sequence=2147483647),
         line(11, T0 + 999, -1, 4, no_op, sequence=0)],
    ]


def expected_text(path: str, *, deep: bool, decoder: bool = False) -> str:
    lines = [f"Dumping {path}", "Log starting offset: 0"]
    position = 0
    for data, records in zip(batches(), record_lines(decoder), strict=True):
        lines.append(batch_line(data, position))
        position += len(data)
        if deep:
            lines += records
    return "".join(line + "\n" for line in lines)


@pytest.fixture
def segment(tmp_path: Path) -> Path:
    return write_segment(tmp_path / "__cluster_metadata-0")


def test_shallow_deep_and_decoded_dumps_are_kafkas_text(segment: Path) -> None:
    shallow = dump("--files", str(segment))
    assert (shallow.returncode, shallow.stderr) == (0, "")
    assert shallow.stdout == expected_text(str(segment), deep=False)
    deep = dump("--deep-iteration", "--files", str(segment))
    assert deep.stdout == expected_text(str(segment), deep=True)
    decoded = dump("--cluster-metadata-decoder", "--files", str(segment))
    assert (decoded.returncode, decoded.stderr) == (0, "")
    assert decoded.stdout == expected_text(str(segment), deep=True, decoder=True)
    # --deep-iteration is implied by the decoder; giving both changes nothing
    both = dump("--cluster-metadata-decoder", "--deep-iteration", "--files", str(segment))
    assert both.stdout == decoded.stdout


def test_skip_record_metadata_leaves_the_payloads(segment: Path) -> None:
    result = dump("--cluster-metadata-decoder", "--skip-record-metadata", "--files", str(segment))
    lines = out_lines(result)
    assert lines[3:6] == ["", "", ""]  # control records print an empty line
    assert lines[7] == (' payload: {"type":"FEATURE_LEVEL_RECORD","version":0,"data":'
                        '{"name":"metadata.version","featureLevel":21}}')
    assert lines[12] == ' payload: {"type":"NO_OP_RECORD","version":0,"data":{}}'


def test_print_data_log_decodes_keys_and_values_as_strings(segment: Path) -> None:
    result = dump("--print-data-log", "--files", str(segment))
    lines = out_lines(result)
    assert lines[12] == (f"| offset: 7 CreateTime: {T0 + 200} keySize: 3 valueSize: 4 sequence: -1 "
                         "headerKeys: [h1,h2] key: key payload: \x01\x14\x00\x00")
    assert lines[4].endswith(' KRaftVersion {"version":0,"kRaftVersion":1}')  # control records: no payload
    skipped = out_lines(dump("--print-data-log", "--skip-record-metadata", "--files", str(segment)))
    assert skipped[12] == "| key: key payload: \x01\x14\x00\x00"
    integers = "org.apache.kafka.tools.api.IntegerDecoder"
    numbers = dump("--key-decoder-class", integers, "--value-decoder-class", integers, "--files",
                   str(segment))
    assert numbers.stdout.split("\n")[7] == (f"| offset: 3 CreateTime: {T0 + 107} keySize: -1 valueSize: 23 "
                                             f"sequence: -1 headerKeys: [] payload: {0x010C0011}")
    # the 3-byte key is too short for an int: Kafka's decoder throws with the line half printed
    assert numbers.returncode == 1
    assert numbers.stdout.endswith(f"\n| offset: 7 CreateTime: {T0 + 200} keySize: 3 valueSize: 4 "
                                   "sequence: -1 headerKeys: [h1,h2]")
    assert numbers.stderr == ("Error: record at offset 7: IntegerDecoder needs 4 bytes, the record has 3 "
                              "(java.nio.BufferUnderflowException)\n")


def test_max_bytes_stops_at_the_last_whole_batch_without_a_trailing_note(segment: Path) -> None:
    first, second = batches()[:2]
    result = dump("--max-bytes", str(len(first) + len(second) - 1), "--files", str(segment))
    assert result.stdout == f"Dumping {segment}\nLog starting offset: 0\n{batch_line(first, 0)}\n"


def test_json_lines_carry_what_the_text_says(segment: Path) -> None:
    for options in (["--deep-iteration"], ["--cluster-metadata-decoder"], ["--print-data-log"],
                    ["--cluster-metadata-decoder", "--skip-record-metadata"], []):
        text = dump(*options, "--files", str(segment))
        as_json = dump(*options, "--output", "json", "--files", str(segment))
        assert as_json.returncode == text.returncode == 0
        objects = [json.loads(line) for line in out_lines(as_json)]
        assert "".join(as_text(item) for item in objects) == text.stdout, options


def as_text(item: dict[str, object]) -> str:
    """Kafka's text line of one JSON object of ``--output json``."""
    kind = item["type"]
    if kind == "file":
        return f"Dumping {item['path']}\n"
    if kind == "segment":
        return f"Log starting offset: {item['logStartingOffset']}\n"
    if kind == "snapshot":
        return f"Snapshot end offset: {item['endOffset']}, epoch: {item['epoch']}\n"
    if kind == "bootstrapSnapshot":
        return "KRaft bootstrap snapshot\n"
    if kind == "invalidBytes":
        return f"Found {item['bytes']} invalid bytes at the end of {item['file']}\n"
    if kind == "batch":
        horizon = item["deleteHorizonMs"]
        fields = {key: json.dumps(value) if isinstance(value, bool) else value for key, value in item.items()}
        return (f"baseOffset: {fields['baseOffset']} lastOffset: {fields['lastOffset']} "
                f"count: {fields['count']} baseSequence: {fields['baseSequence']} "
                f"lastSequence: {fields['lastSequence']} "
                f"producerId: {fields['producerId']} producerEpoch: {fields['producerEpoch']} "
                f"partitionLeaderEpoch: {fields['partitionLeaderEpoch']} isTransactional: "
                f"{fields['isTransactional']} isControl: {fields['isControl']} deleteHorizonMs: "
                f"{'OptionalLong.empty' if horizon is None else f'OptionalLong[{horizon}]'} "
                f"position: {fields['position']} {fields['timestampType']}: {fields['maxTimestamp']} "
                f"size: {fields['size']} magic: {fields['magic']} compresscodec: {fields['compressCodec']} "
                f"crc: {fields['crc']} isvalid: {fields['isValid']}\n")
    assert kind == "record", item
    line = ""
    prefix = "| "
    if "offset" in item:
        line = (f"| offset: {item['offset']} {item['timestampType']}: {item['timestamp']} "
                f"keySize: {item['keySize']} valueSize: {item['valueSize']} sequence: {item['sequence']} "
                f"headerKeys: [{','.join(item['headerKeys'])}]")  # type: ignore[arg-type]
        prefix = " "
    control = item.get("control")
    if isinstance(control, dict):
        if control["type"] == "endTxnMarker":
            line += f" endTxnMarker: {control['controlType']} coordinatorEpoch: {control['coordinatorEpoch']}"
        elif control["type"] == "UNKNOWN":
            line += f" controlType: UNKNOWN({control['typeId']})"
        else:
            separator = ": " if control["type"] == "LeaderChange" else " "
            line += f" {control['type']}{separator}{json.dumps(control['data'], separators=(',', ':'))}"
    if "key" in item:
        line += f"{prefix}key: {item['key']}"
    if "payload" in item:
        payload = item["payload"]
        text = payload if isinstance(payload, str) else json.dumps(payload, separators=(",", ":"))
        line += f" payload: {text}"
    if "payloadError" in item:
        line += f" payload: {item['payloadError']}"
    return line + "\n"


def test_snapshots_and_the_bootstrap_checkpoint(tmp_path: Path) -> None:
    with SnapshotWriter(tmp_path, SnapshotId(12, 3)) as writer:
        header = messages.SnapshotHeaderRecord(last_contained_log_timestamp=T0)
        writer.append(control_batch(0, 3, T0, [header]))
        for batch in metadata_batches(1, 3, T0, [ApiMessageAndVersion(messages.NoOpRecord(), 0)]):
            writer.append(batch)
        writer.append(control_batch(2, 3, T0, [messages.SnapshotFooterRecord()]))
    snapshot = tmp_path / "00000000000000000012-0000000003.checkpoint"
    lines = out_lines(dump("--cluster-metadata-decoder", "--files", str(snapshot)))
    assert lines[1] == "Snapshot end offset: 12, epoch: 3"
    assert lines[3].endswith(f'headerKeys: [] SnapshotHeader {{"version":0,'
                             f'"lastContainedLogTimestamp":{T0}}}')
    assert lines[7].endswith('headerKeys: [] SnapshotFooter {"version":0}')
    bootstrap = tmp_path / "bootstrap.checkpoint"
    bootstrap.write_bytes(snapshot.read_bytes())
    assert out_lines(dump("--files", str(bootstrap)))[1] == "KRaft bootstrap snapshot"


def test_indexes_are_dumped_and_checked(segment: Path) -> None:
    index, time_index = segment.with_suffix(".index"), segment.with_suffix(".timeindex")
    entries = [struct.unpack_from(">ii", index.read_bytes(), at) for at in range(0, index.stat().st_size, 8)]
    assert entries, "the fixture writes index entries"
    result = dump("--files", f"{index},{time_index}")
    assert result.returncode == 0 and result.stderr == ""
    lines = out_lines(result)
    assert lines[1:len(entries) + 1] == [f"offset: {offset} position: {position}"
                                         for offset, position in entries]
    assert lines[len(entries) + 1] == f"Dumping {time_index}"
    assert all(line.startswith("timestamp: ") for line in lines[len(entries) + 2:])
    assert dump("--verify-index-only", "--files", str(index)).stdout == f"Dumping {index}\n"
    assert out_lines(dump("--index-sanity-check", "--files", str(index)))[1] == \
        f"{index} passed sanity check."
    # An entry that points at the wrong batch is reported on stderr at the end, as Kafka does.
    data = bytearray(index.read_bytes())
    struct.pack_into(">i", data, 0, entries[0][0] + 1)
    index.write_bytes(bytes(data))
    mismatch = dump("--verify-index-only", "--files", str(index))
    assert mismatch.stderr == (f"Mismatches in :{index}\n"
                               f"  Index offset: {entries[0][0] + 1}, log offset: {entries[0][0]}\n")


def test_producer_snapshots_and_transaction_indexes(tmp_path: Path) -> None:
    """The other files of a partition directory, laid out as ``ProducerStateManager`` and
    ``TransactionIndex`` write them (a metadata log has neither producers nor transactions)."""
    no_entries = crc32c.crc32c(struct.pack(">i", 0))
    empty = tmp_path / "00000000000000000012.snapshot"
    empty.write_bytes(struct.pack(">hIi", 1, no_entries, 0))
    entries = struct.pack(">i", 2) + struct.pack(">qhiqiqiq", 7, 1, 4, 120, 2, T0, 5, -1) + struct.pack(
        ">qhiqiqiq", 8, 0, -1, -1, 0, T0 + 1, -1, 100)
    producers = tmp_path / "00000000000000000200.snapshot"
    producers.write_bytes(struct.pack(">hI", 1, crc32c.crc32c(entries)) + entries)
    corrupt = tmp_path / "00000000000000000300.snapshot"
    corrupt.write_bytes(struct.pack(">hIi", 1, 5, 0))
    index = tmp_path / "00000000000000000000.txnindex"
    index.write_bytes(struct.pack(">hqqqq", 0, 7, 10, 20, 21))
    result = dump("--files", f"{empty},{producers},{corrupt},{index}")
    assert result.returncode == 0
    assert result.stdout == (
        f"Dumping {empty}\n"
        f"Dumping {producers}\n"
        f"producerId: 7 producerEpoch: 1 coordinatorEpoch: 5 currentTxnFirstOffset: OptionalLong.empty "
        f"lastTimestamp: {T0} firstSequence: 2 lastSequence: 4 lastOffset: 120 offsetDelta: 2 "
        f"timestamp: {T0}\n"
        f"producerId: 8 producerEpoch: 0 coordinatorEpoch: -1 currentTxnFirstOffset: OptionalLong[100] "
        f"lastTimestamp: {T0 + 1} \n"
        f"Dumping {corrupt}\n"
        f"Dumping {index}\n"
        "version: 0 producerId: 7 firstOffset: 10 lastOffset: 20 lastStableOffset: 21\n")
    assert result.stderr == ("Snapshot is corrupt (CRC is no longer valid). Stored crc: 5. Computed crc: "
                             f"{no_entries}\n")


def test_shell_completion_offers_the_options() -> None:
    from kafka_admin_kraft_cli import output

    env = {**os.environ, output.complete_var(TOOL): "bash_complete",
           "COMP_WORDS": f"{TOOL} --cluster", "COMP_CWORD": "1"}
    result = subprocess.run([console_script(TOOL)], env=env, capture_output=True, text=True, timeout=30,
                            check=True)
    assert result.stdout.splitlines() == ["plain,--cluster-metadata-decoder"]


def test_damaged_files_print_up_to_the_damage(tmp_path: Path) -> None:
    data = batches()
    good = b"".join(data[:3])
    path = write_segment(tmp_path / "a", data)
    whole = out_lines(dump("--cluster-metadata-decoder", "--files", str(path)))
    # a torn last batch: Kafka stops before it and counts the bytes left
    path.write_bytes(good + data[3][:20])
    torn = dump("--cluster-metadata-decoder", "--files", str(path))
    assert torn.returncode == 0
    assert out_lines(torn) == whole[:13] + ["Found 20 invalid bytes at the end of " + SEGMENT]
    # a CRC that does not match: printed as invalid, records read all the same
    broken = bytearray(good)
    broken[len(data[0]) + 80] ^= 0x01  # the "v" of the FeatureLevelRecord's name: 61 + 6 + 4 + 9
    path.write_bytes(bytes(broken))
    crc = dump("--cluster-metadata-decoder", "--files", str(path))
    assert crc.returncode == 0
    assert out_lines(crc)[6] == batch_line(bytes(broken[len(data[0]):len(data[0]) + len(data[1])]),
                                                    len(data[0]), valid=False)
    assert '"name":"metadata.wersion"' in crc.stdout
    # a record whose length runs past its batch: the records before it, then the error
    damaged = bytearray(good)
    last = len(data[0]) + record_start(data[1], 3)
    damaged[last] = 0x7E  # the last record's length varint: 63, beyond the end of the batch
    path.write_bytes(bytes(damaged))
    cut = dump("--cluster-metadata-decoder", "--files", str(path))
    assert cut.returncode == 1
    assert out_lines(cut)[6:] == [
        batch_line(bytes(damaged[len(data[0]):len(data[0]) + len(data[1])]), len(data[0]), valid=False),
        *whole[7:10]]
    left = len(data[0]) + len(data[1]) - last - 1
    assert cut.stderr == (f"Error: batch at position {len(data[0])} (base offset 3): Invalid record size: "
                          f"expected 63 bytes in record payload, but instead the buffer has only {left} "
                          "remaining bytes.\n")
    # a length field below Kafka's minimum stops the dump with Kafka's CorruptRecordException
    path.write_bytes(good + struct.pack(">qi", 9, 5) + b"\0" * 40)
    small = dump("--files", str(path))
    assert small.returncode == 1
    assert out_lines(small) == whole[:2] + [whole[2], whole[6], whole[11]]
    assert small.stderr == ("Error: org.apache.kafka.common.errors.CorruptRecordException: Found record "
                            f"size 5 smaller than minimum record overhead (14) in file {path}.\n")


def test_compressed_old_format_and_unknown_codec_batches(tmp_path: Path) -> None:
    data = batches()
    compressed = make_attributes(compression=Compression.GZIP)
    gzip = encode_batch(RecordBatch(base_offset=3, partition_leader_epoch=1, base_timestamp=T0,
                                    max_timestamp=T0, attributes=compressed,
                                    records=[Record(3, T0, None, no_op_value())]))
    path = write_segment(tmp_path / "d", [data[0], gzip])
    result = dump("--cluster-metadata-decoder", "--files", str(path))
    assert result.returncode == 0
    assert out_lines(result)[6:] == [
        batch_line(gzip, len(data[0])).replace("compresscodec: none", "compresscodec: gzip"),
        f"| offset: 3 CreateTime: {T0} keySize: -1 valueSize: 4 sequence: -1 headerKeys: [] "
        'payload: {"type":"NO_OP_RECORD","version":0,"data":{}}']
    old = bytearray(data[1])
    old[16] = 1  # magic 1: a message set of Kafka before 0.11
    unknown = bytearray(data[1])
    struct.pack_into(">h", unknown, 21, 5)  # compression codec 5 does not exist
    for damaged, error in ((old, f"batch at position {len(data[0])} has magic 1: the message formats before "
                                 "record batch v2 are not supported"),
                           (unknown, f"batch at position {len(data[0])}: java.lang.IllegalArgumentException: "
                                     "Unknown compression type id: 5")):
        path.write_bytes(data[0] + bytes(damaged))
        result = dump("--files", str(path))
        assert result.returncode == 1
        assert result.stderr == f"Error: {error}\n"
        assert out_lines(result)[:3] == [f"Dumping {path}", "Log starting offset: 0", batch_line(data[0], 0)]
    # Kafka dies after printing the first half of the batch line: so does the dump
    assert result.stdout.endswith("isControl: false deleteHorizonMs: OptionalLong.empty")


def no_op_value() -> bytes:
    return encode_metadata_record(ApiMessageAndVersion(messages.NoOpRecord(), 0))


def test_non_consecutive_offsets_are_reported_at_the_end(tmp_path: Path) -> None:
    data = batches()
    moved, later = bytearray(data[2]), bytearray(data[5])
    struct.pack_into(">q", moved, 0, 30)  # the base offset is outside the CRC
    struct.pack_into(">q", later, 0, 50)
    path = write_segment(tmp_path / "b", [data[0], data[1], bytes(moved), bytes(later)])
    result = dump("--deep-iteration", "--files", str(path))
    assert result.returncode == 0
    # Kafka prepends each pair to its list: the last gap comes first
    assert result.stderr == (f"Non-consecutive offsets in {path}\n"
                             "  30 is followed by 50\n  6 is followed by 30\n")
    assert dump("--files", str(path)).stderr == ""  # only deep iteration looks at records


def test_files_kafka_does_not_dump(tmp_path: Path) -> None:
    missing = dump("--files", str(tmp_path / "00000000000000000000.log"))
    assert missing.returncode == 1
    assert missing.stdout == f"Dumping {tmp_path}/00000000000000000000.log\nLog starting offset: 0\n"
    assert missing.stderr == f"Error: java.nio.file.NoSuchFileException: {tmp_path}/{SEGMENT}\n"
    other = dump("--files", f"{tmp_path}/notes.txt,{tmp_path}//x//")
    assert other.stdout == f"Dumping {tmp_path}/notes.txt\nDumping {tmp_path}/x\n"
    assert other.stderr == (f"Ignoring unknown file {tmp_path}/notes.txt\n"
                            f"Error: {tmp_path}/x: the file name has no suffix "
                            "(java.lang.StringIndexOutOfBoundsException)\n")
    named = tmp_path / "foo.log"
    named.write_bytes(b"")
    assert dump("--files", str(named)).stderr == ('Error: java.lang.NumberFormatException: For input '
                                                  'string: "foo"\n')


@pytest.mark.parametrize("args, message", [
    ([], "This tool helps to parse a log file"),
    (["--help"], "This tool helps to parse a log file"),
    (["--print-data-log"], 'Missing required argument "[files]"'),
    (["--files"], "Error: Option files requires an argument"),
    (["--bogus", "--files", "x.log"], "Error: bogus is not a recognized option"),
    (["--print", "--files", "x.log"], "Error: print is not a recognized option"),  # no abbreviations
    (["--max-bytes", "1e3", "--files", "x.log"], "Error: Cannot parse argument '1e3' of option max-bytes"),
    (["--files", "a.log", "--files", "b.log"],
     "Error: Found multiple arguments for option files, but you asked for only one"),
    (["--offsets-decoder", "--files", "x.log"], "Error: --offsets-decoder is not supported"),
    (["--output", "xml", "--files", "x.log"], "Error: Cannot parse argument 'xml' of option output"),
])
def test_arguments_kafka_refuses(args: list[str], message: str) -> None:
    result = dump(*args)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith(message)
    if message.startswith(("This tool", "Missing")):
        assert "--files <String: file1, file2, ...>" in result.stderr


def test_decoder_classes_are_loaded_when_a_log_is_dumped(segment: Path) -> None:
    result = dump("--value-decoder-class", "com.example.Nope", "--files", str(segment))
    assert result.returncode == 1
    assert result.stdout == f"Dumping {segment}\n"
    assert result.stderr == "Error: java.lang.ClassNotFoundException: com.example.Nope\n"
    # the metadata decoder takes precedence and never loads the class
    assert dump("--cluster-metadata-decoder", "--value-decoder-class", "com.example.Nope", "--files",
                str(segment)).returncode == 0


def test_output_to_a_closed_pipe_ends_quietly(segment: Path) -> None:
    process = subprocess.Popen([console_script(TOOL), "--cluster-metadata-decoder", "--files", str(segment)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()
    assert process.wait(timeout=60) == 0
    assert process.stderr.read() == b""

