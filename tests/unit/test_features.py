"""The feature tables of each Kafka line, 3.9 to 4.4, against the facts written out here by hand with
their sources (Kafka's MetadataVersion / Feature / *Version classes at each line, the pull requests
that changed them, the release notes): what a controller of the line advertises, the levels it
accepts, its defaults, its release strings and its downgrade walls."""
# ruff: noqa: E501

from __future__ import annotations

import pytest

from kafka_admin_kraft import features
from kafka_admin_kraft.features import LINES, NEWEST

MV, KRAFT, TXN, GROUP, ELR, SHARE, STREAMS = (
    "metadata.version", "kraft.version", "transaction.version", "group.version",
    "eligible.leader.replicas.version", "share.version", "streams.version")

# (lowest level advertised, lowest in bootstrap files, LATEST_PRODUCTION, highest level defined) per line.
# 3.9: MINIMUM_KRAFT_VERSION 3.0-IV1, MINIMUM_BOOTSTRAP_VERSION 3.3-IV0, LATEST_PRODUCTION 3.9-IV0, last
# constant 4.0-IV1; 4.0: MINIMUM_VERSION 3.3-IV3 (KAFKA-18601), 4.0-IV3 production and 4.1-IV0 (PR #18902);
# 4.1: 4.1-IV1 (PR #20137) with the 4.2 placeholders; 4.2: 4.2-IV1 and the 4.3-IV0 placeholder (PR #20993);
# 4.3: 4.3-IV0 (Kafka 4.3's upgrade notes) and 4.4-IV0 above it (MetadataVersionTest wants one, PR #23244);
# 4.4: 4.4-IV2 and 4.5-IV0 (PR #23235).
RANGES = {
    "3.9": (1, 4, 21, 23),
    "4.0": (7, 7, 25, 26),
    "4.1": (7, 7, 27, 29),
    "4.2": (7, 7, 29, 30),
    "4.3": (7, 7, 30, 31),
    "4.4": (7, 7, 33, 34),
}

# The levels whose didMetadataChange is true, per line: 3.9 flags 4.0-IV0 (its ELR level) and not
# 4.0-IV1, 4.0 swapped them; 4.3-IV0 is a placeholder without a change in 4.2 and the cordoned log dirs
# change from 4.3 (the 4.3 upgrade notes quote IBP_4_3_IV0(30, "4.3", "IV0", true)); 4.4-IV1 (CIDR ACLs,
# KIP-1276) and 4.4-IV2 (controller unregistration, PR #23235) change it too.
WALLS = {
    "3.9": {1, 3, 5, 6, 7, 8, 11, 13, 14, 15, 17, 22},
    "4.0": {7, 8, 11, 13, 14, 15, 17, 23},
    "4.1": {7, 8, 11, 13, 14, 15, 17, 23},
    "4.2": {7, 8, 11, 13, 14, 15, 17, 23},
    "4.3": {7, 8, 11, 13, 14, 15, 17, 23, 30},
    "4.4": {7, 8, 11, 13, 14, 15, 17, 23, 30, 32, 33},
}

# What a controller of the line advertises in ApiVersions, without and with unstable versions, metadata.version
# first and then the feature list in Kafka's order, leaving out what would be 0-0 (BrokerFeatures/QuorumFeatures):
# 3.9: transaction.version's levels bootstrap at the unstable 4.0-IV0, so its production level is 0;
# 4.0: group.version and ELR join (ELR production-ready, its default later); 4.1: share.version 1 as a preview
# (PR #19831), streams.version early access (production level 0, PR #19509); 4.2: streams.version 1;
# 4.4: share.version 2 (PR #22803).
SUPPORTED = {
    "3.9": ([(MV, 1, 21), (KRAFT, 0, 1)],
            [(MV, 1, 23), (KRAFT, 0, 1), (TXN, 0, 2)]),
    "4.0": ([(MV, 7, 25), (KRAFT, 0, 1), (TXN, 0, 2), (GROUP, 0, 1), (ELR, 0, 1)],
            [(MV, 7, 26), (KRAFT, 0, 1), (TXN, 0, 2), (GROUP, 0, 1), (ELR, 0, 1)]),
    "4.1": ([(MV, 7, 27), (KRAFT, 0, 1), (TXN, 0, 2), (GROUP, 0, 1), (ELR, 0, 1), (SHARE, 0, 1)],
            [(MV, 7, 29), (KRAFT, 0, 1), (TXN, 0, 2), (GROUP, 0, 1), (ELR, 0, 1), (SHARE, 0, 1), (STREAMS, 0, 1)]),
    "4.2": ([(MV, 7, 29), (KRAFT, 0, 1), (TXN, 0, 2), (GROUP, 0, 1), (ELR, 0, 1), (SHARE, 0, 1), (STREAMS, 0, 1)],
            [(MV, 7, 30), (KRAFT, 0, 1), (TXN, 0, 2), (GROUP, 0, 1), (ELR, 0, 1), (SHARE, 0, 1), (STREAMS, 0, 1)]),
    "4.3": ([(MV, 7, 30), (KRAFT, 0, 1), (TXN, 0, 2), (GROUP, 0, 1), (ELR, 0, 1), (SHARE, 0, 1), (STREAMS, 0, 1)],
            [(MV, 7, 31), (KRAFT, 0, 1), (TXN, 0, 2), (GROUP, 0, 1), (ELR, 0, 1), (SHARE, 0, 1), (STREAMS, 0, 1)]),
    "4.4": ([(MV, 7, 33), (KRAFT, 0, 1), (TXN, 0, 2), (GROUP, 0, 1), (ELR, 0, 1), (SHARE, 0, 2), (STREAMS, 0, 1)],
            [(MV, 7, 34), (KRAFT, 0, 1), (TXN, 0, 2), (GROUP, 0, 1), (ELR, 0, 1), (SHARE, 0, 2), (STREAMS, 0, 1)]),
}

