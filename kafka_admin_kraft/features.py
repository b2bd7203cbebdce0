"""Feature levels as each Kafka line from 3.9 to 4.4 knows them: metadata.version and the other features.

A controller of one Kafka line knows a range of metadata.version levels, a list of production
features and, for each, the levels it defines; it advertises what it supports in ApiVersions, picks
the default levels for a metadata.version, parses release strings and refuses downgrades by its own
tables (Kafka's ``MetadataVersion``, ``Feature`` and the ``FeatureVersion`` enums, and
``FeatureControlManager``). Those tables differ between lines: a level may be a placeholder in one
line and change the metadata format in the next (4.3-IV0 is one in 4.2, a format change from 4.3),
3.9 still knows the levels 1-6, and a feature level can exist in a line before it is production-ready.

So the facts are written once, as the history of each level (the line that added it, its
bootstrap metadata.version, whether it changed the metadata format, from which line on), and
:class:`KafkaLine` builds one line's view of them. ``LINES`` holds every line by name and ``NEWEST``
is Kafka 4.4, which the tools follow; the module-level names below (``SUPPORTED_FEATURES``,
``metadata_version_from_string``, ...) are the newest line's, for the server and the SDK.

Sources, besides the class names above: Kafka's release pages and the pull requests cited next to
each level. The 4.3 and 4.4 tables rest on pull requests, not on the files at the tags, where noted.

Pure data and functions: nothing here does I/O or imports the server.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

METADATA_VERSION: Final = "metadata.version"
KRAFT_VERSION: Final = "kraft.version"
TRANSACTION_VERSION: Final = "transaction.version"
GROUP_VERSION: Final = "group.version"
ELR_VERSION: Final = "eligible.leader.replicas.version"
SHARE_VERSION: Final = "share.version"
STREAMS_VERSION: Final = "streams.version"

LINE_NAMES: Final = ("3.9", "4.0", "4.1", "4.2", "4.3", "4.4")
"""The Kafka lines modelled, oldest first."""

METADATA_TRANSACTIONS_VERSION: Final = 13
"""3.6-IV1: bootstrap records are written inside a metadata transaction from here on."""
CONTROLLER_REGISTRATION_VERSION: Final = 15
"""3.7-IV0 (KIP-919): controllers answer DescribeCluster for the controller endpoint type."""
CONTROLLER_UNREGISTRATION_VERSION: Final = 33
"""4.4-IV2 (KIP-1312, ``MetadataVersion.isControllerUnregistrationSupported``): the first level at which
a controller's registration may be removed."""


def _index(line: str) -> int:
    return LINE_NAMES.index(line)


# --------------------------------------------------------------------------- the history of the levels


@dataclass(frozen=True)
class _MetadataVersionHistory:
    level: int
    release: str
    changed: tuple[tuple[str, bool], ...]
    """(line, flag) pairs, oldest first: from that line on, the level has that ``didMetadataChange``.
    The first pair's line is the first line that defines the level."""
    removed: str | None = None
    """The first line that no longer defines it."""

    def in_line(self, line: str) -> bool:
        return (_index(line) >= _index(self.changed[0][0])
                and (self.removed is None or _index(line) < _index(self.removed)))

    def changed_in(self, line: str) -> bool:
        return [flag for since, flag in self.changed if _index(since) <= _index(line)][-1]


def _mv(level: int, release: str, changed: bool, since: str = "3.9", *, removed: str | None = None,
        then: tuple[str, bool] | None = None) -> _MetadataVersionHistory:
    """A level added in ``since`` (3.9 for every level 3.9 already knows) with its change flag;
    ``then`` redefines the flag from a later line on."""
    return _MetadataVersionHistory(level, release, ((since, changed),) + ((then,) if then else ()), removed)


