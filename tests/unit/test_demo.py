"""The README's first command runs the demo: it must keep working and keep telling the story."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_demo_formats_reads_back_and_exchanges_frames(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "demo.py"), "--dir", str(tmp_path)],
                            capture_output=True, text=True, check=True, timeout=60)
    out = result.stdout
    for expected in ("meta.properties", "bootstrap.checkpoint", "00000000000000000000-0000000000.checkpoint",
                     "control KRAFT_VOTERS", "control LEADER_CHANGE", "data    FeatureLevelRecord",
                     '"data_version":1}', "server reads: api key 55, version 2", '"high_watermark": 8'):
        assert expected in out, expected
    assert (tmp_path / "__cluster_metadata-0" / "00000000000000000000.log").stat().st_size > 0
