"""Loading an image the fast way (ordinary batches framed, runs of PartitionChangeRecords summed) gives
the image a straightforward replay gives, record by record, on varied generated logs: transactions
committed, aborted and left open, snapshots followed by the log, offsets in the middle of batches,
records the loader skips and batches of every shape."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kafka_admin_kraft.image import MetadataImage, diff_images, load_image, load_images, replay
from kafka_admin_kraft.image import frames as frames_module
from kafka_admin_kraft.image import source as source_module
from kafka_admin_kraft.image.frames import FramedBatch
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.records import (
    Compression,
    Header,
    RawMetadataRecord,
    RecordBatch,
    SegmentWriter,
    control_batch,
    make_attributes,
    metadata_batches,
)
from unit.image.image_testlib import (
    Entry,
    T,
    broker,
    clear_elr,
    config,
    feature,
    partition,
    partition_change,
    record,
    remove_topic,
    topic,
    write_snapshot,
)

TOPICS = [(f"topic-{n}", Uuid.from_ints(3, n)) for n in range(4)]
DIRECTORIES = [Uuid.from_ints(8, n) for n in range(3)]


class _Log:
    """A generated log: batches at consecutive offsets, and what it created (for drawing changes)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.batches: list[RecordBatch] = []
        self.offset = 0
        self.topics: dict[int, int] = {}
        """Topic index -> partitions, for the topics created so far."""
        self.state: list[Entry] = []

    def add(self, entries: list[Any], *, control: bool = False) -> RecordBatch:
        if control:
            batch = control_batch(self.offset, 1, T + self.offset, entries)
        else:
            made = metadata_batches(self.offset, 1, T + self.offset, entries)
            assert len(made) == 1
            batch = made[0]
        self.batches.append(batch)
        self.offset = batch.next_offset
        return batch

    def change(self) -> RawMetadataRecord:
        rng = self.rng
        index = rng.choice(list(self.topics) or [0])
        if rng.random() < 0.03:
            index = 3  # maybe a topic that does not exist (yet, or any more)
        version = rng.choice((0, 1, 2, 2, 2))
        pick: Callable[[list[list[int]]], list[int] | None] = lambda options: (  # noqa: E731
            rng.choice(options) if rng.random() < 0.4 else None)
        return partition_change(
            rng.randrange(self.topics.get(index, 2) + (rng.random() < 0.02)), topic=TOPICS[index][1],
            isr=pick([[1, 2, 3], [1, 2], [2]]), leader=rng.choice((-2, -2, 1, 2, 3)),
            replicas=pick([[1, 2, 3]]) if rng.random() < 0.2 else None,
            elr=pick([[3], []]) if version == 2 else None, recovery=rng.choice((-1, -1, -1, 1, 0)),
            directories=(rng.sample(DIRECTORIES, 3) if rng.random() < 0.1 else None) if version else None,
            version=version)

    def create_topic(self, index: int) -> list[Entry]:
        partitions = self.rng.randrange(1, 4)
        self.topics[index] = partitions
        name, topic_id = TOPICS[index]
        return [topic(name, topic_id),
                *(partition(p, [1, 2, 3], topic_id=topic_id) for p in range(partitions))]

    def other(self) -> Entry:
        rng = self.rng
        roll = rng.random()
        if roll < 0.25:
            return record(messages.NoOpRecord())
        if roll < 0.4:
            return config(2, rng.choice(TOPICS)[0], "retention.ms", rng.choice(("1", "2", None)))
        if roll < 0.55:
            return record(messages.BrokerRegistrationChangeRecord(
                broker_id=rng.choice((1, 2, 9)), broker_epoch=10, fenced=rng.choice((1, -1))), 2)
        if roll < 0.65:
            return clear_elr(rng.choice((TOPICS[0][0], "", "nothing")))
        if roll < 0.75:
            return RawMetadataRecord(rng.choice((99, 5)), rng.choice((0, 9)), b"\x00\x01")  # skipped
        if roll < 0.85:
            broken = bytes(partition_change(0, topic=TOPICS[0][1], isr=[1]).body)
            return RawMetadataRecord(5, 2, broken[:-2])  # does not decode
        return feature("group.version", rng.choice((0, 1)))


