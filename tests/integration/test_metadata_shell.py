"""``kafka-metadata-shell`` and ``kafka-metadata-diff`` on snapshots the reference server writes: the
shell reads a running node's directory and its snapshots, and the difference of the snapshots taken
before and after a voter change and a feature upgrade lists exactly those changes."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from tools.cluster_util import run

from integration.harness import FAST_ELECTIONS, HOST, LISTENER, Cluster, wait_until
from kafka_admin_kraft import Admin
from kafka_admin_kraft.errors import KafkaApiError
from kafka_admin_kraft.features import NEWEST
from kafka_admin_kraft.image import MetadataImage, load_image
from kafka_admin_kraft.records import list_snapshots
from kafka_admin_kraft.storage.meta_properties import read_meta_properties

SNAPSHOTS = {"metadata.log.max.record.bytes.between.snapshots": "2048"}
"""A snapshot every 2 KiB of new records: one every few seconds."""


def latest_snapshot_where(node_dir: Path, condition: Callable[[MetadataImage], bool]) -> Path:
    """The newest snapshot of a node whose image satisfies ``condition``, copied out of its directory
    (retention may delete it)."""

    def found() -> Path | None:
        snapshots = list_snapshots(node_dir)
        if not snapshots:
            return None
        path = node_dir / snapshots[-1].file_name
        copy = node_dir.parent.parent / f"copy-{snapshots[-1].file_name}"
        shutil.copyfile(path, copy)
        return copy if condition(load_image(copy)) else None

    return wait_until(found, 30, "a snapshot of the expected image")


def test_a_voter_change_and_a_feature_upgrade_are_exactly_the_difference(
    make_cluster: Callable[..., Cluster],
) -> None:
    cluster = make_cluster(2, properties={**FAST_ELECTIONS, **SNAPSHOTS})
    first, second = cluster.nodes[1], cluster.nodes[2]
    for node, how in ((first, "--standalone"), (second, "--no-initial-controllers")):
        formatted = run(
            "kafka-storage",
            "format",
            "--config",
            str(cluster.write_config(node)),
            "--cluster-id",
            cluster.cluster_id,
            "--release-version",
            "4.3",
            how,
        )
        assert formatted.returncode == 0, formatted.stderr
    directory_id = read_meta_properties(second.metadata_dir).directory_id  # the one kafka-storage wrote
    assert directory_id is not None
    cluster.start_all()
    cluster.wait_for_leader(30, candidates=[1])
    before = latest_snapshot_where(first.partition_dir, lambda image: sorted(image.controllers) == [1, 2])

    # Kafka's text from a snapshot the server wrote, and from the running node's directory.
    shell = run("kafka-metadata-shell", "--snapshot", str(before), "cat", "/image/features/metadataVersion")
    assert (shell.returncode, shell.stdout, shell.stderr) == (0, "Optional[4.3-IV0]\n", "")
    listing = run("kafka-metadata-shell", "-s", str(first.metadata_dir), "ls", "/image/cluster/controllers")
    assert (listing.returncode, listing.stdout) == (0, "1\n2\n")

    with Admin(
        bootstrap_controllers=cluster.bootstrap_servers(),
        request_timeout_ms=5000,
        default_api_timeout_ms=20000,
    ) as admin:

        def added() -> bool:
            try:
                admin.add_raft_voter(2, directory_id,
                                     [{"listener": LISTENER, "host": HOST, "port": second.port}])
            except KafkaApiError as exc:  # not caught up yet: REQUEST_TIMED_OUT
                if exc.code != 7:
                    raise
                return False
            return True

        def observed() -> bool:
            found = cluster.find_leader([1])
            return found is not None and any(o.replica_id == 2 and o.last_caught_up_timestamp > 0
                                             for o in found[1].observers)

        wait_until(observed, 30, "node 2 caught up as an observer")
        wait_until(added, 60, "node 2 added as a voter")
    upgraded = run(
        "kafka-features", "--bootstrap-controller", first.address, "upgrade", "--release-version", "4.4"
    )
    assert upgraded.returncode == 0, upgraded.stderr
    after = latest_snapshot_where(
        first.partition_dir,
        lambda image: image.metadata_version == 33 and sorted(image.voters or {}) == [1, 2],
    )

    result = run("kafka-metadata-diff", str(before), str(after), "--output", "json")
    assert result.returncode == 1, result.stderr
    areas = {area["area"]: area["changes"] for area in json.loads(result.stdout)["areas"]}
    old_levels, new_levels = NEWEST.version_mapping("4.3"), NEWEST.version_mapping("4.4")
    expected_features = [
        {"path": "/image/features/metadataVersion", "change": "changed", "old": "4.3-IV0", "new": "4.4-IV2"}
    ] + [
        {
            "path": f"/image/features/finalized_{name}",
            "change": "changed",
            "old": old_levels[name],
            "new": new_levels[name],
        }
        for name in sorted(new_levels)
        if name not in ("metadata.version", "kraft.version") and old_levels.get(name) != new_levels[name]
    ]
    assert sorted(areas) == ["features", "voters"]
    assert areas["features"] == sorted(expected_features, key=lambda change: change["path"])
    assert [(c["path"], c["change"]) for c in areas["voters"]] == [("/kraft/voters/2", "added")]
    assert areas["voters"][0]["new"]["endpoints"] == [{"name": LISTENER, "host": HOST, "port": second.port}]