# The formatter's defaults at each line's production level (Feature.defaultLevel): 4.0's ELR and 4.1's share
# and streams levels bootstrap above the line's production metadata.version, so they stay 0.
PRODUCTION_DEFAULTS = {
    "3.9": {KRAFT: 1, TXN: 0},
    "4.0": {KRAFT: 1, TXN: 2, GROUP: 1, ELR: 0},
    "4.1": {KRAFT: 1, TXN: 2, GROUP: 1, ELR: 1, SHARE: 0, STREAMS: 0},
    "4.2": {KRAFT: 1, TXN: 2, GROUP: 1, ELR: 1, SHARE: 1, STREAMS: 1},
    "4.3": {KRAFT: 1, TXN: 2, GROUP: 1, ELR: 1, SHARE: 1, STREAMS: 1},
    "4.4": {KRAFT: 1, TXN: 2, GROUP: 1, ELR: 1, SHARE: 2, STREAMS: 1},
}


def newest_defaults(level: int) -> dict[str, int]:
    """Kafka 4.4's default levels per metadata.version: kraft.version 1 from 3.9-IV0, group.version 1 from
    4.0-IV0, transaction.version 2 from 4.0-IV2 (KIP-890), ELR 1 from 4.1-IV0 (KIP-966), share.version 1
    from 4.2-IV0 (KIP-932) and 2 from 4.4-IV0 (PR #21994), streams.version 1 from 4.2-IV1 (KIP-1071)."""
    return {KRAFT: int(level >= 21), TXN: 2 * (level >= 24), GROUP: int(level >= 22), ELR: int(level >= 26),
            SHARE: (level >= 28) + (level >= 31), STREAMS: int(level >= 29)}


def test_the_lines_and_the_newest() -> None:
    assert list(LINES) == ["3.9", "4.0", "4.1", "4.2", "4.3", "4.4"]
    assert NEWEST is LINES["4.4"]
    assert all(LINES[name].name == name for name in LINES)


@pytest.mark.parametrize("name", list(RANGES))
def test_each_line_defines_its_levels_and_its_production_one(name: str) -> None:
    line = LINES[name]
    minimum, bootstrap, production, testing = RANGES[name]
    assert [mv.level for mv in line.metadata_versions] == list(range(minimum, testing + 1))
    assert (line.minimum_metadata_version, line.minimum_bootstrap_metadata_version) == (minimum, bootstrap)
    assert (line.latest_production_metadata_version, line.latest_testing_metadata_version) == (production, testing)
    assert line.bootstrap_metadata_versions == range(bootstrap, testing + 1)
    assert line.latest_metadata_version() == production and line.latest_metadata_version(unstable=True) == testing
    assert not line.is_known_metadata_version(minimum - 1) and not line.is_known_metadata_version(testing + 1)
    assert line.release_string(testing + 1) == f"metadata.version {testing + 1}"


def test_release_strings_are_the_same_in_every_line() -> None:
    expected = {1: "3.0-IV1", 4: "3.3-IV0", 7: "3.3-IV3", 19: "3.7-IV4", 21: "3.9-IV0", 23: "4.0-IV1",
                25: "4.0-IV3", 27: "4.1-IV1", 29: "4.2-IV1", 30: "4.3-IV0", 31: "4.4-IV0", 32: "4.4-IV1",
                33: "4.4-IV2", 34: "4.5-IV0"}
    for line in LINES.values():
        for level, release in expected.items():
            if line.is_known_metadata_version(level):
                assert line.release_string(level) == release
    assert NEWEST.metadata_version(33) is not None and NEWEST.metadata_version(33).release_version == "4.4"


