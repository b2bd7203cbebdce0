"""The columnar reader against the one-tuple-at-a-time oracle: the same rows on every log the tests
build (a real quorum's history, a damaged directory, a log of odd and undecodable records, random
damage), with every column, with fewer columns, and with record types pushed down."""

from __future__ import annotations

import dataclasses
import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_admin_kraft.pipeline.audit import AUDIT_COLUMNS
from kafka_admin_kraft.pipeline.columnar import SPARSE_PIECES, Projection
from kafka_admin_kraft.pipeline.planning import FileSplit, LogDirInfo, plan, split_file
from kafka_admin_kraft.pipeline.schema import AUDITED_TYPES, COLUMN_INDEX, COLUMN_NAMES, UNDECODABLE
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.records import SegmentWriter, control_batch, metadata_batches
from kafka_admin_kraft.records.batch import Record, RecordBatch
from kafka_admin_kraft.records.builder import data_batch
from kafka_admin_kraft.records.control import ControlRecord, UnknownControlValue
from kafka_admin_kraft.records.metadata import ApiMessageAndVersion, encode_metadata_record
from kafka_admin_kraft.storage import MetaProperties, write_meta_properties
from pipeline.conftest import Damaged
from pipeline.row_oracle import Row, columnar_rows, oracle_rows
from pipeline.scenario import Truth

TYPE = COLUMN_INDEX["record_type"]
KIND = COLUMN_INDEX["error_kind"]
NOW = 1_700_000_000_000


def _framed(message: Any, version: int = 0) -> bytes:
    return encode_metadata_record(ApiMessageAndVersion(message, version))


@dataclasses.dataclass
class OddLog:
    log_dir: Path
    segment: Path
    broken_partition_offset: int
    broken_feature_offset: int


def write_odd_log(root: Path) -> OddLog:
    """Records the happy path never meets: undecodable bodies and frames, null values, unknown types
    and versions, a frame in long varint form, empty and unknown control records, an empty batch."""
    log_dir = root / "odd"
    partition = log_dir / "__cluster_metadata-0"
    partition.mkdir(parents=True)
    write_meta_properties(
        log_dir,
        MetaProperties(version=1, cluster_id="OddClusterAAAAAAAAAAAA", node_id=3, directory_id=Uuid.random()),
    )
    topic = Uuid.random()
    partition_record = _framed(
        messages.PartitionRecord(partition_id=0, topic_id=topic, replicas=[1, 2], isr=[1], leader=1)
    )
    feature = _framed(messages.FeatureLevelRecord(name="metadata.version", feature_level=21))
    with SegmentWriter(partition, 0) as writer:
        good = [
            ApiMessageAndVersion(messages.TopicRecord(name="t", topic_id=topic), 0),
            ApiMessageAndVersion(messages.FeatureLevelRecord(name="kraft.version", feature_level=1), 0),
            ApiMessageAndVersion(messages.TopicRecord(name="tópico", topic_id=Uuid.random()), 0),
            ApiMessageAndVersion(messages.NoOpRecord(), 0),
        ]
        offset = 0
        for batch in metadata_batches(offset, 1, NOW, good):
            writer.append(batch)
            offset = batch.next_offset
        odd_values = [
            partition_record,
            partition_record[:-5],  # the body ends early: undecodable
            b"\x02\x03\x00\x00",  # frame version 2
            b"\x01\x63\x00\x00",  # api key 99: kept raw
            b"\x01\x02\x7f\x00",  # TopicRecord version 127: kept raw
            feature[:-2],  # a typed record type whose body ends early
            b"\x01\x83\x00" + partition_record[2:],  # api key 3 written as a two-byte varint
            partition_record + b"\x00",  # a byte after the body
            b"\x01",  # the frame ends after its version
        ]
        writer.append(data_batch(offset, 1, NOW + 1, odd_values))
        broken_partition = offset + 1
        broken_feature = offset + 5
        offset += len(odd_values)
        null_value = RecordBatch(
            base_offset=offset,
            records=[Record(offset, NOW + 2, None, None), Record(offset + 1, NOW + 2, None, feature)],
            partition_leader_epoch=1,
            last_offset_delta=1,
            base_timestamp=NOW + 2,
            max_timestamp=NOW + 2,
        )
        writer.append(null_value)
        offset += 2
        L = messages.LeaderChangeMessage
        controls = control_batch(
            offset,
            2,
            NOW + 3,
            [
                L(leader_id=1, voters=[L.Voter(voter_id=1)], granting_voters=[L.Voter(voter_id=1)]),
                messages.KRaftVersionRecord(k_raft_version=1),
                ControlRecord(77, UnknownControlValue(77, b"\x00\x01")),
            ],
        )
        writer.append(controls)
        offset = controls.next_offset
        broken_control = RecordBatch(
            base_offset=offset,
            records=[Record(offset, NOW + 4, struct.pack(">hh", 0, 2), b"\x00\x00\x00")],
            partition_leader_epoch=2,
            attributes=controls.attributes,
            base_timestamp=NOW + 4,
            max_timestamp=NOW + 4,
        )
        writer.append(broken_control)
        offset += 1
        writer.append(
            RecordBatch(base_offset=offset, records=[], partition_leader_epoch=2, base_timestamp=NOW + 5,
                        max_timestamp=NOW + 5)
        )
        for batch in metadata_batches(offset + 1, 2, NOW + 6, good):
            writer.append(batch)
        segment = writer.files.log
    orphan = root / "no-meta-properties" / "__cluster_metadata-0"
    orphan.mkdir(parents=True)
    (orphan / segment.name).write_bytes(segment.read_bytes())
    return OddLog(log_dir, segment, broken_partition, broken_feature)