def _generate(seed: int) -> _Log:
    rng = random.Random(seed)
    log = _Log(rng)
    log.add([messages.LeaderChangeMessage(version=0, leader_id=1)], control=True)
    log.add([feature("metadata.version", 33), broker(1), broker(2)])
    log.add(log.create_topic(0))
    transaction = False
    for _ in range(rng.randrange(20, 80)):
        roll = rng.random()
        if roll < 0.45:
            size = rng.randrange(1, 12) if rng.random() < 0.9 else rng.randrange(60, 100)  # deltas of 2 bytes
            log.add([log.change() for _ in range(size)])
        elif roll < 0.6:
            entries: list[Entry] = [log.change() for _ in range(rng.randrange(1, 5))]
            for _ in range(rng.randrange(1, 3)):
                entries.insert(rng.randrange(len(entries) + 1), log.other())
            log.add(entries)
        elif roll < 0.7:
            log.add([log.other()])
        elif roll < 0.75:
            index = rng.randrange(4)
            if index in log.topics and rng.random() < 0.5:
                del log.topics[index]
                log.add([remove_topic(TOPICS[index][1])])
            else:
                log.add(log.create_topic(index))
        elif roll < 0.82:
            if transaction:
                kind = rng.choice((messages.EndTransactionRecord(), messages.AbortTransactionRecord()))
                log.add([record(kind)])
            else:
                log.add([record(messages.BeginTransactionRecord(name="t"))])
            transaction = not transaction
        elif roll < 0.86:
            log.add([messages.LeaderChangeMessage(version=0, leader_id=2)], control=True)
        else:
            _odd_batch(log)
    return log


def _odd_batch(log: _Log) -> None:
    """A batch of changes the fast path does not frame: compressed, keyed, with headers, a null value,
    or offsets with a gap."""
    batch = log.add([log.change() for _ in range(3)])
    records = batch.records
    kind = log.rng.randrange(5)
    if kind == 0:
        batch = batch._replace(attributes=make_attributes(compression=Compression.GZIP))
    elif kind == 1:
        batch = batch._replace(records=[records[0]._replace(key=b"k"), *records[1:]])
    elif kind == 2:
        batch = batch._replace(records=[*records[:2], records[2]._replace(headers=(Header("h", b"v"),))])
    elif kind == 3:
        batch = batch._replace(records=[records[0]._replace(value=None), *records[1:]])
    else:
        batch = batch._replace(records=[records[0], records[2]])  # offsets base and base + 2
    log.batches[-1] = batch


def _write(log: _Log, directory: Path, *, segments: int) -> None:
    cuts = sorted(log.rng.sample(range(1, len(log.batches)), segments - 1))
    for start, end in zip([0, *cuts], [*cuts, len(log.batches)], strict=True):
        writer = SegmentWriter(directory, log.batches[start].base_offset)
        for batch in log.batches[start:end]:
            writer.append(batch)
        writer.close()


def _straightforward(monkeypatch: pytest.MonkeyPatch, path: Path, **options: Any) -> MetadataImage:
    """The image of a replay that applies every record in turn: no batch is framed."""
    with monkeypatch.context() as patch:
        patch.setattr(frames_module, "frame_batch", lambda buf, at, end: None)
        return load_image(path, **options)


@pytest.fixture
def framed(monkeypatch: pytest.MonkeyPatch) -> list[FramedBatch]:
    """Every batch the fast path framed, so that the test can show that it took it."""
    seen: list[FramedBatch] = []
    real = frames_module.frame_batch

    def counting(buf: bytes, at: int, end: int) -> FramedBatch | None:
        result = real(buf, at, end)
        if result is not None:
            seen.append(result)
        return result

    monkeypatch.setattr(frames_module, "frame_batch", counting)
    return seen


