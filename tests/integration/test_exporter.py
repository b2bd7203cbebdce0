"""`kafka-metadata-quorum exporter` as operators run it: the console script against three reference
controllers, scraped over HTTP while the leader is killed, then stopped by a signal; under a crowd of
idle and slowloris connections with few file descriptors; secured by a web configuration file (TLS,
client certificates, basic auth), scraped by requests and, where the binary is installed, by a real
Prometheus."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import select
import shutil
import signal
import socket
import statistics
import subprocess
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import bcrypt
import pytest
import requests
from console_scripts import console_script
from prometheus_client.parser import text_string_to_metric_families

from integration.harness import FAST_ELECTIONS, UNSTABLE_API_VERSIONS, Cluster, free_ports, wait_until

SCRAPE_TIMEOUT = 3.0
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


class Exporter:
    """The exporter process and its /metrics URL (from the line it prints once it listens)."""

    def __init__(self, cluster: Cluster, *options: str, scheme: str = "http",
                 max_fds: int | None = None) -> None:
        def limit_fds() -> None:  # as `ulimit -n max_fds` would
            assert max_fds is not None
            _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
            resource.setrlimit(resource.RLIMIT_NOFILE, (max_fds, hard))

        self.process = subprocess.Popen(
            [console_script("kafka-metadata-quorum"), "--bootstrap-controller", cluster.bootstrap_servers(),
             "exporter", "--listen", "127.0.0.1:0", *options],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            preexec_fn=limit_fds if max_fds is not None else None)  # noqa: PLW1509 - before exec only
        assert self.process.stderr is not None
        ready, _, _ = select.select([self.process.stderr], [], [], 30)
        line = self.process.stderr.readline() if ready else ""
        assert line.startswith(f"Serving quorum metrics on {scheme}://127.0.0.1:"), line
        self.url = line.split()[-1]
        assert self.url.endswith("/metrics") and not self.url.endswith(":0/metrics")

    def scrape(self, **options: Any) -> Samples:
        """One scrape; it must answer within the scrape timeout (plus HTTP and parsing on a busy host)."""
        started = time.monotonic()
        response = requests.get(self.url, timeout=SCRAPE_TIMEOUT + 5, **options)
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


# --------------------------------------------------------------------------- under a crowd of connections

CROWD = 1_500
SLOW = 20
HEADER_TIMEOUT = 5.0  # the exporter's


def proc_threads(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("Threads:"))


def proc_cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def open_fds_for(count: int) -> None:
    """Raise this process's soft descriptor limit to hold ``count`` sockets (skip if the hard one cannot)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < count + 200:
        if hard != resource.RLIM_INFINITY and hard < count + 200:
            pytest.skip(f"needs {count + 200} file descriptors, the hard limit is {hard}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (count + 200, hard))


def test_idle_and_slowloris_crowds_cost_no_threads_and_scrapes_still_answer(quorum: Cluster,
                                                                          exporters: list[Exporter]) -> None:
    """The exporter under ``ulimit -n 256``, 1,500 connections that never send a byte and 20 that
    trickle a header byte every half second: every scrape answers promptly, the thread count stays what
    it was, the CPU stays quiet, and the slow clients are closed at the header timeout."""
    open_fds_for(CROWD + SLOW)
    exporter = Exporter(quorum, "--min-interval-ms", "1000", max_fds=256)
    exporters.append(exporter)
    pid = exporter.process.pid
    exporter.scrape()
    threads_before = proc_threads(pid)
    address = ("127.0.0.1", int(urllib.parse.urlsplit(exporter.url).port or 0))
    crowd = [socket.create_connection(address, timeout=10) for _ in range(CROWD)]
    slow = [socket.create_connection(address, timeout=10) for _ in range(SLOW)]
    opened = time.monotonic()
    closed_after: dict[int, float] = {}
    stop = threading.Event()

    def trickle() -> None:  # slowloris: the next byte of a request that never ends, every 0.5 s on each
        request = b"GET /metrics HTTP/1.1\r\nHost: exporter\r\nX-Padding: " + b"x" * 1000
        for position in range(len(request)):
            if stop.is_set() or len(closed_after) == SLOW:
                return
            for index, sock in enumerate(slow):
                if index not in closed_after:
                    try:
                        sock.send(request[position : position + 1])
                    except OSError:
                        closed_after[index] = time.monotonic() - opened
            stop.wait(0.5)

    trickler = threading.Thread(target=trickle, daemon=True)
    trickler.start()
    try:
        cpu_before = proc_cpu_seconds(pid)
        started = time.monotonic()
        took = []
        for _ in range(10):
            scrape_started = time.monotonic()
            assert gauge(exporter.scrape(), "kraft_quorum_up") == 1
            took.append(time.monotonic() - scrape_started)
            time.sleep(0.2)
        cpu = (proc_cpu_seconds(pid) - cpu_before) / (time.monotonic() - started)
        assert statistics.median(took) < 1.0, took
        # the same threads, give or take the one a read of the quorum runs on while it runs
        assert proc_threads(pid) <= threads_before + 1, "the crowd cost threads"
        assert cpu < 0.5, f"the exporter used {cpu:.0%} of a core under the crowd"
        wait_until(lambda: len(closed_after) == SLOW, HEADER_TIMEOUT + 10, "the slowloris clients' end")
        assert all(HEADER_TIMEOUT - 0.5 < after < HEADER_TIMEOUT + 5 for after in closed_after.values()), \
            closed_after
        # the idle crowd is gone too: the surplus closed as it came, the rest at the header timeout
        for sock in crowd:
            sock.settimeout(1)
            with contextlib.suppress(ConnectionResetError):
                assert sock.recv(1) == b""
        assert gauge(exporter.scrape(), "kraft_quorum_up") == 1
        assert exporter.process.poll() is None
    finally:
        stop.set()
        trickler.join(5)
        for sock in crowd + slow:
            sock.close()


# --------------------------------------------------------------------------- secured by a web config

PASSWORD = "scrape-secret"


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Any:
    pytest.importorskip("cryptography.x509", reason="the cryptography package makes the test certificates")
    from integration_sdk.pki import Pki

    pki = Pki(tmp_path_factory.mktemp("pki"))
    pki.keystore_with_key_apart("exporter", ["localhost"], ["127.0.0.1"])
    pki.keystore_with_key_apart("prometheus", ["prometheus.example"], [])
    return pki


def web_config(pki: Any, *, client_certificates: bool) -> Path:
    hashed = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(rounds=10)).decode()
    lines = ["tls_server_config:", "  cert_file: exporter.crt", "  key_file: exporter.key"]
    if client_certificates:
        lines += ["  client_auth_type: RequireAndVerifyClientCert", f"  client_ca_file: {pki.truststore}"]
    lines += ["basic_auth_users:", f"  prometheus: '{hashed}'"]
    path: Path = pki.root / ("web-mtls.yml" if client_certificates else "web.yml")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_exporter_serves_only_over_tls_with_a_password(quorum: Cluster, exporters: list[Exporter],
                                                            pki: Any) -> None:
    exporter = Exporter(quorum, "--web-config-file", str(web_config(pki, client_certificates=False)),
                        "--redact", scheme="https")
    exporters.append(exporter)
    ca = str(pki.truststore)
    for auth in (None, ("prometheus", "wrong"), ("nobody", PASSWORD)):
        refused = requests.get(exporter.url, verify=ca, auth=auth, timeout=10)
        assert (refused.status_code, refused.headers["WWW-Authenticate"]) == (401, "Basic")
        assert "kraft_quorum" not in refused.text
    samples = exporter.scrape(verify=ca, auth=("prometheus", PASSWORD))
    assert gauge(samples, "kraft_quorum_up") == 1
    assert gauge(samples, "kraft_quorum_voters") == 3
    assert not any(name == "kraft_quorum_cluster_info" for name, _ in samples)  # --redact
    assert not any(label == "address" for _, labels in samples for label, _ in labels)
    with pytest.raises(requests.ConnectionError):  # no plain HTTP on the port
        requests.get(exporter.url.replace("https://", "http://"), timeout=10)
    with pytest.raises(requests.exceptions.SSLError):  # a client that does not trust the certificate
        requests.get(exporter.url, auth=("prometheus", PASSWORD), timeout=10)
    assert exporter.stop(signal.SIGTERM) == (0, "", "")