_METADATA_VERSION_HISTORY: Final = (
    # 3.9 still knows the first KRaft levels; Kafka 4.0 removed them (KAFKA-18601: 3.3-IV3 is the minimum).
    _mv(1, "3.0-IV1", True, removed="4.0"),   # the first KRaft metadata.version
    _mv(2, "3.1-IV0", False, removed="4.0"),  # topic ids in Fetch (KIP-516)
    _mv(3, "3.2-IV0", True, removed="4.0"),   # leader recovery state (KIP-704)
    _mv(4, "3.3-IV0", False, removed="4.0"),  # metadata.version in the log (KIP-778)
    _mv(5, "3.3-IV1", True, removed="4.0"),   # NoOpRecord (KIP-835)
    _mv(6, "3.3-IV2", True, removed="4.0"),   # BrokerRegistrationChangeRecord
    _mv(7, "3.3-IV3", True),    # in-controlled-shutdown broker state (KIP-841)
    _mv(8, "3.4-IV0", True),    # ZooKeeper migration records (KIP-866)
    _mv(9, "3.5-IV0", False),   # tiered storage (KIP-405)
    _mv(10, "3.5-IV1", False),  # replica epoch in Fetch (KIP-903)
    _mv(11, "3.5-IV2", True),   # SCRAM in KRaft
    _mv(12, "3.6-IV0", False),  # no leader epoch bump on ISR shrink (KAFKA-15021)
    _mv(13, "3.6-IV1", True),   # metadata transactions (KIP-868)
    _mv(14, "3.6-IV2", True),   # delegation tokens in KRaft
    _mv(15, "3.7-IV0", True),   # controller registration (KIP-919)
    _mv(16, "3.7-IV1", False),  # reserved
    _mv(17, "3.7-IV2", True),   # JBOD in KRaft (KIP-858)
    _mv(18, "3.7-IV3", False),  # reserved
    _mv(19, "3.7-IV4", False),  # Fetch for KIP-951
    _mv(20, "3.8-IV0", False),  # the 3.8 release
    _mv(21, "3.9-IV0", False),  # ListOffsets v9 (KIP-1005)
    # 3.9 has 4.0-IV0 and 4.0-IV1 as unstable levels (ELR records at 4.0-IV0 there); 4.0 moved ELR to 4.0-IV1.
    _mv(22, "4.0-IV0", True, then=("4.0", False)),  # 4.0: group.version 1 by default (KIP-848)
    _mv(23, "4.0-IV1", False, then=("4.0", True)),  # 4.0: ELR records (KIP-966)
    _mv(24, "4.0-IV2", False, "4.0"),  # transaction.version 1 and 2 by default (KIP-890)
    _mv(25, "4.0-IV3", False, "4.0"),  # async remote ListOffsets (KIP-1075)
    _mv(26, "4.1-IV0", False, "4.0"),  # ELR on by default for new clusters (KIP-966); unstable in 4.0
    _mv(27, "4.1-IV1", False, "4.1"),  # replica fetcher sends Fetch v18 (KIP-1166)
    _mv(28, "4.2-IV0", False, "4.1"),  # share groups on by default (KIP-932); a placeholder in 4.1
    _mv(29, "4.2-IV1", False, "4.1"),  # streams groups on by default (KIP-1071); a placeholder in 4.1
    # A placeholder without a metadata change in 4.2 (PR #20977); from 4.3 on it adds cordoned log
    # directories to the broker registration records (KIP-1066), a change (Kafka 4.3's upgrade notes).
    _mv(30, "4.3-IV0", False, "4.2", then=("4.3", True)),
    # 4.3 keeps one unstable level above its production one, as MetadataVersionTest requires (PR #23244).
    _mv(31, "4.4-IV0", False, "4.3"),  # dead-letter queues for share groups (KIP-1191, PR #21994)
    _mv(32, "4.4-IV1", True, "4.4"),   # CIDR host patterns in ACLs (KIP-1276, PR #22501)
    _mv(33, "4.4-IV2", True, "4.4"),   # controller unregistration (KIP-1312, PR #23235)
    _mv(34, "4.5-IV0", False, "4.4"),  # the unstable placeholder after 4.4's production level (PR #23235)
)


