"""kafka-storage and every ``--release-version`` from 3.3 to 4.4: what version-mapping prints and what
format writes, against the table of ``release_levels`` (its sources are there)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools.release_levels import RELEASES, levels, version_mapping_text
from tools.storage_util import CLUSTER_ID, bootstrap_values, controller_props, run_tool, write_config


@pytest.mark.parametrize("release", list(RELEASES))
def test_version_mapping_of_every_release(release: str) -> None:
    result = run_tool("version-mapping", "--release-version", release)
    assert (result.code, result.err) == (0, "")
    assert result.out == version_mapping_text(release)


@pytest.mark.parametrize("release", list(RELEASES))
def test_format_writes_every_releases_levels(tmp_path: Path, release: str) -> None:
    config = write_config(tmp_path / "c.properties", **controller_props(tmp_path, 1, 9093))
    result = run_tool("format", "-c", str(config), "-t", CLUSTER_ID, "-N", "-r", release, "--output", "json")
    assert result.code == 0, result.err
    expected = levels(release)
    level, release_string, _ = RELEASES[release]
    document = json.loads(result.out)
    assert document["metadata_version"] == {"level": level, "release": release_string}
    # kraft.version comes from the quorum kind (a dynamic quorum here), never from the release (KAFKA-19719)
    assert document["features"] == {**{k: v for k, v in expected.items() if k != "metadata.version"},
                                    "kraft.version": 1}
    # metadata.version first, then every other feature above 0 by name, no kraft.version
    records = [value for _, _, value in bootstrap_values(tmp_path / "meta-1")]
    assert [(r.name, r.feature_level) for r in records] == [("metadata.version", level)] + sorted(
        (name, value) for name, value in expected.items()
        if name not in ("metadata.version", "kraft.version") and value > 0)


def test_version_mapping_without_a_release_version_is_44s_production_level() -> None:
    assert run_tool("version-mapping").out == version_mapping_text("4.4").replace("(4.4)", "(4.4-IV2)")
