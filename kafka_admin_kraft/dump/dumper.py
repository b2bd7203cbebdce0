"""``kafka-dump-log`` on log segments, snapshots and indexes: Kafka 4.2's ``DumpLogSegments`` output,
byte for byte, or one JSON object per line with the same information.

The walk over a file (:mod:`~kafka_admin_kraft.dump.walk`) follows ``FileRecords.batches()``
(``FileLogInputStream``): a batch is read once 17 bytes (up to its magic byte) and its whole
declared length are present; fewer bytes at the end are left over and reported as ``Found N invalid
bytes at the end of <file>``; a length below 14 stops the dump with Kafka's
``CorruptRecordException``. A batch whose CRC does not match is printed with
``isvalid: false`` and read as usual, as Kafka does. Damage inside a batch's records stops the dump
after the records before it, where Kafka's record iterator throws. The usual metadata batch is printed
straight from its bytes (:mod:`~kafka_admin_kraft.dump.ordinary`), any other the general way; deep
dumps of large files are formatted in worker processes (:mod:`~kafka_admin_kraft.dump.parallel`).

Each failure Kafka's tool dies on raises :class:`~kafka_admin_kraft.dump.walk.DumpError` after the output
up to that point.
"""

from __future__ import annotations

import os
import re
import struct
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import BinaryIO, Final, NamedTuple

from kafka_admin_kraft.dump import parallel
from kafka_admin_kraft.dump.json_text import json_string
from kafka_admin_kraft.dump.ordinary import JSON, TEXT, ordinary_batch, payload_json
from kafka_admin_kraft.dump.payload import (
    NonDefaultField,
    control_json,
    metadata_payload,
)
from kafka_admin_kraft.dump.records import (
    KafkaRecord,
    RecordFailure,
    increment_sequence,
    kafka_records,
)
from kafka_admin_kraft.dump.walk import (
    BatchWalk,
    DumpError,
    ReadAt,
    absolute_path,
    file_reader,
    java_path,
)
from kafka_admin_kraft.protocol.exceptions import DecodeError
from kafka_admin_kraft.records.batch import (
    BATCH_HEADER_SIZE,
    CRC_START,
    HEADER,
    PREFIX,
    Record,
    decode_batch_at,
)
from kafka_admin_kraft.records.control import (
    CONTROL_VALUE_VERSION,
    END_TXN_MARKER,
    SCHEMA_CLASSES,
    ControlRecordType,
    parse_control_key,
)
from kafka_admin_kraft.records.crc import crc32c
from kafka_admin_kraft.records.segment import OFFSET_ENTRY, TIME_ENTRY

INT32_MAX: Final = 0x7FFFFFFF
DEFAULT_MAX_MESSAGE_SIZE: Final = 5 * 1024 * 1024
BOOTSTRAP_FILE: Final = "bootstrap.checkpoint"
PRODUCER_SNAPSHOT: Final = struct.Struct(">hIi")
PRODUCER_ENTRY: Final = struct.Struct(">qhiqiqiq")
ABORTED_TXN: Final = struct.Struct(">hqqqq")
FLUSH_AT: Final = 1 << 20
CODECS: Final = ("none", "gzip", "snappy", "lz4", "zstd")
CONTROL_LABELS: Final = {
    ControlRecordType.LEADER_CHANGE: " LeaderChange: ",
    ControlRecordType.SNAPSHOT_HEADER: " SnapshotHeader ",
    ControlRecordType.SNAPSHOT_FOOTER: " SnapshotFooter ",
    ControlRecordType.KRAFT_VERSION: " KRaftVersion ",
    ControlRecordType.KRAFT_VOTERS: " KRaftVoters ",
}
"""How ``printControlRecord`` introduces each schema-valued control record."""


class Decoder(NamedTuple):
    """A ``--key-decoder-class``/``--value-decoder-class`` of Kafka's: the text it makes of bytes, and
    whether that text is a number (a JSON number with ``--output json``, else a string)."""

    decode: Callable[[bytes], str]
    numeric: bool


def _fixed_decoder(fmt: str, name: str) -> Callable[[bytes], str]:
    codec = struct.Struct(fmt)

    def decode(data: bytes) -> str:
        if len(data) < codec.size:
            raise DumpError(f"{name} needs {codec.size} bytes, the record has {len(data)} "
                            "(java.nio.BufferUnderflowException)")
        return str(codec.unpack_from(data)[0])

    return decode


DECODERS: Final = {
    "org.apache.kafka.tools.api.StringDecoder": Decoder(lambda data: data.decode("utf-8", "replace"), False),
    "org.apache.kafka.tools.api.IntegerDecoder": Decoder(_fixed_decoder(">i", "IntegerDecoder"), True),
    "org.apache.kafka.tools.api.LongDecoder": Decoder(_fixed_decoder(">q", "LongDecoder"), True),
}
"""Kafka's decoder classes (``org.apache.kafka.tools.api``) by name: ``new String(bytes, UTF_8)``
and ``ByteBuffer.wrap(bytes).getInt()`` / ``getLong()``."""
STRING_DECODER: Final = DECODERS["org.apache.kafka.tools.api.StringDecoder"]


