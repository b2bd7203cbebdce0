"""`kafka-metadata-quorum watch` as a process against real reference quorums, with its standard output
a pipe (so one JSON event per line) and a real HTTP server on 127.0.0.1 as its webhook: a leader
failover and recovery, a quorum that is not there yet, and how the process stops."""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from console_scripts import console_script

from integration.harness import FAST_ELECTIONS, Cluster, free_ports, wait_until

PROPERTIES = {**FAST_ELECTIONS, "controller.quorum.request.timeout.ms": "2000"}
QUICK = ["--interval-ms", "200", "--probe-timeout-ms", "500"]
"""A check every 200 ms, each giving up after 1.5 s (the probe timeout plus a second)."""

Event = dict[str, Any]


class Receiver(ThreadingHTTPServer):
    """The webhook: records the JSON body of each POST and answers 200."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.posts: list[dict[str, Any]] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/hooks/quorum"


class _Handler(BaseHTTPRequestHandler):
    server: Receiver

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.server.posts.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


class Watch:
    """A running `watch` whose JSON lines are read as they come."""

    def __init__(self, bootstrap: str, *options: str) -> None:
        self.process = subprocess.Popen(
            [console_script("kafka-metadata-quorum"), "--bootstrap-controller", bootstrap, "watch", *QUICK,
             *options],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: queue.SimpleQueue[str] = queue.SimpleQueue()
        self.events: list[Event] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def _take(self) -> list[Event]:
        while not self.lines.empty():
            self.events.append(json.loads(self.lines.get()))  # every line is one JSON object
        return self.events

    def wait_for(self, condition: Callable[[list[Event]], Any], what: str, timeout: float = 30) -> Any:
        def met() -> Any:
            if self.process.poll() is not None:
                raise AssertionError(f"watch exited with {self.process.returncode}: {self.stderr()}")
            return condition(self._take())

        return wait_until(met, timeout, what)

    def named(self, name: str) -> list[Event]:
        return [e for e in self._take() if e["event"] == name]

    def stop(self, sig: int = signal.SIGINT) -> tuple[int, str]:
        """Send ``sig``; the exit code and standard error."""
        self.process.send_signal(sig)
        code = self.process.wait(15)
        self.reader.join(5)
        self._take()
        return code, self.stderr()

    def stderr(self) -> str:
        assert self.process.stderr is not None
        return self.process.stderr.read() if self.process.poll() is not None else ""

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


def quorum(make_cluster: Callable[..., Cluster]) -> tuple[Cluster, int]:
    cluster = make_cluster(3, properties=dict(PROPERTIES)).format().start_all()
    leader, _ = cluster.wait_for_leader(60)
    cluster.wait_caught_up(leader, 60)
    return cluster, leader


def test_watch_follows_a_failover_and_the_webhook_gets_each_status_change(
        make_cluster: Callable[..., Cluster], receiver: Receiver) -> None:
    cluster, old_leader = quorum(make_cluster)
    watch = Watch(cluster.bootstrap_servers(), "--webhook", receiver.url)
    try:
        [started] = watch.wait_for(lambda events: events[:1], "the started event")
        assert started["event"] == "started"
        assert (started["status"], started["leader_id"], started["voters"]) == ("OK", old_leader, [1, 2, 3])
        assert started["cluster_id"] == cluster.cluster_id
        time.sleep(1)  # several checks of a steady quorum: no events, no alerts
        assert len(watch._take()) == 1 and receiver.posts == []

        cluster.kill(old_leader, signal.SIGKILL)
        # A check during the election may find no leader: old leader -> none -> new leader.
        new_leaders = watch.wait_for(
            lambda _: [e for e in watch.named("leader_changed") if e["to"] is not None], "the new leader")
        change = new_leaders[0]
        assert change["to"] != old_leader and change["epoch"] > 1
        path = [(e["from"], e["to"]) for e in watch.named("leader_changed")]
        assert path in ([(old_leader, change["to"])], [(old_leader, None), (None, change["to"])]), path

        def degraded(_: list[Event]) -> list[Event] | None:
            changes = watch.named("status_changed")
            lagging = [e for e in watch.named("replica_lagging") if e["node_id"] == old_leader]
            return lagging if changes and changes[-1]["to"] == "WARNING" else None

        lagging = watch.wait_for(degraded, "status WARNING with the old leader unreachable")
        assert lagging[0]["directory_id"] == str(cluster.nodes[old_leader].directory_id)

        restarted_ms = int(time.time() * 1000)
        cluster.start(old_leader)
        cluster.wait_caught_up(change["to"], 60, since_ms=restarted_ms)
        watch.wait_for(lambda _: watch.named("status_changed")[-1]["to"] == "OK", "the recovery", 60)
        caught_up = watch.named("replica_caught_up")
        assert [e["node_id"] for e in caught_up] == [old_leader]
        changes = watch.named("status_changed")
        watch.wait_for(lambda _: len(watch.named("webhook_delivered")) == len(changes),
                       "a delivered alert per status change")
        time.sleep(1)  # OK again and steady: no more alerts
        code, stderr = watch.stop(signal.SIGINT)
    finally:
        watch.kill()

    assert code == 0
    assert "Traceback" not in stderr and stderr == ""
    changes = watch.named("status_changed")
    assert (changes[0]["from"], changes[-1]["to"]) == ("OK", "OK")
    posted = [(p["previous_status"], p["status"]) for p in receiver.posts]
    assert posted == [(c["from"], c["to"]) for c in changes]
    assert receiver.posts[-1]["event"] == "recovered"
    assert receiver.posts[-1]["text"].startswith(f"KRaft quorum {cluster.cluster_id} recovered: OK (was ")
    warning = next(p for p in receiver.posts if p["status"] == "WARNING")
    assert any(f["code"] == "VOTER_UNREACHABLE" and f["node_id"] == old_leader for f in warning["findings"])
    assert f"- VOTER_UNREACHABLE: voter {old_leader} does not answer ApiVersions" in warning["text"]
    delivered = watch.named("webhook_delivered")
    assert [d["status"] for d in delivered] == [c["to"] for c in changes]
    assert all(d["url"] == f"http://127.0.0.1:{receiver.server_address[1]}/..." for d in delivered)
    assert watch.named("webhook_failed") == []


def test_watch_started_before_the_quorum_reports_it_lost_then_restored(
        make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster(1, properties=dict(PROPERTIES)).format()
    watch = Watch(cluster.bootstrap_servers())
    try:
        first = watch.wait_for(lambda events: events[:2] if len(events) >= 2 else None, "the first check")
        assert [e["event"] for e in first] == ["started", "connection_lost"]
        assert (first[0]["status"], first[0]["findings"]) == ("UNKNOWN", ["QUORUM_UNREACHABLE"])
        assert "connection refused" in first[1]["reason"]
        cluster.start_all()
        watch.wait_for(lambda _: watch.named("connection_restored"), "the connection to come back", 60)
        [changed] = watch.named("status_changed")
        # A single voter tolerates no failure: WARNING (NO_FAULT_TOLERANCE).
        assert (changed["from"], changed["to"]) == ("UNKNOWN", "WARNING")
        assert "NO_FAULT_TOLERANCE" in changed["findings"]
        code, stderr = watch.stop(signal.SIGINT)
    finally:
        watch.kill()
    assert code == 0 and stderr == ""


def test_sigterm_stops_a_watch_of_nothing_cleanly() -> None:
    watch = Watch(f"127.0.0.1:{free_ports(1)[0]}")
    try:
        watch.wait_for(lambda _: watch.named("connection_lost"), "the lost connection")
        code, stderr = watch.stop(signal.SIGTERM)
    finally:
        watch.kill()
    assert code == 0 and stderr == ""
    assert [e["event"] for e in watch.events] == ["started", "connection_lost"]


def test_count_stops_after_that_many_checks_with_lines_for_people(
        make_cluster: Callable[..., Cluster]) -> None:
    cluster, leader = quorum(make_cluster)
    result = subprocess.run(
        [console_script("kafka-metadata-quorum"), "--bootstrap-controller", cluster.bootstrap_servers(),
         "watch", *QUICK, "--count", "5", "--output", "text"],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert (result.returncode, result.stderr) == (0, "")
    [line] = result.stdout.splitlines()
    assert f" started: watching cluster {cluster.cluster_id}: status OK, leader {leader} (epoch " in line
