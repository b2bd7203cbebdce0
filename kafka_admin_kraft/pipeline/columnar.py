"""One split as Arrow record batches, built column by column and decoding only what is asked for.

The rows are those of :data:`~kafka_admin_kraft.pipeline.schema.COLUMNS`: one per record, one per
empty batch and one per error (see :mod:`~kafka_admin_kraft.pipeline.walk` for how a split is
walked and what becomes an error row). A :class:`Projection` says which columns the query reads and
which record types it keeps; the rest costs nothing:

* framing every batch (header, CRC, record lengths, offsets, timestamps) is always done: it is what
  tells a good batch from a corrupt one;
* a metadata record's type and version come from the three bytes in front of its value, so
  ``record_type`` and ``record_version`` need no decoding, and records of a type the projection does
  not keep are dropped there;
* a metadata value is decoded only for ``record_json``, or for the typed columns of the record types
  that have them. A value that is decoded and fails becomes an ``undecodable`` row; a value that is
  not decoded is not checked beyond its frame. Control records (a handful per log) are always
  decoded.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, cast

from kafka_admin_kraft.pipeline.planning import FileSplit
from kafka_admin_kraft.pipeline.record_json import json_text, record_json
from kafka_admin_kraft.pipeline.runs import BatchRun
from kafka_admin_kraft.pipeline.schema import (
    COLUMN_NAMES,
    COLUMNS,
    FEATURE_LEVEL,
    KRAFT_VERSION,
    LEADER_CHANGE,
    TYPED_COLUMNS,
    UNDECODABLE,
    VOTERS,
)
from kafka_admin_kraft.pipeline.storage import NO_OPTIONS, StorageOptions
from kafka_admin_kraft.pipeline.walk import SplitError, walk_split
from kafka_admin_kraft.protocol.exceptions import DecodeError
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.records.batch import CONTROL_FLAG, RecordBatch, decode_batch_at
from kafka_admin_kraft.records.control import CONTROL_VALUE_VERSION, ControlRecordType, decode_control_record
from kafka_admin_kraft.records.metadata import (
    ApiMessageAndVersion,
    decode_metadata_record,
    read_frame,
    record_class,
)

if TYPE_CHECKING:
    import pyarrow

ARROW_BATCH_ROWS: Final = 8192
"""Rows per Arrow record batch gathered from single batches and errors (a run of batches, up to
:data:`~kafka_admin_kraft.pipeline.runs.RUN_BYTES`, is a record batch of its own)."""

SPARSE_PIECES: Final = 16
"""Most rows of a sparse column (typed fields, errors) put in place between slices of nulls; more are
placed by a ``take``."""

RECORD_NAMES: Final[dict[int, str]] = {
    0: "RegisterBrokerRecord",
    1: "UnregisterBrokerRecord",
    2: "TopicRecord",
    3: "PartitionRecord",
    4: "ConfigRecord",
    5: "PartitionChangeRecord",
    7: "FenceBrokerRecord",
    8: "UnfenceBrokerRecord",
    9: "RemoveTopicRecord",
    10: "DelegationTokenRecord",
    11: "UserScramCredentialRecord",
    12: "FeatureLevelRecord",
    14: "ClientQuotaRecord",
    15: "ProducerIdsRecord",
    17: "BrokerRegistrationChangeRecord",
    18: "AccessControlEntryRecord",
    19: "RemoveAccessControlEntryRecord",
    20: "NoOpRecord",
    21: "ZkMigrationRecord",
    22: "RemoveUserScramCredentialRecord",
    23: "BeginTransactionRecord",
    24: "EndTransactionRecord",
    25: "AbortTransactionRecord",
    26: "RemoveDelegationTokenRecord",
    27: "RegisterControllerRecord",
    28: "ClearElrRecord",
    29: "UnregisterControllerRecord",
}
"""Metadata record api key -> schema name, also for record types the codec keeps raw."""

CONTROL_NAMES: Final[dict[int, str]] = {
    ControlRecordType.ABORT: "AbortMarker",
    ControlRecordType.COMMIT: "CommitMarker",
    ControlRecordType.LEADER_CHANGE: LEADER_CHANGE,
    ControlRecordType.SNAPSHOT_HEADER: "SnapshotHeaderRecord",
    ControlRecordType.SNAPSHOT_FOOTER: "SnapshotFooterRecord",
    ControlRecordType.KRAFT_VERSION: KRAFT_VERSION,
    ControlRecordType.KRAFT_VOTERS: VOTERS,
}

_ARROW_TYPES: Final = {
    "string": "string",
    "int": "int32",
    "bigint": "int64",
    "boolean": "bool_",
    "binary": "binary",
}


@functools.cache
def arrow_schema() -> pyarrow.Schema:
    """The Arrow form of :data:`~kafka_admin_kraft.pipeline.schema.COLUMNS`."""
    import pyarrow as pa

    def arrow_type(ddl: str) -> Any:
        if ddl.startswith("array<"):
            return pa.list_(arrow_type(ddl[len("array<") : -1]))
        return getattr(pa, _ARROW_TYPES[ddl])()

    return pa.schema([pa.field(column.name, arrow_type(column.ddl)) for column in COLUMNS])


@dataclass(frozen=True)
class Projection:
    """What a query reads: its columns (the others come back null) and the record types it keeps."""

    columns: frozenset[str] = frozenset(COLUMN_NAMES)
    record_types: frozenset[str] | None = None
    """Keep only records of these types (None: every row, error rows included)."""
    batch_rows: bool = False
    """Keep the first row of every batch and every error row; ``record_types`` then adds the records
    of those types instead of being the only rows kept."""

    def __post_init__(self) -> None:
        unknown = sorted(self.columns - set(COLUMN_NAMES))
        if unknown:
            raise ValueError(
                f"kraft-metadata: no column {', '.join(unknown)}; the columns are {', '.join(COLUMN_NAMES)}"
            )

    @property
    def with_errors(self) -> bool:
        """Error rows have no record type: a record type filter drops them, batch rows keep them."""
        return self.batch_rows or self.record_types is None

    @property
    def with_json(self) -> bool:
        return "record_json" in self.columns

    @property
    def with_typed(self) -> bool:
        return not self.columns.isdisjoint(TYPED_COLUMNS)


def _plain(value: object) -> Any:
    """JSON-friendly form of a control value that is not a schema message (markers, unknown types)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            key: (item.hex() if isinstance(item, bytes) else item)
            for key, item in dataclasses.asdict(value).items()
        }
    return str(value)


