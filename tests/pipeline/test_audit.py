"""The audit tables and report against what the scenario driver did on a real quorum, and the
audit's ways of bringing rows back: the errors beyond what it collects, and how many Spark jobs it
runs."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from kafka_admin_kraft.pipeline import audit as audit_module
from kafka_admin_kraft.pipeline.audit import run_audit
from kafka_admin_kraft.records import MetadataLogDir, decode_control_batch
from kafka_admin_kraft.records.control import ControlRecordType
from pipeline.conftest import DAMAGED_CLUSTER, Audit, Damaged

MOST_JOBS = 26
"""Spark jobs of an audit of the damaged directory: 22 with PySpark 4.3, whose adaptive execution
runs every shuffle, broadcast and cached result as a job of its own. More means that a step that
needs one collect came back as several jobs (each costs 0.1 s to 1 s however small)."""


def _captured_voters_record(captured: Path) -> tuple[int, int, list[int]]:
    """(offset, epoch, voter ids) of the last VotersRecord in the captured copy, read with the
    project's log reader independently of the pipeline."""
    found: tuple[int, int, list[int]] | None = None
    for batch in MetadataLogDir(captured / "__cluster_metadata-0").read_log():
        if not batch.is_control:
            continue
        for record, decoded in zip(batch.records, decode_control_batch(batch), strict=True):
            if decoded.type_id == ControlRecordType.KRAFT_VOTERS:
                found = (
                    record.offset,
                    batch.partition_leader_epoch,
                    [v.voter_id for v in decoded.value.voters],
                )  # type: ignore[union-attr]
    assert found is not None
    return found


def test_voter_set_history(audit: Audit) -> None:
    truth = audit.truth
    rows = audit.rows("voter_sets")
    committed = [frozenset(r["voter_ids"]) for r in rows if r["status"] == "committed"]
    assert committed == truth.committed_voter_sets
    for row in rows:
        if row["status"] == "committed":
            assert len(row["voter_directory_ids"]) == len(row["voter_ids"])
            assert {truth.directory_ids[i] for i in row["voter_ids"]} == set(row["voter_directory_ids"])
    truncated = [r for r in rows if r["status"] == "truncated"]
    assert len(truncated) == 1
    lost = truncated[0]
    offset, epoch, ids = _captured_voters_record(truth.captured_dir)
    assert frozenset(lost["voter_ids"]) == truth.truncated_voter_set == frozenset(ids)
    assert (lost["offset"], lost["leader_epoch"]) == (offset, epoch)
    assert lost["leader_epoch"] == truth.truncated_epoch
    assert lost["held_by"] == [truth.truncated_leader]
    assert lost["added_ids"] == [4] and lost["removed_ids"] == []
    assert [r["added_ids"] for r in rows if r["status"] == "committed"] == [[1], [2], [3]]


def test_leader_epochs(audit: Audit) -> None:
    rows = audit.rows("leader_epochs")
    assert [(r["leader_epoch"], r["leader_id"]) for r in rows] == audit.truth.leaders
    assert all(r["status"] == "committed" for r in rows)
    for current, following in zip(rows, rows[1:], strict=False):
        assert current["end_timestamp"] == following["start_timestamp"]
        assert current["duration_ms"] == following["start_timestamp"] - current["start_timestamp"] >= 0
    assert rows[-1]["duration_ms"] >= 0
    # the epoch of the truncated record's leader was granted by the leader itself only once it was alone
    assert all(r["leader_id"] in r["granting_voter_ids"] for r in rows)


def test_feature_level_changes(audit: Audit) -> None:
    rows = [r for r in audit.rows("feature_changes") if r["feature"] == "metadata.version"]
    assert [r["level"] for r in rows] == audit.truth.metadata_versions
    assert rows[0]["source"] == "bootstrap" and rows[0]["status"] == "bootstrap"
    assert all(r["status"] == "committed" and r["source"] == "log" for r in rows[1:])
    assert [r["previous_level"] for r in rows[1:]] == audit.truth.metadata_versions[:-1]
    offsets = [r["offset"] for r in rows[1:]]
    assert offsets == sorted(offsets)


def test_divergence_and_replicas(audit: Audit) -> None:
    truth = audit.truth
    result = audit.result
    cluster = audit.rows("clusters")[0]
    final_epoch, final_leader = truth.leaders[-1]
    assert (cluster["highest_epoch"], cluster["leader_id"], cluster["reference_node_id"]) == (
        final_epoch,
        final_leader,
        final_leader,
    )
    assert cluster["reference_is_leader"]
    last_upgrade = max(r["offset"] for r in audit.rows("feature_changes") if r["offset"] is not None)
    assert cluster["committed_end"] > last_upgrade
    diverging = [r for r in result.divergence if r["cluster_id"] == truth.cluster_id]
    offset, epoch, _ = _captured_voters_record(truth.captured_dir)
    # the divergence starts at the truncated VotersRecord; the isolated leader may have appended more
    # batches in its epoch (such as a NoOpRecord) before it was stopped
    found = [(Path(r["log_dir"]), r["base_offset"], r["leader_epoch"]) for r in diverging]
    assert found[0] == (truth.captured_dir, offset, epoch)
    assert all(where == truth.captured_dir and base > offset and at == epoch for where, base, at in found[1:])
    assert all(r["reference_epoch"] > epoch for r in diverging)
    replicas = {r["log_dir"]: r for r in audit.rows("replicas")}
    for node_id, log_dir in enumerate(truth.log_dirs, start=1):
        replica = replicas[str(log_dir)]
        assert replica["node_id"] == node_id and replica["agrees"], replica
        assert replica["quorum_leader_epoch"] == final_epoch
        assert replica["is_reference"] == (node_id == final_leader)
    captured = replicas[str(truth.captured_dir)]
    assert not captured["agrees"] and captured["first_divergent_offset"] == offset
    assert captured["quorum_leader_epoch"] == truth.truncated_epoch