@dataclass(frozen=True)
class _FeatureLevelHistory:
    level: int
    bootstrap: tuple[tuple[str, int], ...]
    """(line, metadata.version) pairs, oldest first: from that line on, the level is the default from
    that metadata.version on. The first pair's line is the first line that defines the level."""
    dependencies: Mapping[str, int] = field(default_factory=dict)

    def in_line(self, line: str) -> bool:
        return _index(line) >= _index(self.bootstrap[0][0])

    def bootstrap_in(self, line: str) -> int:
        return [level for since, level in self.bootstrap if _index(since) <= _index(line)][-1]


@dataclass(frozen=True)
class _FeatureHistory:
    name: str
    levels: tuple[_FeatureLevelHistory, ...]
    latest_production: tuple[tuple[str, int], ...]
    """(line, level) pairs, oldest first: the latest production level from that line on. The first
    pair's line is the first line whose production feature list holds the feature."""

    def in_line(self, line: str) -> bool:
        return _index(line) >= _index(self.latest_production[0][0])

    def latest_production_in(self, line: str) -> int:
        return [level for since, level in self.latest_production if _index(since) <= _index(line)][-1]


def _level(level: int, bootstrap: int, since: str, *, dependencies: Mapping[str, int] | None = None,
           then: tuple[str, int] | None = None) -> _FeatureLevelHistory:
    return _FeatureLevelHistory(level, ((since, bootstrap),) + ((then,) if then else ()), dependencies or {})


_FEATURE_HISTORY: Final = (
    # Kafka's feature-list order (Feature.PRODUCTION_FEATURES; 3.9: Features), which version-mapping prints.
    _FeatureHistory(KRAFT_VERSION, (
        _level(1, 21, "3.9"),  # dynamic quorums (KIP-853)
    ), (("3.9", 1),)),
    # 3.9 defines TV_1 and TV_2 at its unstable 4.0-IV0, so its production level is 0; 4.0 moved them to
    # 4.0-IV2 (KIP-890).
    _FeatureHistory(TRANSACTION_VERSION, (
        _level(1, 22, "3.9", then=("4.0", 24)),
        _level(2, 22, "3.9", then=("4.0", 24)),
    ), (("3.9", 0), ("4.0", 2))),
    _FeatureHistory(GROUP_VERSION, (
        _level(1, 22, "4.0"),  # the consumer rebalance protocol (KIP-848)
    ), (("4.0", 1),)),
    # Production-ready in 4.0 but the default only from 4.1-IV0, unstable in 4.0 (KIP-966).
    _FeatureHistory(ELR_VERSION, (
        _level(1, 26, "4.0", dependencies={METADATA_VERSION: 23}),
    ), (("4.0", 1),)),
    # SV_1 is production-ready in 4.1 as a preview (PR #19831) and the default from 4.2-IV0. SV_2 (dead-letter
    # queues, KIP-1191) is production-ready in 4.4 (PR #22803); PR #21994 puts its bootstrap at 4.4-IV0, and
    # Kafka 4.4's formatter finalizes it at 4.4-IV2 (PR #23235). No dependency of SV_2 is known.
    _FeatureHistory(SHARE_VERSION, (
        _level(1, 28, "4.1"),
        _level(2, 31, "4.4"),
    ), (("4.1", 1), ("4.4", 2))),
    # Early access in 4.1 (StreamsVersion.LATEST_PRODUCTION SV_0, PR #19509), production-ready in 4.2
    # (KIP-1071).
    _FeatureHistory(STREAMS_VERSION, (
        _level(1, 29, "4.1"),
    ), (("4.1", 0), ("4.2", 1))),
)


# --------------------------------------------------------------------------- one line's view


@dataclass(frozen=True)
class MetadataVersion:
    """One metadata.version level as a line defines it (Kafka's ``MetadataVersion``)."""

    level: int
    release: str
    """Release string, ``<release>-IV<n>``."""
    changed_metadata: bool
    """Whether this version changed the metadata record format (downgrading across it is lossy)."""

    @property
    def release_version(self) -> str:
        """``4.2`` for ``4.2-IV1``."""
        return self.release.split("-", 1)[0]


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
    """A production feature other than metadata.version (Kafka's ``Feature``), as one line defines it."""

    name: str
    levels: tuple[FeatureLevel, ...]
    """Every level the line defines, level 0 included, ascending."""
    latest_production: int
    latest_testing: int

    def level(self, level: int) -> FeatureLevel | None:
        return next((fl for fl in self.levels if fl.level == level), None)

    def default_level(self, metadata_version: int) -> int:
        """The highest level whose bootstrap metadata.version is at or below ``metadata_version``."""
        return max((fl.level for fl in self.levels if fl.bootstrap_metadata_version <= metadata_version),
                   default=0)


