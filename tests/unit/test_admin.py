"""``Admin`` and ``AsyncAdmin`` (``kafka_admin_kraft/admin.py``) over the in-memory network: a closed
client refuses calls, and the async client runs the same operations."""

from __future__ import annotations

import asyncio

import pytest

from kafka_admin_kraft import AsyncAdmin, Endpoint
from kafka_admin_kraft.errors import KafkaTimeoutError
from kafka_admin_kraft.protocol.primitives import Uuid
from unit.client.fake import FAST, HANG, AsyncFakeNetwork, FakeNetwork, admin


def test_closed_client_refuses_calls() -> None:
    net = FakeNetwork(1, leader=1)
    a = admin(net)
    a.describe_metadata_quorum()
    a.close()
    a.close()
    with pytest.raises(Exception, match="closed"):
        a.describe_metadata_quorum()


def test_run_drives_an_operation_on_the_clients_connections_and_refuses_once_closed() -> None:
    from kafka_admin_kraft.client.operations.describe_metadata_quorum import describe_quorum_answer

    net = FakeNetwork(3, leader=2)
    a = admin(net)
    assert a.run(describe_quorum_answer).leader_id == 2
    asked = len(net.requests)
    assert a.run(describe_quorum_answer).leader_epoch == 7
    assert [api for _, api, _, _ in net.requests[asked:]] == ["DescribeQuorum"]  # the same connection
    a.close()
    with pytest.raises(Exception, match="closed"):
        a.run(describe_quorum_answer)


def test_async_admin_runs_the_same_operations() -> None:
    from kafka_admin_kraft.client.operations.describe_metadata_quorum import describe_quorum_answer

    net = FakeNetwork(3, leader=2)

    async def main() -> None:
        async with AsyncAdmin(
            bootstrap_controllers=net.controllers(), transport=AsyncFakeNetwork(net), **FAST
        ) as a:
            quorum, cluster, features = await asyncio.gather(
                a.describe_metadata_quorum(), a.describe_cluster(), a.describe_features()
            )
            assert quorum.leader_id == 2 and cluster.controller is not None and features.finalized_features
            assert (await a.run(describe_quorum_answer)).leader_id == 2
            await a.add_raft_voter(4, Uuid.random(), [Endpoint(listener="CONTROLLER", host="h", port=1)])
            await a.remove_raft_voter(3, Uuid.random())
            assert (await a.update_features({"metadata.version": 29}))["metadata.version"].ok
            net.nodes[2].handlers[55] = lambda n, v, b: HANG
            with pytest.raises(KafkaTimeoutError):
                await a.describe_metadata_quorum(timeout=2)

    asyncio.run(main())
