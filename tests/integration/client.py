"""A small blocking Kafka client over a plain socket, built on the project's codec.

Enough to talk to the reference server in tests: ApiVersions, one request at a time, raw frames for
bad-input tests, and a check that the server closed the connection.
"""

from __future__ import annotations

import contextlib
import socket
import time
from typing import Any

from kafka_admin_kraft.protocol import framing, messages
from kafka_admin_kraft.protocol.message import Struct

DESCRIBE_QUORUM = 55
METADATA_TOPIC = "__cluster_metadata"


class ConnectionClosed(Exception):
    """The server closed the connection."""


class KafkaClient:
    """One connection to a Kafka-protocol server."""

    def __init__(self, host: str, port: int, *, timeout: float = 5.0, client_id: str = "kraft-test") -> None:
        self.host = host
        self.port = port
        self.client_id = client_id
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.settimeout(timeout)
        self.versions: dict[int, tuple[int, int]] = {}
        self._correlation = 0
        self._splitter = framing.FrameSplitter(1 << 30)
        self._frames: list[bytes] = []

    def __enter__(self) -> KafkaClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()

    def next_correlation_id(self) -> int:
        self._correlation += 1
        return self._correlation

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send(self, body: Struct, version: int, correlation_id: int | None = None) -> int:
        cid = self.next_correlation_id() if correlation_id is None else correlation_id
        self.send_raw(framing.encode_request(body, version, cid, self.client_id))
        return cid

    def recv_frame(self) -> bytes:
        while not self._frames:
            data = self.sock.recv(1 << 20)
            if not data:
                raise ConnectionClosed(f"{self.host}:{self.port} closed the connection")
            self._frames.extend(self._splitter.feed(data))
        return self._frames.pop(0)

    def receive(self, api_key: int, version: int) -> tuple[int, Any]:
        return framing.decode_response(self.recv_frame(), api_key, version)

    def api_versions(self, version: int = 4) -> messages.ApiVersionsResponse:
        request = messages.ApiVersionsRequest(client_software_name="kraft-test",
                                              client_software_version="1.0")
        cid = self.send(request, version)
        got, body = self.receive(18, version)
        assert got == cid
        assert isinstance(body, messages.ApiVersionsResponse)
        if body.error_code == 0:
            self.versions = {e.api_key: (e.min_version, e.max_version) for e in body.api_keys}
        return body

    def request(self, body: Struct, version: int | None = None) -> Any:
        """Send and wait for the answer; the version defaults to the highest both sides speak."""
        api_key = body.API_KEY
        if version is None:
            if not self.versions:
                self.api_versions()
            theirs = self.versions[api_key]
            version = min(theirs[1], type(body).VERSIONS[1])
        cid = self.send(body, version)
        got, response = self.receive(api_key, version)
        assert got == cid, (got, cid)
        return response

    def describe_quorum(self, version: int | None = None) -> messages.DescribeQuorumResponse:
        Q = messages.DescribeQuorumRequest
        body = Q(topics=[Q.TopicData(topic_name=METADATA_TOPIC,
                                     partitions=[Q.PartitionData(partition_index=0)])])
        response = self.request(body, version)
        assert isinstance(response, messages.DescribeQuorumResponse)
        return response

    def is_closed_by_server(self, timeout: float = 5.0) -> bool:
        """True when the server closes the connection within ``timeout`` (and sends nothing)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.sock.settimeout(max(deadline - time.monotonic(), 0.01))
            try:
                data = self.sock.recv(65536)
            except TimeoutError:
                return False
            except OSError:
                return True
            if not data:
                return True
        return False
