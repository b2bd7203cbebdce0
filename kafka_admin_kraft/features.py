"""Feature levels as a Kafka 4.2 controller knows them: metadata.version and the other features.

``SUPPORTED_FEATURES`` is what a controller advertises in ApiVersions (Kafka's ``MetadataVersion``
and ``Feature``): metadata.version from 3.3-IV3 (7) to the latest production level 4.2-IV1 (29), and
each other production feature from 0 to its latest production level, in Kafka's feature-list order.
Features whose maximum would be 0 are not advertised at all.

Besides that, the tables the controller's UpdateFeatures rules and the tools need (after Kafka's
``MetadataVersion``, ``Feature`` and ``FeatureControlManager``):

* ``METADATA_VERSIONS``: every metadata.version level Kafka 4.2 knows, with its release string and
  whether it changed the metadata record format (a downgrade across such a level is lossy);
* ``FEATURES``: the other features' levels, each with its bootstrap metadata.version (the version from
  which it is the default) and its dependencies on other features;
* functions: a release string to a level (``metadata_version_from_string``), the default level of a
  feature for a metadata.version, ``version_mapping`` (what ``kafka-features version-mapping`` prints
  and ``upgrade/downgrade --release-version`` sends), supported ranges, ``metadata_changed`` and
  ``dependency_error`` (Kafka's ``Feature.validateVersion``).

Pure data and functions: nothing here does I/O or imports the server.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

METADATA_VERSION: Final = "metadata.version"
KRAFT_VERSION: Final = "kraft.version"

MINIMUM_METADATA_VERSION: Final = 7
"""3.3-IV3, the lowest metadata.version Kafka 4.x supports."""
LATEST_PRODUCTION_METADATA_VERSION: Final = 29
"""4.2-IV1."""
LATEST_TESTING_METADATA_VERSION: Final = 30
"""4.3-IV0: accepted in bootstrap files, never the default."""
METADATA_TRANSACTIONS_VERSION: Final = 13
"""3.6-IV1: bootstrap records are written inside a metadata transaction from here on."""
CONTROLLER_REGISTRATION_VERSION: Final = 15
"""3.7-IV0 (KIP-919): controllers answer DescribeCluster for the controller endpoint type."""

DEFAULT_FEATURE_LEVELS: Final[dict[str, int]] = {
    "eligible.leader.replicas.version": 1, "group.version": 1, "share.version": 1,
    "streams.version": 1, "transaction.version": 2,
}
"""What Kafka 4.2's formatter finalizes besides metadata.version when no --release-version is given."""

RELEASE_STRINGS: Final[dict[int, str]] = {
    7: "3.3-IV3", 8: "3.4-IV0", 9: "3.5-IV0", 10: "3.5-IV1", 11: "3.5-IV2", 12: "3.6-IV0",
    13: "3.6-IV1", 14: "3.6-IV2", 15: "3.7-IV0", 16: "3.7-IV1", 17: "3.7-IV2", 18: "3.7-IV3",
    19: "3.7-IV4", 20: "3.8-IV0", 21: "3.9-IV0", 22: "4.0-IV0", 23: "4.0-IV1", 24: "4.0-IV2",
    25: "4.0-IV3", 26: "4.1-IV0", 27: "4.1-IV1", 28: "4.2-IV0", 29: "4.2-IV1", 30: "4.3-IV0",
}

SUPPORTED_FEATURES: Final[tuple[tuple[str, int, int], ...]] = (
    (METADATA_VERSION, MINIMUM_METADATA_VERSION, LATEST_PRODUCTION_METADATA_VERSION),
    (KRAFT_VERSION, 0, 1),
    ("transaction.version", 0, 2),
    ("group.version", 0, 1),
    ("eligible.leader.replicas.version", 0, 1),
    ("share.version", 0, 1),
    ("streams.version", 0, 1),
)
"""(name, min, max) of every feature a 4.2 controller advertises, in Kafka's order."""


