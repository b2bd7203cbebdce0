"""The CRC-32C of record batches, loaded from the ``crc32c`` package's extension without its
``__init__``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import crc32c as package

from kafka_admin_kraft.records import crc


def test_the_checksum_is_crc32c() -> None:
    """RFC 3720's check value of CRC-32C, and the package's own function on a batch-sized input."""
    assert crc.crc32c(b"123456789") == 0xE3069283
    data = bytes(range(256)) * 40
    assert crc.crc32c(data) == package.crc32c(data)
    assert crc.crc32c(memoryview(data)[7:]) == package.crc32c(data[7:])


def test_loading_it_runs_neither_the_package_nor_importlib_metadata() -> None:
    code = ("import sys; from kafka_admin_kraft.records.crc import crc32c; crc32c(b'x'); print(sorted("
            "m for m in sys.modules if m.split('.')[0] == 'crc32c' or m == 'importlib.metadata'))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"


def test_a_package_without_the_extension_file_is_left_to_the_ordinary_import(tmp_path: Path) -> None:
    (tmp_path / "crc32c").mkdir()
    (tmp_path / "crc32c" / "__init__.py").write_text("")
    assert crc.extension_module([str(tmp_path)]) is None
    assert crc.extension_module([str(tmp_path / "nowhere")]) is None
    found = crc.extension_module()
    assert found is not None and found.crc32c(b"123456789") == 0xE3069283