@pytest.fixture(scope="module")
def odd(tmp_path_factory: pytest.TempPathFactory) -> OddLog:
    return write_odd_log(tmp_path_factory.mktemp("odd"))


def _splits(scenario: Truth, damaged: Damaged, odd: OddLog, split_bytes: int) -> list[FileSplit]:
    roots = [scenario.root / "cluster", scenario.captured_dir, damaged.log_dir, odd.log_dir.parent]
    return plan([str(root) for root in roots], split_bytes=split_bytes).splits


@pytest.mark.parametrize("split_bytes", [4096, 64 << 20])
def test_every_row_is_the_oracle_row(
    scenario: Truth, damaged: Damaged, odd: OddLog, split_bytes: int
) -> None:
    splits = _splits(scenario, damaged, odd, split_bytes)
    kinds = {split.kind for split in splits}
    assert {"segment", "snapshot", "bootstrap", "meta.properties"} <= kinds
    total = 0
    for split in splits:
        expected = oracle_rows(split)
        assert columnar_rows(split) == expected, split
        total += len(expected)
    assert total > 200


def test_the_odd_log_has_what_it_is_for(odd: OddLog) -> None:
    rows = [row for split in plan([str(odd.log_dir)]).splits for row in oracle_rows(split)]
    by_kind: dict[Any, int] = {}
    for row in rows:
        by_kind[row[KIND]] = by_kind.get(row[KIND], 0) + 1
    assert by_kind[UNDECODABLE] == 7
    types = {row[TYPE] for row in rows}
    assert {"ApiKey99", "TopicRecord", "PartitionRecord", "ControlType77", "LeaderChangeMessage"} <= types
    assert any(row[COLUMN_INDEX["record_index"]] is None and row[KIND] is None for row in rows)  # empty batch


def _only(row: Row, columns: frozenset[str]) -> Row:
    return tuple(value if name in columns else None for name, value in zip(COLUMN_NAMES, row, strict=True))


PROJECTIONS = [
    frozenset(AUDIT_COLUMNS),
    frozenset(COLUMN_NAMES) - {"record_json"},
    frozenset({"offset", "record_type", "error_kind"}),
    frozenset({"record_value"}),
]


@pytest.mark.parametrize("columns", PROJECTIONS, ids=["audit", "no-json", "three", "value"])
def test_fewer_columns_give_the_same_values_in_those_columns(
    scenario: Truth, damaged: Damaged, columns: frozenset[str]
) -> None:
    for split in _splits_without_odd(scenario, damaged):
        expected = [_only(row, columns) for row in oracle_rows(split)]
        assert columnar_rows(split, Projection(columns)) == expected, split


def _splits_without_odd(scenario: Truth, damaged: Damaged) -> list[FileSplit]:
    return plan([str(scenario.root / "cluster"), str(damaged.log_dir)], split_bytes=8192).splits


def test_a_value_not_decoded_is_not_checked_beyond_its_frame(odd: OddLog) -> None:
    """Without record_json, only the typed record types are decoded: a broken PartitionRecord body is
    a PartitionRecord row, a broken FeatureLevelRecord body still an undecodable row."""
    splits = plan([str(odd.log_dir)]).splits
    columns = frozenset(COLUMN_NAMES) - {"record_json"}
    at = COLUMN_INDEX["offset"]
    rows = {row[at]: row for split in splits for row in columnar_rows(split, Projection(columns))}
    oracle = {row[at]: row for split in splits for row in oracle_rows(split)}
    partition = rows[odd.broken_partition_offset]
    assert oracle[odd.broken_partition_offset][KIND] == UNDECODABLE
    assert (partition[TYPE], partition[KIND]) == ("PartitionRecord", None)
    assert rows[odd.broken_feature_offset][KIND] == UNDECODABLE
    differing = [offset for offset in oracle if _only(oracle[offset], columns) != rows.get(offset)]
    assert differing and all(oracle[offset][KIND] == UNDECODABLE for offset in differing)