@dataclass(frozen=True)
class DumpOptions:
    """What ``DumpLogSegmentsOptions`` makes of the command line."""

    print_contents: bool = False
    """``shouldPrintDataLog``: --print-data-log or any decoder option."""
    deep_iteration: bool = False
    """``isDeepIteration``: --deep-iteration or ``print_contents``."""
    skip_record_metadata: bool = False
    metadata_decoder: bool = False
    key_decoder: Decoder = STRING_DECODER
    value_decoder: Decoder = STRING_DECODER
    max_bytes: int = INT32_MAX
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    verify_index_only: bool = False
    index_sanity_check: bool = False
    json: bool = False
    decoder_problem: str | None = None
    """Why the chosen key or value decoder class cannot be used; Kafka fails on it when it loads the
    class, at the first log or snapshot file."""


@dataclass
class Findings:
    """What Kafka prints on stderr once every file is dumped, keyed by absolute path."""

    index_mismatches: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    time_mismatches: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    time_out_of_order: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    time_not_found: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    non_consecutive: dict[str, list[tuple[int, int]]] = field(default_factory=dict)

    def report(self) -> str:
        """``DumpLogSegments.main``'s closing report. Kafka keeps most of these lists newest first
        (it prepends) and iterates hash maps; files come here in the order they were dumped."""
        lines = []
        for path, mismatches in self.index_mismatches.items():
            lines.append(f"Mismatches in :{path}")
            lines += [f"  Index offset: {index}, log offset: {log}" for index, log in reversed(mismatches)]
        for path, mismatches in self.time_mismatches.items():
            lines.append(f"Found timestamp mismatch in :{path}")
            lines += [f"  Index timestamp: {index}, log timestamp: {log}" for index, log in mismatches]
        for path, pairs in self.time_out_of_order.items():
            lines.append(f"Found out of order timestamp in :{path}")
            lines += [f"  Index timestamp: {index}, Previously indexed timestamp: {previous}"
                      for index, previous in pairs]
        for pairs in self.time_not_found.values():
            lines.append("The following indexed offsets are not found in the log.")
            lines += [f"Indexed offset: {index}, found log offset: {log}" for index, log in pairs]
        for path, pairs in self.non_consecutive.items():
            lines.append(f"Non-consecutive offsets in {path}")
            lines += [f"  {first} is followed by {second}" for first, second in reversed(pairs)]
        return "".join(line + "\n" for line in lines)


class Output:
    """Text bound for stdout, written in large UTF-8 chunks."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.parts: list[str] = []
        self.size = 0
        try:
            self.fd: int | None = stream.fileno()
        except (AttributeError, OSError, ValueError):
            self.fd = None
        """The file descriptor behind the stream, which worker processes write to directly."""

    def add(self, text: str) -> None:
        self.parts.append(text)
        self.size += len(text)
        if self.size >= FLUSH_AT:
            self.flush()

    def discard(self) -> None:
        """The reader of stdout went away: drop what is pending and send what follows (buffered bytes
        flushed at exit included) to /dev/null, as Java's PrintStream ignores the error."""
        self.parts.clear()
        self.size = 0
        if self.fd is not None:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.fd)
            os.close(devnull)

    def flush(self) -> None:
        """Write the pending parts, each encoded on its own: joining them first would copy the text
        twice more through fresh megabyte buffers (a tenth of a deep dump's time)."""
        if self.parts:
            pieces = [part.encode("utf-8", "surrogateescape") for part in self.parts]
            if self.fd is None:
                self.stream.writelines(pieces)
            else:
                self.stream.flush()
                parallel.write_pieces(self.fd, pieces)
            self.parts.clear()
            self.size = 0
        self.stream.flush()


# --------------------------------------------------------------------------- file names

_JAVA_LONG: Final = re.compile(r"[+-]?[0-9]+", re.ASCII)


def parse_java_long(text: str, bits: int = 64) -> int:
    """``Long.parseLong`` / ``Integer.parseInt``; DumpError with Java's message otherwise."""
    value = int(text) if _JAVA_LONG.fullmatch(text) else None
    if value is None or not -(1 << (bits - 1)) <= value < 1 << (bits - 1):
        raise DumpError(f'java.lang.NumberFormatException: For input string: "{text}"')
    return value


def split_files(argument: str) -> list[str]:
    """``String.split(",")`` as Java does it: trailing empty strings dropped (a lone "" kept)."""
    parts = argument.split(",")
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()
    if parts == [""] * len(parts) and argument:
        return []
    return parts


# --------------------------------------------------------------------------- the dump

