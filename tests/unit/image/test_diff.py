"""The difference of two images: exactly the paths that changed, by area, secrets redacted."""

from __future__ import annotations

from pathlib import Path

from kafka_admin_kraft.image import diff_images, load_image
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import Uuid
from unit.image.image_testlib import (
    broker,
    config,
    controller,
    feature,
    partition,
    scram,
    topic,
    voters,
    write_snapshot,
)

KRAFT = messages.KRaftVersionRecord(version=0, k_raft_version=1)
ORDERS = Uuid.from_ints(11, 11)


def _base() -> list[list[object]]:
    return [
        [feature("metadata.version", 30), feature("group.version", 1)],
        [controller(1), controller(2)],
        [broker(1)],
        [config(4, "", "sasl.jaas.config", "secret-one")],
        [scram("alice", b"one")],
    ]


def test_voter_change_feature_upgrade_and_topic_creation_are_exactly_the_changes(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    before = write_snapshot(tmp_path / "a", _base(), kraft=[KRAFT, voters(1, 2)])  # type: ignore[arg-type]
    after = write_snapshot(
        tmp_path / "b",
        [
            *_base(),
            [controller(3)],
            [feature("metadata.version", 33)],
            [topic("orders", ORDERS), partition(0, [1], topic_id=ORDERS)],
        ],
        kraft=[KRAFT, voters(1, 2, 3)],
    )  # type: ignore[list-item]
    difference = diff_images(load_image(before), load_image(after))
    assert [(change.path, change.kind) for change in difference.changes] == [
        ("/image/features/metadataVersion", "changed"),
        ("/image/cluster/controllers/3", "added"),
        ("/kraft/voters/3", "added"),
        ("/image/topics/byName/orders/0", "added"),
        ("/image/topics/byName/orders/id", "added"),
    ]
    assert [title for _, title, _ in difference.by_area()] == [
        "features",
        "voters and registrations",
        "topics and partitions",
    ]
    text = difference.text()
    assert (
        "  ~ /image/features/metadataVersion\n      old: Optional[4.3-IV0]\n      new: Optional[4.4-IV2]\n"
        in text
    )
    assert text.endswith("\n5 changes\n")
    document = difference.to_json()
    assert document["equal"] is False
    assert document["areas"][0]["changes"] == [
        {"path": "/image/features/metadataVersion", "change": "changed", "old": "4.3-IV0", "new": "4.4-IV2"}
    ]


def test_equal_images_have_no_changes_and_no_text(tmp_path: Path) -> None:
    path = write_snapshot(tmp_path, _base())  # type: ignore[arg-type]
    difference = diff_images(load_image(path), load_image(path))
    assert difference.equal and difference.text() == "" and difference.to_json()["areas"] == []


def test_secrets_show_as_names_only(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    before = write_snapshot(tmp_path / "a", _base())  # type: ignore[arg-type]
    changed = [
        [feature("metadata.version", 30), feature("group.version", 1)],
        [controller(1), controller(2)],
        [broker(1)],
        [config(4, "", "sasl.jaas.config", "secret-two")],
        [scram("alice", b"two")],
        [scram("bob", b"x")],
    ]
    after = write_snapshot(tmp_path / "b", changed)  # type: ignore[arg-type]
    difference = diff_images(load_image(before), load_image(after))
    text = difference.text()
    assert "secret-" not in text and "74776f" not in text  # neither the config nor the salt (hex of "two")
    assert [(c.path, c.kind) for c in difference.changes] == [
        ("/image/configs/BROKER/sasl.jaas.config", "changed"),
        ("/image/scram/SCRAM-SHA-256/alice", "changed"),
        ("/image/scram/SCRAM-SHA-256/bob", "added"),
    ]
    assert "  + /image/scram/SCRAM-SHA-256/bob: [redacted]" in text
