"""The peer client against a scripted server: ApiVersions fallback and per-API version choice."""

from __future__ import annotations

import asyncio
import socket
import struct
import threading

from kafka_admin_kraft.protocol import framing, messages
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft_server.peers import CLIENT_SOFTWARE_NAME, PeerClient
from kafka_admin_kraft_server.raft.api import Address, OutboundRequest


def entry(api_key: int, max_version: int) -> messages.ApiVersionsResponse.ApiVersion:
    return messages.ApiVersionsResponse.ApiVersion(api_key=api_key, min_version=0, max_version=max_version)


class OldPeer:
    """Knows ApiVersions 0-3 and Vote 0-1 only, like an older Kafka controller."""

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
                        reply = messages.ApiVersionsResponse(api_keys=[entry(18, 3), entry(52, 1)])
                    else:
                        reply = messages.VoteResponse(error_code=0)
                    conn.sendall(framing.encode_response(reply, version, request.header.correlation_id))


def test_api_versions_fallback_and_version_choice() -> None:
    peer = OldPeer()
    outcomes: list[tuple[int, Struct | None]] = []

    async def main() -> None:
        client = PeerClient(7, lambda rid, body: outcomes.append((rid, body)), request_timeout_ms=2000)
        destination = Address("127.0.0.1", peer.port, 2)
        client.send(OutboundRequest(1, destination, 52, messages.VoteRequest(cluster_id="c")))
        # DescribeQuorum is not offered by this peer: it fails at once instead of being sent.
        client.send(OutboundRequest(2, destination, 55, messages.DescribeQuorumRequest()))
        for _ in range(200):
            if len(outcomes) == 2:
                break
            await asyncio.sleep(0.01)
        await client.close()

    asyncio.run(main())
    assert dict(outcomes)[2] is None
    assert isinstance(dict(outcomes)[1], messages.VoteResponse)
    assert [(key, version) for key, version, _ in peer.seen] == [(18, 4), (18, 3), (52, 1)]
    assert {client_id for _, _, client_id in peer.seen} == {"raft-client-7"}
    assert peer.software == [CLIENT_SOFTWARE_NAME]
    peer.sock.close()
