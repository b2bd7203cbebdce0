"""Feature levels as a Kafka 4.2 controller knows them: metadata.version and the other features.

``SUPPORTED_FEATURES`` is what a controller advertises in ApiVersions (facts f.1/f.2): metadata.version
from 3.3-IV3 (7) to the latest production level 4.2-IV1 (29), and each other production feature from
0 to its latest production level, in Kafka's feature-list order. Features whose maximum would be 0 are
not advertised at all.
"""

from __future__ import annotations

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