def release_string(level: int) -> str:
    """``4.2-IV1`` for 29; levels this table lacks print as ``metadata.version <n>``."""
    return RELEASE_STRINGS.get(level, f"metadata.version {level}")


# --------------------------------------------------------------------------- metadata.version


@dataclass(frozen=True)
class MetadataVersion:
    """One metadata.version level (Kafka's ``MetadataVersion``)."""

    level: int
    release: str
    """Release string, ``<release>-IV<n>``."""
    changed_metadata: bool
    """Whether this version changed the metadata record format (downgrading across it is lossy)."""

    @property
    def release_version(self) -> str:
        """``4.2`` for ``4.2-IV1``."""
        return self.release.split("-", 1)[0]


METADATA_CHANGED_LEVELS: Final = frozenset({7, 8, 11, 13, 14, 15, 17, 23})
"""Levels that changed the metadata record format: 3.3-IV3, 3.4-IV0, 3.5-IV2, 3.6-IV1, 3.6-IV2, 3.7-IV0,
3.7-IV2 and 4.0-IV1 (ELR records)."""

METADATA_VERSIONS: Final[tuple[MetadataVersion, ...]] = tuple(
    MetadataVersion(level, release, level in METADATA_CHANGED_LEVELS)
    for level, release in sorted(RELEASE_STRINGS.items()))
"""Every known level from MINIMUM_METADATA_VERSION to LATEST_TESTING_METADATA_VERSION, ascending."""

_BY_LEVEL: Final = {mv.level: mv for mv in METADATA_VERSIONS}


def is_known_metadata_version(level: int) -> bool:
    return level in _BY_LEVEL


def latest_metadata_version(*, unstable: bool = False) -> int:
    """The latest production level, or the latest testing one when unstable versions are enabled."""
    return LATEST_TESTING_METADATA_VERSION if unstable else LATEST_PRODUCTION_METADATA_VERSION


def metadata_version_from_string(text: str, *, unstable: bool = False) -> int:
    """Kafka's ``MetadataVersion.fromVersionString``: ``4.2-IV1`` -> 29, ``3.7`` -> 3.7-IV4 (the release's
    highest production IV), ``3.8.1`` -> 3.8's; only the first two dot-separated parts count.

    Raises ValueError with Kafka's message for an unknown string or a level above what is allowed."""
    parts = text.split(".")
    key = ".".join(parts[:2])
    latest = latest_metadata_version(unstable=unstable)
    level = None
    for mv in METADATA_VERSIONS:
        if mv.release == key and mv.level <= latest:
            level = mv.level
    if level is None:
        candidates = [mv.level for mv in METADATA_VERSIONS
                      if mv.release_version == key and mv.level <= LATEST_PRODUCTION_METADATA_VERSION]
        if candidates:
            level = max(candidates)
    if level is None:
        names = ", ".join(mv.release for mv in METADATA_VERSIONS if mv.level <= latest)
        raise ValueError(f"Unknown metadata.version '{text}'. Supported metadata.version are: {names}")
    return level


def metadata_changed(current: int, target: int) -> bool:
    """Kafka's ``MetadataVersion.checkIfMetadataChanged``: does any level in (low, high] change the
    metadata format? A downgrade from ``current`` to ``target`` is lossy exactly when this is True."""
    low, high = sorted((current, target))
    return any(level in METADATA_CHANGED_LEVELS for level in range(low + 1, high + 1))


# --------------------------------------------------------------------------- the other features


@dataclass(frozen=True)
class FeatureLevel:
    """A level of a feature other than metadata.version."""

    level: int
    bootstrap_metadata_version: int
    """The metadata.version from which this level is the default."""
    dependencies: Mapping[str, int] = field(default_factory=dict)
    """Minimum levels of other features this level needs (Kafka's ``FeatureVersion.dependencies``)."""


