"""The fault file: its lines, read again when it changes; a partition cutting the raft client's and the
controller channels' connections and healing; a full disk failing appends, snapshots and
``quorum-state`` with ENOSPC."""

from __future__ import annotations

import asyncio
import errno
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.records import SnapshotId
from kafka_admin_kraft.storage import QuorumState
from kafka_admin_kraft_server import faults
from kafka_admin_kraft_server.broker import ControllerChannels
from kafka_admin_kraft_server.raft.api import Address, Endpoint, OutboundRequest
from kafka_admin_kraft_server.security import ClientSecurity
from kafka_admin_kraft_server.storage import FileQuorumStateStore, FileReplicatedLog
from unit.reference_server.runtime_testlib import make_runtime, running, wait_for
from unit.reference_server.server_testlib import noop_batch


@pytest.fixture
def fault_file(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "faults"
    faults.install(path)
    yield path
    faults.install(None)


def test_lines_are_read_again_whenever_the_file_changes(fault_file: Path,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    assert not faults.unreachable("127.0.0.1", 9093)  # no file yet: no fault
    faults.write_faults(fault_file, [("127.0.0.1", 9093), ("::1", 9094)], disk_full=True)
    assert fault_file.read_text() == "unreachable 127.0.0.1:9093\nunreachable [::1]:9094\ndisk-full\n"
    assert faults.unreachable("127.0.0.1", 9093) and faults.unreachable("::1", 9094)
    assert not faults.unreachable("127.0.0.1", 9094)
    with pytest.raises(OSError) as full:
        faults.check_disk(Path("/data/metadata"))
    assert (full.value.errno, full.value.filename) == (errno.ENOSPC, "/data/metadata")

    faults.write_faults(fault_file, [("127.0.0.1", 9094)])
    assert not faults.unreachable("127.0.0.1", 9093) and faults.unreachable("127.0.0.1", 9094)
    faults.check_disk(Path("/data/metadata"))

    with caplog.at_level(logging.WARNING, "kafka.server.Faults"):
        fault_file.write_text("# partition 1|2\nunreachable nowhere\n\ndisk-full please\nunreachable h:1\n")
        assert faults.unreachable("h", 1)
    messages_ = [record.getMessage() for record in caplog.records]
    assert any("line 2 of the fault file" in m and "'unreachable nowhere'" in m for m in messages_)
    assert any("line 4 of the fault file" in m and "'disk-full please'" in m for m in messages_)
    assert messages_[-1] == f"Injected faults from {fault_file}: unreachable h:1"

    fault_file.unlink()
    assert not faults.unreachable("h", 1)


def test_no_fault_file_means_no_fault() -> None:
    faults.install(None)
    assert not faults.unreachable("127.0.0.1", 1)
    faults.check_disk(Path("anywhere"))


def vote_request() -> messages.VoteRequest:
    return messages.VoteRequest(cluster_id="c", voter_id=2)


def test_a_partition_cuts_the_raft_client_off_a_peer_until_healed(fault_file: Path) -> None:
    with running(make_runtime(node_id=2, lead=False)) as peer, running(make_runtime(node_id=1)) as server:
        destination = Address(peer.host, peer.port, 2)

        def send(request_id: int) -> None:
            server.core.outbox.append(OutboundRequest(request_id, destination, 52, vote_request()))
            server.runtime._wake.set()

        server.call(lambda: send(1))
        wait_for(lambda: len(server.core.responses) == 1)
        assert isinstance(server.core.responses[0][1], messages.VoteResponse)
        assert len(peer.core.requests) == 1

        faults.write_faults(fault_file, [(peer.host, peer.port)])
        server.call(lambda: send(2))
        wait_for(lambda: len(server.core.responses) == 2)
        assert server.core.responses[1] == (2, None)  # failed unsent, as a refused connection
        assert len(peer.core.requests) == 1
        peers = server.runtime._peers
        assert peers is not None and peers.in_flight() == 0 and not peers._connections  # closed

        faults.write_faults(fault_file, [])
        server.call(lambda: send(3))
        wait_for(lambda: len(server.core.responses) == 3)
        assert isinstance(server.core.responses[2][1], messages.VoteResponse)
        assert len(peer.core.requests) == 2


def test_a_partition_refuses_the_controller_channels(fault_file: Path) -> None:
    with running(make_runtime(node_id=2)) as controller:
        endpoint = Endpoint("CONTROLLER", controller.host, controller.port)
        channels = ControllerChannels(1, ClientSecurity(), 1 << 20)

        async def ask() -> messages.ApiVersionsResponse:
            answer = await channels.request(endpoint, messages.ApiVersionsRequest(
                client_software_name="test", client_software_version="1"), 5)
            assert isinstance(answer, messages.ApiVersionsResponse)
            return answer

        async def scenario() -> None:
            assert (await ask()).error_code == 0
            assert channels.idle(endpoint) == 1
            faults.write_faults(fault_file, [(controller.host, controller.port)])
            with pytest.raises(ConnectionRefusedError, match="unreachable"):
                await ask()
            assert channels.idle(endpoint) == 0
            faults.write_faults(fault_file, [])
            assert (await ask()).error_code == 0
            channels.close()

        asyncio.run(scenario())


def test_a_full_disk_fails_appends_snapshots_and_the_quorum_state(fault_file: Path, tmp_path: Path) -> None:
    log = FileReplicatedLog(tmp_path / "__cluster_metadata-0")
    log.append(noop_batch(0, 1))
    store = FileQuorumStateStore(log.path)
    faults.write_faults(fault_file, disk_full=True)
    for write in (lambda: log.append(noop_batch(1, 1)), lambda: log.create_snapshot(SnapshotId(1, 1)),
                  lambda: log.receive_snapshot(SnapshotId(1, 1)),
                  lambda: store.write(QuorumState(1, leader_id=1, leader_epoch=1))):
        with pytest.raises(OSError) as full:
            write()
        assert full.value.errno == errno.ENOSPC
    assert log.end_offset() == 1 and store.read() is None
    faults.write_faults(fault_file)
    log.append(noop_batch(1, 1))
    assert log.end_offset() == 2
    log.close()
