"""Loading a metadata image from disk: a snapshot, a log segment, or a whole ``__cluster_metadata-0``
directory, at its end or at an offset.

* **One file** (a ``.checkpoint`` snapshot, the bootstrap snapshot, a ``.log`` segment) is read the
  way Kafka's metadata shell reads its ``--snapshot`` (``SnapshotFileReader``): every data batch is
  applied as a committed batch, in file order, and the image's provenance is that of the last data
  batch (its last offset, leader epoch and max timestamp). A snapshot without metadata records (the
  ``0000...-0000000000.checkpoint`` a dynamic quorum is formatted with) opens as an empty image,
  where Kafka's tool waits forever.
* **A directory** (the partition directory, or a log directory holding one) is read the way a node
  loads it at start-up: the latest snapshot (at or below ``offset`` when one is given), its
  provenance the snapshot's end offset - 1, epoch and header timestamp, then the log from the
  snapshot's end offset on.
* ``offset`` stops the image at that offset: records above it are not applied (inclusive, as the
  provenance names the last offset applied).

A running node's directory is read without its lock: the file list is taken once, every file is
opened before any is read (a segment that retention deletes afterwards stays readable through its
open descriptor; one deleted in between makes the listing start over), and each segment is read
only up to the size it had when opened, so a batch the node appends meanwhile is never half-read; a
batch torn by a crash ends the log as Kafka's recovery would end it.

Committed offsets. Kafka persists no high watermark (``quorum-state`` holds only the election
state), so one directory proves commitment only where the audit's rules
(:mod:`kafka_admin_kraft.pipeline.rules`) find it without the other replicas: every offset of a
snapshot is committed (Kafka snapshots only committed offsets), and when the voter set in force is
this node alone, every record on its disk is (its own flush is the majority). The image's
``committed_offset`` is the highest offset so proven; ``committed=True`` loads the image at that
offset instead of at the end of the log.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Final

from kafka_admin_kraft.image.frames import FramedBatch, FrameReader
from kafka_admin_kraft.image.model import MetadataImage, Provenance
from kafka_admin_kraft.image.replay import ImageBuilder
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.exceptions import DecodeError
from kafka_admin_kraft.records.batch import RecordBatch
from kafka_admin_kraft.records.control import ControlRecordType, decode_control_record
from kafka_admin_kraft.records.log_dir import METADATA_PARTITION_DIR
from kafka_admin_kraft.records.segment import list_segments
from kafka_admin_kraft.records.snapshot import SnapshotId, list_snapshots
from kafka_admin_kraft.storage.errors import StorageFormatError
from kafka_admin_kraft.storage.meta_properties import read_meta_properties

OPEN_TRANSACTION: Final = "a metadata transaction is still open at the end: its records are not applied"
LISTING_ATTEMPTS: Final = 3
"""Times the directory is listed again when a file vanishes between listing and opening."""


class ImageError(Exception):
    """An input that cannot be loaded; the message is one line naming the input and the cause."""


def _batches(stream: BinaryIO, path: Path, size: int,
             builder: ImageBuilder) -> Iterator[RecordBatch | FramedBatch]:
    """The whole batches of the first ``size`` bytes of an open file; a torn tail is noted."""
    reader = FrameReader(stream, path, size)
    yield from reader
    if reader.torn_tail is not None:
        builder.note(f"{path}: the file ends inside a batch at position {reader.torn_tail.valid_end}; the "
                     f"rest is not read")


def _open(path: Path) -> tuple[BinaryIO, int]:
    stream = open(path, "rb", buffering=0)  # noqa: SIM115 - the caller's ExitStack closes it
    info = os.fstat(stream.fileno())
    if not stat.S_ISREG(info.st_mode):
        stream.close()
        raise ImageError(f"{path} is not a regular file")
    return stream, info.st_size


def _describe(exc: OSError, path: Path) -> str:
    return f"cannot read {path}: {exc.strerror or exc}"


@dataclass(frozen=True)
class _Layout:
    """What a partition directory held when listed: the snapshot to load and the segments after it."""

    snapshot: SnapshotId | None
    latest_snapshot: SnapshotId | None
    segments: list[tuple[int, Path]]


def partition_directory(path: Path) -> Path:
    """The ``__cluster_metadata-0`` directory ``path`` is or holds."""
    inner = path / METADATA_PARTITION_DIR
    if inner.is_dir():
        return inner
    names = os.listdir(path)
    if path.name.startswith("__cluster_metadata-") or any(
            name.endswith((".log", ".checkpoint")) for name in names):
        return path
    raise ImageError(f"{path} is neither a metadata log directory nor a log directory holding "
                     f"{METADATA_PARTITION_DIR} (it has no .log or .checkpoint files)")


def _base_snapshot(snapshots: list[SnapshotId], offset: int | None) -> SnapshotId | None:
    """The snapshot an image at ``offset`` starts from: the latest at or below it."""
    usable = [s for s in snapshots if offset is None or s.end_offset - 1 <= offset]
    return usable[-1] if usable else None


def _layout(directory: Path, offset: int | None) -> _Layout:
    snapshots = list_snapshots(directory)
    segments = [(segment.base_offset, segment.log) for segment in list_segments(directory)]
    return _Layout(_base_snapshot(snapshots, offset), snapshots[-1] if snapshots else None, segments)


def _snapshot_time(batch: RecordBatch | FramedBatch) -> int | None:
    """The SnapshotHeaderRecord's LastContainedLogTimestamp, when ``batch`` holds the header."""
    if isinstance(batch, FramedBatch) or not batch.is_control:
        return None
    for record in batch.records:
        try:
            control = decode_control_record(record)
        except DecodeError:
            return None
        if control.type_id == ControlRecordType.SNAPSHOT_HEADER and isinstance(
                control.value, messages.SnapshotHeaderRecord):
            return control.value.last_contained_log_timestamp
    return None