@dataclass(frozen=True)
class Feature:
    """A production feature other than metadata.version (Kafka's ``Feature``)."""

    name: str
    levels: tuple[FeatureLevel, ...]
    latest_production: int
    latest_testing: int

    def level(self, level: int) -> FeatureLevel | None:
        return next((fl for fl in self.levels if fl.level == level), None)

    def default_level(self, metadata_version: int) -> int:
        """The highest level whose bootstrap metadata.version is at or below ``metadata_version``."""
        return max((fl.level for fl in self.levels
                    if fl.bootstrap_metadata_version <= metadata_version and fl.level <= self.latest_testing),
                   default=0)


def _feature(name: str, bootstraps: dict[int, int], latest: int,
             dependencies: dict[int, dict[str, int]] | None = None) -> Feature:
    levels = tuple(FeatureLevel(level, mv, (dependencies or {}).get(level, {}))
                   for level, mv in sorted(bootstraps.items()))
    return Feature(name, levels, latest, latest)


FEATURES: Final[tuple[Feature, ...]] = (
    _feature(KRAFT_VERSION, {0: 7, 1: 21}, 1),
    _feature("transaction.version", {0: 7, 1: 24, 2: 24}, 2),
    _feature("group.version", {0: 7, 1: 22}, 1),
    _feature("eligible.leader.replicas.version", {0: 7, 1: 26}, 1, {1: {METADATA_VERSION: 23}}),
    _feature("share.version", {0: 7, 1: 28}, 1),
    _feature("streams.version", {0: 7, 1: 29}, 1),
)
"""Kafka 4.2's production feature list besides metadata.version, in its order (version-mapping's)."""

FEATURES_BY_NAME: Final = {f.name: f for f in FEATURES}


def supported_range(name: str, *, unstable: bool = False) -> tuple[int, int]:
    """(min, max) level a 4.2 controller supports for ``name``; (0, 0) for a feature it does not know
    (Kafka's ``DISABLED`` range)."""
    if name == METADATA_VERSION:
        return MINIMUM_METADATA_VERSION, latest_metadata_version(unstable=unstable)
    feature = FEATURES_BY_NAME.get(name)
    if feature is None:
        return 0, 0
    return 0, feature.latest_testing if unstable else feature.latest_production


def default_levels(metadata_version: int) -> dict[str, int]:
    """Every production feature's default level at ``metadata_version``, kraft.version included, in
    Kafka's order (the levels below 1 too)."""
    return {f.name: f.default_level(metadata_version) for f in FEATURES}


def version_mapping(release: str | int, *, unstable: bool = False) -> dict[str, int]:
    """What ``kafka-features version-mapping --release-version X`` prints: metadata.version first,
    then every other feature's default level. ``release`` is a release string or a level."""
    level = release if isinstance(release, int) else metadata_version_from_string(release, unstable=unstable)
    if not is_known_metadata_version(level):
        raise ValueError(f"Unknown metadata.version {level}")
    return {METADATA_VERSION: level, **default_levels(level)}


def dependency_error(name: str, level: int, proposed: Mapping[str, int]) -> str | None:
    """Kafka's ``Feature.validateVersion``: None when ``level`` of ``name`` has its dependencies met by
    ``proposed`` (the finalized levels with the request's updates applied), else Kafka's reason."""
    feature = FEATURES_BY_NAME.get(name)
    if feature is None:
        return f"Feature {name} not found."
    entry = feature.level(level)
    if entry is None:
        return f"No feature level {level} found for feature {name}."
    if level >= 1:
        current = proposed.get(METADATA_VERSION)
        if current is None or current < MINIMUM_METADATA_VERSION:
            return (f"{name} could not be set to {level} because it depends on {METADATA_VERSION} level "
                    f"{MINIMUM_METADATA_VERSION}")
    for dependency, minimum in entry.dependencies.items():
        current = proposed.get(dependency)
        if current is None or current < minimum:
            return f"{name} could not be set to {level} because it depends on {dependency} level {minimum}"
    return None