Typed = tuple[Any, Any, Any, Any, Any, Any]
"""(leader_id, voter_ids, voter_directory_ids, granting_voter_ids, feature_name, feature_level)."""


def _typed(record_type: str, message: Any) -> Typed | None:
    if record_type == VOTERS:
        voters = message.voters
        ids = [v.voter_id for v in voters]
        return None, ids, [str(v.voter_directory_id) for v in voters], None, None, None
    if record_type == LEADER_CHANGE:
        return (
            message.leader_id,
            [v.voter_id for v in message.voters],
            None,
            [v.voter_id for v in message.granting_voters],
            None,
            None,
        )
    if record_type == FEATURE_LEVEL:
        return None, None, None, None, message.name, message.feature_level
    if record_type == KRAFT_VERSION:
        return None, None, None, None, "kraft.version", message.k_raft_version
    return None


Decoder = Callable[[bytes, int], tuple[Any, int]]
Frame = tuple[str, int, "Decoder | None"]
"""(record type, record version, the codec's decoder of a body at byte 3 when it has that version)."""


def _frame(value: bytes) -> tuple[Frame, int]:
    """A metadata value's frame and the length of its header; raises DecodeError when it is damaged."""
    api_key, version, start = read_frame(value)
    cls = record_class(api_key)
    if cls is not None and cls.VERSIONS[0] <= version <= cls.VERSIONS[1]:
        return (cls.NAME, version, cls._DECODERS[version] if start == 3 else None), start
    return (RECORD_NAMES.get(api_key, f"ApiKey{api_key}"), version, None), start


_FRAMES: dict[bytes, Frame] = {}
"""Frames by the three header bytes of the values seen so far (a log has a few dozen kinds)."""


def _frame_of(value: bytes | None) -> Frame | DecodeError:
    """The frame of a value, remembered when its header is the usual three bytes; or what is wrong."""
    try:
        if value is None:
            decode_metadata_record(value)  # raises the error that a null value is
        assert value is not None
        frame, start = _frame(value)
    except DecodeError as exc:
        return exc
    if start == 3:
        _FRAMES[value[:3]] = frame
    return frame


