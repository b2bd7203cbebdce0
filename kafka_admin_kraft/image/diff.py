"""The difference of two metadata images: every path added, removed or changed, grouped by area.

Paths are the shell's (``/image/...``), plus ``/kraft/version`` and ``/kraft/voters/<id>`` for the
KRaft control records, which Kafka's image does not hold. Each topic is compared once, by name
(``/image/topics/byName``); a topic deleted and created again under its name shows as a changed
``id``. The provenance is not a difference: it is reported beside the images.

Secrets are never printed: SCRAM credentials and delegation tokens show as names only (a changed
credential is reported, its value is ``[redacted]``), and so do configuration values whose key names
a password, secret, key or JAAS configuration.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from kafka_admin_kraft.image.model import MetadataImage
from kafka_admin_kraft.image.nodes import ItemLeaf, Node, image_node, walk
from kafka_admin_kraft.image.nodes import Leaf as NodeLeaf
from kafka_admin_kraft.image.text import string_key

REDACTED: Final = "[redacted]"
AREAS: Final = (
    ("features", "features", ("/image/features/",)),
    ("voters", "voters and registrations", ("/kraft/", "/image/cluster/controllers/")),
    ("brokers", "brokers", ("/image/cluster/brokers/",)),
    ("topics", "topics and partitions", ("/image/topics/byName/",)),
    ("acls", "ACLs", ("/image/acls/",)),
    ("configs", "configs", ("/image/configs/",)),
    ("quotas", "client quotas", ("/image/clientQuotas/",)),
    ("producerIds", "producer ids", ("/image/producerIds/",)),
    ("scram", "SCRAM credentials", ("/image/scram/",)),
    ("delegationTokens", "delegation tokens", ("/image/delegationToken/",)),
)
"""(key, title, path prefixes), in the order the difference lists them."""
_SECRET_PATHS: Final = ("/image/scram/", "/image/delegationToken/")
_SENSITIVE_KEY: Final = re.compile(r"password|secret|jaas\.config|(^|\.)key$|credentials", re.IGNORECASE)
_SKIPPED: Final = ("/image/provenance", "/image/topics/byId/")


@dataclass(frozen=True)
class Side:
    """One compared value: the shell's text and the JSON value, both redacted where secret; equality is
    decided on the node's unredacted identity."""

    node: Node
    secret: bool = False

    @property
    def text(self) -> str:
        return REDACTED if self.secret else self.node.text()

    @property
    def value(self) -> Any:
        return REDACTED if self.secret else self.node.value()


@dataclass(frozen=True)
class Change:
    path: str
    kind: str
    """``added``, ``removed`` or ``changed``."""
    old: Side | None
    new: Side | None

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "change": self.kind, "old": None if self.old is None else self.old.value,
                "new": None if self.new is None else self.new.value}


@dataclass(frozen=True)
class ImageDiff:
    """The changes from image ``a`` to image ``b``, in area order then path order."""

    a: MetadataImage
    b: MetadataImage
    changes: list[Change] = field(default_factory=list)

    @property
    def equal(self) -> bool:
        return not self.changes

    def by_area(self) -> list[tuple[str, str, list[Change]]]:
        """(area key, title, changes) of every area with changes, in :data:`AREAS` order."""
        grouped: dict[str, list[Change]] = {}
        for change in self.changes:
            grouped.setdefault(area_of(change.path), []).append(change)
        return [(key, title, grouped[key]) for key, title, _ in AREAS if key in grouped]

    def text(self) -> str:
        """Plain text: a header naming both images, then each area's changes (nothing when equal)."""
        if self.equal:
            return ""
        lines = [f"--- {_describe(self.a)}", f"+++ {_describe(self.b)}"]
        for _, title, changes in self.by_area():
            lines.append("")
            lines.append(f"{title}:")
            for change in changes:
                lines.extend(change_lines(change))
        count = len(self.changes)
        lines += ["", f"{count} change{'' if count == 1 else 's'}"]
        return "\n".join(lines) + "\n"

    def to_json(self) -> dict[str, Any]:
        return {
            "a": _side(self.a), "b": _side(self.b), "equal": self.equal,
            "areas": [{"area": key, "title": title, "changes": [change.to_json() for change in changes]}
                      for key, title, changes in self.by_area()],
        }


def change_lines(change: Change) -> list[str]:
    """``+ path: new``, ``- path: old``, or ``~ path`` with the old and new text below it."""
    if change.kind == "added":
        assert change.new is not None
        return [f"  + {change.path}: {change.new.text}"]
    if change.kind == "removed":
        assert change.old is not None
        return [f"  - {change.path}: {change.old.text}"]
    assert change.old is not None and change.new is not None
    return [f"  ~ {change.path}", f"      old: {change.old.text}", f"      new: {change.new.text}"]


def _describe(image: MetadataImage) -> str:
    provenance = image.provenance.text()
    return f"{image.source} ({provenance})" if image.source else provenance


def _side(image: MetadataImage) -> dict[str, Any]:
    return {"source": image.source, "provenance": image.provenance.value(),
            "committedOffset": image.committed_offset, "warnings": list(image.warnings)}


def area_of(path: str) -> str:
    for key, _, prefixes in AREAS:
        if path.startswith(prefixes):
            return key
    return "other"


def _secret(path: str) -> bool:
    if path.startswith(_SECRET_PATHS):
        return True
    return path.startswith("/image/configs/") and _SENSITIVE_KEY.search(path.rsplit("/", 1)[1]) is not None


def leaves(image: MetadataImage) -> Iterator[tuple[str, Side]]:
    """Every compared value of an image with its path."""
    for path, node in walk(image_node(image), "/image"):
        if node.is_directory or path.startswith(_SKIPPED):
            continue
        if path.startswith("/image/topics/byName/") and path.endswith("/name"):
            continue  # the name is the path
        yield path, Side(node, _secret(path))
    if image.kraft_version is not None:
        yield "/kraft/version", Side(NodeLeaf(str(image.kraft_version), image.kraft_version))
    voters = image.voters or {}
    for voter_id in sorted(voters):
        yield f"/kraft/voters/{voter_id}", Side(ItemLeaf(voters[voter_id]))


def diff_images(a: MetadataImage, b: MetadataImage) -> ImageDiff:
    """Every path added, removed or changed from ``a`` to ``b``."""
    old = dict(leaves(a))
    new = dict(leaves(b))
    changes = []
    for path in sorted(old.keys() | new.keys(), key=lambda p: (_area_index(p), string_key(p))):
        before, after = old.get(path), new.get(path)
        if before is None:
            changes.append(Change(path, "added", None, after))
        elif after is None:
            changes.append(Change(path, "removed", before, None))
        elif before.node.identity() != after.node.identity():
            changes.append(Change(path, "changed", before, after))
    return ImageDiff(a, b, changes)


def _area_index(path: str) -> int:
    key = area_of(path)
    return next((index for index, (area, _, _) in enumerate(AREAS) if area == key), len(AREAS))