class Dumper:
    """Dumps files one after the other into ``out``; :meth:`run` returns the exit code."""

    def __init__(self, options: DumpOptions, out: BinaryIO, err: Callable[[str], None]) -> None:
        self.options = options
        self.output = Output(out)
        self.err = err
        self.findings = Findings()
        self.ordinary = options.deep_iteration and not options.skip_record_metadata and (
            options.metadata_decoder or not options.print_contents)
        """Whether ordinary batches are printed straight from their bytes
        (:mod:`~kafka_admin_kraft.dump.ordinary`): records with their metadata, and either no content
        or the metadata decoder's."""
        self.style = JSON if options.json else TEXT

    def run(self, files: Iterable[str]) -> int:
        """Dump every file; 1 when Kafka's tool would die on one (the output up to there is written),
        0 otherwise, also when the reader of stdout goes away (Java's PrintStream ignores that)."""
        try:
            try:
                for arg in files:
                    self.dump_file(arg)
            except DumpError as exc:
                self.output.flush()
                self.err(f"Error: {exc}\n")
                return 1
            self.output.flush()
        except BrokenPipeError:
            self.output.discard()
            return 0
        report = self.findings.report()
        if report:
            self.err(report)
        return 0

    def _json(self, text: str) -> None:
        self.output.add(text + "\n")

    def dump_file(self, arg: str) -> None:
        path = java_path(arg)
        name = path.rsplit("/", 1)[-1]
        options = self.options
        if options.json:
            self._json(f'{{"type":"file","path":{json_string(path)}}}')
        else:
            self.output.add(f"Dumping {path}\n")
        dot = name.rfind(".")
        if dot < 0:
            raise DumpError(f"{path}: the file name has no suffix "
                            "(java.lang.StringIndexOutOfBoundsException)")
        suffix = name[dot:]
        if suffix in (".log", ".checkpoint"):
            if options.decoder_problem is not None:
                raise DumpError(options.decoder_problem)
            self.dump_log(path, name)
        elif suffix == ".index":
            self.dump_index(path, name)
        elif suffix == ".timeindex":
            self.dump_time_index(path, name)
        elif suffix == ".snapshot":
            self.dump_producer_snapshot(path)
        elif suffix == ".txnindex":
            self.dump_transaction_index(path)
        else:
            self.output.flush()
            self.err(f"Ignoring unknown file {path}\n")

    # -- headers ---------------------------------------------------------------------------------
    def _log_header(self, name: str) -> None:
        options = self.options
        if name.endswith(".log"):
            start = parse_java_long(name.split(".")[0])
            if options.json:
                self._json(f'{{"type":"segment","logStartingOffset":{start}}}')
            else:
                self.output.add(f"Log starting offset: {start}\n")
        elif name == BOOTSTRAP_FILE:
            if options.json:
                self._json('{"type":"bootstrapSnapshot"}')
            else:
                self.output.add("KRaft bootstrap snapshot\n")
        else:
            if len(name) < 31:
                raise DumpError(f"{name}: not a snapshot file name <20-digit end offset>-<10-digit epoch>"
                                ".checkpoint (java.lang.StringIndexOutOfBoundsException)")
            end_offset = parse_java_long(name[:20])
            epoch = parse_java_long(name[21:31], 32)
            if options.json:
                self._json(f'{{"type":"snapshot","endOffset":{end_offset},"epoch":{epoch}}}')
            else:
                self.output.add(f"Snapshot end offset: {end_offset}, epoch: {epoch}\n")

    # -- log segments and snapshots ------------------------------------------------------------
    def dump_log(self, path: str, name: str) -> None:
        options = self.options
        self._log_header(name)
        stream = _open(path)
        with stream:
            size = os.fstat(stream.fileno()).st_size
            if options.max_bytes < 0:
                raise DumpError(f"java.lang.IllegalArgumentException: Invalid size: {options.max_bytes} in "
                                f"read from {_file_records(path, size)}")
            end = min(options.max_bytes, size)
            read_at = file_reader(stream)
            pairs: list[tuple[int, int]] = []
            out_fd = self.output.fd if options.deep_iteration else None
            workers = 1 if out_fd is None else parallel.worker_count(end)
            if out_fd is not None and workers > 1:
                stopped = parallel.dump_in_workers(self, out_fd, read_at, path, end, workers, pairs)
            else:
                walk = BatchWalk(read_at, path, end)
                self.dump_batches(walk, -1, pairs)
                stopped = walk.position
            if pairs:
                self.findings.non_consecutive.setdefault(absolute_path(path), []).extend(pairs)
            trailing = end - stopped
            if trailing > 0 and options.max_bytes == INT32_MAX:
                if options.json:
                    self._json(f'{{"type":"invalidBytes","bytes":{trailing},"file":{json_string(name)}}}')
                else:
                    self.output.add(f"Found {trailing} invalid bytes at the end of {name}\n")

    def dump_batches(self, walk: BatchWalk, last: int, pairs: list[tuple[int, int]]) -> int:
        """Print the batches of ``walk``, which follow the record at offset ``last``; returns the offset
        of the last record printed (``last`` when none is)."""
        read_at, path = walk.read_at, walk.path
        ordinary, style, decode = self.ordinary, self.style, self.options.metadata_decoder
        add = self.output.add
        for view, at, total in walk:
            done = ordinary_batch(view, at, total, walk.position, style, decode) if (
                ordinary and total >= BATCH_HEADER_SIZE) else None
            if done is None:
                last = self.dump_batch(view, at, total, walk.position, read_at, path, last, pairs)
                continue
            text, first, count = done
            if first != last + 1 and last != -1:
                pairs.append((last, first))
            add(text)
            last = first + count - 1
        return last

    def printing_into(self, stream: BinaryIO) -> Dumper:
        """A dumper of the same options printing into ``stream``: a worker process formats each of its
        chunks with one."""
        return Dumper(self.options, stream, self.err)

    def flush(self) -> None:
        """Write out the text printed so far."""
        self.output.flush()

    def dump_batch(self, buf: bytes, at: int, total: int, position: int, read_at: ReadAt, path: str,
                   last: int, pairs: list[tuple[int, int]]) -> int:
        """Print one batch other than the ordinary ones :meth:`dump_batches` prints straight from their
        bytes (and its records when iterating deeply); returns the last record offset."""
        options = self.options
        magic = buf[at + 16]
        if magic > 0x7F:
            magic -= 0x100  # Java's byte: a magic of 0x80 and up is negative, an old format to Kafka
        if magic < 2:
            raise DumpError(f"batch at position {position} has magic {magic}: the message formats before "
                            "record batch v2 are not supported")
        if total < BATCH_HEADER_SIZE:
            head = read_at(position, BATCH_HEADER_SIZE)
            if len(head) < BATCH_HEADER_SIZE:
                raise DumpError(f"batch at position {position} declares {total} bytes, less than its "
                                f"{BATCH_HEADER_SIZE}-byte header, and the file ends after {len(head)} "
                                "(org.apache.kafka.common.KafkaException: Failed to read `record batch "
                                "header`)")
            fields = HEADER.unpack_from(head, 0)
            valid = False
        else:
            fields = HEADER.unpack_from(buf, at)
            valid = fields[4] == crc32c(memoryview(buf)[at + CRC_START:at + total])
        (base_offset, _, leader_epoch, _, crc, attributes, last_delta, base_timestamp, max_timestamp,
         producer_id, producer_epoch, base_sequence, count) = fields
        base_offset = PREFIX.unpack_from(buf, at)[0]
        codec = attributes & 7
        timestamp_type = "LogAppendTime" if attributes & 0x08 else "CreateTime"
        last_sequence = -1 if base_sequence == -1 else increment_sequence(base_sequence, last_delta)
        transactional = bool(attributes & 0x10)
        control = bool(attributes & 0x20)
        horizon = base_timestamp if attributes & 0x40 else None
        if options.json:
            if codec >= len(CODECS):
                raise DumpError(f"batch at position {position}: java.lang.IllegalArgumentException: Unknown "
                                f"compression type id: {codec}")
            self._json(
                f'{{"type":"batch","baseOffset":{base_offset},"lastOffset":{base_offset + last_delta},'
                f'"count":{count},"baseSequence":{base_sequence},"lastSequence":{last_sequence},'
                f'"producerId":{producer_id},"producerEpoch":{producer_epoch},'
                f'"partitionLeaderEpoch":{leader_epoch},"isTransactional":{BOOLS[transactional]},'
                f'"isControl":{BOOLS[control]},"deleteHorizonMs":{"null" if horizon is None else horizon},'
                f'"position":{position},"timestampType":"{timestamp_type}","maxTimestamp":{max_timestamp},'
                f'"size":{total},"magic":{magic},"compressCodec":"{CODECS[codec]}","crc":{crc},'
                f'"isValid":{BOOLS[valid]}}}')
            line = ""
        else:
            line = (f"baseOffset: {base_offset} lastOffset: {base_offset + last_delta} count: {count} "
                    f"baseSequence: {base_sequence} lastSequence: {last_sequence} producerId: {producer_id} "
                    f"producerEpoch: {producer_epoch} partitionLeaderEpoch: {leader_epoch} "
                    f"isTransactional: {BOOLS[transactional]} isControl: {BOOLS[control]} deleteHorizonMs: "
                    f"{'OptionalLong.empty' if horizon is None else f'OptionalLong[{horizon}]'}")
            if codec >= len(CODECS):  # Kafka has printed the first half of the line when it fails
                self.output.add(line)
                raise DumpError(f"batch at position {position}: java.lang.IllegalArgumentException: Unknown "
                                f"compression type id: {codec}")
            line += (f" position: {position} {timestamp_type}: {max_timestamp} size: {total} magic: {magic} "
                     f"compresscodec: {CODECS[codec]} crc: {crc} isvalid: {BOOLS[valid]}\n")
        if not options.deep_iteration:
            self.output.add(line)
            return last
        if total < BATCH_HEADER_SIZE:
            self.output.add(line)
            raise DumpError(f"batch at position {position} is shorter than its {BATCH_HEADER_SIZE}-byte "
                            "header: its records cannot be read (java.lang.IndexOutOfBoundsException)")
        log_append = max_timestamp if attributes & 0x08 else None
        records: Iterable[KafkaRecord]
        failure: RecordFailure | None = None
        try:
            batch = decode_batch_at(buf, at, at + total, position, path, verify_crc=False)
        except DecodeError:
            self.output.add(line)
            if codec:
                records, failure = [], RecordFailure("its compressed records cannot be read")
            else:
                records = kafka_records(buf, at + BATCH_HEADER_SIZE, at + total, count, base_offset,
                                        base_timestamp, base_sequence, log_append)
        else:
            self.output.add(line)
            records = _from_decoded(batch.records, log_append, base_offset, base_sequence)
        try:
            return self._print_records(records, timestamp_type, control, last, pairs, position)
        except RecordFailure as exc:
            failure = exc
        raise DumpError(f"batch at position {position} (base offset {base_offset}): {failure}")

    def _print_records(self, records: Iterable[KafkaRecord], timestamp_type: str, control: bool, last: int,
                       pairs: list[tuple[int, int]], position: int) -> int:
        options = self.options
        add = self.output.add
        skip = options.skip_record_metadata
        contents = options.print_contents and not control
        metadata = options.metadata_decoder
        key_decoder = options.key_decoder
        value_decoder = options.value_decoder
        json = options.json
        for offset, timestamp, key, value, header_keys, sequence in records:
            if last == -1:
                last = offset
            elif offset != last + 1:
                pairs.append((last, offset))
            last = offset
            if json:
                self._record_json(offset, timestamp, key, value, header_keys, sequence, timestamp_type,
                                  control, position)
                continue
            if skip:
                line = ""
                prefix = "| "
            else:
                line = (f"| offset: {offset} {timestamp_type}: {timestamp} keySize: "
                        f"{-1 if key is None else len(key)} valueSize: {-1 if value is None else len(value)} "
                        f"sequence: {sequence} headerKeys: [{','.join(header_keys)}]")
                prefix = " "
                if control:
                    try:
                        line += _control_text(key, value)
                    except DumpError as exc:
                        add(line)
                        raise DumpError(f"control record at offset {offset} (batch at position {position}): "
                                        f"{exc}") from None
            if contents:
                if metadata:
                    line += f" payload: {metadata_payload(value, offset)}"
                else:
                    try:
                        if key is not None:
                            line += f"{prefix}key: {key_decoder.decode(key)}"
                        if value is not None:
                            line += f" payload: {value_decoder.decode(value)}"
                    except DumpError as exc:
                        add(line)
                        raise DumpError(f"record at offset {offset}: {exc}") from None
            add(line + "\n")
        return last

    def _record_json(self, offset: int, timestamp: int, key: bytes | None, value: bytes | None,
                     header_keys: tuple[str, ...], sequence: int, timestamp_type: str, control: bool,
                     position: int) -> None:
        options = self.options
        parts = ['{"type":"record"']
        if not options.skip_record_metadata:
            parts = [_json_head(offset, timestamp, timestamp_type, key, value, header_keys, sequence)]
            if control:
                try:
                    parts.append(f',"control":{_control_json(key, value)}')
                except DumpError as exc:
                    raise DumpError(f"control record at offset {offset} (batch at position {position}): "
                                    f"{exc}") from None
        if options.print_contents and not control:
            if options.metadata_decoder:
                parts.append(payload_json(metadata_payload(value, offset)))
            else:
                try:
                    if key is not None:
                        parts.append(f',"key":{_decoded_json(options.key_decoder, key)}')
                    if value is not None:
                        parts.append(f',"payload":{_decoded_json(options.value_decoder, value)}')
                except DumpError as exc:
                    raise DumpError(f"record at offset {offset}: {exc}") from None
        parts.append("}")
        self._json("".join(parts))

    # -- indexes ------------------------------------------------------------------------------------
    def _segment_of(self, path: str, name: str) -> tuple[int, str]:
        stem = name.split(".")[0]
        base = parse_java_long(stem)
        directory = absolute_path(path).rsplit("/", 1)[0] or "/"
        return base, java_path(f"{directory}/{stem}.log")

    def dump_index(self, path: str, name: str) -> None:
        """``dumpIndex``: the entries of an offset index, each checked against the batch it points at."""
        options = self.options
        base, log_path = self._segment_of(path, name)
        _open(log_path).close()
        data = _read(path)
        entries = len(data) // OFFSET_ENTRY.size
        if entries == 0:
            self._index_note(path, "empty", f"{path} is empty.")
            return
        if options.index_sanity_check:
            last = base + OFFSET_ENTRY.unpack_from(data, (entries - 1) * OFFSET_ENTRY.size)[0]
            if last < base:
                raise DumpError(f"org.apache.kafka.common.errors.CorruptIndexException: Corrupt index found, "
                                f"index file ({absolute_path(path)}) has non-zero size but the last offset "
                                f"is {last} which is less than the base offset {base}.")
            if len(data) % OFFSET_ENTRY.size:
                raise DumpError(f"org.apache.kafka.common.errors.CorruptIndexException: Index file "
                                f"{absolute_path(path)} is corrupt, found {len(data)} bytes which is neither "
                                f"positive nor a multiple of {OFFSET_ENTRY.size}.")
            self._index_note(path, "sanityCheckPassed", f"{path} passed sanity check.")
            return
        with _open(log_path) as log:
            for index in range(entries):
                relative, position = OFFSET_ENTRY.unpack_from(data, index * OFFSET_ENTRY.size)
                offset = base + relative
                if offset == base and index > 0:
                    return
                first = _first_batch(log, log_path, position, options.max_message_size)
                if first is None:
                    raise DumpError(f"{path}: entry {index} points at position {position} of {log_path}, "
                                    "where no whole batch starts (java.util.NoSuchElementException)")
                if first != offset:
                    self.findings.index_mismatches.setdefault(absolute_path(path), []).append((offset, first))
                if not options.verify_index_only:
                    if options.json:
                        self._json(f'{{"type":"indexEntry","offset":{offset},"position":{position}}}')
                    else:
                        self.output.add(f"offset: {offset} position: {position}\n")

    def dump_time_index(self, path: str, name: str) -> None:
        """``dumpTimeIndex``: the entries of a time index, each checked against the batch whose last
        offset it names (found through the offset index)."""
        options = self.options
        base, log_path = self._segment_of(path, name)
        index_path = log_path[:-len(".log")] + ".index"
        with _open(log_path) as log:
            index_data = _read(index_path)
            data = _read(path)
            entries = len(data) // TIME_ENTRY.size
            if options.index_sanity_check:
                _time_index_sanity(data, entries, base, absolute_path(path))
                self._index_note(path, "sanityCheckPassed", f"{path} passed sanity check.")
                return
            offsets = [OFFSET_ENTRY.unpack_from(index_data, at)
                       for at in range(0, len(index_data) - len(index_data) % 8, 8)]
            previous = -1
            where = absolute_path(path)
            for index in range(entries):
                timestamp, relative = TIME_ENTRY.unpack_from(data, index * TIME_ENTRY.size)
                offset = base + relative
                if offset == base and index > 0:
                    return
                found = _batch_reaching(log, log_path, _lookup(offsets, base, offset), offset)
                if found is None:
                    self.findings.time_not_found.setdefault(where, []).append((offset, -1))
                elif found[0] != offset:
                    self.findings.time_not_found.setdefault(where, []).append((offset, found[0]))
                else:
                    if found[1] != timestamp:
                        self.findings.time_mismatches.setdefault(where, []).append((timestamp, found[1]))
                    if previous >= timestamp:
                        self.findings.time_out_of_order.setdefault(where, []).append((timestamp, previous))
                if not options.verify_index_only:
                    if options.json:
                        self._json(f'{{"type":"timeIndexEntry","timestamp":{timestamp},"offset":{offset}}}')
                    else:
                        self.output.add(f"timestamp: {timestamp} offset: {offset}\n")
                previous = timestamp

    def dump_producer_snapshot(self, path: str) -> None:
        """``dumpProducerIdSnapshot``: the producers of a log layer's producer-state snapshot (none in a
        metadata log). Layout (``ProducerStateManager``): int16 version 1, uint32 CRC-32C of what
        follows, then an int32-counted array of entries: producer id int64, epoch int16, last
        sequence int32, last offset int64, offset delta int32, timestamp int64, coordinator epoch
        int32, first offset of the open transaction int64 (-1: none). A corrupt snapshot is reported
        on stderr and the dump goes on, as Kafka does."""
        data = _read(path)
        problem = None
        if len(data) < PRODUCER_SNAPSHOT.size:
            problem = f"Snapshot of {len(data)} bytes is too short to hold its header"
        else:
            version, crc, count = PRODUCER_SNAPSHOT.unpack_from(data)
            computed = crc32c(data[6:])
            if version != 1:
                problem = f"Snapshot contained an unknown file version {version}"
            elif crc != computed:
                problem = (f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {crc}. Computed crc: "
                           f"{computed}")
            elif len(data) != PRODUCER_SNAPSHOT.size + count * PRODUCER_ENTRY.size:
                problem = f"Snapshot declares {count} producers in {len(data)} bytes"
        if problem is not None:
            self.output.flush()
            self.err(problem + "\n")
            return
        for at in range(PRODUCER_SNAPSHOT.size, len(data), PRODUCER_ENTRY.size):
            (producer_id, epoch, last_sequence, last_offset, offset_delta, timestamp, coordinator_epoch,
             first_offset) = PRODUCER_ENTRY.unpack_from(data, at)
            open_txn = "OptionalLong.empty" if first_offset < 0 else f"OptionalLong[{first_offset}]"
            text = (f"producerId: {producer_id} producerEpoch: {epoch} coordinatorEpoch: {coordinator_epoch} "
                    f"currentTxnFirstOffset: {open_txn} lastTimestamp: {timestamp} ")
            first_json = "null" if first_offset < 0 else first_offset
            json_text = (f'{{"type":"producer","producerId":{producer_id},"producerEpoch":{epoch},'
                         f'"coordinatorEpoch":{coordinator_epoch},"currentTxnFirstOffset":{first_json},'
                         f'"lastTimestamp":{timestamp}')
            if last_offset >= 0:  # the last batch's metadata (``BatchMetadata``); its first sequence wraps
                first_sequence = (INT32_MAX - (offset_delta - last_sequence) + 1
                                  if last_sequence < offset_delta else last_sequence - offset_delta)
                text += (f"firstSequence: {first_sequence} lastSequence: {last_sequence} lastOffset: "
                         f"{last_offset} offsetDelta: {offset_delta} timestamp: {timestamp}")
                json_text += (f',"firstSequence":{first_sequence},"lastSequence":{last_sequence},'
                              f'"lastOffset":{last_offset},"offsetDelta":{offset_delta},"timestamp":{timestamp}')
            self._line(text, json_text + "}")

    def dump_transaction_index(self, path: str) -> None:
        """``dumpTxnIndex``: the aborted transactions of a transaction index (none in a metadata log);
        34-byte entries of version int16 (0), producer id, first offset, last offset and last stable
        offset (int64 each)."""
        data = _read(path)
        for at in range(0, len(data) - len(data) % ABORTED_TXN.size, ABORTED_TXN.size):
            version, producer_id, first, last, stable = ABORTED_TXN.unpack_from(data, at)
            if version > 0:
                raise DumpError(f"org.apache.kafka.common.KafkaException: Unexpected aborted transaction "
                                f"version {version} in transaction index {absolute_path(path)}, current "
                                "version is 0")
            self._line(f"version: {version} producerId: {producer_id} firstOffset: {first} "
                       f"lastOffset: {last} lastStableOffset: {stable}",
                       f'{{"type":"abortedTransaction","version":{version},"producerId":{producer_id},'
                       f'"firstOffset":{first},"lastOffset":{last},"lastStableOffset":{stable}}}')

    def _line(self, text: str, json_text: str) -> None:
        """One line of output: ``text``, or with ``--output json`` its object."""
        self.output.add((json_text if self.options.json else text) + "\n")

    def _index_note(self, path: str, kind: str, text: str) -> None:
        if self.options.json:
            self._json(f'{{"type":"{kind}","path":{json_string(path)}}}')
        else:
            self.output.add(text + "\n")


