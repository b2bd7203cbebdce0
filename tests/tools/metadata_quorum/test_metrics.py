"""The exporter's collector and cache on hand-built check results: what /metrics says about a quorum,
and how many times the quorum is read for how many scrapes."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest
from prometheus_client import generate_latest, make_wsgi_app
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.registry import CollectorRegistry

from kafka_admin_kraft.health import Finding, HealthStatus, NodeProbe, QuorumHealth, Severity, unreachable
from kafka_admin_kraft.models import QuorumInfo, ReplicaState
from kafka_admin_kraft_cli.metadata_quorum.metrics import (
    QuorumCache,
    QuorumCollector,
    budget_from_header,
    exporter_registry,
    scraped_within_budget,
)

NOW_MS = 1_750_000_000_000
DIRS = {1: "AAAAAAAAAAAAAAAAAAAAAQ", 2: "AAAAAAAAAAAAAAAAAAAAAg", 3: "AAAAAAAAAAAAAAAAAAAAAw",
        4: "AAAAAAAAAAAAAAAAAAAABA", 100: "AAAAAAAAAAAAAAAAAAAAZA"}
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def replica(node_id: int, end_offset: int, caught_up_ms_ago: int | None) -> ReplicaState:
    caught_up = None if caught_up_ms_ago is None else NOW_MS - caught_up_ms_ago
    return ReplicaState(replica_id=node_id, replica_directory_id=DIRS[node_id], log_end_offset=end_offset,
                        last_fetch_timestamp=caught_up, last_caught_up_timestamp=caught_up)


def rich_health() -> QuorumHealth:
    """Leader 1; voter 2 behind; voter 3 never fetched; voter 4 added but not committed for 7 s; broker
    100 observing; node 3 unreachable: a result for which every metric has a value."""
    voters = (replica(1, 500, 0), replica(2, 420, 1500), replica(3, -1, None), replica(4, 500, 100))
    quorum = QuorumInfo(leader_id=1, leader_epoch=7, high_watermark=480, voters=voters,
                        committed_voters=voters[:3], observers=(replica(100, 499, 200),), nodes={},
                        api_version=3)
    findings = (
        Finding(code="VOTER_UNREACHABLE", severity=Severity.WARNING, message="m", node_id=3),
        Finding(code="VOTER_LAGGING", severity=Severity.WARNING, message="m", node_id=2),
        Finding(code="VOTER_CHANGE_PENDING", severity=Severity.WARNING, message="m"),
        Finding(code="EVEN_VOTER_COUNT", severity=Severity.WARNING, message="m"),
        Finding(code="STATIC_QUORUM", severity=Severity.INFO, message="m"),
    )
    probes = (NodeProbe(node_id=1, address="c1:9093"), NodeProbe(node_id=2, address="c2:9093"),
              NodeProbe(node_id=3, address="c3:9093", error="Connection refused"),
              NodeProbe(node_id=4, address="c4:9093"))
    return QuorumHealth(status=HealthStatus.WARNING, fault_tolerance=0, findings=findings,
                        checked_at_ms=NOW_MS, quorum=quorum, cluster_id="MkU3OEVBNTcwNTJENDM2Qg",
                        probes=probes,
                        finalized_features={"metadata.version": 27, "kraft.version": 1},
                        voter_change_since_ms=NOW_MS - 7000)


def scrape(registry: CollectorRegistry) -> Samples:
    """Every sample /metrics would serve, read back with prometheus_client's own parser."""
    text = generate_latest(registry).decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def one_shot(health: QuorumHealth) -> CollectorRegistry:
    registry = CollectorRegistry()
    registry.register(QuorumCollector(QuorumCache(lambda *_: health, min_interval=0, scrape_timeout=5)))
    return registry


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[(name, tuple(sorted(labels.items())))]