def _same(monkeypatch: pytest.MonkeyPatch, path: Path, **options: Any) -> MetadataImage:
    fast = load_image(path, **options)
    slow = _straightforward(monkeypatch, path, **options)
    assert fast == slow, options
    return fast


@pytest.mark.parametrize("seed", range(40))
def test_a_log_directory_loads_as_a_straightforward_replay_loads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, framed: list[FramedBatch], seed: int
) -> None:
    log = _generate(seed)
    if seed % 4 == 3:
        monkeypatch.setattr(replay, "RUN_LIMIT", 7)  # runs applied in pieces as they grow
    directory = tmp_path / "__cluster_metadata-0"
    directory.mkdir()
    _write(log, directory, segments=log.rng.choice((1, 2, 3)))
    end = log.offset - 1
    if seed % 2:  # a snapshot somewhere inside a batch, holding the topics and brokers of the log
        snapshot_end = log.rng.randrange(log.batches[3].base_offset, end)
        write_snapshot(directory, [[feature("metadata.version", 33), broker(1), broker(2)],
                                   log.create_topic(0), log.create_topic(1)], end_offset=snapshot_end)
    images = [_same(monkeypatch, directory)]
    for offset in sorted(log.rng.sample(range(end), 4)):
        images.append(_same(monkeypatch, directory, offset=offset))
    _same(monkeypatch, directory, committed=True)
    for segment in sorted(directory.glob("*.log")):
        _same(monkeypatch, segment)
        _same(monkeypatch, segment, offset=log.rng.randrange(end))
    assert diff_images(images[1], images[0]).text() == diff_images(
        _straightforward(monkeypatch, directory, offset=images[1].provenance.offset),
        _straightforward(monkeypatch, directory)).text()
    assert any(batch.only_changes for batch in framed) and any(not batch.only_changes for batch in framed)


@pytest.mark.parametrize("seed", range(40, 60))
def test_several_offsets_of_a_directory_load_in_one_pass_as_each_loads_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """Offsets inside batches, inside transactions, at a snapshot, repeated and out of order: each image is
    the one a load at that offset gives, and each segment is read once per snapshot the images start
    from (once when there is no snapshot)."""
    log = _generate(seed)
    directory = tmp_path / "__cluster_metadata-0"
    directory.mkdir()
    _write(log, directory, segments=log.rng.choice((1, 2, 3)))
    end = log.offset - 1
    snapshot_end = -1  # no snapshot: one pass
    if seed % 2:
        snapshot_end = log.rng.randrange(log.batches[3].base_offset, end)
        write_snapshot(directory, [[feature("metadata.version", 33), broker(1), broker(2)],
                                   log.create_topic(0), log.create_topic(1)], end_offset=snapshot_end)
    offsets: list[int | None] = [*log.rng.sample(range(-1, end + 1), 4), None]
    offsets.append(log.rng.choice(offsets))
    log.rng.shuffle(offsets)
    alone = [load_image(directory, offset=offset) for offset in offsets]
    opened: list[Path] = []
    real_open = source_module._open

    def counting(path: Path) -> Any:
        opened.append(path)
        return real_open(path)

    monkeypatch.setattr(source_module, "_open", counting)
    together = load_images(directory, offsets)
    assert together == alone, offsets
    passes = len({offset is None or offset >= snapshot_end - 1 for offset in offsets})
    segments = sorted(directory.glob("*.log"))
    assert [opened.count(segment) for segment in segments] == [passes] * len(segments)
    first = together[0]
    for changed in (p for t in first.topics.values() for p in t.partitions.values()):
        changed.partition_epoch += 1000  # the images share no partition
    assert all(image == before for image, before in zip(together[1:], alone[1:], strict=True))