def _json_head(offset: int, timestamp: int, timestamp_type: str, key: bytes | None, value: bytes | None,
               header_keys: Iterable[str], sequence: int) -> str:
    """A record object of ``--output json`` up to its header keys (the object is left open)."""
    return (f'{{"type":"record","offset":{offset},"timestampType":"{timestamp_type}","timestamp":{timestamp},'
            f'"keySize":{-1 if key is None else len(key)},"valueSize":{-1 if value is None else len(value)},'
            f'"sequence":{sequence},"headerKeys":[{",".join(json_string(header) for header in header_keys)}]')


BOOLS: Final = ("false", "true")
"""Java's text of a boolean, by the boolean."""


def _open(path: str) -> BinaryIO:
    """The file, or Kafka's reason for failing to open it (``java.nio.file.NoSuchFileException``...)."""
    try:
        return open(path, "rb")  # noqa: SIM115 - closed by the caller
    except FileNotFoundError:
        raise DumpError(f"java.nio.file.NoSuchFileException: {path}") from None
    except IsADirectoryError:
        raise DumpError(f"java.io.IOException: Is a directory: {path}") from None
    except PermissionError:
        raise DumpError(f"java.nio.file.AccessDeniedException: {path}") from None
    except OSError as exc:
        raise DumpError(f"java.io.IOException: {exc.strerror}: {path}") from None