def _node_id(directory: Path) -> int | None:
    """The node id of the log directory holding ``directory``, from its meta.properties."""
    try:
        return read_meta_properties(directory.parent / "meta.properties").node_id
    except (OSError, StorageFormatError):
        return None


def _load_file(path: Path, offset: int | None) -> MetadataImage:
    builder = ImageBuilder(last_offset=offset)
    image = builder.image
    image.source = str(path)
    try:
        stream, size = _open(path)
    except OSError as exc:
        raise ImageError(_describe(exc, path)) from None
    with stream:
        for batch in _batches(stream, path, size, builder):
            if not builder.apply_batch(batch):
                break
    builder.flush()
    if path.name.endswith(".checkpoint"):
        image.committed_offset = image.provenance.offset  # a snapshot holds committed offsets only
    return image


def _load_directory(directory: Path, offsets: Sequence[int | None]) -> list[MetadataImage]:
    """The images at ``offsets`` (ascending, None last: the end), each with its committed offset."""
    for attempt in range(LISTING_ATTEMPTS):
        layout = _layout(directory, offsets[0])
        with ExitStack() as files:
            try:
                snapshot_file = None
                if layout.snapshot is not None:
                    snapshot_path = directory / layout.snapshot.file_name
                    snapshot_file = files.enter_context(_closing(_open(snapshot_path)))
                segment_files = [(base, path, files.enter_context(_closing(_open(path))))
                                 for base, path in layout.segments]
            except FileNotFoundError:
                if attempt + 1 < LISTING_ATTEMPTS:
                    continue  # retention or a snapshot deleted a file after the listing: list again
                raise ImageError(f"{directory}: files keep vanishing while it is read; try again") from None
            except OSError as exc:
                raise ImageError(_describe(exc, Path(exc.filename or directory))) from None
            images, log_end = _read_opened(directory, layout, snapshot_file, segment_files, offsets)
            for image in images:
                image.committed_offset = min(_committed(image, directory, layout, log_end),
                                             image.provenance.offset)
            return images
    raise AssertionError("unreachable")


class _closing:
    """An opened (stream, size) pair as a context manager that closes the stream."""

    def __init__(self, opened: tuple[BinaryIO, int]) -> None:
        self.opened = opened

    def __enter__(self) -> tuple[BinaryIO, int]:
        return self.opened

    def __exit__(self, *exc: object) -> None:
        self.opened[0].close()


