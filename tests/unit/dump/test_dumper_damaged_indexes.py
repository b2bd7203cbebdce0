"""Damaged offset and time indexes (and the segments they point into): the dump ends in Kafka's words
(a ``DumpError``, one line on stderr), never in a Python exception. A fixed list of bad entries, then
a seeded fuzz over every index-reading mode."""

from __future__ import annotations

import io
import random
import struct
from pathlib import Path

import pytest

from kafka_admin_kraft.dump.dumper import INT32_MAX, Dumper, DumpOptions
from unit.dump.dump_testlib import write_segment

MODES = {
    "plain": DumpOptions(),
    "verify-index-only": DumpOptions(verify_index_only=True),
    "index-sanity-check": DumpOptions(index_sanity_check=True),
    "cluster-metadata-decoder": DumpOptions(metadata_decoder=True, print_contents=True, deep_iteration=True),
    "json": DumpOptions(json=True),
}
FUZZ_RUNS = 150
"""Damaged files per run of the fuzz; each is dumped in every mode."""


def run(options: DumpOptions, *paths: Path) -> tuple[int, str, str]:
    out = io.BytesIO()
    errors: list[str] = []
    code = Dumper(options, out, errors.append).run([str(path) for path in paths])
    return code, out.getvalue().decode("utf-8", "replace"), "".join(errors)


@pytest.fixture
def segment(tmp_path: Path) -> Path:
    return write_segment(tmp_path / "__cluster_metadata-0")


def file_records(log: Path) -> str:
    """``FileRecords.toString`` of a file as ``DumpLogSegments`` opens it (``open(file, false)``)."""
    return f"FileRecords(size={log.stat().st_size}, file={log}, start=0, end={INT32_MAX})"


def set_position(index: Path, entry: int, position: int) -> None:
    data = bytearray(index.read_bytes())
    struct.pack_into(">I", data, entry * 8 + 4, position & 0xFFFFFFFF)
    index.write_bytes(bytes(data))


@pytest.mark.parametrize("mode", ["plain", "verify-index-only", "cluster-metadata-decoder", "json"])
def test_a_negative_position_is_kafkas_invalid_position(segment: Path, mode: str) -> None:
    """0xffffffff is position -1 to Kafka (a signed int), which ``FileRecords.slice`` refuses."""
    index = segment.with_suffix(".index")
    set_position(index, 0, 0xFFFFFFFF)
    code, _, err = run(MODES[mode], index)
    assert (code, err) == (1, f"Error: java.lang.IllegalArgumentException: Invalid position: -1 in read from "
                              f"{file_records(segment)}\n")


def test_a_position_past_the_end_is_kafkas_slice_error(segment: Path) -> None:
    index = segment.with_suffix(".index")
    past = segment.stat().st_size + 1
    set_position(index, 0, past)
    code, _, err = run(MODES["plain"], index)
    assert (code, err) == (1, f"Error: java.lang.IllegalArgumentException: Slice from position {past} "
                              f"exceeds end position of {file_records(segment)}\n")


def test_a_time_index_looked_up_through_a_negative_position(segment: Path) -> None:
    """The time index finds its batch through the offset index: the same refusal."""
    index = segment.with_suffix(".index")
    for entry in range(index.stat().st_size // 8):
        set_position(index, entry, -7)
    code, _, err = run(MODES["plain"], segment.with_suffix(".timeindex"))
    assert (code, err) == (1, f"Error: java.lang.IllegalArgumentException: Invalid position: -7 in read from "
                              f"{file_records(segment)}\n")


def test_a_negative_max_message_size_is_kafkas_invalid_size(segment: Path) -> None:
    code, _, err = run(DumpOptions(max_message_size=-1), segment.with_suffix(".index"))
    assert (code, err) == (1, f"Error: java.lang.IllegalArgumentException: Invalid size: -1 in read from "
                              f"{file_records(segment)}\n")


def test_a_negative_max_bytes_is_kafkas_invalid_size_of_the_file_as_named(segment: Path) -> None:
    code, _, err = run(DumpOptions(max_bytes=-1), segment)
    assert (code, err) == (1, f"Error: java.lang.IllegalArgumentException: Invalid size: -1 in read from "
                              f"{file_records(segment)}\n")


def _damage(rng: random.Random, data: bytes) -> bytes:
    """A few bytes overwritten (often with 0xff, the high bit of a position), or the file cut short."""
    damaged = bytearray(data)
    if not damaged or rng.random() < 0.1:
        return bytes(damaged[:rng.randrange(len(damaged) + 1)])
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(damaged))
        damaged[at] = 0xFF if rng.random() < 0.5 else rng.randrange(256)
    return bytes(damaged)


def test_fuzzed_indexes_and_segments_end_in_kafkas_words_never_a_python_exception(segment: Path) -> None:
    rng = random.Random(20250603)
    paths = [segment.with_suffix(".index"), segment.with_suffix(".timeindex"), segment]
    originals = [path.read_bytes() for path in paths]
    failures = 0
    for _ in range(FUZZ_RUNS):
        for path, original in zip(paths, originals, strict=True):
            path.write_bytes(_damage(rng, original) if rng.random() < 0.6 else original)
        for options in MODES.values():
            code, _, err = run(options, *paths)
            assert code in (0, 1)
            if code:
                failures += 1
                assert err.startswith("Error: ") and err.count("\n") == 1, err
    assert failures, "the fuzz reaches damage Kafka's tool dies on"