@pytest.mark.parametrize("name", list(WALLS))
def test_each_line_flags_its_own_metadata_changes(name: str) -> None:
    line = LINES[name]
    assert {mv.level for mv in line.metadata_versions if mv.changed_metadata} == WALLS[name]


def test_4_3_iv0_is_a_wall_from_4_3_on() -> None:
    assert not LINES["4.2"].metadata_changed(30, 29)  # a 4.2 controller may leave the placeholder
    for name in ("4.3", "4.4"):
        assert LINES[name].metadata_changed(30, 29) and LINES[name].metadata_changed(29, 30)
        assert not LINES[name].metadata_changed(30, 30)
    assert not NEWEST.metadata_changed(31, 30)  # 4.4-IV0 changed nothing
    assert NEWEST.metadata_changed(32, 31) and NEWEST.metadata_changed(33, 32)
    assert not NEWEST.metadata_changed(34, 33)
    assert not NEWEST.metadata_changed(29, 24) and NEWEST.metadata_changed(24, 22)  # 4.0-IV1 (ELR records)
    assert not LINES["3.9"].metadata_changed(23, 22) and LINES["3.9"].metadata_changed(22, 21)


@pytest.mark.parametrize("name", list(SUPPORTED))
def test_what_a_controller_of_each_line_advertises(name: str) -> None:
    production, unstable = SUPPORTED[name]
    line = LINES[name]
    assert list(line.supported_features()) == production
    assert list(line.supported_features(unstable=True)) == unstable
    for feature, low, high in unstable:
        assert line.supported_range(feature, unstable=True) == (low, high)
    assert line.supported_range("colour.version") == (0, 0)


def test_the_feature_lists_in_kafkas_order() -> None:
    assert [f.name for f in LINES["3.9"].features] == [KRAFT, TXN]
    assert [f.name for f in LINES["4.0"].features] == [KRAFT, TXN, GROUP, ELR]
    for name in ("4.1", "4.2", "4.3", "4.4"):
        assert [f.name for f in LINES[name].features] == [KRAFT, TXN, GROUP, ELR, SHARE, STREAMS]
    share = NEWEST.feature(SHARE)
    assert share is not None and [(fl.level, fl.bootstrap_metadata_version) for fl in share.levels] == [
        (0, 7), (1, 28), (2, 31)]
    old_share = LINES["4.3"].feature(SHARE)
    assert old_share is not None and [fl.level for fl in old_share.levels] == [0, 1]
    # 3.9 has TV_1 and TV_2 at its unstable 4.0-IV0; 4.0 moved them to 4.0-IV2 (KIP-890)
    assert [fl.bootstrap_metadata_version for fl in LINES["3.9"].features[1].levels] == [1, 22, 22]
    assert [fl.bootstrap_metadata_version for fl in NEWEST.features[1].levels] == [7, 24, 24]


@pytest.mark.parametrize("name", list(PRODUCTION_DEFAULTS))
def test_default_levels_at_each_lines_production_level(name: str) -> None:
    line = LINES[name]
    assert line.default_levels(line.latest_production_metadata_version) == PRODUCTION_DEFAULTS[name]


@pytest.mark.parametrize("level", range(7, 35))
def test_the_newest_default_levels_at_every_metadata_version(level: int) -> None:
    assert NEWEST.version_mapping(level) == {MV: level, **newest_defaults(level)}


def test_release_strings_to_levels_in_4_4() -> None:
    # "X.Y" is the release's highest production IV (fromVersionString); only two parts count
    assert [NEWEST.metadata_version_from_string(text) for text in ("3.3", "3.7", "3.8.1", "4.3", "4.4", "4.4-IV0")] == [
        7, 19, 20, 30, 33, 31]
    assert NEWEST.metadata_version_from_string("4.5-IV0", unstable=True) == 34
    listed = ", ".join(mv.release for mv in NEWEST.metadata_versions)
    with pytest.raises(ValueError) as refused:
        NEWEST.metadata_version_from_string("4.5", unstable=True)  # 4.5 has no production IV in 4.4
    assert str(refused.value) == f"Unknown metadata.version '4.5'. Supported metadata.version are: {listed}"
    with pytest.raises(ValueError) as refused:
        NEWEST.metadata_version_from_string("4.5-IV0")
    assert str(refused.value).endswith(", 4.4-IV1, 4.4-IV2")
    with pytest.raises(ValueError):
        NEWEST.metadata_version_from_string("3.0")  # 3.0-IV1 left the enum in 4.0


