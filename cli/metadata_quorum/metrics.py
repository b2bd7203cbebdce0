"""The exporter's metrics: a prometheus_client collector over ``Admin.check_quorum`` results, and the
cache that lets any number of scrapers share one read of the quorum.

Reading the quorum costs a DescribeQuorum, a DescribeCluster and one ApiVersions per node, so the
cache reads it at most once per minimum interval; scrapes that arrive while a read is in flight wait
for that read rather than start another. A scrape waits at most the scrape timeout: when the read
takes longer, that scrape serves ``kraft_quorum_up 0`` and ``kraft_quorum_status 3`` (UNKNOWN) with no
quorum details rather than values that may no longer hold, and counts in
``kraft_quorum_scrape_timeouts_total``; the read goes on and its result serves the next scrapes. A scrape
from Prometheus says how long it may take (``X-Prometheus-Scrape-Timeout-Seconds``, its job's
``scrape_timeout``): the scrape and a read it starts then keep within that, less a margin for the
answer's way back, as blackbox_exporter does with its ``--timeout-offset``.

With ``redact`` (``exporter --redact``) the families leave out what maps the cluster for whoever can
read /metrics: the ``kraft_quorum_cluster`` info, the ``address`` label of ``node_reachable`` and the
``directory_id`` label of the replica families (a node that shows twice in one role, under two directory
ids, then shows once).

Only the exporter imports this module (it pulls in prometheus_client and the SDK).
"""

from __future__ import annotations

import math
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, InfoMetricFamily, Metric
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector, CollectorRegistry

from kafka_admin_kraft.health import FindingCode, HealthStatus, QuorumHealth, Severity, unreachable
from kafka_admin_kraft.models import QuorumInfo, ReplicaState
from kafka_admin_kraft.values import VoterKey

from .http_server import App, StartResponse

PREFIX = "kraft_quorum_"
REPLICA_LABELS = ("node_id", "directory_id", "role")
"""``role`` is ``voter`` (the leader included; ``kraft_quorum_leader_id`` names it) or ``observer``."""

Read = Callable[[QuorumHealth | None, float], QuorumHealth]
"""One check of the quorum within the given seconds, given the last result that reached it
(``Admin.check_quorum(previous=)``)."""

SCRAPE_TIMEOUT_HEADER = "X-Prometheus-Scrape-Timeout-Seconds"
SCRAPE_MARGIN = 0.5
"""Seconds of a Prometheus scrape's timeout kept for the answer's way back (at most half of it)."""
scrape_budget: ContextVar[float | None] = ContextVar("scrape_budget", default=None)
"""The seconds the scrape being served may take, when its scraper said so (``budget_from_header``)."""


def budget_from_header(value: str | None) -> float | None:
    """The seconds a scrape may take, from the value of its ``X-Prometheus-Scrape-Timeout-Seconds``
    header; None without a header or with one that is no positive number of seconds."""
    try:
        seconds = float(value) if value is not None else math.nan
    except ValueError:
        return None
    if not math.isfinite(seconds) or seconds <= 0:
        return None
    return max(seconds - SCRAPE_MARGIN, seconds / 2)


@dataclass(frozen=True)
class Reading:
    """What a scrape serves: a finished read, or nothing when none finished within the scrape timeout."""

    health: QuorumHealth | None
    duration: float | None
    """Seconds the read took."""