def named(samples: Samples, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    return {labels: v for (sample, labels), v in samples.items() if sample == name}


def test_quorum_values_and_labels() -> None:
    samples = scrape(one_shot(rich_health()))
    assert value(samples, "kraft_quorum_up") == 1
    assert value(samples, "kraft_quorum_status") == 1
    assert value(samples, "kraft_quorum_fault_tolerance") == 0
    assert value(samples, "kraft_quorum_leader_id") == 1
    assert value(samples, "kraft_quorum_leader_epoch") == 7
    assert value(samples, "kraft_quorum_high_watermark") == 480
    assert value(samples, "kraft_quorum_voters") == 4
    assert value(samples, "kraft_quorum_committed_voters") == 3
    assert value(samples, "kraft_quorum_observers") == 1
    assert value(samples, "kraft_quorum_voter_change_pending_seconds") == 7
    assert value(samples, "kraft_quorum_checked_timestamp_seconds") == NOW_MS / 1000
    assert value(samples, "kraft_quorum_cluster_info", cluster_id="MkU3OEVBNTcwNTJENDM2Qg") == 1
    assert named(samples, "kraft_quorum_finalized_feature_level") == {
        (("feature", "kraft.version"),): 1, (("feature", "metadata.version"),): 27}
    assert named(samples, "kraft_quorum_findings") == {
        (("code", code), ("severity", severity)): 1 for code, severity in [
            ("VOTER_UNREACHABLE", "WARNING"), ("VOTER_LAGGING", "WARNING"),
            ("VOTER_CHANGE_PENDING", "WARNING"), ("EVEN_VOTER_COUNT", "WARNING"), ("STATIC_QUORUM", "INFO")]}
    assert named(samples, "kraft_quorum_node_reachable") == {
        (("address", f"c{n}:9093"), ("node_id", str(n))): 0 if n == 3 else 1 for n in (1, 2, 3, 4)}


def test_redacted_families_leave_out_what_maps_the_cluster() -> None:
    health = rich_health()
    assert health.quorum is not None
    # node 2 twice in one role under two directory ids: one series once the directory id is gone
    twice = replica(2, 400, 0).model_copy(update={"replica_directory_id": DIRS[100]})
    quorum = health.quorum.model_copy(update={"observers": (*health.quorum.observers, twice,
                                                            replica(2, 410, 0))})
    registry = CollectorRegistry()
    redacted = health.model_copy(update={"quorum": quorum})
    cache = QuorumCache(lambda *_: redacted, min_interval=0, scrape_timeout=5)
    registry.register(QuorumCollector(cache, redact=True))
    samples = scrape(registry)
    text = generate_latest(registry).decode()
    assert "MkU3OEVBNTcwNTJENDM2Qg" not in text and "c1:9093" not in text and "directory_id" not in text
    assert all(str(d) not in text for d in DIRS.values())
    assert named(samples, "kraft_quorum_cluster_info") == {}
    assert named(samples, "kraft_quorum_node_reachable") == {
        (("node_id", str(n)),): 0 if n == 3 else 1 for n in (1, 2, 3, 4)}
    assert named(samples, "kraft_quorum_replica_log_end_offset") == {
        (("node_id", "1"), ("role", "voter")): 500, (("node_id", "2"), ("role", "voter")): 420,
        (("node_id", "3"), ("role", "voter")): -1, (("node_id", "4"), ("role", "voter")): 500,
        (("node_id", "100"), ("role", "observer")): 499, (("node_id", "2"), ("role", "observer")): 400}
    assert value(samples, "kraft_quorum_leader_epoch") == 7  # the rest as before


def test_replica_offsets_lag_and_time_behind_on_the_leaders_clock() -> None:
    samples = scrape(one_shot(rich_health()))

    def per_node(name: str) -> dict[tuple[int, str], float]:
        found = {}
        for labels, v in named(samples, name).items():
            as_dict = dict(labels)
            assert as_dict["directory_id"] == DIRS[int(as_dict["node_id"])]
            found[(int(as_dict["node_id"]), as_dict["role"])] = v
        return found

    assert per_node("kraft_quorum_replica_log_end_offset") == {
        (1, "voter"): 500, (2, "voter"): 420, (3, "voter"): -1, (4, "voter"): 500, (100, "observer"): 499}
    # Node 3 never fetched: no lag and no time behind rather than made-up numbers.
    assert per_node("kraft_quorum_replica_lag_offsets") == {
        (1, "voter"): 0, (2, "voter"): 80, (4, "voter"): 0, (100, "observer"): 1}
    assert per_node("kraft_quorum_replica_seconds_since_caught_up") == {
        (1, "voter"): 0, (2, "voter"): 1.5, (4, "voter"): 0.1, (100, "observer"): 0.2}


def test_a_replica_listed_twice_is_served_once() -> None:
    health = rich_health()
    assert health.quorum is not None
    twice = health.quorum.model_copy(update={"observers": (health.quorum.voters[1], replica(100, 499, 200))})
    samples = scrape(one_shot(health.model_copy(update={"quorum": twice})))
    served = named(samples, "kraft_quorum_replica_log_end_offset")
    assert sorted(dict(labels)["node_id"] for labels in served) == ["1", "100", "2", "3", "4"]


def test_an_unreachable_quorum_is_up_0_and_unknown_without_quorum_details() -> None:
    health = unreachable("QUORUM_UNREACHABLE", "cannot read the quorum", NOW_MS, Severity.UNKNOWN)
    samples = scrape(one_shot(health))
    assert value(samples, "kraft_quorum_up") == 0
    assert value(samples, "kraft_quorum_status") == 3
    assert named(samples, "kraft_quorum_findings") == {
        (("code", "QUORUM_UNREACHABLE"), ("severity", "UNKNOWN")): 1}
    for name in ("kraft_quorum_leader_id", "kraft_quorum_voters", "kraft_quorum_replica_log_end_offset",
                 "kraft_quorum_committed_voters", "kraft_quorum_node_reachable"):
        assert named(samples, name) == {}
    assert value(samples, "kraft_quorum_reads_total") == 1


def test_no_active_controller_is_critical_and_up_0() -> None:
    samples = scrape(one_shot(unreachable("NO_LEADER", "no active controller", NOW_MS, Severity.CRITICAL)))
    assert (value(samples, "kraft_quorum_up"), value(samples, "kraft_quorum_status")) == (0, 2)


def test_servers_before_describe_quorum_v3_give_no_committed_voters() -> None:
    health = rich_health()
    assert health.quorum is not None
    old = health.quorum.model_copy(update={"committed_voters": None, "api_version": 2})
    samples = scrape(one_shot(health.model_copy(update={"quorum": old, "voter_change_since_ms": None})))
    assert named(samples, "kraft_quorum_committed_voters") == {}
    assert named(samples, "kraft_quorum_voter_change_pending_seconds") == {}
    assert value(samples, "kraft_quorum_voters") == 4


class Reads:
    """A stand-in for Admin.check_quorum: counts calls, records ``previous`` and the seconds each read
    was given, can be held back."""

    def __init__(self, results: Callable[[int], QuorumHealth] = lambda _: rich_health()) -> None:
        self.results = results
        self.previous: list[QuorumHealth | None] = []
        self.seconds: list[float] = []
        self.release = threading.Event()
        self.release.set()

    def __call__(self, previous: QuorumHealth | None, seconds: float) -> QuorumHealth:
        self.previous.append(previous)
        self.seconds.append(seconds)
        call = len(self.previous)
        self.release.wait(30)
        return self.results(call)


def test_concurrent_scrapes_share_the_read_in_flight() -> None:
    reads = Reads()
    reads.release.clear()
    # No minimum interval: only the read in flight can keep these scrapes from reading again.
    cache = QuorumCache(reads, min_interval=0, scrape_timeout=30)
    registry = exporter_registry(cache)
    scrapers = 10
    ready = threading.Barrier(scrapers + 1)
    results: list[Samples] = []

    def scraper() -> None:
        ready.wait()
        results.append(scrape(registry))

    threads = [threading.Thread(target=scraper) for _ in range(scrapers)]
    for thread in threads:
        thread.start()
    ready.wait()
    time.sleep(0.5)  # every scraper is now waiting on the one read
    reads.release.set()
    for thread in threads:
        thread.join(30)
    assert len(reads.previous) == 1 and cache.reads == 1
    assert len(results) == scrapers
    assert {value(r, "kraft_quorum_reads_total") for r in results} == {1}
    assert {value(r, "kraft_quorum_leader_epoch") for r in results} == {7}
    assert {value(r, "kraft_quorum_check_duration_seconds") for r in results} == {
        value(results[0], "kraft_quorum_check_duration_seconds")}
    assert "process_resident_memory_bytes" in {name for name, _ in results[0]}


def numbered(call: int) -> QuorumHealth:
    """The rich result, with the read's number as its leader epoch and check time."""
    health = rich_health()
    assert health.quorum is not None
    quorum = health.quorum.model_copy(update={"leader_epoch": call})
    return health.model_copy(update={"quorum": quorum, "checked_at_ms": call})


def test_the_minimum_interval_is_honoured_and_previous_carries_over() -> None:
    now = [100.0]
    reads = Reads(numbered)
    cache = QuorumCache(reads, min_interval=5, scrape_timeout=5, clock=lambda: now[0])
    registry = CollectorRegistry()
    registry.register(QuorumCollector(cache))
    served = []
    for at in (100.0, 101.0, 104.9, 105.0, 109.9, 110.0):
        now[0] = at
        samples = scrape(registry)
        served.append((value(samples, "kraft_quorum_reads_total"),
                       value(samples, "kraft_quorum_leader_epoch")))
    assert served == [(1, 1), (1, 1), (1, 1), (2, 2), (2, 2), (3, 3)]
    assert [p.checked_at_ms if p is not None else None for p in reads.previous] == [None, 1, 2]


def test_previous_is_the_last_result_that_reached_the_quorum() -> None:
    lost = unreachable("QUORUM_UNREACHABLE", "cannot read the quorum", NOW_MS, Severity.UNKNOWN)
    reads = Reads(lambda call: lost if call == 2 else numbered(call))
    cache = QuorumCache(reads, min_interval=0, scrape_timeout=5)
    ups = [cache.get().health for _ in range(3)]
    assert [h.quorum is not None for h in ups if h is not None] == [True, False, True]
    assert [p.checked_at_ms if p is not None else None for p in reads.previous] == [None, 1, 1]


def test_a_slow_read_never_holds_a_scrape_past_the_timeout() -> None:
    reads = Reads()
    reads.release.clear()
    cache = QuorumCache(reads, min_interval=0, scrape_timeout=0.3)
    registry = CollectorRegistry()
    registry.register(QuorumCollector(cache))
    try:
        for timeouts in (1, 2):
            started = time.monotonic()
            samples = scrape(registry)
            assert time.monotonic() - started < 2
            assert value(samples, "kraft_quorum_up") == 0
            assert value(samples, "kraft_quorum_status") == 3
            assert named(samples, "kraft_quorum_leader_id") == {}
            assert value(samples, "kraft_quorum_scrape_timeouts_total") == timeouts
            assert value(samples, "kraft_quorum_reads_total") == 1  # the second waited on the same read
    finally:
        reads.release.set()
    samples = {}

    def served() -> bool:
        samples.update(scrape(registry))
        return samples[("kraft_quorum_up", ())] == 1

    deadline = time.monotonic() + 10
    while not served():
        assert time.monotonic() < deadline, "the slow read's result was never served"
        time.sleep(0.05)
    assert value(samples, "kraft_quorum_leader_id") == 1


def test_a_prometheus_scrape_keeps_within_the_timeout_its_header_gives() -> None:
    assert budget_from_header("10") == 9.5 and budget_from_header("0.4") == 0.2
    assert [budget_from_header(v) for v in (None, "", "soon", "0", "-1", "nan", "inf")] == [None] * 7
    reads = Reads()
    reads.release.clear()
    cache = QuorumCache(reads, min_interval=0, scrape_timeout=30)
    app = scraped_within_budget(make_wsgi_app(exporter_registry(cache)))
    statuses: list[str] = []

    def get(headers: dict[str, str]) -> Samples:
        environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/metrics", "QUERY_STRING": "", **headers}
        body = b"".join(app(environ, lambda status, _headers: statuses.append(status)))
        families = text_string_to_metric_families(body.decode())
        return {(s.name, tuple(sorted(s.labels.items()))): s.value for f in families for s in f.samples}

    try:
        started = time.monotonic()
        samples = get({"HTTP_X_PROMETHEUS_SCRAPE_TIMEOUT_SECONDS": "1"})
        assert 0.4 < time.monotonic() - started < 5  # half a second kept of Prometheus's 1 s, not 30 s
        assert value(samples, "kraft_quorum_up") == 0 and reads.seconds == [pytest.approx(0.4)]
    finally:
        reads.release.set()
    deadline = time.monotonic() + 10
    while value(get({}), "kraft_quorum_up") != 1:
        assert time.monotonic() < deadline, "the read's result was never served"
    assert value(get({}), "kraft_quorum_up") == 1  # a read of its own, without the header
    assert reads.seconds[-1] == pytest.approx(24)  # 80% of the exporter's own timeout
    assert set(statuses) == {"200 OK"}


def test_a_read_that_raises_is_unknown_and_the_next_read_recovers(capsys: pytest.CaptureFixture[str]) -> None:
    def results(call: int) -> QuorumHealth:
        if call == 1:
            raise RuntimeError("boom")
        return rich_health()

    registry = CollectorRegistry()
    registry.register(QuorumCollector(QuorumCache(Reads(results), min_interval=0, scrape_timeout=5)))
    first = scrape(registry)
    assert (value(first, "kraft_quorum_up"), value(first, "kraft_quorum_status")) == (0, 3)
    assert named(first, "kraft_quorum_findings") == {
        (("code", "QUORUM_UNREACHABLE"), ("severity", "UNKNOWN")): 1}
    assert "RuntimeError: boom" in capsys.readouterr().err
    assert value(scrape(registry), "kraft_quorum_up") == 1