@dataclass(frozen=True)
class _LineFacts:
    name: str
    minimum: int
    minimum_bootstrap: int
    latest_production: int


class KafkaLine:
    """The feature tables of one Kafka line (3.9, 4.0, ... 4.4).

    What a node of the line advertises (:meth:`supported_features`), the default levels it gives a
    metadata.version (:meth:`default_levels`, what ``version-mapping`` prints and the formatter
    writes), the levels it accepts (:meth:`supported_range` in UpdateFeatures,
    :attr:`bootstrap_metadata_versions` in bootstrap files) and its rules: release strings,
    dependencies, lossy downgrades.
    """

    def __init__(self, facts: _LineFacts) -> None:
        self.name = facts.name
        self.metadata_versions: tuple[MetadataVersion, ...] = tuple(
            MetadataVersion(h.level, h.release, h.changed_in(facts.name))
            for h in _METADATA_VERSION_HISTORY if h.in_line(facts.name))
        """Every level the line defines, ascending: from its minimum to its latest testing level."""
        self.minimum_metadata_version = facts.minimum
        """The lowest level it advertises and accepts in UpdateFeatures (3.9: ``MINIMUM_KRAFT_VERSION``)."""
        self.minimum_bootstrap_metadata_version = facts.minimum_bootstrap
        """The lowest level it formats or starts from (3.9: ``MINIMUM_BOOTSTRAP_VERSION``, 3.3-IV0)."""
        self.latest_production_metadata_version = facts.latest_production
        self.latest_testing_metadata_version = self.metadata_versions[-1].level
        """The highest level it defines, usable only with ``unstable.feature.versions.enable=true``."""
        self.features: tuple[Feature, ...] = tuple(
            _feature_in(history, facts.name, facts.minimum)
            for history in _FEATURE_HISTORY if history.in_line(facts.name))
        """The production features besides metadata.version, in Kafka's order."""
        self._by_level = {mv.level: mv for mv in self.metadata_versions}
        # From 4.2 on fromVersionString(String, boolean) refuses unstable levels itself, with the
        # "Unknown metadata.version" text; before, it knows every level and only names the valid range.
        self._checks_unstable_versions = _index(facts.name) >= _index("4.2")
        self._by_name = {feature.name: feature for feature in self.features}
        # The UpdateFeatures rules of the line's FeatureControlManager that changed since 3.9:
        self.update_is_all_or_nothing = _index(facts.name) >= _index("4.0")
        """From 4.0 the first refused feature refuses the whole request; 3.9 decides each feature alone
        and writes the levels that passed."""
        self.update_checks_dependencies = _index(facts.name) >= _index("4.0")
        """From 4.0 an update must meet :meth:`dependency_error`; 3.9 checks no dependencies."""
        self.update_upgrades_kraft_version = _index(facts.name) >= _index("4.1")
        """From 4.1 a kraft.version upgrade turns a static quorum dynamic (KAFKA-16538); 3.9 and 4.0 do not
        upgrade kraft.version."""

    def __repr__(self) -> str:
        return f"KafkaLine({self.name!r})"

    # ------------------------------------------------------------------ metadata.version

    @property
    def release_strings(self) -> dict[int, str]:
        return {mv.level: mv.release for mv in self.metadata_versions}

    @property
    def bootstrap_metadata_versions(self) -> range:
        """The levels a node of the line starts from in a bootstrap file or formats with."""
        return range(self.minimum_bootstrap_metadata_version, self.latest_testing_metadata_version + 1)

    def metadata_version(self, level: int) -> MetadataVersion | None:
        return self._by_level.get(level)

    def is_known_metadata_version(self, level: int) -> bool:
        return level in self._by_level

    def release_string(self, level: int) -> str:
        """``4.2-IV1`` for 29; levels the line lacks print as ``metadata.version <n>``."""
        mv = self._by_level.get(level)
        return mv.release if mv is not None else f"metadata.version {level}"

    def latest_metadata_version(self, *, unstable: bool = False) -> int:
        """The latest production level, or the latest testing one when unstable versions are enabled."""
        return self.latest_testing_metadata_version if unstable else self.latest_production_metadata_version

    def metadata_version_from_string(self, text: str, *, unstable: bool = False) -> int:
        """Kafka's ``MetadataVersion.fromVersionString``: ``4.2-IV1`` -> 29, ``3.7`` -> 3.7-IV4 (the
        release's highest production IV), ``3.8.1`` -> 3.8's; only the first two dot-separated parts
        count, so a release without a production IV in this line is unknown unless named with its IV.

        From 4.2 on a level above the latest production one is refused unless ``unstable``; 3.9, 4.0
        and 4.1 accept every level they define by its IV and leave the production check to the caller.
        Raises ValueError with the line's message. (3.9 also parses the pre-KRaft releases, as
        metadata.version -1; they are not modelled here and are refused.)"""
        key = ".".join(text.split(".")[:2])
        level = next((mv.level for mv in self.metadata_versions if mv.release == key), None)
        production = [mv.level for mv in self.metadata_versions
                      if mv.release_version == key and mv.level <= self.latest_production_metadata_version]
        if production:
            level = max(production)
        if not self._checks_unstable_versions:
            if level is None:
                raise ValueError(self._invalid_version_text(text))
            return level
        latest = self.latest_metadata_version(unstable=unstable)
        if level is None or level > latest:
            names = ", ".join(mv.release for mv in self.metadata_versions
                              if self.minimum_metadata_version <= mv.level <= latest)
            raise ValueError(f"Unknown metadata.version '{text}'. Supported metadata.version are: {names}")
        return level

    def _invalid_version_text(self, text: str) -> str:
        """3.9: ``Version X is not a valid version``; 4.0 and 4.1 name the range (the 4.1 text; 4.0's is
        taken to be the same, both from KAFKA-18601's ``MINIMUM_VERSION``)."""
        if self.name == "3.9":
            return f"Version {text} is not a valid version"
        return (f"Version {text} is not a valid version. The minimum version is "
                f"{self.release_string(self.minimum_metadata_version)} and the maximum version is "
                f"{self.release_string(self.latest_testing_metadata_version)}")

    def metadata_changed(self, current: int, target: int) -> bool:
        """Kafka's ``MetadataVersion.checkIfMetadataChanged``: does any level in (low, high] change the
        metadata format? A downgrade from ``current`` to ``target`` is lossy exactly when this is True."""
        low, high = sorted((current, target))
        return any(mv.changed_metadata for mv in self.metadata_versions if low < mv.level <= high)

    # ------------------------------------------------------------------ the other features

    def feature(self, name: str) -> Feature | None:
        return self._by_name.get(name)

    def supported_range(self, name: str, *, unstable: bool = False) -> tuple[int, int]:
        """(min, max) level a node of the line supports for ``name``; (0, 0) for a feature it does
        not know (Kafka's ``DISABLED`` range)."""
        if name == METADATA_VERSION:
            return self.minimum_metadata_version, self.latest_metadata_version(unstable=unstable)
        feature = self._by_name.get(name)
        if feature is None:
            return 0, 0
        return 0, feature.latest_testing if unstable else feature.latest_production

    def supported_features(self, *, unstable: bool = False) -> tuple[tuple[str, int, int], ...]:
        """(name, min, max) of every feature a node of the line advertises in ApiVersions, metadata.version
        first, then Kafka's order; features whose maximum would be 0 are left out, as Kafka does."""
        ranges = [(name, *self.supported_range(name, unstable=unstable))
                  for name in (METADATA_VERSION, *self._by_name)]
        return tuple((name, low, high) for name, low, high in ranges if high > 0)

    def default_levels(self, metadata_version: int) -> dict[str, int]:
        """Every production feature's default level at ``metadata_version``, kraft.version included, in
        Kafka's order (the levels below 1 too)."""
        return {f.name: f.default_level(metadata_version) for f in self.features}

    def version_mapping(self, release: str | int, *, unstable: bool = False) -> dict[str, int]:
        """What ``kafka-features version-mapping --release-version X`` prints: metadata.version first,
        then every other feature's default level. ``release`` is a release string or a level."""
        level = (release if isinstance(release, int)
                 else self.metadata_version_from_string(release, unstable=unstable))
        if not self.is_known_metadata_version(level):
            raise ValueError(f"Unknown metadata.version {level}")
        return {METADATA_VERSION: level, **self.default_levels(level)}

    def dependency_error(self, name: str, level: int, proposed: Mapping[str, int]) -> str | None:
        """Kafka's ``Feature.validateVersion``: None when ``level`` of ``name`` has its dependencies met
        by ``proposed`` (the finalized levels with the request's updates applied), else Kafka's reason.
        Every level from 1 needs the line's minimum bootstrap metadata.version."""
        feature = self._by_name.get(name)
        if feature is None:
            return f"Feature {name} not found."
        entry = feature.level(level)
        if entry is None:
            return f"No feature level {level} found for feature {name}."
        needs = [(METADATA_VERSION, self.minimum_bootstrap_metadata_version)] if level >= 1 else []
        for dependency, required in [*needs, *entry.dependencies.items()]:
            current = proposed.get(dependency)
            if current is None or current < required:
                return (f"{name} could not be set to {level} because it depends on {dependency} level "
                        f"{required}")
        return None


