"""The README's first command runs the demo: it must keep working and keep telling the story."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_demo_runs_a_quorum_then_shows_the_bytes(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "demo.py"), "--dir", str(tmp_path)],
                            capture_output=True, text=True, check=True, timeout=120)
    out = result.stdout
    # The first election usually ends in epoch 1; a split vote on a loaded machine takes another round.
    assert re.search(r"LeaderId \d, LeaderEpoch [1-9]\d*, HighWatermark \d+", out)
    assert "kraft.version=1, metadata.version=33" in out
    assert re.search(r"node \d leads epoch [2-9]\d* after \d+\.\d+ s", out)
    assert "caught up" in out and "stopped the quorum" in out
    for expected in ("meta.properties", "bootstrap.checkpoint", "00000000000000000000-0000000000.checkpoint",
                     "control KRAFT_VOTERS", "control LEADER_CHANGE", "data    FeatureLevelRecord",
                     '"data_version":1}', "server reads: api key 55, version 2", '"high_watermark": 8'):
        assert expected in out, expected
    assert (tmp_path / "__cluster_metadata-0" / "00000000000000000000.log").stat().st_size > 0
