"""The shipped alerting rules on a real Prometheus: it scrapes `kafka-metadata-quorum exporter` (the
console script, with its own options) on a reference quorum whose controllers are killed, restarted
and given a new disk, and the alerts are read from Prometheus's HTTP API, each seen firing when it
should and gone after recovery.

To keep the test short, the rules are loaded rewritten: every duration (``for:`` and range windows)
is read as seconds instead of minutes (``for: 2m`` becomes ``for: 2s``, ``[15m]`` becomes ``[15s]``,
``30s`` becomes ``1s``); thresholds and expressions are left as shipped. Nine of the thirteen alerts
are driven here. The other four need what a short test cannot stage: 10000 offsets of lag, a voter
change pending for over 60 s (a threshold, not a duration), a high watermark frozen while the quorum
still answers, and reads outlasting the exporter's scrape timeout (the exporter bounds its reads by
that timeout). ``promtool test rules`` shows all thirteen on synthetic series
(tests/tools/metadata_quorum/test_metrics_monitoring.py).
"""

from __future__ import annotations

import math
import re
import shutil
import signal
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests
from console_scripts import console_script
from external_tools import external_tool

from integration.harness import FAST_ELECTIONS, HOST, Cluster, free_ports, wait_until
from integration.test_voters import format_observer
from kafka_admin_kraft.protocol.primitives import Uuid

RULES = Path(__file__).resolve().parents[2] / "monitoring" / "prometheus-rules.yml"
JOB = "kraft-quorum"
SCRAPE_TIMEOUT_S = 1
"""Prometheus's, below the exporter's own (5 s): a quorum without a leader makes every check take its
whole deadline, and ``up 0`` is scraped only because the exporter keeps within the timeout each scrape
announces (``X-Prometheus-Scrape-Timeout-Seconds``)."""
SLOW_RESIGN = {**FAST_ELECTIONS, "controller.quorum.fetch.timeout.ms": "3000"}
"""A leader that lost its majority resigns 1.5 fetch timeouts later: 4.5 s, long enough for the
CRITICAL status of a quorum without a majority to be scraped and alerted on before it has no leader."""
SHOWN_LIVE = {"KRaftQuorumExporterDown", "KRaftQuorumUnreachable", "KRaftQuorumNoLeader",
              "KRaftQuorumCritical", "KRaftQuorumNoFaultTolerance", "KRaftQuorumWarning",
              "KRaftControllerUnreachable", "KRaftVoterLagging", "KRaftFrequentLeaderChanges",
              "KRaftReplacedDiskNotSwappedIn"}
Alert = tuple[str, str]
"""(alert name, node_id label or "")."""


def seconds_for_minutes(rules: str) -> str:
    """The rules with each ``for:`` duration and range window read as seconds instead of minutes
    (rounded up to a whole second)."""

    def scaled(duration: str) -> str:
        units = {"s": 1, "m": 60, "h": 3600}
        total = sum(int(n) * units[unit] for n, unit in re.findall(r"(\d+)([smh])", duration))
        return f"{max(1, math.ceil(total / 60))}s" if total else "0s"

    rules = re.sub(r"(?m)^(\s+for: )(\S+)$", lambda m: m.group(1) + scaled(m.group(2)), rules)
    return re.sub(r"\[(\d+[smh])\]", lambda m: f"[{scaled(m.group(1))}]", rules)


def test_durations_are_rescaled_and_nothing_else() -> None:
    text = "        expr: changes(x[15m]) > 3 and y[5m]\n        for: 2m\n        for: 30s\n        for: 0m\n"
    assert seconds_for_minutes(text) == (
        "        expr: changes(x[15s]) > 3 and y[5s]\n        for: 2s\n        for: 1s\n        for: 0s\n")
    shipped = RULES.read_text()
    assert re.sub(r"\d+[smh]\b", "D", seconds_for_minutes(shipped)) == re.sub(r"\d+[smh]\b", "D", shipped)
    assert "for: 15s" in seconds_for_minutes(shipped) and "[15s]" in seconds_for_minutes(shipped)


