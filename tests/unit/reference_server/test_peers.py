"""The peer client: against a scripted server (ApiVersions fallback and per-API version choice),
between two runtimes (negotiation, matching responses, failures reported as None, requests no
common version carries answered UNSUPPORTED_VERSION unsent) and with hosts that are no valid host
name or IP address (an unreachable peer, one line in the log)."""

from __future__ import annotations

import asyncio
import logging
import socket
import struct
import threading
import time

import pytest

from kafka_admin_kraft.protocol import framing, messages
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft_server.peers import CLIENT_SOFTWARE_NAME, PeerClient
from kafka_admin_kraft_server.raft.api import Address, OutboundRequest
from unit.reference_server.runtime_testlib import make_runtime, running, wait_for
from unit.reference_server.server_testlib import BAD_HOSTS


def entry(api_key: int, max_version: int) -> messages.ApiVersionsResponse.ApiVersion:
    return messages.ApiVersionsResponse.ApiVersion(api_key=api_key, min_version=0, max_version=max_version)


class OldPeer:
    """Knows ApiVersions 0-3, Vote 0-1 and AddRaftVoter 0 only, like an older Kafka controller."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        self.seen: list[tuple[int, int, str | None]] = []
        self.software: list[str] = []
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        conn, _ = self.sock.accept()
        splitter = framing.FrameSplitter()
        with conn:
            while True:
                data = conn.recv(65536)
                if not data:
                    return
                for frame in splitter.feed(data):
                    api_key, version = struct.unpack_from(">hh", frame)
                    if api_key == 18 and version > 3:
                        header = framing.decode_request(frame).header
                        self.seen.append((api_key, version, header.client_id))
                        reply: Struct = messages.ApiVersionsResponse(error_code=35, api_keys=[entry(18, 3)])
                        conn.sendall(framing.encode_response(reply, 0, header.correlation_id))
                        continue
                    request = framing.decode_request(frame)
                    self.seen.append((api_key, version, request.header.client_id))
                    if api_key == 18:
                        assert isinstance(request.body, messages.ApiVersionsRequest)
                        self.software.append(request.body.client_software_name)
                        reply = messages.ApiVersionsResponse(api_keys=[entry(18, 3), entry(52, 1),
                                                                       entry(80, 0)])
                    else:
                        reply = messages.response_class(api_key)()
                    conn.sendall(framing.encode_response(reply, version, request.header.correlation_id))


def pre_vote_request() -> messages.VoteRequest:
    partition = messages.VoteRequest.PartitionData(replica_epoch=3, replica_id=7, pre_vote=True)
    return messages.VoteRequest(cluster_id="c", voter_id=2, topics=[
        messages.VoteRequest.TopicData(topic_name="__cluster_metadata", partitions=[partition])])


def test_api_versions_fallback_and_version_choice(caplog: pytest.LogCaptureFixture) -> None:
    peer = OldPeer()
    outcomes: list[tuple[int, Struct | None]] = []

    async def main() -> None:
        client = PeerClient(7, lambda rid, body: outcomes.append((rid, body)), request_timeout_ms=2000)
        destination = Address("127.0.0.1", peer.port, 2)
        client.send(OutboundRequest(1, destination, 52, messages.VoteRequest(cluster_id="c")))
        # DescribeQuorum is not offered by this peer, and Vote v1 has no PreVote: neither is sent,
        # each is answered UNSUPPORTED_VERSION at once.
        client.send(OutboundRequest(2, destination, 55, messages.DescribeQuorumRequest()))
        client.send(OutboundRequest(3, destination, 52, pre_vote_request()))
        # An auto-join AddRaftVoter asks for an answer before the commit, which v0 cannot say.
        auto_join = messages.AddRaftVoterRequest(ack_when_committed=False)
        client.send(OutboundRequest(4, destination, 80, auto_join))
        client.send(OutboundRequest(5, destination, 80, messages.AddRaftVoterRequest()))
        for _ in range(200):
            if len(outcomes) == 5:
                break
            await asyncio.sleep(0.01)
        await client.close()

    asyncio.run(main())
    answers = dict(outcomes)
    assert isinstance(answers[1], messages.VoteResponse) and answers[1].error_code == 0
    assert isinstance(answers[2], messages.DescribeQuorumResponse) and answers[2].error_code == 35
    assert isinstance(answers[3], messages.VoteResponse)
    assert (answers[3].error_code, answers[3].topics) == (35, [])
    assert isinstance(answers[4], messages.AddRaftVoterResponse) and answers[4].error_code == 35
    assert isinstance(answers[5], messages.AddRaftVoterResponse) and answers[5].error_code == 0
    assert [(key, version) for key, version, _ in peer.seen] == [(18, 4), (18, 3), (52, 1), (80, 0)]
    unsent = [r.getMessage() for r in caplog.records if "unsupported version" in r.getMessage()]
    assert len(unsent) == 3 and "Request 3 (VoteRequest)" in unsent[1]
    assert "it needs v2, v1 is the highest both sides speak" in unsent[1]
    assert "Request 4 (AddRaftVoterRequest)" in unsent[2]
    assert {client_id for _, _, client_id in peer.seen} == {"raft-client-7"}
    assert peer.software == [CLIENT_SOFTWARE_NAME]
    peer.sock.close()


def vote_request() -> messages.VoteRequest:
    return messages.VoteRequest(cluster_id="c", voter_id=2)


def test_peer_requests_negotiate_and_match_responses() -> None:
    with running(make_runtime(node_id=2, lead=False)) as peer, running(make_runtime(node_id=1)) as server:
        destination = Address(peer.host, peer.port, 2)

        def send() -> None:
            server.core.outbox.extend(OutboundRequest(100 + i, destination, 52, vote_request())
                                      for i in range(3))
            server.runtime._wake.set()

        server.call(send)
        wait_for(lambda: len(server.core.responses) == 3)
        assert sorted(rid for rid, _ in server.core.responses) == [100, 101, 102]
        assert all(isinstance(body, messages.VoteResponse) for _, body in server.core.responses)
        assert [r.api_version for r in peer.core.requests] == [2, 2, 2]  # min(ours, theirs)


def test_a_kafka_3_9_node_sends_vote_v1_and_never_a_pre_vote() -> None:
    """A node running as Kafka 3.9 towards a Kafka 4.x peer (Vote 0-2): standard votes go at v1; a
    pre-vote (which such a node's core would not build) is answered UNSUPPORTED_VERSION unsent."""
    with running(make_runtime(node_id=2, lead=False)) as peer, \
            running(make_runtime(node_id=1, line="3.9")) as server:
        destination = Address(peer.host, peer.port, 2)

        def send() -> None:
            server.core.outbox.extend([OutboundRequest(100, destination, 52, vote_request()),
                                       OutboundRequest(101, destination, 52, pre_vote_request())])
            server.runtime._wake.set()

        server.call(send)
        wait_for(lambda: len(server.core.responses) == 2)
        answers = dict(server.core.responses)
        assert isinstance(answers[101], messages.VoteResponse) and answers[101].error_code == 35
        assert isinstance(answers[100], messages.VoteResponse)
        assert [(r.api_key, r.api_version) for r in peer.core.requests] == [(52, 1)]


def test_peer_failures_are_reported_as_none() -> None:
    refused = socket.socket()
    refused.bind(("127.0.0.1", 0))
    dead_port = refused.getsockname()[1]
    refused.close()
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen()
    try:
        with running(make_runtime(request_timeout_ms=300)) as server:
            def send() -> None:
                outbox = server.core.outbox
                outbox.append(OutboundRequest(1, Address("127.0.0.1", dead_port, 5), 52, vote_request()))
                outbox.append(OutboundRequest(2, Address(*silent.getsockname(), 6), 52, vote_request()))
                server.runtime._wake.set()

            started = time.monotonic()
            server.call(send)
            wait_for(lambda: len(server.core.responses) == 2)
            elapsed = time.monotonic() - started
            assert dict(server.core.responses) == {1: None, 2: None}
            assert 0.25 < elapsed < 2
            # Within the reconnect backoff a new request to the dead address fails at once.
            server.call(lambda: server.core.outbox.append(
                OutboundRequest(3, Address("127.0.0.1", dead_port, 5), 52, vote_request())))
            server.call(server.runtime._wake.set)
            wait_for(lambda: len(server.core.responses) == 3)
    finally:
        silent.close()


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