def _feature_in(history: _FeatureHistory, line: str, minimum: int) -> Feature:
    levels = (FeatureLevel(0, minimum),) + tuple(
        FeatureLevel(entry.level, entry.bootstrap_in(line), entry.dependencies)
        for entry in history.levels if entry.in_line(line))
    return Feature(history.name, levels, history.latest_production_in(line), levels[-1].level)


LINES: Final[dict[str, KafkaLine]] = {facts.name: KafkaLine(facts) for facts in (
    # name, minimum, minimum in bootstrap files, latest production (MetadataVersion.LATEST_PRODUCTION)
    _LineFacts("3.9", 1, 4, 21),
    _LineFacts("4.0", 7, 7, 25),   # PR #18902
    _LineFacts("4.1", 7, 7, 27),   # PR #20137
    _LineFacts("4.2", 7, 7, 29),   # PR #20993
    _LineFacts("4.3", 7, 7, 30),   # Kafka 4.3's upgrade notes (upgrade --release-version 4.3)
    _LineFacts("4.4", 7, 7, 33),   # PR #23235 (4.4.0 RC1)
)}
"""Every modelled line by name."""

NEWEST: Final = LINES[LINE_NAMES[-1]]
"""Kafka 4.4: what the tools and the reference server follow."""


# --------------------------------------------------------------------------- the newest line's names