def _read(path: str) -> bytes:
    with _open(path) as stream:
        return stream.read()


def _from_decoded(records: list[Record], log_append: int | None, base_offset: int,
                  base_sequence: int) -> Iterator[KafkaRecord]:
    """Records the project's decoder read, as Kafka's iterator would give them."""
    no_keys: tuple[str, ...] = ()
    for offset, timestamp, key, value, headers, _ in records:
        sequence = -1 if base_sequence < 0 else increment_sequence(base_sequence, offset - base_offset)
        keys = no_keys if not headers else tuple(header.key for header in headers)
        yield KafkaRecord(offset, timestamp if log_append is None else log_append, key, value, keys, sequence)


def _control_type(key: bytes | None) -> int:
    try:
        return parse_control_key(key)[1]
    except DecodeError as exc:
        raise DumpError(exc.reason) from None


def _control_value(type_id: int, value: bytes | None) -> tuple[str, str]:
    """(label, JSON text) of a control record's value; DumpError where Kafka's deserializer throws."""
    if value is None:
        raise DumpError("the control record has a null value (java.lang.NullPointerException)")
    cls = SCHEMA_CLASSES[type_id]
    try:
        message, _ = cls.read(value, 0, CONTROL_VALUE_VERSION)
        return CONTROL_LABELS[ControlRecordType(type_id)], control_json(message)
    except DecodeError as exc:
        raise DumpError(f"{cls.NAME}: {exc}") from None
    except NonDefaultField as exc:
        raise DumpError(f"org.apache.kafka.common.errors.UnsupportedVersionException: {exc}") from None


