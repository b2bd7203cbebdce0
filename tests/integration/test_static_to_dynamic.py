"""A static quorum (controller.quorum.voters, kraft.version 0) turned dynamic with the tools:
``kafka-features upgrade --release-version`` upgrades kraft.version to 1, and
``kafka-metadata-quorum add-controller`` then adds a fourth controller."""

from __future__ import annotations

import re
import time
from pathlib import Path

from tools.cluster_util import PROPERTIES, run

from integration.harness import Cluster
from kafka_admin_kraft_server.local import free_ports


def test_upgrade_a_static_quorum_with_kafka_features_then_add_a_controller(tmp_path: Path) -> None:
    with Cluster(tmp_path, 3, dynamic=False, properties=dict(PROPERTIES)) as cluster:
        cluster.format()
        cluster.start_all()
        leader, _ = cluster.wait_for_leader(60)
        cluster.wait_caught_up(leader, 60)
        bootstrap = cluster.bootstrap_servers()
        features = ("kafka-features", "--bootstrap-controller", bootstrap)

        assert "Feature: kraft.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\t" \
               "FinalizedVersionLevel: 0" in run(*features, "describe").stdout
        deadline = time.monotonic() + 60
        while True:  # the leader refuses until every voter has told it the kraft.versions it supports
            upgrade = run(*features, "upgrade", "--release-version", "4.4")
            if upgrade.returncode == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert upgrade.returncode == 0, upgrade.stdout + upgrade.stderr
        assert "kraft.version was upgraded to 1." in upgrade.stdout
        assert "FinalizedVersionLevel: 1" in next(
            line for line in run(*features, "describe").stdout.splitlines() if "kraft.version" in line)

        # The new controller finds the quorum through controller.quorum.bootstrap.servers.
        new = cluster.new_node(4, free_ports(1)[0])
        cluster.nodes[4] = new
        props = cluster.node_properties(new)
        del props["controller.quorum.voters"]
        props["controller.quorum.bootstrap.servers"] = bootstrap
        new.config_path.parent.mkdir(parents=True, exist_ok=True)
        new.config_path.write_text("".join(f"{key}={value}\n" for key, value in props.items()))
        formatted = run("kafka-storage", "format", "--config", str(new.config_path), "--cluster-id",
                        cluster.cluster_id, "--no-initial-controllers")
        assert formatted.returncode == 0, formatted.stderr
        cluster.start(4)

        added = run("kafka-metadata-quorum", "--bootstrap-controller", bootstrap,
                    "--command-config", str(new.config_path), "add-controller")
        assert added.returncode == 0, added.stdout + added.stderr
        assert re.match(r"Added controller 4 with directory id \S+ and endpoints: CONTROLLER://",
                        added.stdout)
        status = run("kafka-metadata-quorum", "--bootstrap-controller", bootstrap, "describe", "--status")
        voters = re.search(r"^CurrentVoters:\s+(.*)$", status.stdout, flags=re.MULTILINE)
        assert voters is not None and re.findall(r'"id": (\d)', voters.group(1)) == ["1", "2", "3", "4"]
        cluster.assert_running()