def _read_opened(directory: Path, layout: _Layout, snapshot_file: tuple[BinaryIO, int] | None,
                 segment_files: list[tuple[int, Path, tuple[BinaryIO, int]]],
                 offsets: Sequence[int | None]) -> tuple[list[MetadataImage], int]:
    """The images at ``offsets`` (ascending, None last: the end) and the offset after the last batch read."""
    image = MetadataImage(source=str(directory))
    start = 0
    if layout.snapshot is not None and snapshot_file is not None:
        snapshot_path = directory / layout.snapshot.file_name
        builder = ImageBuilder(image)
        timestamp = -1
        for batch in _batches(snapshot_file[0], snapshot_path, snapshot_file[1], builder):
            header_time = _snapshot_time(batch)
            if header_time is not None:
                timestamp = header_time
            builder.apply_batch(batch)
        builder.flush()
        start = layout.snapshot.end_offset
        image.provenance = Provenance(start - 1, layout.snapshot.epoch, timestamp)
    first_log = segment_files[0][0] if segment_files else start
    if first_log > start and (offsets[-1] is None or offsets[-1] >= start):
        raise ImageError(f"{directory}: no snapshot or segment holds offsets {start} to {first_log - 1} (the "
                         f"log starts at {first_log}); load it at a later offset or from a snapshot")
    stops = _Stops(ImageBuilder(image), offsets)
    log_end = _replay_log(stops, segment_files, start)
    while stops.remaining:
        offset = stops.remaining[0]
        if offset is not None and offset >= log_end:
            raise ImageError(f"{directory}: the log ends at offset {log_end - 1}, there is no offset "
                             f"{offset}")
        stops.take(at_end=True)
    return stops.images, log_end


class _Stops:
    """The images at several offsets from one pass over a log: the builder stops at the first offset,
    the image there is copied, and the replay goes on to the next offset, the rest of the batch that
    straddled the stop included. One offset gives exactly what a load at that offset gives."""

    def __init__(self, builder: ImageBuilder, offsets: Sequence[int | None]) -> None:
        self.builder = builder
        self.remaining = list(offsets)
        self.images: list[MetadataImage] = []
        self._last: RecordBatch | FramedBatch | None = None
        builder.last_offset = self.remaining[0]

    def apply(self, batch: RecordBatch | FramedBatch) -> bool:
        """Apply ``batch``; False once it lies past the last offset."""
        while not self.builder.apply_batch(batch):
            self.take(at_end=False)
            if not self.remaining:
                return False
        self._last = batch
        return True

    def take(self, *, at_end: bool) -> None:
        """Keep the image at the current offset and go on to the next. ``at_end``: the log ended
        there, where a metadata transaction still open is noted (a load stopped early notes nothing)."""
        builder = self.builder
        stop = self.remaining.pop(0)
        builder.flush()
        image = builder.image.copy() if self.remaining else builder.image
        if at_end and builder.in_transaction:
            image.warnings.append(OPEN_TRANSACTION)
        self.images.append(image)
        if not self.remaining:
            return
        builder.last_offset = self.remaining[0]
        last = self._last
        if stop is not None and last is not None and last.next_offset > stop + 1:
            builder.apply_batch(_from(last, stop + 1))  # the rest of the batch the stop fell in


def _replay_log(stops: _Stops, segment_files: list[tuple[int, Path, tuple[BinaryIO, int]]],
                start: int) -> int:
    """Apply the segments' batches from offset ``start`` until past the last stop: the offset after
    the last batch read."""
    log_end = start
    previous_end = -1
    for _, path, (stream, size) in segment_files:
        for batch in _batches(stream, path, size, stops.builder):
            if batch.base_offset < previous_end:
                raise ImageError(f"{path}: the batch at offset {batch.base_offset} goes back below offset "
                                 f"{previous_end}, where the previous batch ended")
            previous_end = batch.next_offset
            if previous_end <= start:
                continue
            log_end = previous_end
            if batch.base_offset < start:
                batch = _from(batch, start)
            if not stops.apply(batch):
                return log_end
    return log_end