def _end_txn_marker(type_id: int, value: bytes | None) -> tuple[str, int]:
    if value is None:
        raise DumpError("the transaction marker has a null value (java.lang.NullPointerException)")
    if len(value) < END_TXN_MARKER.size:
        raise DumpError(f"Invalid value size found for end transaction marker. Must have at least "
                        f"{END_TXN_MARKER.size} bytes, but found only {len(value)}")
    version, epoch = END_TXN_MARKER.unpack_from(value, 0)
    if version < 0:
        raise DumpError(f"Invalid version found for end transaction marker: {version}. May indicate data "
                        "corruption")
    return ControlRecordType(type_id).name, epoch


def _control_text(key: bytes | None, value: bytes | None) -> str:
    """What ``printControlRecord`` appends to a control record's line."""
    type_id = _control_type(key)
    if type_id in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
        marker, epoch = _end_txn_marker(type_id, value)
        return f" endTxnMarker: {marker} coordinatorEpoch: {epoch}"
    if type_id in SCHEMA_CLASSES:
        label, text = _control_value(type_id, value)
        return label + text
    return f" controlType: UNKNOWN({type_id})"


def _control_json(key: bytes | None, value: bytes | None) -> str:
    type_id = _control_type(key)
    if type_id in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
        marker, epoch = _end_txn_marker(type_id, value)
        return f'{{"type":"endTxnMarker","controlType":"{marker}","coordinatorEpoch":{epoch}}}'
    if type_id in SCHEMA_CLASSES:
        label, text = _control_value(type_id, value)
        return f'{{"type":"{label.strip(" :")}","data":{text}}}'
    return f'{{"type":"UNKNOWN","typeId":{type_id}}}'


