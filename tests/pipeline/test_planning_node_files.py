"""A missing or damaged meta.properties or quorum-state is a finding: one row of the errors table, counted
in the report, with the directory's ids unknown when meta.properties is damaged, and no control character
of a damaged file in the report or in any table. So is a segment, snapshot or node file that is no regular
file (a directory, a named pipe that would block its reader for ever, a broken symbolic link...)."""

from __future__ import annotations

import os
import re
import shutil
import stat
import threading
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
FIRST_SEGMENT = "__cluster_metadata-0/00000000000000000000.log"
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
    file_kind: str | None = None
    """The row's file_kind: the file's name for node files."""


def _segment_is_a_named_pipe(directory: Path) -> None:
    segment = directory / FIRST_SEGMENT
    segment.unlink()
    os.mkfifo(segment)


def _segment_is_a_directory(directory: Path) -> None:
    segment = directory / FIRST_SEGMENT
    segment.unlink()
    segment.mkdir()


CASES = {
    "garbage-quorum-state": Case(1, _garbage_quorum_state, "__cluster_metadata-0/quorum-state",
                                 "unreadable_quorum_state", True),
    "quorum-state-not-utf8": Case(2, _quorum_state_not_utf8, "__cluster_metadata-0/quorum-state",
                                  "unreadable_quorum_state", True),
    "no-meta-properties": Case(3, _no_meta_properties, "meta.properties", "missing_meta_properties", False),
    "garbage-meta-properties": Case(4, _garbage_meta_properties, "meta.properties", "invalid_meta_properties",
                                    False),
    "nul-in-cluster-id": Case(1, _nul_in_cluster_id, "meta.properties", "invalid_meta_properties", False),
    "segment-is-a-named-pipe": Case(2, _segment_is_a_named_pipe, FIRST_SEGMENT, "unreadable_file", True,
                                    "segment"),
    "segment-is-a-directory": Case(3, _segment_is_a_directory, FIRST_SEGMENT, "unreadable_file", True,
                                   "segment"),
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
    assert row["batch_position"] is None and row["file_kind"] == (case.file_kind or Path(case.file).name)
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


def _replace(path: Path, what: str) -> None:
    """Put ``what`` where the file ``path`` was."""
    path.unlink()
    if what == "a directory":
        path.mkdir()
    elif what == "a named pipe":
        os.mkfifo(path)
    elif what == "a symbolic link to nothing":
        path.symlink_to(path.parent / "gone")
    elif what == "a loop of symbolic links":
        path.symlink_to(path.parent / "loop")
        (path.parent / "loop").symlink_to(path)
    elif what == "a socket":
        os.mknod(path, stat.S_IFSOCK | 0o600)
    else:
        raise AssertionError(what)


def _unreadable(path: Path, what: str) -> str:
    return f"{path}: cannot be read: it is {what}; the audit reads regular files only"


def _error_rows(paths: list[Path], seconds: float = 30) -> list[tuple[str, str, str]]:
    """(error_kind, file, error) of the node file and unreadable-file rows of an audit's planning and
    reading, which must end within ``seconds`` (opening a named pipe would wait for a writer)."""
    found: list[list[tuple[str, str, str]]] = []

    def read() -> None:
        rows = [row for split in plan([str(p) for p in paths]).splits for row in columnar_rows(split)]
        found.append([(r[KIND], r[FILE], r[COLUMN_INDEX["error"]]) for r in rows
                      if r[KIND] not in (None, "corrupt", "torn_tail")])

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    thread.join(seconds)
    assert found, "planning and reading did not end (or failed)"
    return found[0]


@pytest.mark.parametrize("what", ["a directory", "a named pipe", "a symbolic link to nothing",
                                  "a loop of symbolic links", "a socket"])
def test_a_segment_that_is_no_regular_file_is_an_error_row_not_a_hang(
        damaged: Damaged, tmp_path: Path, what: str) -> None:
    log_dir = tmp_path / "metadata"
    shutil.copytree(damaged.log_dir, log_dir)
    segment = log_dir / "__cluster_metadata-0" / damaged.segment.name
    _replace(segment, what)
    assert _error_rows([log_dir]) == [("unreadable_file", str(segment), _unreadable(segment, what))]


@pytest.mark.parametrize(("name", "kind"), [
    ("bootstrap.checkpoint", "unreadable_file"),
    ("meta.properties", "invalid_meta_properties"),
    ("__cluster_metadata-0/quorum-state", "unreadable_quorum_state"),
])
def test_a_node_file_that_is_a_named_pipe_is_an_error_row_not_a_hang(
        damaged: Damaged, tmp_path: Path, name: str, kind: str) -> None:
    log_dir = tmp_path / "metadata"
    shutil.copytree(damaged.log_dir, log_dir)
    pipe = log_dir / name
    pipe.touch()
    _replace(pipe, "a named pipe")
    assert _error_rows([log_dir]) == [(kind, str(pipe), _unreadable(pipe, "a named pipe"))]


def test_a_named_pipe_given_as_a_path_is_an_error_row_not_a_hang(tmp_path: Path) -> None:
    pipe = tmp_path / "00000000000000000000.log"
    os.mkfifo(pipe)
    assert _error_rows([pipe]) == [("unreadable_file", str(pipe), _unreadable(pipe, "a named pipe"))]
