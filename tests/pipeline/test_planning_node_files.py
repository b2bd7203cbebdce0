"""A missing or damaged meta.properties or quorum-state is a finding: one row of the errors table, counted
in the report, with the directory's ids unknown when meta.properties is damaged, and no control character
of a damaged file in the report or in any table."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kafka_admin_kraft.pipeline.planning import plan
from kafka_admin_kraft.pipeline.schema import COLUMN_INDEX
from pipeline.conftest import Damaged
from pipeline.row_oracle import columnar_rows
from pipeline.scenario import Truth

CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Control characters other than TAB and the line feed that ends a line."""
KIND = COLUMN_INDEX["error_kind"]
FILE = COLUMN_INDEX["file"]


def _quorum_state(directory: Path) -> Path:
    return directory / "__cluster_metadata-0" / "quorum-state"


def _garbage_quorum_state(directory: Path) -> None:
    _quorum_state(directory).write_bytes(b"\x00\x13garbage\x1b[2J{{")


def _quorum_state_not_utf8(directory: Path) -> None:
    _quorum_state(directory).write_bytes(b'{"leaderId":1,"leaderEpoch":\xff\xfe,"data_version":1}\n')


def _no_meta_properties(directory: Path) -> None:
    (directory / "meta.properties").unlink()


def _garbage_meta_properties(directory: Path) -> None:
    (directory / "meta.properties").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x10garbage\x00\xff")


def _nul_in_cluster_id(directory: Path) -> None:
    meta = directory / "meta.properties"
    meta.write_bytes(re.sub(rb"cluster\.id=.", b"cluster.id=\x00", meta.read_bytes()))


@dataclass(frozen=True)
class Case:
    node_id: int
    damage: Callable[[Path], None]
    file: str
    error_kind: str
    ids_known: bool


CASES = {
    "garbage-quorum-state": Case(1, _garbage_quorum_state, "__cluster_metadata-0/quorum-state",
                                 "unreadable_quorum_state", True),
    "quorum-state-not-utf8": Case(2, _quorum_state_not_utf8, "__cluster_metadata-0/quorum-state",
                                  "unreadable_quorum_state", True),
    "no-meta-properties": Case(3, _no_meta_properties, "meta.properties", "missing_meta_properties", False),
    "garbage-meta-properties": Case(4, _garbage_meta_properties, "meta.properties", "invalid_meta_properties",
                                    False),
    "nul-in-cluster-id": Case(1, _nul_in_cluster_id, "meta.properties", "invalid_meta_properties", False),
}


@dataclass
class NodeFileAudit:
    result: Any
    inputs: Path
    output: Path
    truth: Truth


@pytest.fixture(scope="module")
def node_file_audit(spark: Any, scenario: Truth, tmp_path_factory: pytest.TempPathFactory) -> NodeFileAudit:
    """One audit over copies of the scenario's node directories, each damaged in one way."""
    from kafka_admin_kraft.pipeline.audit import run_audit

    root = tmp_path_factory.mktemp("node-files")
    inputs = root / "inputs"
    for name, case in CASES.items():
        copy = inputs / name
        shutil.copytree(scenario.log_dirs[case.node_id - 1], copy)
        case.damage(copy)
    output = root / "audit"
    result = run_audit(spark, [str(inputs)], os.fspath(output), write_records=True)
    return NodeFileAudit(result, inputs, output, scenario)


@pytest.mark.parametrize("name", list(CASES))
def test_a_damaged_node_file_is_an_error_row(node_file_audit: NodeFileAudit, name: str) -> None:
    case = CASES[name]
    log_dir = node_file_audit.inputs / name
    rows = [e for e in node_file_audit.result.errors if e["log_dir"] == str(log_dir)]
    assert [(e["error_kind"], e["file"]) for e in rows] == [(case.error_kind, str(log_dir / case.file))]
    row = rows[0]
    assert row["batch_position"] is None and row["file_kind"] == Path(case.file).name
    assert row["error"].startswith(str(log_dir / case.file)) and not CONTROL.search(row["error"])
    expected_ids = (node_file_audit.truth.cluster_id, case.node_id) if case.ids_known else (None, None)
    assert (row["cluster_id"], row["node_id"]) == expected_ids
    replica = next(r for r in node_file_audit.result.tables["replicas"] if r["log_dir"] == str(log_dir))
    assert replica["errors"] == 1
    assert replica["cluster_id"] == (node_file_audit.truth.cluster_id if case.ids_known else "")


def test_damaged_node_files_are_counted_and_escaped_in_the_reports(
    node_file_audit: NodeFileAudit, tmp_path: Path
) -> None:
    from kafka_admin_kraft.pipeline.report import write_report

    result = node_file_audit.result
    assert result.error_count == len(CASES)
    markdown = write_report(result, tmp_path / "md", "md").read_text(encoding="utf-8")
    assert f"errors: {len(CASES)}." in markdown
    errors_section = markdown.split(f"## Errors ({len(CASES)})", 1)[1]
    assert sum(line.startswith("| ") for line in errors_section.splitlines()) == 1 + len(CASES)
    assert "\x00" not in markdown and not CONTROL.search(markdown)
    page = write_report(result, tmp_path / "html", "html").read_text(encoding="utf-8")
    assert "\x00" not in page and not CONTROL.search(page)
    assert sorted({e["error_kind"] for e in result.errors}) == sorted({c.error_kind for c in CASES.values()})


def test_no_table_holds_a_control_character(node_file_audit: NodeFileAudit) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    for table_dir in sorted(p for p in node_file_audit.output.iterdir() if p.is_dir()):
        table = pq.read_table(table_dir)
        for column in table.column_names:
            for value in table.column(column).to_pylist():
                texts = value if isinstance(value, list) else [value]
                bad = [text for text in texts if isinstance(text, str) and CONTROL.search(text)]
                assert not bad, (table_dir.name, column, bad)
    assert pq.read_table(node_file_audit.output / "errors").num_rows == len(CASES)


def test_a_bare_partition_directory_is_no_finding_but_its_parent_is(damaged: Damaged, tmp_path: Path) -> None:
    partition = tmp_path / "backup" / "__cluster_metadata-0"
    shutil.copytree(damaged.segment.parent, partition)

    def node_file_errors(path: Path) -> list[tuple[str, str]]:
        rows = [row for split in plan([str(path)]).splits for row in columnar_rows(split)]
        return [(r[KIND], r[FILE]) for r in rows if r[KIND] not in (None, "corrupt", "torn_tail")]

    assert node_file_errors(partition) == []
    assert node_file_errors(partition.parent) == [
        ("missing_meta_properties", str(partition.parent / "meta.properties"))
    ]