def _decoded_json(decoder: Decoder, data: bytes) -> str:
    text = decoder.decode(data)
    return text if decoder.numeric else json_string(text)


def _file_records(path: str, size: int) -> str:
    """``FileRecords.toString`` of a whole file as ``FileRecords.open(file, false)`` opens it (its end
    is Integer.MAX_VALUE), as Kafka's messages about a slice of it quote it."""
    return f"FileRecords(size={size}, file={path}, start=0, end={INT32_MAX})"


def _slice_end(log: BinaryIO, log_path: str, position: int, size: int) -> int:
    """Where ``FileRecords.slice(position, size)`` of the segment an index points into ends, or
    Kafka's refusal of a position outside the file or a negative size. An index entry's position is a
    signed int to Kafka: 0xffffffff is -1."""
    file_size = os.fstat(log.fileno()).st_size
    records = _file_records(log_path, file_size)
    if position < 0:
        raise DumpError(f"java.lang.IllegalArgumentException: Invalid position: {position} in read from "
                        f"{records}")
    if position > file_size:
        raise DumpError(f"java.lang.IllegalArgumentException: Slice from position {position} exceeds end "
                        f"position of {records}")
    if size < 0:
        raise DumpError(f"java.lang.IllegalArgumentException: Invalid size: {size} in read from {records}")
    return min(position + size, file_size)


