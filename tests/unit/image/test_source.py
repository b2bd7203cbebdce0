"""Loading images from files and directories: Kafka's shell semantics for one file, a node's start-up
for a directory, offsets, committed offsets, live directories and bad input."""

from __future__ import annotations

import contextlib
import os
import random
import time
from pathlib import Path

import pytest

from kafka_admin_kraft.image import ImageError, load_image, load_images
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.records import SegmentWriter, encode_batch
from kafka_admin_kraft.storage.meta_properties import MetaProperties, format_meta_properties
from unit.image.image_testlib import T, batches, broker, feature, voters, write_segment, write_snapshot
from unit.records.records_testlib import fix_crc, mutate

LEADER = messages.LeaderChangeMessage(version=0, leader_id=1)


def test_an_empty_snapshot_opens_as_an_empty_image(tmp_path: Path) -> None:
    path = write_snapshot(tmp_path, [], end_offset=0, epoch=0, kraft=[voters(1)])
    image = load_image(path)
    assert image.is_empty() and image.warnings == []
    assert image.provenance.text() == "offset -1, epoch -1, time 1969-12-31T23:59:59.999Z[UTC]"
    assert sorted(image.voters or {}) == [1]


def test_a_snapshot_file_reads_as_kafkas_shell_reads_it(tmp_path: Path) -> None:
    path = write_snapshot(tmp_path, [[feature("metadata.version", 33)], [broker(1)]], end_offset=500, epoch=7)
    image = load_image(path)
    assert image.metadata_version == 33 and list(image.brokers) == [1]
    # The provenance is the last data batch's: its offset in the file, its epoch and timestamp.
    assert (image.provenance.offset, image.provenance.epoch, image.provenance.time_ms) == (2, 7, T)
    assert image.committed_offset == 2  # a snapshot holds committed offsets only
    assert load_image(path, offset=1).brokers == {}


def test_a_segment_with_a_torn_tail(tmp_path: Path) -> None:
    path = write_segment(tmp_path, [[LEADER], [feature("metadata.version", 33)], [broker(1)]])
    with path.open("ab") as stream:
        stream.write(encode_batch(batches([[broker(2)]], base=3)[0])[:30])
    image = load_image(path)
    assert list(image.brokers) == [1] and image.committed_offset == -1
    assert "ends inside a batch" in image.warnings[0]


def _directory(tmp_path: Path, *, node_id: int = 1) -> Path:
    partition = tmp_path / "__cluster_metadata-0"
    partition.mkdir()
    (tmp_path / "meta.properties").write_text(
        format_meta_properties(
            MetaProperties(version=1, cluster_id="MkU3OEVBNTcwNTJENDM2Qg", node_id=node_id)
        )
    )
    return partition


def test_a_directory_loads_the_latest_snapshot_then_the_log(tmp_path: Path) -> None:
    partition = _directory(tmp_path)
    write_snapshot(partition, [[feature("metadata.version", 30)]], end_offset=3, epoch=1, time=T + 5)
    write_segment(
        partition,
        [
            [LEADER],
            [feature("metadata.version", 31)],
            [feature("group.version", 1)],
            [feature("metadata.version", 33)],
            [broker(1)],
        ],
    )
    image = load_image(tmp_path)  # a log directory holding the partition directory
    assert image.metadata_version == 33 and image.features == {} and list(image.brokers) == [1]
    assert image.provenance.offset == 4
    at_snapshot = load_image(partition, offset=2)
    assert at_snapshot.metadata_version == 30 and at_snapshot.provenance.offset == 2
    assert at_snapshot.provenance.time_ms == T + 5  # the snapshot header's timestamp
    assert load_image(partition, offset=3).metadata_version == 33
    assert load_image(partition, offset=1).metadata_version == 31  # no snapshot at or below 1: the log
    with pytest.raises(ImageError, match="the log ends at offset 4, there is no offset 9"):
        load_image(partition, offset=9)


