"""The committed metadata image and the work spread over polls that keeps it: loading a snapshot
into it, applying committed batches to it, and writing it out as a snapshot (Kafka's
``MetadataLoader`` and ``SnapshotGenerator`` around the raft client)."""

from __future__ import annotations

import logging
from collections.abc import Iterator

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.records import RecordBatch, SnapshotId, control_batch, data_batch
from kafka_admin_kraft.records.batch import BATCH_HEADER_SIZE
from kafka_admin_kraft.records.builder import MAX_BATCH_SIZE, data_record_size

from .api import ReplicatedLog, SnapshotWriter
from .image import SnapshotImage, batch_size
from .voters import VoterSetHistory, voters_record

log = logging.getLogger(__name__)


class ImageWork:
    """The image of everything committed, brought up to the high watermark a budget at a time.

    One piece of work runs at a time (``_work``, a generator yielding the bytes it read): loading a
    snapshot into a new image, or writing the image out as a snapshot (the image stays still until
    it is done). ``poll`` does a budget's worth each poll; ``snapshot_now`` runs everything to the
    end at once.
    """

    def __init__(self, log: ReplicatedLog, history: VoterSetHistory, node_id: int) -> None:
        self._log = log
        self._history = history
        self._node_id = node_id
        self.image = SnapshotImage()
        self._work: Iterator[int] | None = None
        self._work_writer: SnapshotWriter | None = None
        self._reload_image = False
        """The log was replaced by a fetched snapshot: the image must be loaded from it again."""
        self._image_pending = False
        """The last poll ran out of its budget with committed batches still to apply."""

    @property
    def has_work(self) -> bool:
        """Work is left for the next poll, which is then due at once."""
        return self._image_pending or self._work is not None

    def reload(self) -> None:
        """The log was replaced by a fetched snapshot: load the image from it again."""
        self._reload_image = True

    def poll(self, committed: int, budget: int, snapshot_interval_bytes: int, now_ms: int) -> None:
        """Advance the image towards ``committed`` by at most ``budget`` bytes (work in progress
        first); start a snapshot when ``snapshot_interval_bytes`` were applied since the last one."""
        self._image_pending = self._advance(committed, budget)
        if (not self._image_pending and self._work is None
                and self.image.bytes_applied >= snapshot_interval_bytes
                and not self.image.in_transaction and self._start_snapshot(now_ms) is not None):
            self._run(budget)

    def snapshot_now(self, committed: int, now_ms: int) -> SnapshotId | None:
        """Finish the work in progress, apply every committed batch, then write a snapshot to the end;
        None if there is nothing new."""
        self._advance(committed, None)
        snapshot_id = self._start_snapshot(now_ms)
        if snapshot_id is not None:
            self._run(None)
        return snapshot_id

    def _advance(self, committed: int, budget: int | None) -> bool:
        """Bring the image up to ``committed``, reading at most ``budget`` bytes of batches
        (None: all); True when work is left for the next poll.

        1. Work in progress (a snapshot being loaded into the image or written out) continues first.
        2. The log starts past the image, or was replaced by a fetched snapshot: load the latest
           snapshot into a new image, which replaces the current one once complete.
        3. Apply the committed batches (wholly below ``committed``) from the image's end.
        """
        # 1. Work in progress.
        used = self._run(budget)
        if self._work is not None:
            return True
        # 2. A snapshot to load.
        image = self.image
        start = self._log.start_offset()
        if self._reload_image or image.next_offset < start:
            snapshot = self._log.latest_snapshot()
            if snapshot is None or snapshot.end_offset < start:
                return False
            self._reload_image = False
            self._work = self._load_steps(snapshot)
            used += self._run(None if budget is None else max(budget - used, 1))
            if self._work is not None:
                return True
            image = self.image
        # 3. Committed batches.
        if committed <= image.next_offset:
            return False
        batches = iter(self._log.batches(image.next_offset))
        try:
            for batch in batches:
                if batch.next_offset > committed or batch.base_offset != image.next_offset:
                    break
                image.apply_batch(batch)
                used += batch_size(batch)
                if budget is not None and used >= budget:
                    return image.next_offset < committed
        finally:
            close = getattr(batches, "close", None)
            if callable(close):
                close()
        return False

    def _start_snapshot(self, now_ms: int) -> SnapshotId | None:
        """Start writing the image out as a snapshot (the image stays still until it is done).

        1. Nothing new since the latest snapshot, or a metadata transaction open at that point: None.
        2. Snapshot id = (image end offset, epoch of its last batch).
        3. Batches (``_snapshot_steps``): a control batch with SnapshotHeaderRecord (+ KRaftVersionRecord
           and VotersRecord as of the snapshot when kraft.version >= 1), the image as data batches, a
           control batch with SnapshotFooterRecord; offsets from 0, every batch at the snapshot epoch.
        """
        image = self.image
        end = image.next_offset
        latest = self._log.latest_snapshot()
        # 1. Something new to write.
        if (self._work is not None or self._reload_image or end <= 0 or image.in_transaction
                or (latest is not None and latest.end_offset >= end)):
            return None
        # 2. Its id.
        snapshot_id = SnapshotId(end, image.last_epoch)
        writer = self._log.create_snapshot(snapshot_id)
        if writer is None:
            return None
        # 3. Its batches, over the next polls.
        self._work = self._snapshot_steps(writer, now_ms)
        self._work_writer = writer
        return snapshot_id

    def _snapshot_steps(self, writer: SnapshotWriter, now_ms: int) -> Iterator[int]:
        """Write the image one batch at a time (yielding the bytes of each), then freeze it; the
        image's kept records move onto the new snapshot before retention drops what lies below it
        (segments, older snapshots) and old voter-set history is compacted."""
        image = self.image
        snapshot_id = writer.snapshot_id
        epoch = snapshot_id.epoch
        end = snapshot_id.end_offset
        header: list[Struct] = [messages.SnapshotHeaderRecord(
            version=0, last_contained_log_timestamp=max(image.last_timestamp, 0))]
        kraft_version = self._history.kraft_version_at(end - 1)
        if kraft_version >= 1:
            header.append(messages.KRaftVersionRecord(version=0, k_raft_version=kraft_version))
            header.append(voters_record(self._history.voter_set_at(end - 1)))
        writer.append(control_batch(0, epoch, now_ms, header))
        yield 1
        offset = len(header)
        first_other = offset + image.keyed_count()
        values: list[bytes] = []
        size = BATCH_HEADER_SIZE
        for value in image.values(self._read_source):
            needed = data_record_size(len(values), len(value))
            if values and size + needed > MAX_BATCH_SIZE:
                writer.append(data_batch(offset, epoch, now_ms, values))
                offset += len(values)
                values = []
                yield size
                size = BATCH_HEADER_SIZE
                needed = data_record_size(0, len(value))
            values.append(value)
            size += needed
        if values:
            writer.append(data_batch(offset, epoch, now_ms, values))
            offset += len(values)
        writer.append(control_batch(offset, epoch, now_ms, [messages.SnapshotFooterRecord(version=0)]))
        writer.freeze()
        image.rebase(snapshot_id, first_other)
        self._log.delete_before_snapshot()
        self._history.truncate_old_entries(self._log.start_offset())
        image.bytes_applied = 0
        log.info("node %d wrote snapshot %s", self._node_id, snapshot_id)
        yield size

    def _read_source(self, source: SnapshotId | None, first_offset: int) -> Iterator[RecordBatch]:
        if source is None:
            return iter(self._log.batches(first_offset))
        return iter(self._log.snapshot_batches(source))

    def _load_steps(self, snapshot: SnapshotId) -> Iterator[int]:
        """Load ``snapshot`` into a new image one batch at a time; it replaces the image at the end."""
        image = SnapshotImage()
        image.start_snapshot(snapshot)
        batches = iter(self._log.snapshot_batches(snapshot))
        try:
            for batch in batches:
                image.apply_snapshot_batch(batch)
                yield batch_size(batch)
        finally:
            close = getattr(batches, "close", None)
            if callable(close):
                close()
        image.finish_snapshot()
        self.image = image

    def _run(self, budget: int | None) -> int:
        """Run the work in progress until ``budget`` bytes were read (None: to the end)."""
        used = 0
        while self._work is not None:
            try:
                used += next(self._work)
            except StopIteration:
                self._work = None
                self._work_writer = None
                break
            except BaseException:
                self.abort()
                raise
            if budget is not None and used >= budget:
                break
        return used

    def abort(self) -> None:
        """Stop the work in progress; an unfinished snapshot is dropped."""
        work, writer = self._work, self._work_writer
        self._work = None
        self._work_writer = None
        if work is not None:
            close = getattr(work, "close", None)
            if callable(close):
                close()
        if writer is not None:
            writer.abort()
