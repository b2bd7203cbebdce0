"""The package root (``kafka_admin_kraft/__init__.py``): its names load on first use."""

from __future__ import annotations

import subprocess
import sys


def test_import_does_not_load_pydantic() -> None:
    code = "import sys, kafka_admin_kraft; assert 'pydantic' not in sys.modules; kafka_admin_kraft.QuorumInfo"
    subprocess.run([sys.executable, "-c", code], check=True)
