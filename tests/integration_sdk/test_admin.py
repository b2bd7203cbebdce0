"""The Admin SDK against real reference-server processes on 127.0.0.1."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from integration.harness import FAST_ELECTIONS, HOST, UNSTABLE_API_VERSIONS, Cluster, free_ports

from kafka_admin_kraft import Admin, AsyncAdmin
from kafka_admin_kraft.errors import BootstrapError, KafkaTimeoutError

Make = Callable[..., Cluster]


def test_describe_metadata_quorum_cluster_and_features(make_cluster: Make) -> None:
    cluster = make_cluster(3, properties={**FAST_ELECTIONS, **UNSTABLE_API_VERSIONS})  # DescribeQuorum v3
    leader, _ = cluster.wait_for_leader(30)
    cluster.wait_caught_up(leader)
    with Admin(
        bootstrap_controllers=cluster.bootstrap_servers(),
        default_api_timeout_ms=15000,
        request_timeout_ms=5000,
    ) as admin:
        quorum = admin.describe_metadata_quorum()
        raw = cluster.describe_quorum(leader, 3).topics[0].partitions[0]
        assert quorum.api_version == 3
        assert (
            (quorum.leader_id, quorum.leader_epoch)
            == (raw.leader_id, raw.leader_epoch)
            == (leader, raw.leader_epoch)
        )
        assert quorum.high_watermark <= raw.high_watermark
        assert [(v.replica_id, v.replica_directory_id) for v in quorum.voters] == [
            (v.replica_id, v.replica_directory_id) for v in raw.current_voters
        ]
        assert quorum.committed_voters is not None
        assert sorted(v.replica_id for v in quorum.committed_voters) == sorted(
            v.replica_id for v in raw.committed_voters
        )
        assert {v.replica_id: v.replica_directory_id for v in quorum.voters} == {
            n.node_id: n.directory_id for n in cluster.nodes.values()
        }
        assert {i: [str(e) for e in n.endpoints] for i, n in quorum.nodes.items()} == {
            n.node_id: [f"CONTROLLER://{HOST}:{n.port}"] for n in cluster.nodes.values()
        }

        description = admin.describe_cluster()
        assert description.cluster_id == cluster.cluster_id
        assert description.controller is not None and description.controller.node_id == leader
        assert [(n.node_id, n.port) for n in description.nodes] == [
            (n.node_id, n.port) for n in cluster.nodes.values()
        ]

        features = admin.describe_features()
        assert features.supported_features["metadata.version"].max_version == 33
        assert (
            features.supported_features["kraft.version"].min_version == 0
        )  # ApiVersions v4 lists min-0 ones
        assert features.finalized_features["metadata.version"].max_version_level == 33


def test_async_admin_against_the_quorum(make_cluster: Make) -> None:
    cluster = make_cluster(3)
    leader, _ = cluster.wait_for_leader(30)

    async def main() -> None:
        async with AsyncAdmin(bootstrap_controllers=cluster.bootstrap_servers()) as admin:
            quorum, description = await asyncio.gather(
                admin.describe_metadata_quorum(), admin.describe_cluster()
            )
            assert quorum.leader_id == leader and description.controller is not None
            assert description.controller.node_id == leader

    asyncio.run(main())


def test_leader_killed_during_operations(make_cluster: Make) -> None:
    cluster = make_cluster(3)
    leader, _ = cluster.wait_for_leader(30)
    with Admin(
        bootstrap_controllers=cluster.bootstrap_servers(),
        default_api_timeout_ms=20000,
        request_timeout_ms=3000,
    ) as admin:
        assert admin.describe_metadata_quorum().leader_id == leader
        errors: list[BaseException] = []
        results: list[int] = []
        stop = threading.Event()

        def hammer() -> None:
            while not stop.is_set():
                try:
                    results.append(admin.describe_metadata_quorum(timeout=15).leader_id)
                except BaseException as exc:  # noqa: BLE001 - collected for the assertion
                    errors.append(exc)
                    return

        thread = threading.Thread(target=hammer)
        thread.start()
        time.sleep(0.2)
        cluster.kill(leader)
        started = time.monotonic()
        try:
            while time.monotonic() - started < 15 and (not results or results[-1] == leader):
                time.sleep(0.05)
        finally:
            stop.set()
            thread.join(20)
        assert not errors, errors
        assert results and results[-1] != leader
        # A fresh call after the kill goes straight to the new leader.
        assert admin.describe_metadata_quorum().leader_id == results[-1]


def test_unreachable_bootstrap_controllers(make_cluster: Make) -> None:
    ports = free_ports(2)
    started = time.monotonic()
    with (
        Admin(
            bootstrap_controllers=[f"{HOST}:{p}" for p in ports],
            default_api_timeout_ms=1500,
            request_timeout_ms=1000,
        ) as admin,
        pytest.raises(BootstrapError) as info,
    ):
        admin.describe_metadata_quorum()
    assert time.monotonic() - started < 5
    assert list(info.value.failures) == [f"{HOST}:{p}" for p in ports]
    assert all("refused" in why for why in info.value.failures.values())


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A socket that accepts connections and never answers."""
    listener = socket.socket()
    listener.bind((HOST, 0))
    listener.listen(8)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    thread.join(2)
    for sock in accepted:
        sock.close()
    listener.close()


def test_a_server_that_never_answers_times_out(silent_server: int) -> None:
    started = time.monotonic()
    with (
        Admin(
            bootstrap_controllers=f"{HOST}:{silent_server}",
            request_timeout_ms=500,
            default_api_timeout_ms=1500,
        ) as admin,
        pytest.raises(KafkaTimeoutError, match="no response") as info,
    ):
        admin.describe_metadata_quorum()
    assert info.value.operation == "describe_metadata_quorum"
    assert 1.2 < time.monotonic() - started < 4

    async def main() -> None:
        async with AsyncAdmin(
            bootstrap_controllers=f"{HOST}:{silent_server}",
            request_timeout_ms=500,
            default_api_timeout_ms=1000,
        ) as admin:
            with pytest.raises(KafkaTimeoutError):
                await admin.describe_cluster()

    asyncio.run(main())
