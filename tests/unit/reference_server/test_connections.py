"""Which connections the listeners keep: Kafka's caps, the cap from the open-file limit (the least
recently active idle connection makes room), quorum probation and idle expiry."""

from __future__ import annotations

import logging
import resource
from collections.abc import Callable

import pytest

from kafka_admin_kraft_server.connections import (
    DESCRIPTOR_RESERVE,
    QUORUM_SLOTS,
    Connection,
    ConnectionLimits,
    ConnectionQuotas,
    descriptor_room,
)


class Closed:
    """Records which connections were closed, in order."""

    def __init__(self) -> None:
        self.peers: list[str] = []

    def closer(self, peer: str) -> Callable[[], None]:
        return lambda: self.peers.append(peer)


def admit(quotas: ConnectionQuotas, closed: Closed, port: int, ip: str = "10.0.0.1", *,
          quorum: bool = False) -> Connection | None:
    peer = f"/{ip}:{port}"
    return quotas.admit(peer, ip, closed.closer(peer), quorum_listener=quorum)


def test_max_connections_refuses_the_next_one_and_logs_it_once(caplog: pytest.LogCaptureFixture) -> None:
    quotas, closed = ConnectionQuotas(1, ConnectionLimits(max_connections=2), None), Closed()
    first, second = admit(quotas, closed, 1), admit(quotas, closed, 2)
    assert first is not None and second is not None
    with caplog.at_level(logging.INFO, logger="kafka.network.ConnectionQuotas"):
        assert admit(quotas, closed, 3) is None
        assert admit(quotas, closed, 4) is None
    assert closed.peers == ["/10.0.0.1:3", "/10.0.0.1:4"]
    assert [r.getMessage() for r in caplog.records] == [
        "[SocketServer listenerType=CONTROLLER, nodeId=1] Rejected connection from /10.0.0.1:3, the node "
        "already has the configured maximum of 2 connections (max.connections)."]
    quotas.release(first)
    assert admit(quotas, closed, 5) is not None


def test_per_ip_caps_and_overrides() -> None:
    limits = ConnectionLimits(max_connections_per_ip=1, per_ip_overrides={"10.0.0.9": 2})
    quotas, closed = ConnectionQuotas(1, limits, None), Closed()
    assert admit(quotas, closed, 1) is not None
    assert admit(quotas, closed, 2) is None
    assert admit(quotas, closed, 3, "10.0.0.2") is not None
    assert admit(quotas, closed, 4, "10.0.0.9") is not None
    assert admit(quotas, closed, 5, "10.0.0.9") is not None
    assert admit(quotas, closed, 6, "10.0.0.9") is None
    assert closed.peers == ["/10.0.0.1:2", "/10.0.0.9:6"]


def test_the_open_file_limit_evicts_the_least_recently_active_idle_connection() -> None:
    quotas, closed = ConnectionQuotas(1, ConnectionLimits(), (256, 3)), Closed()
    assert quotas.descriptor_cap == 3
    connections = [admit(quotas, closed, port) for port in (1, 2, 3)]
    assert all(c is not None for c in connections)
    first, second, third = connections
    assert first is not None and second is not None and third is not None
    first.last_active, second.last_active, third.last_active = 10.0, 5.0, 20.0
    assert admit(quotas, closed, 4) is not None  # the oldest idle one, port 2, made room
    assert closed.peers == ["/10.0.0.1:2"]
    first.busy = True  # a request in progress is never cut off
    assert admit(quotas, closed, 5) is not None
    assert closed.peers == ["/10.0.0.1:2", "/10.0.0.1:3"]


def test_at_the_open_file_limit_with_every_connection_busy_the_new_one_is_refused() -> None:
    quotas, closed = ConnectionQuotas(1, ConnectionLimits(), (256, 1)), Closed()
    only = admit(quotas, closed, 1)
    assert only is not None
    only.busy = True
    assert admit(quotas, closed, 2) is None
    assert closed.peers == ["/10.0.0.1:2"]


def test_a_configured_cap_below_the_open_file_room_is_the_one_enforced() -> None:
    quotas = ConnectionQuotas(1, ConnectionLimits(max_connections=5), (1024, 900))
    assert quotas.descriptor_cap is None


def test_quorum_probation_keeps_raft_clients_and_registering_controllers_only() -> None:
    quotas, closed = ConnectionQuotas(1, ConnectionLimits(max_connections=1), None), Closed()
    assert admit(quotas, closed, 1, quorum=True) is not None
    voter, client = admit(quotas, closed, 2, quorum=True), admit(quotas, closed, 3, quorum=True)
    registering = admit(quotas, closed, 4, quorum=True)
    assert voter is not None and voter.on_probation and client is not None and client.on_probation
    assert quotas.passes_probation(voter, "raft-client-2") and not voter.on_probation
    assert registering is not None and quotas.passes_probation(registering, "controller-registration-4")
    assert not quotas.passes_probation(client, "adminclient-1")
    quotas.refuse(client, client.refusal)
    assert closed.peers == ["/10.0.0.1:3"]
    # Beyond the quorum slots, or on a broker listener, over the cap means closed at once.
    for port in range(5, 5 + QUORUM_SLOTS - 2):
        assert admit(quotas, closed, port, quorum=True) is not None
    assert admit(quotas, closed, 100, quorum=True) is None
    assert admit(quotas, closed, 101, quorum=False) is None


def test_idle_connections_are_closed_busy_ones_are_not() -> None:
    quotas, closed = ConnectionQuotas(1, ConnectionLimits(max_idle_ms=1000), None), Closed()
    idle, busy, fresh = admit(quotas, closed, 1), admit(quotas, closed, 2), admit(quotas, closed, 3)
    assert idle is not None and busy is not None and fresh is not None
    idle.last_active, busy.last_active, fresh.last_active = 100.0, 100.0, 100.8
    busy.busy = True
    wait = quotas.close_idle(101.5)
    assert closed.peers == ["/10.0.0.1:1"]
    assert wait == pytest.approx(0.301)  # the fresh one becomes idle at 101.8
    assert admit(quotas, closed, 4) is not None


def test_descriptor_room_follows_the_soft_limit() -> None:
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    room = descriptor_room()
    if soft == resource.RLIM_INFINITY:
        assert room is None
        return
    assert room is not None and room[0] == soft
    assert 0 <= room[1] <= soft - DESCRIPTOR_RESERVE