def test_the_exporter_asks_for_a_client_certificate(quorum: Cluster, exporters: list[Exporter],
                                                    pki: Any) -> None:
    exporter = Exporter(quorum, "--web-config-file", str(web_config(pki, client_certificates=True)),
                        scheme="https")
    exporters.append(exporter)
    ca, auth = str(pki.truststore), ("prometheus", PASSWORD)
    with pytest.raises(requests.ConnectionError):
        requests.get(exporter.url, verify=ca, auth=auth, timeout=10)
    client = (str(pki.root / "prometheus.crt"), str(pki.root / "prometheus.key"))
    assert requests.get(exporter.url, verify=ca, cert=client, timeout=10).status_code == 401
    assert gauge(exporter.scrape(verify=ca, cert=client, auth=auth), "kraft_quorum_up") == 1


@pytest.mark.skipif(shutil.which("prometheus") is None, reason="prometheus is not installed")
def test_prometheus_scrapes_through_the_web_config(quorum: Cluster, exporters: list[Exporter], pki: Any,
                                                    tmp_path: Path) -> None:
    """A real Prometheus, with the TLS client certificate, CA and password of its scrape config."""
    exporter = Exporter(quorum, "--web-config-file", str(web_config(pki, client_certificates=True)),
                        "--scrape-timeout-ms", "1500", scheme="https")
    exporters.append(exporter)
    target = exporter.url.split("/")[2]
    config = tmp_path / "prometheus.yml"
    config.write_text(json.dumps({  # JSON is YAML
        "global": {"scrape_interval": "2s", "scrape_timeout": "2s"},
        "scrape_configs": [{
            "job_name": "kraft", "scheme": "https", "static_configs": [{"targets": [target]}],
            "tls_config": {"ca_file": str(pki.truststore), "cert_file": str(pki.root / "prometheus.crt"),
                           "key_file": str(pki.root / "prometheus.key")},
            "basic_auth": {"username": "prometheus", "password": PASSWORD},
        }],
    }))
    prometheus = shutil.which("prometheus")
    assert prometheus is not None
    (port,) = free_ports(1)
    server = subprocess.Popen(
        [prometheus, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}",
         f"--web.listen-address=127.0.0.1:{port}"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    api = f"http://127.0.0.1:{port}/api/v1"

    def scraped_up() -> float | None:
        query = urllib.parse.urlencode({"query": 'kraft_quorum_up{job="kraft"}'})
        result = requests.get(f"{api}/query?{query}", timeout=5).json()["data"]["result"]
        return float(result[0]["value"][1]) if result else None

    seen: list[dict[str, Any]] = []

    def target_up() -> bool:
        seen[:] = requests.get(f"{api}/targets", timeout=5).json()["data"]["activeTargets"]
        return bool(seen) and seen[0]["health"] == "up"

    try:
        try:
            wait_until(target_up, 60, "Prometheus to scrape the exporter", interval=0.5)
        except AssertionError:
            raise AssertionError(f"the target as Prometheus last saw it: {seen}") from None
        assert wait_until(scraped_up, 30, "kraft_quorum_up in Prometheus", interval=0.5) == 1
    finally:
        server.terminate()
        _, stderr = server.communicate(timeout=30)
    assert "TLS handshake error" not in stderr