class Exporter:
    """The exporter as operators run it, on a fixed address so that it can be stopped and started."""

    def __init__(self, cluster: Cluster, port: int) -> None:
        self.cluster = cluster
        self.port = port
        self.process: subprocess.Popen[str] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [console_script("kafka-metadata-quorum"), "--bootstrap-controller",
             self.cluster.bootstrap_servers(), "exporter", "--listen", f"{HOST}:{self.port}",
             "--min-interval-ms", "200"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        assert self.process.stderr is not None
        line = self.process.stderr.readline()
        assert line == f"Serving quorum metrics on http://{HOST}:{self.port}/metrics\n", line

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.communicate(timeout=15)


@dataclass
class Prometheus:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def alerts(self) -> dict[Alert, str]:
        """Every pending or firing alert and its state."""
        response = requests.get(f"{self.url}/api/v1/alerts", timeout=5)
        response.raise_for_status()
        return {(a["labels"]["alertname"], a["labels"].get("node_id", "")): a["state"]
                for a in response.json()["data"]["alerts"]}

    def firing(self) -> set[Alert]:
        return {alert for alert, state in self.alerts().items() if state == "firing"}

    def wait_firing(self, expected: set[Alert], timeout: float) -> None:
        """Until each of ``expected`` has been seen firing (not necessarily at once: as an outage
        unfolds, one alert gives way to the next)."""
        seen: set[Alert] = set()

        def all_seen() -> bool:
            seen.update(self.firing() & expected)
            return seen == expected

        wait_until(all_seen, timeout, f"{sorted(expected)} to fire", interval=0.5)

    def wait_resolved(self, alerts: set[Alert], timeout: float) -> None:
        """Until none of ``alerts`` is pending or firing."""
        wait_until(lambda: not alerts & set(self.alerts()), timeout, f"{sorted(alerts)} to resolve",
                   interval=0.5)

    def wait_value(self, query: str, value: float, timeout: float) -> None:
        wait_until(lambda: self.value(query) == [value], timeout, f"Prometheus to scrape {query} {value:g}",
                   interval=0.2)

    def value(self, query: str) -> list[float]:
        response = requests.get(f"{self.url}/api/v1/query", params={"query": query}, timeout=5)
        response.raise_for_status()
        return [float(sample["value"][1]) for sample in response.json()["data"]["result"]]


Setting = tuple[Cluster, Exporter, Prometheus]


@pytest.fixture
def setting(make_cluster: Callable[..., Cluster], tmp_path: Path) -> Iterator[Setting]:
    binary = external_tool("prometheus", package="prometheus")
    cluster = make_cluster(3, properties=SLOW_RESIGN).format().start_all()
    leader, _ = cluster.wait_for_leader(30)
    cluster.wait_caught_up(leader, 30)
    exporter_port, prometheus_port = free_ports(2)
    exporter = Exporter(cluster, exporter_port)
    (tmp_path / "rules.yml").write_text(seconds_for_minutes(RULES.read_text()))
    (tmp_path / "prometheus.yml").write_text(
        f"global: {{scrape_interval: 1s, scrape_timeout: {SCRAPE_TIMEOUT_S}s, evaluation_interval: 1s}}\n"
        f"rule_files: [{tmp_path / 'rules.yml'}]\n"
        f"scrape_configs: [{{job_name: {JOB}, static_configs: [{{targets: ['{HOST}:{exporter_port}']}}]}}]\n")
    log = tmp_path / "prometheus.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [binary, f"--config.file={tmp_path / 'prometheus.yml'}",
             f"--storage.tsdb.path={tmp_path / 'data'}", f"--web.listen-address={HOST}:{prometheus_port}"],
            stdin=subprocess.DEVNULL, stdout=output, stderr=output)
    prometheus = Prometheus(f"http://{HOST}:{prometheus_port}", process, log)
    try:
        exporter.start()
        wait_until(lambda: requests.get(f"{prometheus.url}/-/ready", timeout=2).ok, 30, "Prometheus to start")
        yield cluster, exporter, prometheus
    finally:
        exporter.stop()
        process.kill()
        process.wait(15)


def test_each_alert_fires_on_a_real_outage_and_resolves_after_recovery(setting: Setting) -> None:
    cluster, exporter, prometheus = setting
    wait_until(lambda: prometheus.value(f'up{{job="{JOB}"}}') == [1.0]
               and prometheus.value("kraft_quorum_status") == [0.0], 30,
               "Prometheus to scrape a healthy quorum")
    assert prometheus.firing() == set(), prometheus.log.read_text()[-3000:]
    seen: set[Alert] = set()

    leader, _ = cluster.wait_for_leader(10)
    first, second = sorted(node for node in cluster.nodes if node != leader)
    # One follower down: the quorum still commits, with no fault tolerance left.
    cluster.kill(first)
    one_down = {("KRaftControllerUnreachable", str(first)), ("KRaftQuorumNoFaultTolerance", ""),
                ("KRaftVoterLagging", str(first)), ("KRaftQuorumWarning", "")}
    prometheus.wait_firing(one_down, 40)
    # Both followers down: no majority, then no leader and no answer to DescribeQuorum.
    cluster.kill(second)
    no_majority = {("KRaftQuorumCritical", ""), ("KRaftQuorumNoLeader", ""), ("KRaftQuorumUnreachable", "")}
    prometheus.wait_firing(no_majority, 30)
    cluster.start(first)
    cluster.start(second)
    prometheus.wait_resolved(one_down | no_majority, 40)
    seen |= one_down | no_majority

    # A follower's disk replaced: it fetches as an observer under a new directory id until
    # replace-controller swaps it in.
    leader, _ = cluster.wait_for_leader(20)
    victim = max(node for node in cluster.nodes if node != leader)
    node = cluster.nodes[victim]
    cluster.kill(victim)
    shutil.rmtree(node.metadata_dir)
    node.directory_id = Uuid.random()
    format_observer(cluster, node)
    cluster.start(victim)
    replaced = {("KRaftReplacedDiskNotSwappedIn", "")}
    prometheus.wait_firing(replaced, 40)
    swap = subprocess.run(
        [console_script("kafka-metadata-quorum"), "--bootstrap-controller", cluster.bootstrap_servers(),
         "--command-config", str(node.config_path), "replace-controller", "--controller-id", str(victim),
         "--yes"],
        capture_output=True, text=True, timeout=120)
    assert swap.returncode == 0, swap.stderr
    prometheus.wait_resolved(replaced, 40)
    seen |= replaced

    # Four elections in a row, as in a rolling restart: the leader stopped (it hands over with
    # EndQuorumEpoch) and started again each time, and each new epoch scraped before the next.
    elections = {("KRaftFrequentLeaderChanges", "")}
    for _ in range(4):
        leader, found = cluster.wait_for_leader(20)
        cluster.kill(leader, signal.SIGTERM)
        cluster.start(leader)
        epoch = cluster.wait_for_leader(20, min_epoch=found.leader_epoch + 1)[1].leader_epoch
        prometheus.wait_value("kraft_quorum_leader_epoch", float(epoch), 10)
    prometheus.wait_firing(elections, 10)
    seen |= elections

    # The exporter itself down, then back.
    exporter.stop()
    down = {("KRaftQuorumExporterDown", "")}
    prometheus.wait_firing(down, 20)
    exporter.start()
    seen |= down

    assert {name for name, _ in seen} == SHOWN_LIVE
    prometheus.wait_resolved(seen, 60)
