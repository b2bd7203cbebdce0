"""kafka-features and every ``--release-version`` from 3.3 to 4.4: what version-mapping prints (with no
bootstrap option, as from Kafka 4.3) and what upgrade and downgrade ask for, against the table of
``release_levels`` (its sources are there)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from kafka_admin_kraft_cli.kafka_features import main, requested_levels
from tools.release_levels import RELEASES, levels, version_mapping_text


@pytest.mark.parametrize("release", list(RELEASES))
def test_version_mapping_of_every_release(release: str) -> None:
    result = CliRunner().invoke(main, ["version-mapping", "--release-version", release],
                                prog_name="kafka-features")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == version_mapping_text(release)


@pytest.mark.parametrize("release", list(RELEASES))
def test_upgrade_sends_the_levels_above_0_and_downgrade_sends_all(release: str) -> None:
    # FeatureCommand: upgrade leaves out the features whose level for the release is 0, downgrade sends them
    expected = levels(release)
    assert requested_levels("upgrade", None, release, ()) == {
        name: level for name, level in expected.items() if name == "metadata.version" or level > 0}
    assert requested_levels("downgrade", None, release, ()) == expected