def test_release_strings_in_the_older_lines() -> None:
    # 4.3: "4.4" has no production IV there, 4.4-IV0 only with unstable versions
    with pytest.raises(ValueError) as refused:
        LINES["4.3"].metadata_version_from_string("4.4", unstable=True)
    assert str(refused.value).endswith(", 4.3-IV0, 4.4-IV0")
    assert LINES["4.3"].metadata_version_from_string("4.4-IV0", unstable=True) == 31
    with pytest.raises(ValueError) as refused:
        LINES["4.2"].metadata_version_from_string("4.3")
    assert str(refused.value).startswith("Unknown metadata.version '4.3'. Supported metadata.version are: 3.3-IV3, ")
    # 4.1's fromVersionString knows every level by its IV and names the range (a 4.1-based MetadataVersion)
    assert LINES["4.1"].metadata_version_from_string("4.2-IV0") == 28
    with pytest.raises(ValueError) as refused:
        LINES["4.1"].metadata_version_from_string("4.2")
    assert str(refused.value) == ("Version 4.2 is not a valid version. The minimum version is 3.3-IV3 and the "
                                  "maximum version is 4.2-IV1")
    # 3.9 still has the first KRaft levels; its message names nothing (MetadataVersion before 4.0)
    assert LINES["3.9"].metadata_version_from_string("3.0") == 1
    assert LINES["3.9"].metadata_version_from_string("3.9") == 21
    with pytest.raises(ValueError) as refused:
        LINES["3.9"].metadata_version_from_string("4.0")
    assert str(refused.value) == "Version 4.0 is not a valid version"


def test_version_mapping_of_an_unknown_level() -> None:
    with pytest.raises(ValueError, match="Unknown metadata.version 35"):
        NEWEST.version_mapping(35)
    with pytest.raises(ValueError, match="Unknown metadata.version 6"):
        NEWEST.version_mapping(6)
    assert LINES["3.9"].version_mapping(6) == {MV: 6, KRAFT: 0, TXN: 0}


def test_dependency_errors() -> None:
    # Feature.validateVersion: every level from 1 needs the minimum metadata.version, then its own dependencies
    assert NEWEST.dependency_error(ELR, 1, {MV: 23}) is None
    assert NEWEST.dependency_error(ELR, 1, {MV: 22}) == (
        "eligible.leader.replicas.version could not be set to 1 because it depends on metadata.version level 23")
    assert NEWEST.dependency_error(ELR, 1, {MV: 5}) == (
        "eligible.leader.replicas.version could not be set to 1 because it depends on metadata.version level 7")
    assert NEWEST.dependency_error(ELR, 0, {}) is None
    assert NEWEST.dependency_error(SHARE, 2, {MV: 7}) is None
    assert NEWEST.dependency_error(SHARE, 3, {MV: 33}) == "No feature level 3 found for feature share.version."
    assert NEWEST.dependency_error("colour.version", 1, {}) == "Feature colour.version not found."
    assert LINES["4.3"].dependency_error(SHARE, 2, {MV: 31}) == "No feature level 2 found for feature share.version."
    assert LINES["3.9"].dependency_error(KRAFT, 1, {MV: 3}) == (
        "kraft.version could not be set to 1 because it depends on metadata.version level 4")


def test_the_update_features_rules_that_changed_since_3_9() -> None:
    # FeatureControlManager: 3.9 decides each feature alone and checks no dependencies; 4.0 refuses the
    # whole request at the first refusal and checks Feature.validateVersion; 4.1 upgrades kraft.version
    rules = {name: (line.update_is_all_or_nothing, line.update_checks_dependencies,
                    line.update_upgrades_kraft_version) for name, line in LINES.items()}
    assert rules == {"3.9": (False, False, False), "4.0": (True, True, False), "4.1": (True, True, True),
                     "4.2": (True, True, True), "4.3": (True, True, True), "4.4": (True, True, True)}


def test_the_module_names_are_the_newest_lines() -> None:
    assert (features.MINIMUM_METADATA_VERSION, features.LATEST_PRODUCTION_METADATA_VERSION,
            features.LATEST_TESTING_METADATA_VERSION) == (7, 33, 34)
    assert list(features.SUPPORTED_FEATURES) == SUPPORTED["4.4"][0]
    assert features.DEFAULT_FEATURE_LEVELS == {TXN: 2, GROUP: 1, ELR: 1, SHARE: 2, STREAMS: 1}
    assert list(features.RELEASE_STRINGS) == list(range(7, 35)) and features.RELEASE_STRINGS[31] == "4.4-IV0"
    assert features.release_string(33) == "4.4-IV2"
    assert features.supported_range(SHARE) == (0, 2)
    assert features.metadata_changed(33, 30) and not features.metadata_changed(31, 30)
