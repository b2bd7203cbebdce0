"""``kafka-metadata-audit --image-diffs`` on a small fleet written with the record writers: each
cluster's first-to-last image diff is written next to the report, the HTML report links it with a
summary that counts its changes, a cluster whose log changed in a known way shows exactly those
changes, and a cluster whose images cannot be loaded gets a note instead of a traceback. Plus the file
names a cluster id gets, without Spark."""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from console_scripts import console_script
from pipeline.conftest import DAMAGED_CLUSTER, write_damaged
from unit.image.image_testlib import Entry, feature, partition, topic, voters, write_segment, write_snapshot

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.storage import MetaProperties, write_meta_properties
from kafka_admin_kraft_cli.kafka_metadata_audit import diff_file_names

CHANGED = "AuditDiffChangedAAAAAA"
"""Its oldest snapshot ends at offset 10; then voter 2 is added, metadata.version goes from 21 to 22
and topic ``after`` is created. Node 1 also has a later snapshot (end offset 12); node 2, a follower,
holds only the first two batches of the log."""
FROM_ZERO = "AuditDiffFromZeroBBBBB"
"""A log from offset 0 without a snapshot: its first image is the empty one."""
GAP = "AuditDiffGapCCCCCCCCCC"
"""A log that starts at offset 100 without a snapshot: no image can be rebuilt."""
ODD = "odd/../cluster id"
"""A cluster id that is no file name; its log ends in a torn batch, which loading the last image notes."""
BEFORE_ID = Uuid.from_ints(1, 1)
AFTER_ID = Uuid.from_ints(2, 2)
OTHER_ID = Uuid.from_ints(3, 3)
KRAFT = messages.KRaftVersionRecord(version=0, k_raft_version=1)


def _leader_change(leader: int) -> messages.LeaderChangeMessage:
    L = messages.LeaderChangeMessage
    return L(leader_id=leader, voters=[L.Voter(voter_id=leader)], granting_voters=[L.Voter(voter_id=leader)])


def _node_dir(cluster: str, node: int) -> str:
    return f"{re.sub(r'[^A-Za-z]', '_', cluster)}/node-{node}"


def _partition_dir(root: Path, cluster: str, node: int) -> Path:
    log_dir = root / _node_dir(cluster, node) / "metadata"
    (log_dir / "__cluster_metadata-0").mkdir(parents=True)
    write_meta_properties(log_dir, MetaProperties(version=1, cluster_id=cluster, node_id=node,
                                                  directory_id=Uuid.from_ints(0, 100 + node)))
    return log_dir / "__cluster_metadata-0"


def write_fleet(root: Path) -> None:
    state = [[feature("metadata.version", 21)],
             [topic("before", BEFORE_ID), partition(0, [1], topic_id=BEFORE_ID)]]
    log: list[list[Entry]] = [
        [_leader_change(1)],
        [voters(1, 2)],
        [feature("metadata.version", 22)],
        [topic("after", AFTER_ID), partition(0, [1, 2], topic_id=AFTER_ID),
         partition(1, [2, 1], topic_id=AFTER_ID)],
    ]
    for node, groups in ((1, log), (2, log[:2])):
        directory = _partition_dir(root, CHANGED, node)
        write_snapshot(directory, state, end_offset=10, epoch=1, kraft=[KRAFT, voters(1)])
        write_segment(directory, groups, base=10, epoch=2)
        if node == 1:
            write_snapshot(directory, state, end_offset=12, epoch=2, kraft=[KRAFT, voters(1, 2)])
    write_segment(_partition_dir(root, FROM_ZERO, 5),
                  [[_leader_change(5)], [feature("metadata.version", 21)], [topic("zero", OTHER_ID)]])
    write_segment(_partition_dir(root, GAP, 7), [[_leader_change(7)], [feature("metadata.version", 21)]],
                  base=100)
    segment = write_segment(_partition_dir(root, ODD, 9), [[_leader_change(9)], [topic("odd", OTHER_ID)]])
    with open(segment, "ab") as stream:
        stream.write(bytes(8) + (100).to_bytes(4, "big") + bytes(10))  # a batch of 112 bytes cut at 22
    write_damaged(root)


