"""Hosts from outside the node that are no valid host name or IP address: the peer client treats them
as an unreachable peer (one line, no traceback, nothing raw in the log), and a broker registration
naming one is refused."""

from __future__ import annotations

import asyncio
import logging

import pytest

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.error_codes import ErrorCode
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft_server.peers import PeerClient
from kafka_admin_kraft_server.raft.api import Address, OutboundRequest
from unit.reference_server.handlers.test_broker_lifecycle import register, registration_request

BAD_HOSTS = ["12..0.0.1", "a" * 300, "n4\x00evil"]


@pytest.mark.parametrize("host", BAD_HOSTS)
def test_the_peer_client_fails_a_malformed_host_like_an_unreachable_peer(
        host: str, caplog: pytest.LogCaptureFixture) -> None:
    outcomes: list[tuple[int, Struct | None]] = []

    async def main() -> None:
        client = PeerClient(1, lambda rid, body: outcomes.append((rid, body)), request_timeout_ms=2000)
        client.send(OutboundRequest(1, Address(host, 9093, 4), 18, messages.ApiVersionsRequest()))
        for _ in range(200):
            if outcomes:
                break
            await asyncio.sleep(0.01)
        await client.close()

    with caplog.at_level(logging.DEBUG):
        asyncio.run(main())
    assert outcomes == [(1, None)]
    assert not any(record.exc_info for record in caplog.records)
    warnings = [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "could not be established" in warnings[0] and "\x00" not in warnings[0]


@pytest.mark.parametrize("host", [*BAD_HOSTS, ""])
def test_a_broker_registration_with_a_malformed_listener_host_is_an_invalid_request(host: str) -> None:
    request = registration_request()
    request.listeners[0].host = host
    decision = register(request)
    assert decision.response.error_code == ErrorCode.INVALID_REQUEST and decision.record is None