MINIMUM_METADATA_VERSION: Final = NEWEST.minimum_metadata_version
LATEST_PRODUCTION_METADATA_VERSION: Final = NEWEST.latest_production_metadata_version
LATEST_TESTING_METADATA_VERSION: Final = NEWEST.latest_testing_metadata_version
RELEASE_STRINGS: Final = NEWEST.release_strings
SUPPORTED_FEATURES: Final = NEWEST.supported_features()
"""(name, min, max) of every feature a controller of the newest line advertises, in Kafka's order."""
DEFAULT_FEATURE_LEVELS: Final[dict[str, int]] = {
    name: level for name, level in NEWEST.default_levels(LATEST_PRODUCTION_METADATA_VERSION).items()
    if name != KRAFT_VERSION and level > 0}
"""What the newest line's formatter finalizes besides metadata.version when no --release-version is given."""

release_string = NEWEST.release_string
is_known_metadata_version = NEWEST.is_known_metadata_version
latest_metadata_version = NEWEST.latest_metadata_version
metadata_version_from_string = NEWEST.metadata_version_from_string
metadata_changed = NEWEST.metadata_changed
supported_range = NEWEST.supported_range
default_levels = NEWEST.default_levels
version_mapping = NEWEST.version_mapping
dependency_error = NEWEST.dependency_error