@dataclass
class Item:
    """One cluster's line of the report's image diffs."""

    cluster: str = ""
    hrefs: list[str] = field(default_factory=list)
    text: str = ""

    @property
    def summary(self) -> str:
        """The text after the cluster and its links."""
        return self.text.strip().removeprefix("(text, JSON)").removeprefix(": ")


class _Items(HTMLParser):
    """The list items below the report's "First and last images" heading."""

    def __init__(self) -> None:
        super().__init__()
        self.items: list[Item] = []
        self._section = False
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("h2", "h3"):
            self._in = tag
        elif self._section and tag == "li":
            self.items.append(Item())
        elif self._section and tag == "a" and self.items:
            self.items[-1].hrefs.append(dict(attrs)["href"] or "")
        elif self._section and tag == "b":
            self._in = "b"

    def handle_endtag(self, tag: str) -> None:
        if tag == "ul":
            self._section = False
        self._in = None

    def handle_data(self, data: str) -> None:
        if self._in in ("h2", "h3"):
            self._section = data == "First and last images"
        elif self._in == "b" and self.items:
            self.items[-1].cluster += data
        elif self._section and self.items:
            self.items[-1].text += data


@dataclass
class Run:
    report_dir: Path
    items: dict[str, Item]
    stdout: str
    stderr: str

    def diff(self, cluster: str) -> dict[str, Any]:
        document: dict[str, Any] = json.loads((self.report_dir / self.items[cluster].hrefs[1]).read_text())
        return document


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    pytest.importorskip("pyspark")
    from kafka_admin_kraft.pipeline.session import JavaNotFoundError, find_java

    try:
        find_java()
    except JavaNotFoundError as exc:
        pytest.skip(str(exc))
    root = tmp_path_factory.mktemp("fleet")
    write_fleet(root / "logs")
    result = subprocess.run(
        [console_script("kafka-metadata-audit"), "--master", "local[1]", "--conf", "spark.ui.enabled=false",
         "--conf", "spark.sql.shuffle.partitions=1", "--format", "html", "--image-diffs",
         "-o", str(root / "out"), str(root / "logs")],
        capture_output=True, text=True, timeout=300, cwd=root,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    parser = _Items()
    parser.feed((root / "out" / "report.html").read_text())
    return Run(root / "out", {item.cluster: item for item in parser.items}, result.stdout, result.stderr)


def test_every_cluster_is_listed_and_its_links_resolve_to_the_files_written(run: Run) -> None:
    assert sorted(run.items) == sorted([CHANGED, FROM_ZERO, GAP, ODD, DAMAGED_CLUSTER])
    diffs = re.escape(str(run.report_dir / "diffs"))
    assert re.search(rf"^Image diffs of 5 cluster\(s\) in [0-9.]+s: {diffs}$", run.stdout, re.MULTILINE)
    for cluster in (CHANGED, FROM_ZERO, ODD):
        hrefs = run.items[cluster].hrefs
        stem = diff_file_names([cluster])[cluster]
        assert hrefs == [f"diffs/{stem}.txt", f"diffs/{stem}.json"]
        for href in hrefs:
            target = (run.report_dir / href).resolve()
            assert target.parent == (run.report_dir / "diffs").resolve() and target.is_file()
    written = sorted(path.name for path in (run.report_dir / "diffs").iterdir())
    assert written == sorted(f"{diff_file_names([c])[c]}{suffix}" for c in (CHANGED, FROM_ZERO, ODD)
                             for suffix in (".txt", ".json"))


def test_the_summary_counts_the_changes_of_the_diff_per_area(run: Run) -> None:
    totals = {}
    for cluster in (CHANGED, FROM_ZERO, ODD):
        document = run.diff(cluster)
        counts = ", ".join(f"{area['title']} {len(area['changes'])}" for area in document["areas"])
        total = totals[cluster] = sum(len(area["changes"]) for area in document["areas"])
        changes = f"{total} change{'' if total == 1 else 's'}"
        warnings = [*document["a"]["warnings"], *document["b"]["warnings"]]
        noted = f"; {len(warnings)} warning loading the images" if warnings else ""
        summary = run.items[cluster].summary
        assert summary.endswith(f": {changes} ({counts}){noted}"), summary
        text = (run.report_dir / run.items[cluster].hrefs[0]).read_text()
        assert text.endswith(f"\n{changes}\n" + "".join(f"warning: {w}\n" for w in warnings))
        assert text.count("\n  + ") + text.count("\n  - ") + text.count("\n  ~ ") == total
    assert totals == {CHANGED: 5, FROM_ZERO: 2, ODD: 1}
    last = run.diff(ODD)["b"]
    segment = Path(last["source"]) / "00000000000000000000.log"
    assert last["warnings"] == [f"{segment}: the file ends inside a batch at position "
                                f"{segment.stat().st_size - 22}; the rest is not read"]


def test_the_changes_from_the_oldest_snapshot_to_the_end_of_the_reference_log_are_exactly_those_made(
        run: Run) -> None:
    document = run.diff(CHANGED)
    changes = [(area["area"], change["path"], change["change"]) for area in document["areas"]
               for change in area["changes"]]
    assert changes == [
        ("features", "/image/features/metadataVersion", "changed"),
        ("voters", "/kraft/voters/2", "added"),
        ("topics", "/image/topics/byName/after/0", "added"),
        ("topics", "/image/topics/byName/after/1", "added"),
        ("topics", "/image/topics/byName/after/id", "added"),
    ]
    assert (document["areas"][0]["changes"][0]["old"], document["areas"][0]["changes"][0]["new"]) == (
        "3.9-IV0", "4.0-IV0")
    leader_dir = f"{_node_dir(CHANGED, 1)}/metadata/__cluster_metadata-0"
    assert document["a"]["source"].endswith(leader_dir) and document["b"]["source"].endswith(leader_dir)
    assert document["a"]["provenance"]["offset"] == 9 and document["b"]["provenance"]["offset"] == 15
    assert run.items[CHANGED].summary.startswith(
        "offset 9 (the oldest snapshot) to offset 15 (the end of the log): ")


def test_a_log_from_offset_zero_is_compared_with_the_empty_image(run: Run) -> None:
    document = run.diff(FROM_ZERO)
    changes = [(change["path"], change["change"], change["old"], change["new"]) for area in document["areas"]
               for change in area["changes"]]
    assert changes == [("/image/features/metadataVersion", "changed", None, "3.9-IV0"),
                       ("/image/topics/byName/zero/id", "added", None, str(OTHER_ID))]
    assert document["a"]["provenance"]["offset"] == -1
    assert run.items[FROM_ZERO].summary.startswith(
        "offset -1 (the start of the log) to offset 2 (the end of the log): ")


def test_a_cluster_whose_images_cannot_be_loaded_gets_a_note(run: Run) -> None:
    damaged = run.items[DAMAGED_CLUSTER]
    assert damaged.hrefs == []
    assert re.fullmatch(r"no image diff: \S+/00000000000000000000.log: field crc at byte \d+: CRC-32C is "
                        r"0x[0-9a-f]{8} but the batch says 0x[0-9a-f]{8}", damaged.summary), damaged.summary
    item = run.items[GAP]
    assert item.hrefs == []
    assert re.fullmatch(r"no image diff: \S+/node-7/metadata/__cluster_metadata-0: no snapshot or segment "
                        r"holds offsets 0 to 99 \(the log starts at 100\); load it at a later offset or from "
                        r"a snapshot", item.summary), item.summary
    assert "Traceback" not in run.stderr


def test_a_cluster_id_is_a_file_name_of_its_own() -> None:
    names = diff_file_names(["MkU3OEVBNTcwNTJENDM2Qg", "mku3oevbntcwnTJENDM2Qg", "", "a/../b c", "x" * 300,
                             "a_.._b_c"])
    assert names["MkU3OEVBNTcwNTJENDM2Qg"] == "MkU3OEVBNTcwNTJENDM2Qg"
    assert names["mku3oevbntcwnTJENDM2Qg"].startswith("mku3oevbntcwnTJENDM2Qg.")  # the same name but for case
    assert len({name.lower() for name in names.values()}) == len(names)
    for name in names.values():
        assert re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", name) and not name.startswith(".")
    assert names[""].startswith("no-cluster-id.") and names["a/../b c"].startswith("a____b_c.")