def test_committed_offsets_of_a_directory(tmp_path: Path) -> None:
    partition = _directory(tmp_path)
    write_snapshot(partition, [[feature("metadata.version", 30)]], end_offset=2, epoch=1)
    write_segment(
        partition, [[voters(1, 2)], [feature("metadata.version", 31)], [feature("metadata.version", 33)]]
    )
    image = load_image(partition)
    assert image.provenance.offset == 2 and image.committed_offset == 1  # the snapshot's last offset
    assert load_image(partition, committed=True).metadata_version == 30


def test_a_single_voter_commits_its_whole_log(tmp_path: Path) -> None:
    partition = _directory(tmp_path, node_id=1)
    write_segment(partition, [[voters(1)], [feature("metadata.version", 33)]])
    assert load_image(partition).committed_offset == 1


def test_a_gap_between_snapshot_and_log_is_refused(tmp_path: Path) -> None:
    partition = _directory(tmp_path)
    writer = SegmentWriter(partition, 10)
    for batch in batches([[feature("metadata.version", 33)]], base=10):
        writer.append(batch)
    writer.close()
    with pytest.raises(
        ImageError, match=r"no snapshot or segment holds offsets 0 to 9 \(the log starts at 10\)"
    ):
        load_image(partition)
    assert load_image(partition, offset=-1).is_empty()  # before the gap: the empty image
    with pytest.raises(ImageError, match="no snapshot or segment holds offsets 0 to 9"):
        load_images(partition, [-1, None])  # one pass to the end crosses the gap


def test_a_live_segment_is_read_up_to_its_size_when_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    partition = _directory(tmp_path)
    log = write_segment(partition, [[feature("metadata.version", 33)]])
    appended = encode_batch(batches([[broker(1)]], base=1)[0])
    real_fstat = os.fstat

    def growing(fd: int) -> os.stat_result:
        result = real_fstat(fd)
        if os.readlink(f"/proc/self/fd/{fd}").endswith(".log") and log.stat().st_size == result.st_size:
            with log.open("ab") as stream:  # the node appends right after the tool opened the segment
                stream.write(appended)
        return result

    monkeypatch.setattr(os, "fstat", growing)
    assert load_image(partition).brokers == {}
    monkeypatch.undo()
    assert list(load_image(partition).brokers) == [1]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p / "missing", "no such file or directory"),
        (lambda p: p, "is neither a metadata log directory"),
    ],
)
def test_bad_paths_give_one_line(tmp_path: Path, make: object, message: str) -> None:
    assert callable(make)
    with pytest.raises(ImageError, match=message) as caught:
        load_image(make(tmp_path))
    assert "\n" not in str(caught.value)


def test_a_fifo_is_not_read(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(ImageError, match="is not a regular file or a directory"):
        load_image(fifo)


def test_a_corrupt_file_names_it(tmp_path: Path) -> None:
    path = write_snapshot(tmp_path, [[feature("metadata.version", 33)]])
    data = bytearray(path.read_bytes())
    data[80] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(ImageError, match=str(path)):
        load_image(path)


def test_fuzzed_inputs_raise_only_image_errors(tmp_path: Path) -> None:
    """Every mutation of a snapshot either loads (records it cannot apply become warnings) or fails
    with an ImageError, never another exception or a hang."""
    source = write_snapshot(
        tmp_path,
        [[feature("metadata.version", 33), broker(1)], [voters(1, 2)]],
        kraft=[messages.KRaftVersionRecord(version=0, k_raft_version=1)],
    )
    original = source.read_bytes()
    target = tmp_path / "fuzzed.checkpoint"
    rng = random.Random(20260101)
    deadline = time.monotonic() + 3.0
    runs = 0
    while time.monotonic() < deadline or runs < 500:
        mutant = mutate(rng, original)
        if rng.random() < 0.7 and len(mutant) >= 21:
            mutant = fix_crc(mutant)
        target.write_bytes(mutant)
        with contextlib.suppress(ImageError):
            load_image(target)
        runs += 1
    assert runs >= 500
