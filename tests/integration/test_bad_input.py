"""Bad input against a real leader: one log line and a closed connection each, never a dead node."""

from __future__ import annotations

import struct
from collections.abc import Callable

from integration.client import KafkaClient
from integration.harness import HOST, Cluster
from kafka_admin_kraft.protocol import framing


def frame(api_key: int, version: int, body: bytes, *, flexible: bool = True,
          correlation_id: int = 1) -> bytes:
    header = struct.pack(">hhih", api_key, version, correlation_id, 4) + b"evil"
    payload = header + (b"\x00" if flexible else b"") + body
    return struct.pack(">i", len(payload)) + payload


BAD_INPUTS = {
    "garbage frame": struct.pack(">i", 12) + bytes(range(200, 212)),
    "oversized size prefix": struct.pack(">i", 0x7FFFFFF0),
    "unknown api key": frame(4242, 0, b""),
    "unsupported version": frame(52, 99, b""),
    "broker-only api": frame(3, 12, b"\x01\x00\x00\x00"),
    "malformed body": frame(55, 2, b"\x02\x13__cluster_meta"),
    "half a frame then close": struct.pack(">i", 100) + b"\x00\x37",
}


def test_bad_input_never_takes_a_node_down(make_cluster: Callable[..., Cluster]) -> None:
    cluster = make_cluster(1, properties={"socket.request.max.bytes": "1048576"}).format().start_all()
    leader, before = cluster.wait_for_leader(20)
    node = cluster.nodes[leader]
    with node.client() as bystander:
        bystander.api_versions()
        for name, data in BAD_INPUTS.items():
            with KafkaClient(HOST, node.port) as offender:
                offender.send_raw(data)
                if name != "half a frame then close":
                    assert offender.is_closed_by_server(5), name
            assert bystander.describe_quorum().topics[0].partitions[0].leader_id == leader, name
        # An ApiVersions version the server does not know gets a v0 UNSUPPORTED_VERSION answer.
        with KafkaClient(HOST, node.port) as client:
            client.send_raw(frame(18, 7, b"\x00\x00", correlation_id=99))
            correlation_id, body = framing.decode_response(client.recv_frame(), 18, 0)
            assert (correlation_id, body.error_code) == (99, 35)
            assert [(k.api_key, k.min_version, k.max_version) for k in body.api_keys] == [(18, 0, 5)]
            assert client.api_versions(4).error_code == 0
    after = cluster.wait_for_leader(10)[1]
    assert after.leader_epoch == before.leader_epoch
    cluster.assert_running()
    output = node.output()
    assert "invalid receive" in output and "unsupported request" in output and "not enabled" in output
    assert "Traceback" not in output
