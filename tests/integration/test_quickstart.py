"""The README's first command runs the quickstart: the KIP-853 story told with the installed tools."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from console_scripts import console_script

ROOT = Path(__file__).resolve().parents[2]


def test_quickstart_grows_repairs_and_upgrades_a_quorum(tmp_path: Path) -> None:
    console_script("kafka-metadata-quorum")  # the quickstart runs the tools installed beside python
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "quickstart.py"), "--dir", str(tmp_path)],
                            capture_output=True, text=True, timeout=240)
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert out.count("Formatting dynamic metadata voter directory") == 1
    assert out.count("Formatting metadata directory") == 3  # 2 and 3, then 3 again after its disk is lost
    voter_lines = re.findall(r"^CurrentVoters:\s+(.*)$", out, flags=re.MULTILINE)
    assert re.findall(r'"id": (\d)', voter_lines[0]) == ["1"]  # standalone, before the others join
    added = re.findall(r"Added controller (\d) with directory id (\S+) and endpoints", out)
    assert [node for node, _ in added] == ["2", "3", "3"] and added[1][1] != added[2][1]
    assert f"Removed  KRaft controller 3 with directory id {added[1][1]}" in out
    # formatted at Kafka 4.3's 4.3-IV0, upgraded to Kafka 4.4's 4.4-IV2 with share.version 2 (PR #23235)
    assert "FinalizedVersionLevel: 4.3-IV0" in out and "FinalizedVersionLevel: 4.4-IV2" in out
    assert re.search(r"^Feature: share.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 2\t"
                     r"FinalizedVersionLevel: 2\t", out, flags=re.MULTILINE)
    status = json.loads(out[out.index("{", out.index("describe --status --output json")):
                            out.index("\n== Stop everything")])
    voters = {(v["id"], v["directory_id"]) for v in status["current_voters"]}
    assert {node for node, _ in voters} == {1, 2, 3}
    assert (3, added[2][1]) in voters and (3, added[1][1]) not in voters
    assert status["committed_voters"] == status["current_voters"]
    assert out.count("stopped controller") == 3