def _first_batch(log: BinaryIO, log_path: str, position: int, limit: int) -> int | None:
    """The last offset of the first whole batch at ``position`` within ``limit`` bytes (``slice``)."""
    end = _slice_end(log, log_path, position, limit)
    for buf, at, _ in BatchWalk(file_reader(log, position), log_path, end - position):
        fields = HEADER.unpack_from(buf, at) if len(buf) - at >= BATCH_HEADER_SIZE else None
        return None if fields is None else fields[0] + fields[6]
    return None


def _batch_reaching(log: BinaryIO, log_path: str, position: int, offset: int) -> tuple[int, int] | None:
    """(last offset, largest record timestamp) of the first batch from ``position`` whose last offset
    reaches ``offset``."""
    end = _slice_end(log, log_path, position, INT32_MAX)
    for buf, at, total in BatchWalk(file_reader(log, position), log_path, end - position):
        fields = HEADER.unpack_from(buf, at)
        last_offset = fields[0] + fields[6]
        if last_offset < offset:
            continue
        if last_offset != offset:
            return last_offset, -1
        attributes = fields[5]
        try:
            batch = decode_batch_at(buf, at, at + total, position, log_path, verify_crc=False)
        except DecodeError as exc:
            raise DumpError(f"{log_path}: {exc}") from None
        if attributes & 0x08:
            return last_offset, fields[8] if batch.records else -1
        return last_offset, max((record.timestamp for record in batch.records), default=-1)
    return None


def _time_index_sanity(data: bytes, entries: int, base: int, where: str) -> None:
    """``TimeIndex.sanityCheck``: the last entry neither older than the first nor below the base offset,
    and the file a whole number of entries."""
    problem = "org.apache.kafka.common.errors.CorruptIndexException: "
    if entries:
        first_timestamp = TIME_ENTRY.unpack_from(data, 0)[0]
        last_timestamp, relative = TIME_ENTRY.unpack_from(data, (entries - 1) * TIME_ENTRY.size)
        if last_timestamp < first_timestamp:
            raise DumpError(f"{problem}Corrupt time index found, time index file ({where}) has non-zero size "
                            f"but the last timestamp is {last_timestamp} which is less than the first "
                            f"timestamp {first_timestamp}")
        if base + relative < base:
            raise DumpError(f"{problem}Corrupt time index found, time index file ({where}) has non-zero size "
                            f"but the last offset is {base + relative} which is less than the first offset "
                            f"{base}")
    if len(data) % TIME_ENTRY.size:
        raise DumpError(f"{problem}Time index file {where} is corrupt, found {len(data)} bytes which is "
                        f"neither positive nor a multiple of {TIME_ENTRY.size}.")


def _lookup(entries: list[tuple[int, int]], base: int, offset: int) -> int:
    """``OffsetIndex.lookup``: the position of the last entry at or below ``offset`` (0 if none)."""
    position = 0
    for relative, entry_position in entries:
        if base + relative > offset:
            break
        position = entry_position
    return position