TYPE_SETS = [
    frozenset(AUDITED_TYPES),
    frozenset({"PartitionRecord"}),
    frozenset({"TopicRecord", "ApiKey99", "ControlType77"}),
    frozenset({"NoSuchRecord"}),
]


@pytest.mark.parametrize("kept", TYPE_SETS, ids=["audited", "partition", "mixed", "none"])
def test_pushed_down_record_types_keep_exactly_the_rows_the_filter_keeps(
    scenario: Truth, damaged: Damaged, odd: OddLog, kept: frozenset[str]
) -> None:
    for split in _splits(scenario, damaged, odd, 8192):
        expected = [row for row in oracle_rows(split) if row[TYPE] in kept]
        assert columnar_rows(split, Projection(frozenset(COLUMN_NAMES), kept)) == expected, split


def test_an_unknown_column_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="no column bogus"):
        Projection(frozenset({"offset", "bogus"}))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    damage=st.lists(st.tuples(st.integers(min_value=0), st.integers(min_value=0, max_value=255)), max_size=4),
    cut=st.integers(min_value=0),
    newest=st.booleans(),
)
def test_random_damage_gives_the_oracle_rows(
    odd: OddLog,
    tmp_path_factory: pytest.TempPathFactory,
    damage: list[tuple[int, int]],
    cut: int,
    newest: bool,
) -> None:
    data = bytearray(odd.segment.read_bytes())
    for position, byte in damage:
        data[position % len(data)] = byte
    data = data[: len(data) - cut % 200]
    target = tmp_path_factory.mktemp("damage") / "00000000000000000000.log"
    target.write_bytes(bytes(data))
    for split in split_file(target, LogDirInfo(str(target.parent)), split_bytes=512, newest_segment=newest):
        assert columnar_rows(split) == oracle_rows(split)
        kept = frozenset({"PartitionRecord", "LeaderChangeMessage"})
        expected = [row for row in oracle_rows(split) if row[TYPE] in kept]
        assert columnar_rows(split, Projection(frozenset(COLUMN_NAMES), kept)) == expected


@pytest.mark.parametrize("extra", [None, frozenset(AUDITED_TYPES), frozenset({"TopicRecord"})])
def test_batch_rows_are_the_first_of_each_batch_errors_and_the_types_asked_for(
    scenario: Truth, damaged: Damaged, extra: frozenset[str] | None
) -> None:
    columns = frozenset(AUDIT_COLUMNS)
    index = COLUMN_INDEX["record_index"]
    for split in _splits_without_odd(scenario, damaged):
        expected = [
            _only(row, columns)
            for row in oracle_rows(split)
            if row[index] in (0, None) or row[KIND] is not None or (extra is not None and row[TYPE] in extra)
        ]
        assert columnar_rows(split, Projection(columns, extra, batch_rows=True)) == expected, split


@pytest.mark.parametrize("features", [3, SPARSE_PIECES, SPARSE_PIECES + 1, 60])
def test_a_run_with_few_or_many_typed_records_gives_the_oracle_rows(tmp_path: Path, features: int) -> None:
    """A run's typed columns are put together two ways, by how many rows have them."""
    partition = tmp_path / "__cluster_metadata-0"
    partition.mkdir()
    topic = Uuid.random()
    P = messages.PartitionRecord
    records = [
        ApiMessageAndVersion(P(partition_id=i, topic_id=topic, replicas=[1], isr=[1]), 0) for i in range(300)
    ]
    for i in range(features):
        feature = messages.FeatureLevelRecord(name=f"feature.{i}", feature_level=i)
        records.insert(1 + i * 300 // features, ApiMessageAndVersion(feature, 0))
    with SegmentWriter(partition, 0) as writer:
        for batch in metadata_batches(0, 1, NOW, records, max_batch_size=1024):
            writer.append(batch)
        segment = writer.files.log
    (split,) = split_file(segment, LogDirInfo(str(tmp_path)))
    expected = oracle_rows(split)
    assert sum(row[COLUMN_INDEX["feature_name"]] is not None for row in expected) == features
    assert columnar_rows(split) == expected
    without_json = Projection(frozenset(COLUMN_NAMES) - {"record_json"})
    assert columnar_rows(split, without_json) == [_only(row, without_json.columns) for row in expected]
