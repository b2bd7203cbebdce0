"""Session fixtures: the real quorum history (built once), a damaged log directory, a local Spark
session (``local[2]``, two shuffle partitions) and one audit run over all of it; and a plain segment
of many small batches for the tests of splitting and reading."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import ZERO_UUID, Uuid
from kafka_admin_kraft.records import SegmentWriter, control_batch, metadata_batches
from kafka_admin_kraft.records.metadata import ApiMessageAndVersion
from kafka_admin_kraft.storage import MetaProperties, write_meta_properties
from pipeline.scenario import Truth, build

DAMAGED_CLUSTER = "DamagedClusterAAAAAAAA"


@dataclass
class Damaged:
    """A log directory written with the record writers, then damaged: what was put where."""

    log_dir: Path
    segment: Path
    corrupt_position: int
    after_corrupt_offset: int
    torn_position: int
    duplicate_voter: int
    voter_without_directory: int
    record_count: int
    """Records in the undamaged batches."""


def _voters(entries: list[tuple[int, Uuid]]) -> messages.VotersRecord:
    V = messages.VotersRecord
    return V(
        voters=[
            V.Voter(
                voter_id=i,
                voter_directory_id=d,
                endpoints=[V.Endpoint(name="CONTROLLER", host="127.0.0.1", port=9000 + i)],
                k_raft_version_feature=V.KRaftVersionFeature(
                    min_supported_version=0, max_supported_version=1
                ),
            )
            for i, d in entries
        ]
    )


def write_damaged(root: Path) -> Damaged:
    log_dir = root / "damaged" / "metadata"
    partition = log_dir / "__cluster_metadata-0"
    partition.mkdir(parents=True)
    write_meta_properties(
        log_dir, MetaProperties(version=1, cluster_id=DAMAGED_CLUSTER, node_id=7, directory_id=Uuid.random())
    )
    L = messages.LeaderChangeMessage
    now = 1_700_000_000_000
    count = 0
    with SegmentWriter(partition, 0) as writer:
        first = control_batch(
            0,
            1,
            now,
            [
                L(
                    leader_id=7,
                    voters=[L.Voter(voter_id=7), L.Voter(voter_id=8)],
                    granting_voters=[L.Voter(voter_id=7)],
                ),
                _voters([(7, Uuid.random()), (8, ZERO_UUID), (7, Uuid.random())]),
            ],
        )
        writer.append(first)
        count += 2
        offset = 2
        for index in range(5):
            for batch in metadata_batches(
                offset, 1, now + index, [ApiMessageAndVersion(messages.NoOpRecord(), 0)]
            ):
                writer.append(batch)
                offset = batch.next_offset
                count += 1
        bad = metadata_batches(offset, 1, now + 10, [ApiMessageAndVersion(messages.NoOpRecord(), 0)] * 3)[0]
        corrupt_position = writer.append(bad)
        offset = bad.next_offset
        feature = messages.FeatureLevelRecord(name="metadata.version", feature_level=27)
        after = metadata_batches(offset, 1, now + 11, [ApiMessageAndVersion(feature, 0)])[0]
        writer.append(after)
        count += 1
        last = control_batch(
            after.next_offset, 1, now + 12, [_voters([(7, Uuid.random()), (8, Uuid.random())])]
        )
        writer.append(last)
        count += 1
        torn_position = writer.size
        segment = writer.files.log
    with open(segment, "r+b") as stream:
        stream.seek(corrupt_position + 70)
        byte = stream.read(1)
        stream.seek(corrupt_position + 70)
        stream.write(bytes([byte[0] ^ 0xFF]))
    with open(segment, "ab") as stream:
        stream.write(b"\x00" * 8 + b"\x00\x00\x01\x00" + b"\x00" * 10)  # a batch that ends after 22 bytes
    return Damaged(log_dir, segment, corrupt_position, after.base_offset, torn_position, 7, 8, count)


def write_topic_segment(directory: Path, batches: int = 600) -> Path:
    """A segment of ``batches`` metadata batches of five TopicRecords each, the epoch rising every 100."""
    directory.mkdir(parents=True)
    offset = 0
    with SegmentWriter(directory, 0) as writer:
        for index in range(batches):
            records = [
                ApiMessageAndVersion(messages.TopicRecord(name=f"topic-{index}-{n}"), 0) for n in range(5)
            ]
            for batch in metadata_batches(offset, 1 + index // 100, 1_700_000_000_000 + index, records):
                writer.append(batch)
                offset = batch.next_offset
        return writer.files.log


@pytest.fixture(scope="session")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Truth:
    return build(tmp_path_factory.mktemp("scenario"))


@pytest.fixture(scope="session")
def damaged(tmp_path_factory: pytest.TempPathFactory) -> Damaged:
    return write_damaged(tmp_path_factory.mktemp("damaged"))


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    pytest.importorskip("pyspark")
    from kafka_admin_kraft.pipeline.session import JavaNotFoundError, find_java, spark_session

    try:
        find_java()
    except JavaNotFoundError as exc:
        pytest.skip(str(exc))
    session = spark_session(
        "local[2]",
        conf={
            "spark.sql.shuffle.partitions": "2",
            "spark.ui.enabled": "false",
            "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
            "spark.sql.adaptive.coalescePartitions.enabled": "true",
        },
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@dataclass
class Audit:
    result: Any
    output: Path
    truth: Truth
    damaged: Damaged

    def rows(self, table: str, cluster: str | None = None) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = self.result.tables[table]
        wanted = self.truth.cluster_id if cluster is None else cluster
        return [r for r in rows if r["cluster_id"] == wanted]


@pytest.fixture(scope="session")
def audit(spark: Any, scenario: Truth, damaged: Damaged, tmp_path_factory: pytest.TempPathFactory) -> Audit:
    from kafka_admin_kraft.pipeline.audit import run_audit

    output = tmp_path_factory.mktemp("audit")
    paths = [str(scenario.root / "cluster"), str(scenario.captured_dir), str(damaged.log_dir)]
    result = run_audit(spark, paths, os.fspath(output))
    return Audit(result, output, scenario, damaged)