def _from(batch: RecordBatch | FramedBatch, start: int) -> RecordBatch | FramedBatch:
    """``batch`` without its records below ``start`` (they are in the snapshot already)."""
    if isinstance(batch, FramedBatch):
        return batch._replace(first_offset=start, values=batch.values[start - batch.first_offset:])
    return RecordBatch(base_offset=batch.base_offset, records=[r for r in batch.records if r.offset >= start],
                       partition_leader_epoch=batch.partition_leader_epoch, attributes=batch.attributes,
                       last_offset_delta=batch.last_offset_delta, base_timestamp=batch.base_timestamp,
                       max_timestamp=batch.max_timestamp)


def _committed(image: MetadataImage, directory: Path, layout: _Layout, log_end: int) -> int:
    """The highest offset of the directory proven committed (see the module docstring)."""
    bound = layout.latest_snapshot.end_offset - 1 if layout.latest_snapshot is not None else -1
    node_id = _node_id(directory)
    if image.voters is not None and node_id is not None and set(image.voters) == {node_id}:
        bound = max(bound, log_end - 1)
    return bound


def load_image(path: str | os.PathLike[str], *, offset: int | None = None,
               committed: bool = False) -> MetadataImage:
    """The image of a snapshot, a log segment or a metadata log directory (see the module docstring);
    raises :class:`ImageError` with one line naming the input and the cause."""
    return load_images(path, [offset], committed=committed)[0]


def load_images(path: str | os.PathLike[str], offsets: Sequence[int | None], *,
                committed: bool = False) -> list[MetadataImage]:
    """The images of one input at each of ``offsets`` (None: its end), in their order: what
    :func:`load_image` gives for each, a directory read once for all of them."""
    target = Path(path)
    for offset in offsets:
        if offset is not None and offset < -1:
            raise ImageError(f"offset {offset} is not an offset (use -1 for the empty image, or 0 and above)")
    try:
        info = os.stat(target)
    except FileNotFoundError:
        raise ImageError(f"{target}: no such file or directory") from None
    except OSError as exc:
        raise ImageError(_describe(exc, target)) from None
    try:
        if stat.S_ISDIR(info.st_mode):
            directory = partition_directory(target)
            if committed:
                return [_load_committed(directory, offset) for offset in offsets]
            return _load_offsets(directory, offsets)
        if not stat.S_ISREG(info.st_mode):
            raise ImageError(f"{target} is not a regular file or a directory")
        return [_load_committed_file(target, offset) if committed else _load_file(target, offset)
                for offset in offsets]
    except DecodeError as exc:
        raise ImageError(str(exc).replace("\n", " ")) from None
    except OSError as exc:
        raise ImageError(_describe(exc, Path(exc.filename or target))) from None


def _load_offsets(directory: Path, offsets: Sequence[int | None]) -> list[MetadataImage]:
    """The images at ``offsets``: those that start from the same snapshot in one pass, so that each is
    exactly the image a load at its offset gives."""
    snapshots = list_snapshots(directory)
    passes: dict[SnapshotId | None, list[int | None]] = {}
    for stop in sorted({o for o in offsets if o is not None}) + ([None] if None in offsets else []):
        passes.setdefault(_base_snapshot(snapshots, stop), []).append(stop)
    at = {stop: image for stops in passes.values()
          for stop, image in zip(stops, _load_directory(directory, stops), strict=True)}
    return [at[offset] if i == offsets.index(offset) else at[offset].copy()
            for i, offset in enumerate(offsets)]


def _load_committed(directory: Path, offset: int | None) -> MetadataImage:
    """The image at ``offset``, or at the last offset proven committed when that is lower."""
    [image] = _load_directory(directory, [offset])
    if image.committed_offset < image.provenance.offset:
        [image] = _load_directory(directory, [image.committed_offset])
        image.committed_offset = image.provenance.offset
    return image


def _load_committed_file(path: Path, offset: int | None) -> MetadataImage:
    image = _load_file(path, offset)
    if image.committed_offset < image.provenance.offset:
        image = _load_file(path, image.committed_offset)
    return image
