"""`kafka-metadata-quorum exporter` as operators run it: the console script against three reference
controllers, scraped over HTTP while the leader is killed, then stopped by a signal."""

from __future__ import annotations

import select
import signal
import subprocess
import time
from collections.abc import Callable, Iterator

import pytest
import requests
from console_scripts import console_script
from prometheus_client.parser import text_string_to_metric_families

from integration.harness import FAST_ELECTIONS, UNSTABLE_API_VERSIONS, Cluster, wait_until

SCRAPE_TIMEOUT = 3.0
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


class Exporter:
    """The exporter process and its /metrics URL (from the line it prints once it listens)."""

    def __init__(self, cluster: Cluster, *options: str) -> None:
        self.process = subprocess.Popen(
            [console_script("kafka-metadata-quorum"), "--bootstrap-controller", cluster.bootstrap_servers(),
             "exporter", "--listen", "127.0.0.1:0", *options],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.process.stderr is not None
        ready, _, _ = select.select([self.process.stderr], [], [], 30)
        line = self.process.stderr.readline() if ready else ""
        assert line.startswith("Serving quorum metrics on http://127.0.0.1:"), line
        self.url = line.split()[-1]
        assert self.url.endswith("/metrics") and not self.url.endswith(":0/metrics")

    def scrape(self) -> Samples:
        """One scrape; it must answer within the scrape timeout (plus HTTP and parsing on a busy host)."""
        started = time.monotonic()
        response = requests.get(self.url, timeout=SCRAPE_TIMEOUT + 5)
        took = time.monotonic() - started
        assert response.status_code == 200
        assert took < SCRAPE_TIMEOUT + 1.5, f"a scrape took {took:.1f} s"
        return {(s.name, tuple(sorted(s.labels.items()))): s.value
                for family in text_string_to_metric_families(response.text) for s in family.samples}

    def stop(self, sig: signal.Signals) -> tuple[int, str, str]:
        self.process.send_signal(sig)
        stdout, stderr = self.process.communicate(timeout=15)
        return self.process.returncode, stdout, stderr

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.communicate(timeout=15)


@pytest.fixture
def quorum(make_cluster: Callable[..., Cluster]) -> Cluster:
    cluster = make_cluster(3, properties={**FAST_ELECTIONS, **UNSTABLE_API_VERSIONS}).format().start_all()
    leader, _ = cluster.wait_for_leader(30)
    cluster.wait_caught_up(leader, 30)
    return cluster


@pytest.fixture
def exporters() -> Iterator[list[Exporter]]:
    """Exporters a test starts; any still running at teardown is killed."""
    started: list[Exporter] = []
    yield started
    for exporter in started:
        exporter.kill()


def gauge(samples: Samples, name: str, **labels: str) -> float | None:
    return samples.get((name, tuple(sorted(labels.items()))))


def test_exporter_follows_a_leader_failover_and_stops_on_a_signal(quorum: Cluster,
                                                                   exporters: list[Exporter]) -> None:
    timeout_ms = str(int(SCRAPE_TIMEOUT * 1000))
    exporter = Exporter(quorum, "--min-interval-ms", "200", "--scrape-timeout-ms", timeout_ms)
    exporters.append(exporter)
    leader, before = quorum.wait_for_leader(10)
    samples = exporter.scrape()
    assert gauge(samples, "kraft_quorum_up") == 1
    assert gauge(samples, "kraft_quorum_status") == 0
    assert gauge(samples, "kraft_quorum_leader_id") == leader
    assert gauge(samples, "kraft_quorum_leader_epoch") == before.leader_epoch
    assert gauge(samples, "kraft_quorum_voters") == 3
    assert gauge(samples, "kraft_quorum_committed_voters") == 3
    assert gauge(samples, "kraft_quorum_fault_tolerance") == 1
    for node in quorum.nodes.values():
        labels = {"node_id": str(node.node_id), "directory_id": str(node.directory_id), "role": "voter"}
        assert gauge(samples, "kraft_quorum_replica_log_end_offset", **labels) is not None
        assert gauge(samples, "kraft_quorum_node_reachable", node_id=str(node.node_id),
                     address=f"127.0.0.1:{node.port}") == 1

    # Ctrl-C: a second exporter on the same quorum stops at once, exit 0, nothing but its start line.
    interrupted = Exporter(quorum)
    exporters.append(interrupted)
    assert gauge(interrupted.scrape(), "kraft_quorum_up") == 1
    assert interrupted.stop(signal.SIGINT) == (0, "", "")

    quorum.kill(leader, signal.SIGKILL)
    # Every scrape answers within the scrape timeout (Exporter.scrape checks), whether it finds the
    # old leader gone, no leader yet, or the new one.
    seen: Samples = {}

    def scraped(condition: Callable[[Samples], bool]) -> Callable[[], bool]:
        def check() -> bool:
            seen.clear()
            seen.update(exporter.scrape())
            return condition(seen)
        return check

    def new_leader(samples: Samples) -> bool:
        return (gauge(samples, "kraft_quorum_up") == 1 and gauge(samples, "kraft_quorum_leader_id") != leader
                and (gauge(samples, "kraft_quorum_leader_epoch") or 0) > before.leader_epoch)

    wait_until(scraped(new_leader), 30, "the exporter to report a new leader", interval=0.2)
    # Right after the election the new leader has not yet heard from the other follower; once it has,
    # only the dead voter is missing.
    warning = scraped(lambda samples: gauge(samples, "kraft_quorum_status") == 1)
    wait_until(warning, 15, "the quorum to settle", interval=0.2)
    assert gauge(seen, "kraft_quorum_node_reachable", node_id=str(leader),
                 address=f"127.0.0.1:{quorum.nodes[leader].port}") == 0
    assert gauge(seen, "kraft_quorum_fault_tolerance") == 0
    assert gauge(seen, "kraft_quorum_findings", code="VOTER_UNREACHABLE", severity="WARNING") == 1
    reads = gauge(seen, "kraft_quorum_reads_total")
    assert reads is not None and reads >= 3

    code, stdout, stderr = exporter.stop(signal.SIGTERM)
    assert (code, stdout) == (0, "")
    assert "Traceback" not in stderr
