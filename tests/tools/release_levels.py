"""What ``--release-version X`` means to Kafka 4.4's tools, for every release from 3.3 to 4.4, written
out by hand: the metadata.version (the release's highest production IV, ``MetadataVersion
.fromVersionString``) and the default level of each other feature at it (``Feature.defaultLevel``).

Sources: the metadata.version levels are Kafka's MetadataVersion constants (3.3-IV3 ... 3.9-IV0 as in
3.9.0; 4.0-IV3 PR #18902; 4.1-IV1 PR #20137; 4.2-IV1 PR #20993; 4.3-IV0 Kafka 4.3's upgrade notes;
4.4-IV2 PR #23235). The other levels' bootstrap metadata.versions: kraft.version 1 at 3.9-IV0 (KIP-853),
group.version 1 at 4.0-IV0 (KIP-848), transaction.version 2 at 4.0-IV2 (KIP-890), ELR 1 at 4.1-IV0
(KIP-966), share.version 1 at 4.2-IV0 (KIP-932) and 2 at 4.4-IV0 (PR #21994; Kafka 4.4 formats it at
4.4-IV2, PR #23235), streams.version 1 at 4.2-IV1 (KIP-1071)."""

from __future__ import annotations

FEATURE_ORDER = ("kraft.version", "transaction.version", "group.version", "eligible.leader.replicas.version",
                 "share.version", "streams.version")
"""Kafka's feature list order (Feature.PRODUCTION_FEATURES): what version-mapping prints."""

RELEASES: dict[str, tuple[int, str, tuple[int, int, int, int, int, int]]] = {
    # --release-version: (metadata.version, its release string, levels in FEATURE_ORDER)
    "3.3": (7, "3.3-IV3", (0, 0, 0, 0, 0, 0)),
    "3.4": (8, "3.4-IV0", (0, 0, 0, 0, 0, 0)),
    "3.5": (11, "3.5-IV2", (0, 0, 0, 0, 0, 0)),
    "3.6": (14, "3.6-IV2", (0, 0, 0, 0, 0, 0)),
    "3.7": (19, "3.7-IV4", (0, 0, 0, 0, 0, 0)),
    "3.8": (20, "3.8-IV0", (0, 0, 0, 0, 0, 0)),
    "3.9": (21, "3.9-IV0", (1, 0, 0, 0, 0, 0)),
    "4.0": (25, "4.0-IV3", (1, 2, 1, 0, 0, 0)),
    "4.1": (27, "4.1-IV1", (1, 2, 1, 1, 0, 0)),
    "4.2": (29, "4.2-IV1", (1, 2, 1, 1, 1, 1)),
    "4.3": (30, "4.3-IV0", (1, 2, 1, 1, 1, 1)),
    "4.4": (33, "4.4-IV2", (1, 2, 1, 1, 2, 1)),
}


def levels(release: str) -> dict[str, int]:
    """Every feature's level for ``release``, metadata.version first, in Kafka's order."""
    level, _, others = RELEASES[release]
    return {"metadata.version": level, **dict(zip(FEATURE_ORDER, others, strict=True))}


def version_mapping_text(release: str) -> str:
    """What ``version-mapping --release-version <release>`` prints."""
    mapping = levels(release)
    lines = [f"metadata.version={mapping.pop('metadata.version')} ({release})"]
    return "\n".join(lines + [f"{name}={level}" for name, level in mapping.items()]) + "\n"