class QuorumCache:
    """Shares reads of the quorum between scrapes (see the module docstring).

    ``min_interval`` and ``scrape_timeout`` are seconds, and a read may take ``read_share`` of the
    scrape timeout; reads run on a daemon thread of their own so that a read that hangs never holds up
    a scrape or the exporter's exit."""

    def __init__(self, read: Read, *, min_interval: float, scrape_timeout: float, read_share: float = 0.8,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._read = read
        self._min_interval = min_interval
        self._scrape_timeout = scrape_timeout
        self._read_share = read_share
        self._clock = clock
        self._lock = threading.Lock()
        self._in_flight: Future[Reading] | None = None
        self._started_at: float | None = None
        self._latest: Reading | None = None
        self._reached: QuorumHealth | None = None
        self._reads = 0
        self._timeouts = 0

    @property
    def reads(self) -> int:
        """Reads of the quorum started so far."""
        return self._reads

    @property
    def timeouts(self) -> int:
        """Scrapes that gave up waiting for a read."""
        return self._timeouts

    @property
    def reading(self) -> bool:
        """Whether a read is in flight."""
        return self._in_flight is not None

    def get(self) -> Reading:
        """The latest reading, read afresh when the last read started at least the minimum interval ago,
        within the scrape timeout or the scrape's own budget (``scrape_budget``) when that is shorter."""
        asked = self._clock()
        budget = scrape_budget.get()
        timeout = self._scrape_timeout if budget is None else min(budget, self._scrape_timeout)
        with self._lock:
            if self._in_flight is None:
                latest, started_at = self._latest, self._started_at
                if latest is not None and started_at is not None and asked - started_at < self._min_interval:
                    return latest
                self._start(asked, self._read_share * timeout)
            in_flight = self._in_flight
        assert in_flight is not None
        try:
            return in_flight.result(timeout=max(0.0, timeout - (self._clock() - asked)))
        except FutureTimeout:
            with self._lock:
                self._timeouts += 1
            return Reading(health=None, duration=None)

    def _start(self, now: float, seconds: float) -> None:
        future: Future[Reading] = Future()
        self._in_flight, self._started_at = future, now
        self._reads += 1
        reader = threading.Thread(target=self._run, args=(future, self._reached, seconds), daemon=True)
        reader.start()

    def _run(self, future: Future[Reading], previous: QuorumHealth | None, seconds: float) -> None:
        began = self._clock()
        try:
            health = self._read(previous, seconds)
        except Exception as exc:  # an exporter outlives any one failed read: it is reported as UNKNOWN
            message = f"cannot read the quorum: {type(exc).__name__}: {exc}"
            sys.stderr.write(message + "\n")
            health = unreachable(FindingCode.QUORUM_UNREACHABLE, message, int(time.time() * 1000),
                                 Severity.UNKNOWN)
        reading = Reading(health=health, duration=self._clock() - began)
        with self._lock:
            self._latest, self._in_flight = reading, None
            if health.quorum is not None:
                self._reached = health
        future.set_result(reading)


def _gauge(name: str, documentation: str, labels: tuple[str, ...] = ()) -> GaugeMetricFamily:
    return GaugeMetricFamily(PREFIX + name, documentation, labels=labels)


def _replicas(quorum: QuorumInfo) -> Iterator[tuple[str, ReplicaState]]:
    """Voters, then observers, each (node id, directory id) once: a duplicate series would make
    Prometheus reject the whole scrape."""
    seen: set[VoterKey] = set()
    for role, replicas in (("voter", quorum.voters), ("observer", quorum.observers)):
        for replica in replicas:
            key = (replica.replica_id, replica.replica_directory_id)
            if key not in seen:
                seen.add(key)
                yield role, replica


def replica_families(quorum: QuorumInfo | None, *, redact: bool = False) -> list[GaugeMetricFamily]:
    """Per-replica offsets and lag, as the leader sees them (Kafka's ``ReplicaState``)."""
    names = tuple(n for n in REPLICA_LABELS if not (redact and n == "directory_id"))
    end_offset = _gauge("replica_log_end_offset", "Log end offset of the replica as the leader last saw "
                        "it fetch (the leader's own for the leader; -1 if it never fetched).", names)
    lag = _gauge("replica_lag_offsets", "Offsets the replica is behind the leader's log end offset.", names)
    behind = _gauge("replica_seconds_since_caught_up", "Seconds between the leader's and the replica's last "
                    "caught-up times, both on the leader's clock; absent when either is unknown.", names)
    if quorum is None:
        return [end_offset, lag, behind]
    leader = next((v for v in quorum.voters if v.replica_id == quorum.leader_id), None)
    shown: set[tuple[str, ...]] = set()
    for role, replica in _replicas(quorum):
        labels = [str(replica.replica_id), str(replica.replica_directory_id), role]
        if redact:
            labels = [labels[0], role]
            if tuple(labels) in shown:
                continue
            shown.add(tuple(labels))
        end_offset.add_metric(labels, replica.log_end_offset)
        if leader is None or replica.log_end_offset < 0:
            continue
        lag.add_metric(labels, leader.log_end_offset - replica.log_end_offset)
        leader_caught_up, caught_up = leader.last_caught_up_timestamp, replica.last_caught_up_timestamp
        if leader_caught_up is not None and caught_up is not None:
            behind.add_metric(labels, (leader_caught_up - caught_up) / 1000)
    return [end_offset, lag, behind]


def health_families(reading: Reading, *, reads: int, timeouts: int, redact: bool = False) -> list[Metric]:
    """Every family the exporter serves, for one reading. Families without a value for this reading are
    still listed (with HELP and TYPE) so that the exposition always names the same metrics."""
    health = reading.health
    quorum = health.quorum if health is not None else None
    up = _gauge("up", "1 when the last read reached the quorum's leader (DescribeQuorum answered) within "
                "the scrape timeout, else 0.")
    up.add_metric([], 1 if quorum is not None else 0)
    status = _gauge("status", "Health verdict of Admin.check_quorum: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN "
                    "(the monitoring exit code).")
    status.add_metric([], int(health.status if health is not None else HealthStatus.UNKNOWN))
    tolerance = _gauge("fault_tolerance", "How many more voters can fail before the quorum stops (0 when "
                       "it has stopped).")
    findings = _gauge("findings", "Findings of the last check by code and severity (codes of "
                      "kafka_admin_kraft.health).", ("code", "severity"))
    checked = _gauge("checked_timestamp_seconds", "Wall-clock time of the check being served, epoch seconds.")
    features = _gauge("finalized_feature_level", "Finalized level of each feature.", ("feature",))
    reachable = _gauge("node_reachable", "1 when the node answered ApiVersions within the probe timeout, "
                       "else 0.", ("node_id",) if redact else ("node_id", "address"))
    cluster = InfoMetricFamily(PREFIX + "cluster", "The cluster id the quorum serves.")
    if health is not None:
        tolerance.add_metric([], health.fault_tolerance)
        counts: dict[tuple[FindingCode, str], int] = {}
        for finding in health.findings:
            key = (finding.code, finding.severity.name)
            counts[key] = counts.get(key, 0) + 1
        for (code, severity), count in counts.items():
            findings.add_metric([str(code), severity], count)
        checked.add_metric([], health.checked_at_ms / 1000)
        for feature, level in sorted(health.finalized_features.items()):
            features.add_metric([feature], level)
        for probe in health.probes:
            node = [str(probe.node_id)] if redact else [str(probe.node_id), probe.address]
            reachable.add_metric(node, 1 if probe.reachable else 0)
        if health.cluster_id is not None and not redact:
            cluster.add_metric([], {"cluster_id": health.cluster_id})
    families: list[Metric] = [up, status, tolerance, findings, checked, features, reachable, cluster]
    families += quorum_families(health, quorum, redact=redact)
    duration = _gauge("check_duration_seconds", "How long the read being served took (Admin.check_quorum).")
    if reading.duration is not None:
        duration.add_metric([], reading.duration)
    families += [
        duration,
        CounterMetricFamily(PREFIX + "reads", "Reads of the quorum started; with many scrapers far fewer "
                            "than scrapes, as reads are shared within the minimum interval.", value=reads),
        CounterMetricFamily(PREFIX + "scrape_timeouts", "Scrapes that served up 0 because the read in flight "
                            "did not finish within the scrape timeout.", value=timeouts),
    ]
    return families


def quorum_families(health: QuorumHealth | None, quorum: QuorumInfo | None, *,
                    redact: bool = False) -> list[Metric]:
    """What the leader's DescribeQuorum answer says: leader, epoch, high watermark, voters, replicas."""
    leader_id = _gauge("leader_id", "Node id of the quorum leader (-1 when there is none).")
    epoch = _gauge("leader_epoch", "The leader's epoch; it rises with every election.")
    high_watermark = _gauge("high_watermark", "High watermark of __cluster_metadata (-1 while a new leader "
                            "has committed nothing in its epoch).")
    voters = _gauge("voters", "Voters in the current voter set, an uncommitted change included.")
    committed = _gauge("committed_voters", "Voters in the committed voter set (DescribeQuorum v3 servers "
                       "only).")
    observers = _gauge("observers", "Replicas fetching without voting (brokers, controllers not yet added).")
    pending = _gauge("voter_change_pending_seconds", "How long the current voter set has differed from the "
                     "committed one (0 when it does not; absent when the server cannot say).")
    families: list[Metric] = [leader_id, epoch, high_watermark, voters, committed, observers, pending]
    families += replica_families(quorum, redact=redact)
    if health is None or quorum is None:
        return families
    leader_id.add_metric([], quorum.leader_id)
    epoch.add_metric([], quorum.leader_epoch)
    high_watermark.add_metric([], quorum.high_watermark)
    voters.add_metric([], len(quorum.voters))
    observers.add_metric([], len(quorum.observers))
    if quorum.committed_voters is not None:
        committed.add_metric([], len(quorum.committed_voters))
        since = health.voter_change_since_ms
        pending.add_metric([], 0 if since is None else max(0, health.checked_at_ms - since) / 1000)
    return families


class QuorumCollector(Collector):
    """The exporter's collector: each collect() serves the cache's latest reading."""

    def __init__(self, cache: QuorumCache, *, redact: bool = False) -> None:
        self._cache = cache
        self._redact = redact

    def collect(self) -> Iterator[Metric]:
        reading = self._cache.get()
        yield from health_families(reading, reads=self._cache.reads, timeouts=self._cache.timeouts,
                                   redact=self._redact)


def scraped_within_budget(app: App) -> App:
    """``app`` serving each request within the budget its ``X-Prometheus-Scrape-Timeout-Seconds`` header
    allows (``scrape_budget``); the app must produce its whole answer in the call, as prometheus_client's
    does."""
    def within_budget(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        header = environ.get("HTTP_" + SCRAPE_TIMEOUT_HEADER.upper().replace("-", "_"))
        token = scrape_budget.set(budget_from_header(header))
        try:
            return app(environ, start_response)
        finally:
            scrape_budget.reset(token)

    return within_budget


def exporter_registry(cache: QuorumCache, *, redact: bool = False) -> CollectorRegistry:
    """What /metrics serves: the quorum's metrics, and the exporter process's own (memory, CPU, open
    files) for watching the exporter itself."""
    registry = CollectorRegistry()
    registry.register(QuorumCollector(cache, redact=redact))
    ProcessCollector(registry=registry)
    return registry