class ArrowBuilder:
    """Rows of one split, accumulated as column lists and cut into Arrow record batches."""

    _DENSE: Final = (
        "batch_position",
        "batch_base_offset",
        "batch_last_offset",
        "batch_crc",
        "record_index",
        "offset",
        "leader_epoch",
        "timestamp",
        "is_control",
        "record_type",
        "record_version",
    )

    def __init__(self, split: FileSplit, projection: Projection) -> None:
        self.split = split
        self.projection = projection
        self.keep = projection.record_types
        self.heads = projection.batch_rows
        self.with_errors = projection.with_errors
        self.with_json = projection.with_json
        self.with_typed = projection.with_typed
        self.with_value = "record_value" in projection.columns
        self.constant: dict[str, Any] = {}
        """Arrays of the columns whose rows are all alike (the split's own fields, the nulls of the
        columns not read), as long as the longest record batch so far; cut to each batch's length."""
        self.head = {
            "cluster_id": split.cluster_id,
            "node_id": split.node_id,
            "directory_id": split.directory_id,
            "log_dir": split.log_dir,
            "file": split.path,
            "file_kind": split.kind,
            "snapshot_end_offset": split.snapshot_end_offset,
            "snapshot_epoch": split.snapshot_epoch,
        }
        self._reset()

    def _reset(self) -> None:
        self.count = 0
        self.dense: dict[str, list[Any]] = {name: [] for name in self._DENSE}
        self.json: list[str | None] = []
        self.value: list[bytes | None] = []
        self.typed: dict[int, Typed] = {}
        self.errors: dict[int, tuple[str, str]] = {}

    def add(self, items: Iterable[RecordBatch | BatchRun | SplitError]) -> Iterator[pyarrow.RecordBatch]:
        """Add the walked items of the split; yield a record batch whenever enough rows gathered.

        Rows of single batches and errors are gathered in lists; a run becomes a record batch of
        its own, after the rows gathered before it."""
        for item in items:
            if isinstance(item, SplitError):
                self.add_error(item)
            elif isinstance(item, BatchRun):
                if self.count:
                    yield self.flush()
                run = self.add_run(item)
                if run is not None:
                    yield run
            else:
                self.add_batch(item)
            if self.count >= ARROW_BATCH_ROWS:
                yield self.flush()
        if self.count:
            yield self.flush()

    def add_error(self, error: SplitError) -> None:
        if not self.with_errors:
            return
        position, kind, message, base_offset, offset, epoch = error
        row = self.count
        for name, item in (
            ("batch_position", position),
            ("batch_base_offset", base_offset),
            ("offset", offset),
            ("leader_epoch", epoch),
        ):
            self.dense[name].append(item)
        for name in ("batch_last_offset", "batch_crc", "record_index", "timestamp", "is_control",
                     "record_type", "record_version"):
            self.dense[name].append(None)
        self.json.append(None)
        self.value.append(None)
        self.errors[row] = (kind, message)
        self.count += 1

    def add_batch(self, batch: RecordBatch) -> None:
        records = batch.records
        if not records:
            if self.heads or self.keep is None:
                self._rows_of_batch(batch, [None], [None], [batch.max_timestamp], [None], [None])
                self.json.append(None)
                self.value.append(None)
                self.count += 1
            return
        if batch.attributes & CONTROL_FLAG:
            self._control_batch(batch)
        else:
            self._metadata_batch(batch)

    def _rows_of_batch(
        self,
        batch: RecordBatch,
        indexes: Sequence[int | None],
        offsets: Sequence[int | None],
        timestamps: Sequence[int],
        types: Sequence[str | None],
        versions: Sequence[int | None],
    ) -> None:
        count = len(indexes)
        dense = self.dense
        dense["batch_position"] += [batch.position] * count
        dense["batch_base_offset"] += [batch.base_offset] * count
        dense["batch_last_offset"] += [batch.base_offset + batch.last_offset_delta] * count
        dense["batch_crc"] += [batch.crc] * count
        dense["leader_epoch"] += [batch.partition_leader_epoch] * count
        dense["is_control"] += [bool(batch.attributes & CONTROL_FLAG)] * count
        dense["record_index"] += indexes
        dense["offset"] += offsets
        dense["timestamp"] += timestamps
        dense["record_type"] += types
        dense["record_version"] += versions

    def _undecodable(self, position: int, offset: int, exc: Exception) -> tuple[str, str]:
        return UNDECODABLE, (
            f"{self.split.path}: batch at position {position}, record at offset {offset}: {exc}"
        )

    def _metadata_batch(self, batch: RecordBatch) -> None:
        records = batch.records
        get = _FRAMES.get
        try:
            frames: list[Frame | DecodeError | None] = [get(r[3][:3]) for r in records]  # type: ignore[index]
        except TypeError:  # a null value
            frames = [None]
        clean = None not in frames  # every frame came from the cache
        if not clean:
            frames = [_frame_of(r[3]) for r in records]
            clean = all(type(f) is tuple for f in frames)
        keep = self.keep
        chosen = records
        indexes: Sequence[int] = range(len(records))
        if self.heads:
            extra = keep or frozenset()
            indexes = [i for i, f in enumerate(frames) if i == 0 or type(f) is not tuple or f[0] in extra]
        elif keep is not None:
            indexes = [i for i, f in enumerate(frames) if type(f) is tuple and f[0] in keep]
        if len(indexes) < len(records):
            chosen = [records[i] for i in indexes]
            frames = [frames[i] for i in indexes]
        count = len(chosen)
        if not count:
            return
        row = self.count
        if clean:
            good = cast("list[Frame]", frames)
            names: list[str | None] = [f[0] for f in good]
            versions: list[int | None] = [f[1] for f in good]
        else:
            names = [f[0] if type(f) is tuple else None for f in frames]
            versions = [f[1] if type(f) is tuple else None for f in frames]
            for i, f in enumerate(frames):
                if isinstance(f, DecodeError):
                    self.errors[row + i] = self._undecodable(batch.position, chosen[i][0], f)
        texts: list[str | None] | None = [None] * count if self.with_json else None
        typed: dict[int, Typed] = {}
        failed: dict[int, Exception] = {}
        which = self._to_decode(names)
        if which:
            items = ((i, cast("Frame", frames[i]), cast(bytes, chosen[i][3])) for i in which
                     if type(frames[i]) is tuple)
            self._decode(items, texts, typed, failed)
        if failed and not self.with_errors:
            # A kept type whose value does not decode has no record type: the filter drops it.
            alive = [i for i in range(count) if i not in failed]
            moved = {old: new for new, old in enumerate(alive)}
            typed = {moved[i]: fields for i, fields in typed.items()}
            indexes = [indexes[i] for i in alive]
            chosen = [chosen[i] for i in alive]
            names = [names[i] for i in alive]
            versions = [versions[i] for i in alive]
            if texts is not None:
                texts = [texts[i] for i in alive]
            count = len(chosen)
        else:
            for i, exc in failed.items():
                names[i] = versions[i] = None
                self.errors[row + i] = self._undecodable(batch.position, chosen[i][0], exc)
        for i, fields in typed.items():
            self.typed[row + i] = fields
        self._rows_of_batch(batch, indexes, [r[0] for r in chosen], [r[1] for r in chosen], names, versions)
        if texts is not None:
            self.json += texts
        if self.with_value:
            self.value += [r[3] for r in chosen]
        self.count = row + count

    @staticmethod
    def _decode(
        items: Iterable[tuple[int, Frame, bytes]],
        texts: list[str | None] | None,
        typed: dict[int, Typed],
        failed: dict[int, Exception],
    ) -> None:
        """Decode the (row, frame, value) items into ``texts`` (JSON) and ``typed``; note the rows that
        fail.

        A body goes straight to its decoder; :func:`decode_metadata_record` runs only for the rest
        and for a body that fails, to raise the error it names."""
        for i, frame, value in items:
            message: Any = None
            decoder = frame[2]
            if decoder is not None:
                try:
                    message, end = decoder(value, 3)
                except DecodeError:
                    message = None
                else:
                    if end != len(value):
                        message = None
            if message is None:
                try:
                    meta = decode_metadata_record(value)
                except (DecodeError, ValueError, IndexError) as exc:
                    failed[i] = exc
                    continue
                if not isinstance(meta, ApiMessageAndVersion):
                    if texts is not None:
                        texts[i] = json_text({"api_key": meta.api_key, "body_hex": meta.body.hex()})
                    continue
                message = meta.message
            if texts is not None:
                texts[i] = record_json(message)
            fields = _typed(frame[0], message)
            if fields is not None:
                typed[i] = fields

    def _decoded_types(self) -> frozenset[str]:
        """The metadata record types whose values the projection needs decoded without JSON: those
        with typed columns (control records are always decoded)."""
        return frozenset({FEATURE_LEVEL}) if self.with_typed else frozenset()

    def _to_decode(self, names: Sequence[str | None]) -> Sequence[int]:
        """The rows whose values the projection needs decoded: every row for JSON, else those of
        :meth:`_decoded_types`."""
        if self.with_json:
            return range(len(names))
        decoded = self._decoded_types()
        if decoded.isdisjoint(names):
            return ()
        return [i for i, name in enumerate(names) if name in decoded]

    def _wanted(self, index: int, name: str | None) -> bool:
        """Whether the projection keeps a record (``name`` None: one that does not decode)."""
        if self.heads:
            return index == 0 or name is None or (self.keep is not None and name in self.keep)
        return self.keep is None or (name is not None and name in self.keep)

    def _control_batch(self, batch: RecordBatch) -> None:
        indexes: list[int] = []
        types: list[str | None] = []
        versions: list[int | None] = []
        kept: list[Any] = []
        row = self.count
        for index, record in enumerate(batch.records):
            text = None
            try:
                decoded = decode_control_record(record)
            except (DecodeError, ValueError, IndexError) as exc:
                if not self._wanted(index, None):
                    continue
                self.errors[row] = self._undecodable(batch.position, record.offset, exc)
                name: str | None = None
            else:
                name = CONTROL_NAMES.get(decoded.type_id, f"ControlType{decoded.type_id}")
                if not self._wanted(index, name):
                    continue
                message = decoded.value
                if isinstance(message, Struct):
                    typed = _typed(name, message)
                    if typed is not None:
                        self.typed[row] = typed
                    if self.with_json:
                        text = record_json(message)
                elif self.with_json:
                    text = json_text(_plain(message))
            indexes.append(index)
            types.append(name)
            versions.append(CONTROL_VALUE_VERSION if name is not None else None)
            kept.append(record)
            self.json.append(text)
            self.value.append(record.value)
            row += 1
        self._rows_of_batch(batch, indexes, [r.offset for r in kept], [r.timestamp for r in kept], types,
                            versions)
        self.count = row

    def add_run(self, run: BatchRun) -> pyarrow.RecordBatch | None:
        """The rows of a run as one record batch (None when the projection keeps none of them); a run
        holding a value whose frame header is not the usual three bytes of a frame is read batch by
        batch instead."""
        import numpy as np

        table = self._frame_table(run)
        if table is None:
            self._add_run_batches(run)
            return None
        frames, code = table
        rows = self._run_rows(run, frames, code)
        code = code[rows]
        texts: list[str | None] | None = [None] * len(rows) if self.with_json else None
        typed: dict[int, Typed] = {}
        failed: dict[int, Exception] = {}
        which: Sequence[int] = range(len(rows))
        at, picked = rows, code
        if not self.with_json:
            decoded = [i for i, frame in enumerate(frames) if frame[0] in self._decoded_types()]
            chosen = np.nonzero(np.isin(code, decoded))[0] if decoded else code[:0]
            which, at, picked = chosen.tolist(), rows[chosen], code[chosen]
        if which:
            starts, ends, codes = run.value_start[at].tolist(), run.value_end[at].tolist(), picked.tolist()
            items = (
                (i, frames[c], run.buf[b:e]) for i, c, b, e in zip(which, codes, starts, ends, strict=True)
            )
            self._decode(items, texts, typed, failed)
        errors: dict[int, tuple[str, str]] = {}
        if failed and self.with_errors:
            positions = run.positions[run.batch_of_record[rows]]
            for i, exc in failed.items():
                errors[i] = self._undecodable(int(positions[i]), int(run.offsets[rows[i]]), exc)
            code = code.copy()
            code[list(failed)] = len(frames)  # no record type
        elif failed:  # a kept type whose value does not decode has no record type: the filter drops it
            alive = np.ones(len(rows), bool)
            alive[list(failed)] = False
            moved = np.cumsum(alive) - 1
            typed = {int(moved[i]): fields for i, fields in typed.items()}
            texts = None if texts is None else [text for i, text in enumerate(texts) if i not in failed]
            rows, code = rows[alive], code[alive]
        if not len(rows):
            return None
        return self._run_batch(run, frames, rows, code, texts, typed, errors)

    @staticmethod
    def _frame_table(run: BatchRun) -> tuple[list[Frame], Any] | None:
        """The frames of the run's distinct three-byte headers and each record's index into them;
        None when a header is not a whole frame on its own.

        A usual header is the frame version 1 and two one-byte varints (api key, version), so the
        last two bytes tell the headers apart, and a table of 65,536 entries numbers them (sorting the
        headers, as ``numpy.unique`` does, took a quarter of a millisecond per run)."""
        import numpy as np

        u8 = np.frombuffer(run.buf, np.uint8)
        start = run.value_start
        if not (u8[start] == 1).all():
            return None
        pairs = (u8[start + 1].astype(np.intp) << 8) | u8[start + 2]
        seen = np.zeros(1 << 16, bool)
        seen[pairs] = True
        kinds = np.flatnonzero(seen)
        frames: list[Frame] = []
        for kind in kinds.tolist():
            header = bytes((1, kind >> 8, kind & 0xFF))
            frame = _FRAMES.get(header)
            if frame is None:
                at = int(np.argmax(pairs == kind))
                _frame_of(run.buf[start[at] : run.value_end[at]])
                frame = _FRAMES.get(header)  # remembered when the header is a whole frame
                if frame is None:
                    return None
            frames.append(frame)
        number = np.empty(1 << 16, np.intp)
        number[kinds] = np.arange(len(kinds))
        return frames, number[pairs]

    def _run_rows(self, run: BatchRun, frames: list[Frame], code: Any) -> Any:
        """Indexes of the run's records the projection keeps."""
        import numpy as np

        keep = self.keep
        if self.heads:
            extra = keep or frozenset()
            kept = np.array([frame[0] in extra for frame in frames], bool)[code] | (run.record_index == 0)
        elif keep is not None:
            kept = np.array([frame[0] in keep for frame in frames], bool)[code]
        else:
            return np.arange(len(code))
        return np.nonzero(kept)[0]

    def _run_batch(
        self,
        run: BatchRun,
        frames: list[Frame],
        rows: Any,
        code: Any,
        texts: list[str | None] | None,
        typed: dict[int, Typed],
        errors: dict[int, tuple[str, str]],
    ) -> pyarrow.RecordBatch:
        """The record batch of the run's records at ``rows``; ``code`` indexes ``frames`` (one past
        the end: a record without a type)."""
        import numpy as np
        import pyarrow as pa

        batch = run.batch_of_record[rows]
        types = pa.array([frame[0] for frame in frames] + [None], pa.string())
        versions = np.array([frame[1] for frame in frames] + [0], np.int32)[code]
        untyped = code == len(frames)
        columns: dict[str, Any] = {
            "batch_position": run.positions[batch],
            "batch_base_offset": run.base_offsets[batch],
            "batch_last_offset": run.last_offsets[batch],
            "batch_crc": run.crcs[batch],
            "record_index": run.record_index[rows].astype(np.int32),
            "offset": run.offsets[rows],
            "leader_epoch": run.leader_epochs[batch].astype(np.int32),
            "timestamp": run.timestamps[rows],
            "is_control": np.zeros(len(rows), bool),
            "record_type": types.take(pa.array(code)),
            "record_version": pa.array(versions, mask=untyped if untyped.any() else None),
            "record_json": texts,
        }
        if self.with_value:
            columns["record_value"] = _binary(np.frombuffer(run.buf, np.uint8), run.value_start[rows],
                                              run.value_end[rows])
        return self._assemble(len(rows), columns, typed, errors)

    def _add_run_batches(self, run: BatchRun) -> None:
        """Add a run's batches one by one, as the walk would have given them."""
        for at, size, position in zip(run.batch_at.tolist(), run.sizes.tolist(), run.positions.tolist(),
                                      strict=True):
            self.add_batch(decode_batch_at(run.buf, at, at + size, position, self.split.path))

    def flush(self) -> pyarrow.RecordBatch:
        """The gathered rows as one record batch; the builder starts empty again."""
        columns: dict[str, Any] = dict(self.dense)
        columns["record_json"] = self.json
        columns["record_value"] = self.value
        batch = self._assemble(self.count, columns, self.typed, self.errors)
        self._reset()
        return batch

    def _assemble(
        self, count: int, columns: dict[str, Any], typed: dict[int, Typed], errors: dict[int, tuple[str, str]]
    ) -> pyarrow.RecordBatch:
        """A record batch of ``count`` rows from the dense ``columns`` (lists, numpy or Arrow arrays)
        and the sparse typed fields and errors by row; columns the projection does not read are
        null."""
        import pyarrow as pa

        schema = arrow_schema()
        wanted = self.projection.columns
        arrays: list[Any] = []
        for field in schema:
            name = field.name
            values = columns.get(name)
            if name not in wanted or name in self.head:
                arrays.append(self._constant(field, count))
            elif isinstance(values, pa.Array):
                arrays.append(values)
            elif values is not None:
                arrays.append(pa.array(values, field.type))
            elif name in TYPED_COLUMNS:
                arrays.append(self._sparse(field, TYPED_COLUMNS.index(name), typed, count))
            else:
                arrays.append(self._sparse(field, ("error_kind", "error").index(name), errors, count))
        return pa.RecordBatch.from_arrays(arrays, schema=schema)

    def _constant(self, field: Any, count: int) -> Any:
        """``count`` rows of a column whose rows are all alike: the split's own field, or null."""
        import pyarrow as pa

        name = field.name
        array = self.constant.get(name)
        if array is None or len(array) < count:
            value = self.head.get(name) if name in self.projection.columns else None
            array = pa.repeat(pa.scalar(value, field.type), max(count, ARROW_BATCH_ROWS))
            self.constant[name] = array
        return array if len(array) == count else array.slice(0, count)

    def _sparse(self, field: Any, at: int, rows: dict[int, tuple[Any, ...]], count: int) -> Any:
        """``count`` rows, field ``at`` of ``rows`` (by row) where there is one, else null.

        A few rows (a run's FeatureLevelRecords) are put between slices of the null column: a
        ``take`` of them costs eight times as much."""
        if not rows:
            return self._constant(field, count)
        import numpy as np
        import pyarrow as pa

        order = sorted(rows)
        values = pa.array([rows[row][at] for row in order], field.type)
        if len(order) <= SPARSE_PIECES:
            nulls = self._constant(field, count)
            pieces: list[Any] = []
            after = 0
            for i, row in enumerate(order):
                pieces += (nulls.slice(0, row - after), values.slice(i, 1))
                after = row + 1
            pieces.append(nulls.slice(0, count - after))
            return pa.concat_arrays(pieces)
        index = np.full(count, -1, np.int32)
        index[order] = np.arange(len(order), dtype=np.int32)
        return values.take(pa.array(index, mask=index < 0))


def _binary(u8: Any, start: Any, end: Any) -> Any:
    """The byte ranges ``[start, end)`` of ``u8``, in order and not overlapping, as an Arrow binary
    array, gathered in one copy through a mask of the bytes they cover."""
    import numpy as np
    import pyarrow as pa

    lengths = end - start
    offsets = np.zeros(len(lengths) + 1, np.int32)
    np.cumsum(lengths, out=offsets[1:])
    if not len(lengths):
        return pa.array([], pa.binary())
    spans = np.empty(2 * len(lengths), np.int64)
    spans[0::2] = start - np.concatenate(([start[0]], end[:-1]))  # the bytes before each range
    spans[1::2] = lengths
    covered = np.repeat(np.tile(np.array([False, True]), len(lengths)), spans)
    data = u8[start[0] : end[-1]][covered]
    return pa.Array.from_buffers(pa.binary(), len(lengths), [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def read_arrow(
    split: FileSplit, projection: Projection, options: StorageOptions = NO_OPTIONS
) -> Iterator[pyarrow.RecordBatch]:
    """The rows of ``split`` that ``projection`` keeps, as Arrow record batches."""
    yield from ArrowBuilder(split, projection).add(walk_split(split, options, runs=True))
