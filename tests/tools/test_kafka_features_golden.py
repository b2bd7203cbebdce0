"""Golden tests: `kafka-features` text, byte for byte, from hand-built models and outcomes."""
# ruff: noqa: E501

from __future__ import annotations

from kafka_admin_kraft.models import FeatureMetadata, FinalizedVersionRange, SupportedVersionRange
from kafka_admin_kraft_cli.kafka_features import (
    Outcome,
    describe_json,
    describe_text,
    outcome_json,
    outcome_text,
)

ALL_FAILED = (
    "The update failed for all features since the following feature had an error: Invalid update version 18 "
    "for feature metadata.version. Can't downgrade the version of this feature without setting the upgrade "
    "type to either safe or unsafe downgrade."
)


def metadata(epoch: int | None = 123) -> FeatureMetadata:
    return FeatureMetadata(
        finalized_features={
            "foo.bar": FinalizedVersionRange(min_version_level=5, max_version_level=5),
            "metadata.version": FinalizedVersionRange(min_version_level=8, max_version_level=8),
            "only.finalized": FinalizedVersionRange(min_version_level=1, max_version_level=1),
        },
        finalized_features_epoch=epoch,
        supported_features={
            "metadata.version": SupportedVersionRange(min_version=7, max_version=9),
            "foo.bar": SupportedVersionRange(min_version=0, max_version=10),
            "not.finalized": SupportedVersionRange(min_version=0, max_version=1),
            "z.unknown.mv": SupportedVersionRange(min_version=0, max_version=3),
        },
    )


def test_describe_text_matches_kafkas_pinned_lines() -> None:
    assert describe_text(metadata()) == (
        "Feature: foo.bar\tSupportedMinVersion: 0\tSupportedMaxVersion: 10\tFinalizedVersionLevel: 5\tEpoch: 123\n"
        "Feature: metadata.version\tSupportedMinVersion: 3.3-IV3\tSupportedMaxVersion: 3.5-IV0\t"
        "FinalizedVersionLevel: 3.4-IV0\tEpoch: 123\n"
        "Feature: not.finalized\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\tFinalizedVersionLevel: 0\t"
        "Epoch: 123\n"
        "Feature: z.unknown.mv\tSupportedMinVersion: 0\tSupportedMaxVersion: 3\tFinalizedVersionLevel: 0\t"
        "Epoch: 123\n"
    )


def test_describe_unknown_epoch_and_metadata_version_levels() -> None:
    odd = FeatureMetadata(
        finalized_features={}, finalized_features_epoch=None,
        supported_features={"metadata.version": SupportedVersionRange(min_version=1, max_version=35)})
    # Kafka 4.4 knows 3.3-IV3 (7) to 4.5-IV0 (34): not 3.9's levels 1-6, nor anything above 34
    assert describe_text(odd) == (
        "Feature: metadata.version\tSupportedMinVersion: UNKNOWN 1\tSupportedMaxVersion: UNKNOWN 35\t"
        "FinalizedVersionLevel: UNKNOWN 0\tEpoch: -\n"
    )


def test_describe_json() -> None:
    features = describe_json(metadata(epoch=None))["features"]
    assert [f["name"] for f in features] == ["foo.bar", "metadata.version", "not.finalized", "z.unknown.mv"]
    assert features[1] == {"name": "metadata.version", "supported_min_version": 7, "supported_max_version": 9,
                           "finalized_version_level": 8, "epoch": None}


def test_upgrade_and_downgrade_lines_are_sorted_by_feature() -> None:
    done = [Outcome("metadata.version", 21, None), Outcome("kraft.version", 1, None)]
    assert outcome_text("upgrade", done, dry_run=False) == (
        "kraft.version was upgraded to 1.\nmetadata.version was upgraded to 21.\n")
    assert outcome_text("upgrade", done, dry_run=True) == (
        "kraft.version can be upgraded to 1.\nmetadata.version can be upgraded to 21.\n")
    assert outcome_text("downgrade", [Outcome("metadata.version", 18, None), Outcome("group.version", 0, None)],
                        dry_run=False) == (
        "group.version was downgraded to 0.\nmetadata.version was downgraded to 18.\n")
    assert outcome_text("downgrade", [Outcome("group.version", 0, None)], dry_run=True) == (
        "group.version can be downgraded to 0.\n")


def test_disable_lines() -> None:
    assert outcome_text("disable", [Outcome("share.version", 0, None)], dry_run=False) == "share.version was disabled.\n"
    assert outcome_text("disable", [Outcome("share.version", 0, None)], dry_run=True) == "share.version can be disabled.\n"
    assert outcome_text("disable", [Outcome("share.version", 0, "Boom.")], dry_run=False) == (
        "Could not disable share.version. Boom.\n")
    assert outcome_text("disable", [Outcome("share.version", 0, "Boom.")], dry_run=True) == (
        "Can not disable share.version. Boom.\n")


def test_failure_lines_match_kafkas_pinned_example() -> None:
    failed = [Outcome("metadata.version", 18, ALL_FAILED)]
    assert outcome_text("upgrade", failed, dry_run=False) == f"Could not upgrade metadata.version to 18. {ALL_FAILED}\n"
    assert outcome_text("upgrade", failed, dry_run=True) == f"Can not upgrade metadata.version to 18. {ALL_FAILED}\n"
    assert outcome_text("downgrade", failed, dry_run=False) == (
        f"Could not downgrade metadata.version to 18. {ALL_FAILED}\n")


def test_outcome_json() -> None:
    outcomes = [Outcome("metadata.version", 18, "Nope."), Outcome("group.version", 0, None)]
    assert outcome_json("downgrade", outcomes, dry_run=True, unsafe=True) == {
        "operation": "downgrade", "dry_run": True, "upgrade_type": "UNSAFE_DOWNGRADE",
        "results": [{"feature": "group.version", "level": 0, "ok": True, "error": None},
                    {"feature": "metadata.version", "level": 18, "ok": False, "error": "Nope."}],
    }
    assert outcome_json("upgrade", outcomes, dry_run=False, unsafe=False)["upgrade_type"] == "UPGRADE"
    assert outcome_json("disable", outcomes, dry_run=False, unsafe=False)["upgrade_type"] == "SAFE_DOWNGRADE"