def test_anomalies_and_errors_of_a_damaged_directory(audit: Audit) -> None:
    damaged = audit.damaged
    duplicates = audit.rows("duplicate_voter_ids", DAMAGED_CLUSTER)
    assert [(r["voter_id"], r["occurrences"], len(set(r["directory_ids"]))) for r in duplicates] == [
        (damaged.duplicate_voter, 2, 2)
    ]
    missing = audit.rows("voters_without_directory_id", DAMAGED_CLUSTER)
    assert [r["voter_id"] for r in missing] == [damaged.voter_without_directory]
    errors = [e for e in audit.result.errors if e["log_dir"] == str(damaged.log_dir)]
    assert sorted((e["error_kind"], e["batch_position"]) for e in errors) == sorted(
        [("corrupt", damaged.corrupt_position), ("torn_tail", damaged.torn_position)]
    )
    corrupt = next(e for e in errors if e["error_kind"] == "corrupt")
    assert "CRC" in corrupt["error"] and corrupt["file"] == str(damaged.segment)
    # reading went on after the corrupt batch: the records behind it are in the tables
    features = audit.rows("feature_changes", DAMAGED_CLUSTER)
    assert [(r["offset"], r["level"]) for r in features if r["source"] == "log"] == [
        (damaged.after_corrupt_offset, 27)
    ]
    replica = next(r for r in audit.rows("replicas", DAMAGED_CLUSTER))
    assert replica["torn_tail"] and replica["errors"] == 2


def test_parquet_tables_match(audit: Audit) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    for name, rows in audit.result.tables.items():
        table = pq.read_table(audit.output / name)
        assert table.num_rows == len(rows), name
    voters = pq.read_table(audit.output / "voter_sets").to_pylist()
    assert sorted(r["status"] for r in voters if r["cluster_id"] == audit.truth.cluster_id) == sorted(
        r["status"] for r in audit.rows("voter_sets")
    )
    assert pq.read_table(audit.output / "divergence").num_rows == audit.result.divergence_count
    assert pq.read_table(audit.output / "errors").num_rows == audit.result.error_count == 2


def test_reports(audit: Audit, tmp_path: Path) -> None:
    from kafka_admin_kraft.pipeline.report import write_report

    markdown = write_report(audit.result, tmp_path / "md", "md").read_text()
    assert "![leaders and voter sets](timeline.svg)" in markdown
    rows = [line.split("|") for line in markdown.splitlines() if line.startswith("|")]
    assert "truncated" in [cell.strip() for row in rows for cell in row]
    svg = ET.parse(tmp_path / "md" / "timeline.svg").getroot()
    titles = [t.text or "" for t in svg.iter("{http://www.w3.org/2000/svg}title")]
    truth = audit.truth
    for epoch, leader in truth.leaders:
        assert any(t.startswith(f"epoch {epoch} leader {leader} ") for t in titles)
    assert sum("(truncated)" in t and "{1,2,3,4}" in t for t in titles) == 1
    page = write_report(audit.result, tmp_path / "html", "html").read_text()
    assert page.count("<svg") == 1 and "Voter-set history" in page


def test_errors_beyond_those_collected_are_counted_and_the_tables_unchanged(
    spark: Any, damaged: Damaged, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tracker = spark.sparkContext.statusTracker()
    before = set(tracker.getJobIdsForGroup(None))
    whole = run_audit(spark, [str(damaged.log_dir)], os.fspath(tmp_path / "whole"))
    jobs = len(set(tracker.getJobIdsForGroup(None)) - before)
    assert jobs <= MOST_JOBS
    assert whole.error_count == len(whole.errors) == 2

    monkeypatch.setattr(audit_module, "ERRORS_COLLECTED", 1)
    capped = run_audit(spark, [str(damaged.log_dir)], os.fspath(tmp_path / "capped"))
    assert capped.error_count == 2 and capped.errors == whole.errors[:1]
    for name, rows in whole.tables.items():
        if name != "replicas":
            assert capped.tables[name] == rows, name
    replica = next(r for r in capped.tables["replicas"] if r["log_dir"] == str(damaged.log_dir))
    assert replica["errors"] == 1  # a directory's errors are counted among those collected
