"""kafka_admin_kraft_server.startup: Kafka's start-up refusals, the .lock file, kraft.version and the
bootstrap metadata, and booting from directories laid out as kafka-storage format leaves them."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_admin_kraft.config.server import ServerConfig, parse_config
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.records import SnapshotId, control_batch, encode_batch, read_snapshot
from kafka_admin_kraft.storage import (
    InitialController,
    MetaProperties,
    QuorumState,
    bootstrap_records,
    read_meta_properties,
    read_quorum_state,
    write_bootstrap_checkpoint,
    write_meta_properties,
    write_zero_checkpoint,
)
from kafka_admin_kraft_server import settings
from kafka_admin_kraft_server.kafka_line import LINES
from kafka_admin_kraft_server.raft.api import Address, Endpoint, ReplicaKey, VoterInfo
from kafka_admin_kraft_server.startup import (
    DirectoryLock,
    DirectoryLockedError,
    StartupError,
    check_log_dirs,
    read_bootstrap_metadata,
    start_storage,
)
from unit.reference_server.server_testlib import CLUSTER_ID, DIR_IDS, T0, format_directory, noop_batch

PARTITION = "__cluster_metadata-0"


@pytest.fixture(autouse=True)
def _fast_fsync(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "fsync", lambda fd: None)


def static_config(directory: Path, node_id: int = 1, **extra: str) -> ServerConfig:
    props = {
        "process.roles": "controller",
        "node.id": str(node_id),
        "listeners": f"CONTROLLER://127.0.0.1:{9092 + node_id}",
        "controller.listener.names": "CONTROLLER",
        "controller.quorum.voters": "1@127.0.0.1:9093,2@127.0.0.1:9094,3@127.0.0.1:9095",
        "log.dirs": str(directory),
        "internal.metadata.log.segment.bytes": "4096",
    }
    props.update(extra)
    return parse_config({key: value for key, value in props.items() if value != ""})


def dynamic_config(directory: Path, node_id: int = 1, **extra: str) -> ServerConfig:
    return static_config(directory, node_id, **{"controller.quorum.voters": "",
                                                "controller.quorum.bootstrap.servers": "127.0.0.1:9093",
                                                **extra})


CONTROLLERS = [InitialController(1, "127.0.0.1", 9093, DIR_IDS[0]),
               InitialController(2, "127.0.0.1", 9094, DIR_IDS[1]),
               InitialController(3, "127.0.0.1", 9095, DIR_IDS[2])]


def refusal(config: ServerConfig) -> str:
    with pytest.raises(StartupError) as info:
        start_storage(config)
    return str(info.value)


# ----------------------------------------------------------------------------- booting formatted dirs


def test_boots_from_a_dynamic_quorum_directory_as_kafka_storage_formats_it(tmp_path: Path) -> None:
    meta_dir = tmp_path / "meta"
    format_directory(meta_dir, node_id=1, directory_id=DIR_IDS[0], controllers=CONTROLLERS,
                     features={"group.version": 1, "transaction.version": 2, "kraft.version": 1})
    assert sorted(os.listdir(meta_dir)) == ["__cluster_metadata-0", "bootstrap.checkpoint", "meta.properties"]
    assert os.listdir(meta_dir / PARTITION) == ["00000000000000000000-0000000000.checkpoint"]
    config = dynamic_config(meta_dir)
    with start_storage(config) as state:
        assert (state.cluster_id, state.node_id, state.directory_id) == (CLUSTER_ID, 1, DIR_IDS[0])
        assert state.kraft_version == 1
        assert state.voters is not None and state.voters.ids() == frozenset({1, 2, 3})
        assert state.voters.voters[2] == VoterInfo(ReplicaKey(2, DIR_IDS[1]),
                                                   (Endpoint("CONTROLLER", "127.0.0.1", 9094),), 0, 1)
        assert state.bootstrap.static_voters is None
        assert state.bootstrap.bootstrap_servers == (Address("127.0.0.1", 9093),)
        assert state.identity.listeners == (Endpoint("CONTROLLER", "127.0.0.1", 9093),)
        assert state.identity.directory_id == DIR_IDS[0] and state.identity.cluster_id == CLUSTER_ID
        assert state.metadata_version == 29
        assert state.features == {"metadata.version": 29, "group.version": 1, "transaction.version": 2}
        assert state.log_empty
        assert state.recovery is None and state.rewritten_dirs == ()
        log = state.log
        assert log.latest_snapshot() == SnapshotId(0, 0)
        assert (log.start_offset(), log.end_offset(), log.last_epoch()) == (0, 0, 0)
        # The bootstrap snapshot is untouched and still reads as the formatter wrote it.
        bootstrap_snapshot = meta_dir / PARTITION / "00000000000000000000-0000000000.checkpoint"
        assert len(list(read_snapshot(bootstrap_snapshot))) == 2
        assert (meta_dir / ".lock").exists()
        state.store.write(QuorumState(leader_id=1, leader_epoch=1, voted_id=1, voted_directory_id=DIR_IDS[0]))
        log.append(noop_batch(0, 1))
        log.flush()
    assert read_quorum_state(meta_dir / PARTITION / "quorum-state").data_version == 1
    with start_storage(config) as again:
        assert again.kraft_version == 1 and not again.log_empty and again.log.end_offset() == 1
        assert again.store.read() == QuorumState(1, 1, 1, 1, DIR_IDS[0])


def test_boots_from_a_static_quorum_directory(tmp_path: Path) -> None:
    format_directory(tmp_path, node_id=2, directory_id=DIR_IDS[1])
    config = static_config(tmp_path, node_id=2)
    with start_storage(config) as state:
        assert state.kraft_version == 0 and state.voters is None
        voters = state.bootstrap.static_voters
        assert voters is not None and voters == settings.static_voter_set(config)
        assert voters.voters[3].endpoints == (Endpoint("CONTROLLER", "127.0.0.1", 9095),)
        assert state.log_empty and state.log.latest_snapshot() is None
        assert sorted(os.listdir(tmp_path / PARTITION)) == [
            "00000000000000000000.index", "00000000000000000000.log", "00000000000000000000.timeindex",
            "leader-epoch-checkpoint", "partition.metadata"]
        state.store.write(QuorumState(leader_id=2, leader_epoch=3, voted_id=2))
    assert (tmp_path / PARTITION / "quorum-state").read_text() == (
        '{"clusterId":"","leaderId":2,"leaderEpoch":3,"votedId":2,"appliedOffset":0,'
        '"currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}],"data_version":0}')


def test_an_observer_finds_the_quorum_through_bootstrap_servers(tmp_path: Path) -> None:
    # Formatted with --no-initial-controllers: no bootstrap snapshot, kraft.version learnt from the leader.
    format_directory(tmp_path, node_id=4, directory_id=DIR_IDS[2])
    with start_storage(dynamic_config(tmp_path, node_id=4)) as state:
        assert state.kraft_version == 0 and state.voters is None
        assert state.bootstrap.static_voters is None
        assert state.bootstrap.bootstrap_servers == (Address("127.0.0.1", 9093),)


def test_kraft_version_and_voters_come_from_the_log_too(tmp_path: Path) -> None:
    format_directory(tmp_path, node_id=1, directory_id=DIR_IDS[0])
    config = dynamic_config(tmp_path)
    with start_storage(config) as state:
        assert state.kraft_version == 0
        voters = messages.VotersRecord(version=0, voters=[messages.VotersRecord.Voter(
            voter_id=1, voter_directory_id=DIR_IDS[0],
            endpoints=[messages.VotersRecord.Endpoint(name="CONTROLLER", host="127.0.0.1", port=9093)],
            k_raft_version_feature=messages.VotersRecord.KRaftVersionFeature(min_supported_version=0,
                                                                             max_supported_version=1))])
        state.log.append(noop_batch(0, 1))
        state.log.append(control_batch(1, 1, T0, [messages.KRaftVersionRecord(version=0, k_raft_version=1),
                                                   voters]))
    with start_storage(config) as state:
        assert state.kraft_version == 1 and not state.log_empty
        assert state.voters is not None and state.voters.ids() == frozenset({1})
        assert state.store.kraft_version == 1


def test_boots_from_a_directory_formatted_by_kafka_4_4(tmp_path: Path) -> None:
    """Kafka 4.4's formatter writes no bootstrap.checkpoint: the bootstrap records follow the control
    records in the zero checkpoint (KIP-1170). They are bootstrap metadata, not committed state: the
    log counts as empty, and they win over a bootstrap.checkpoint left by an older tool."""
    meta_dir = tmp_path / "meta"
    format_directory(meta_dir, node_id=1, directory_id=DIR_IDS[0], bootstrap_checkpoint=False)
    records = bootstrap_records(30, {"share.version": 1, "group.version": 1})
    write_zero_checkpoint(meta_dir, records, kraft_version=1, controllers=CONTROLLERS,
                          listener_name="CONTROLLER", timestamp_ms=T0)
    assert sorted(os.listdir(meta_dir)) == ["__cluster_metadata-0", "meta.properties"]
    with start_storage(dynamic_config(meta_dir)) as state:
        assert (state.metadata_version, state.features) == (30, {"metadata.version": 30, "group.version": 1,
                                                                 "share.version": 1})
        assert state.log_empty
        assert state.kraft_version == 1
        assert state.voters is not None and state.voters.ids() == frozenset({1, 2, 3})
    write_bootstrap_checkpoint(meta_dir, bootstrap_records(21))
    assert read_bootstrap_metadata(meta_dir).metadata_version == 30

    static_dir = tmp_path / "static"
    format_directory(static_dir, node_id=1, directory_id=DIR_IDS[0], bootstrap_checkpoint=False)
    write_zero_checkpoint(static_dir, bootstrap_records(33), kraft_version=0, timestamp_ms=T0)
    with start_storage(static_config(static_dir)) as state:
        assert (state.metadata_version, state.kraft_version, state.voters) == (33, 0, None)
        assert state.log_empty


def test_bootstrap_metadata(tmp_path: Path) -> None:
    format_directory(tmp_path / "a", node_id=1, directory_id=DIR_IDS[0], metadata_version=21)
    metadata = read_bootstrap_metadata(tmp_path / "a")
    assert metadata.metadata_version == 21 and len(metadata.records) == 1
    format_directory(tmp_path / "b", node_id=1, directory_id=DIR_IDS[0], bootstrap_checkpoint=False)
    default = read_bootstrap_metadata(tmp_path / "b")
    assert default.metadata_version == 33
    with start_storage(static_config(tmp_path / "b")) as state:
        assert state.features == {"metadata.version": 33}
    format_directory(tmp_path / "c", node_id=1, directory_id=DIR_IDS[0], metadata_version=3)
    with pytest.raises(StartupError, match="No MetadataVersion with feature level 3. Valid feature levels "
                                           "are from 7 to 34."):
        read_bootstrap_metadata(tmp_path / "c")
    with pytest.raises(StartupError, match="No such directory as"):
        read_bootstrap_metadata(tmp_path / "missing")


@pytest.mark.parametrize(("line", "refused", "message"), [
    ("3.9", 22, "No MetadataVersion with feature level 24"),
    ("4.0", 27, "No MetadataVersion with feature level 27. Valid feature levels are from 7 to 26."),
    ("4.2", 31, "No MetadataVersion with feature level 31. Valid feature levels are from 7 to 30."),
    ("4.3", 32, "No MetadataVersion with feature level 32. Valid feature levels are from 7 to 31."),
])
def test_a_line_starts_from_the_levels_it_knows(tmp_path: Path, line: str, refused: int,
                                                message: str) -> None:
    """A node refuses a directory formatted at a metadata.version its line does not define, with its
    line's text (``MetadataVersion.fromFeatureLevel``: 3.9 names the level alone); 3.9 knows 4.0-IV0 and
    4.0-IV1 as testing levels, so its first unknown level is 24. Without a bootstrap file a node starts at
    its line's latest production level."""
    kafka = LINES[line]
    if line == "3.9":
        format_directory(tmp_path / "known", node_id=1, directory_id=DIR_IDS[0], metadata_version=refused)
        assert read_bootstrap_metadata(tmp_path / "known", kafka).metadata_version == refused
        refused = 24
    format_directory(tmp_path / "new", node_id=1, directory_id=DIR_IDS[0], metadata_version=refused)
    with pytest.raises(StartupError) as info:
        read_bootstrap_metadata(tmp_path / "new", kafka)
    assert str(info.value) == message
    with pytest.raises(StartupError, match="^" + re.escape(message) + "$"):
        start_storage(static_config(tmp_path / "new"), kafka)
    format_directory(tmp_path / "none", node_id=1, directory_id=DIR_IDS[0], bootstrap_checkpoint=False)
    latest = kafka.features.latest_production_metadata_version
    assert read_bootstrap_metadata(tmp_path / "none", kafka).metadata_version == latest


def test_a_line_holds_elections_its_way(tmp_path: Path) -> None:
    format_directory(tmp_path / "d", node_id=1, directory_id=DIR_IDS[0], metadata_version=21)
    with start_storage(static_config(tmp_path / "d"), LINES["3.9"]) as state:
        assert not state.raft_config.pre_vote
    with start_storage(static_config(tmp_path / "d")) as state:
        assert state.raft_config.pre_vote


# ----------------------------------------------------------------------------- refusals


def test_refuses_an_unformatted_directory(tmp_path: Path) -> None:
    assert refusal(static_config(tmp_path / "never-created")) == "No readable meta.properties files found."
    tmp_path.joinpath("empty").mkdir()
    assert refusal(static_config(tmp_path / "empty")) == "No readable meta.properties files found."
    assert not (tmp_path / "empty" / ".lock").exists()


def test_refuses_an_unformatted_log_directory_beside_a_formatted_one(tmp_path: Path) -> None:
    format_directory(tmp_path / "meta", node_id=1, directory_id=DIR_IDS[0])
    (tmp_path / "data").mkdir()
    config = static_config(tmp_path / "data", **{"metadata.log.dir": str(tmp_path / "meta")})
    assert refusal(config) == (f"No `meta.properties` found in {tmp_path / 'data'} (have you run "
                               "`kafka-storage.sh` to format the directory?)")


def test_refuses_a_node_id_mismatch(tmp_path: Path) -> None:
    format_directory(tmp_path, node_id=2, directory_id=DIR_IDS[0])
    assert refusal(static_config(tmp_path, node_id=1)) == (
        f"Stored node id 2 doesn't match previous node id 1 in {tmp_path}/meta.properties. If you moved your "
        "data, make sure your configured node id matches. If you intend to create a new node, you should "
        "remove all data in your data directories.")


def test_refuses_a_cluster_id_mismatch(tmp_path: Path) -> None:
    format_directory(tmp_path / "a", node_id=1, directory_id=DIR_IDS[0])
    format_directory(tmp_path / "b", node_id=1, directory_id=DIR_IDS[1], cluster_id="MkU3OEVBNTcwNTJENDM2Qg")
    config = static_config(tmp_path / "a", **{"log.dirs": f"{tmp_path / 'b'},{tmp_path / 'a'}"})
    assert refusal(config) == (f"Invalid cluster.id in: {tmp_path / 'b'}/meta.properties. Expected "
                               f"{CLUSTER_ID}, but read MkU3OEVBNTcwNTJENDM2Qg")


def test_refuses_repeated_and_reserved_directory_ids(tmp_path: Path) -> None:
    format_directory(tmp_path / "a", node_id=1, directory_id=DIR_IDS[0])
    format_directory(tmp_path / "b", node_id=1, directory_id=DIR_IDS[0])
    config = static_config(tmp_path / "a", **{"log.dirs": f"{tmp_path / 'a'},{tmp_path / 'b'}"})
    assert refusal(config) == (f"Duplicate directory ID Optional[{DIR_IDS[0]}] found. It was the ID of "
                               f"{tmp_path / 'a'}, but also of {tmp_path / 'b'}")


def test_refuses_an_unreadable_metadata_directory(tmp_path: Path) -> None:
    meta = tmp_path / "meta"
    meta.mkdir()
    meta.joinpath("meta.properties").write_text("version=1\nnode.id=one\ncluster.id=x\n")
    # Alone, it is simply not readable.
    assert refusal(static_config(meta)) == "No readable meta.properties files found."
    format_directory(tmp_path / "data", node_id=1, directory_id=DIR_IDS[1])
    config = static_config(tmp_path / "data", **{"metadata.log.dir": str(meta)})
    assert refusal(config) == f"Encountered I/O error in metadata log directory {meta}. Cannot continue."
    # An unreadable data directory is only offline.
    format_directory(tmp_path / "meta2", node_id=1, directory_id=DIR_IDS[0])
    config = static_config(meta, **{"metadata.log.dir": str(tmp_path / "meta2")})
    assert check_log_dirs(config).failed_dirs == (str(meta),)


def test_refuses_a_metadata_partition_in_a_data_directory(tmp_path: Path) -> None:
    format_directory(tmp_path / "meta", node_id=1, directory_id=DIR_IDS[0])
    format_directory(tmp_path / "data", node_id=1, directory_id=DIR_IDS[1])
    (tmp_path / "data" / PARTITION).mkdir()
    config = static_config(tmp_path / "data", **{"metadata.log.dir": str(tmp_path / "meta")})
    assert refusal(config) == (f"Found unexpected metadata location in data directory `{tmp_path / 'data'}/"
                               f"{PARTITION}` (the configured metadata directory is {tmp_path / 'meta'}).")


def test_refuses_when_no_voter_source_exists(tmp_path: Path) -> None:
    format_directory(tmp_path, node_id=1, directory_id=DIR_IDS[0])
    config = dataclasses.replace(static_config(tmp_path), quorum_voters=(), quorum_bootstrap_servers=())
    assert refusal(config) == (
        "If using process.roles, either controller.quorum.bootstrap.servers must contain the set of "
        "bootstrap controllers or controller.quorum.voters must contain a parseable set of controllers.")
    with DirectoryLock(tmp_path) as lock:  # the failed start released the lock
        assert lock.held


def test_missing_directory_id_is_generated_as_kafka_does(tmp_path: Path) -> None:
    write_meta_properties(tmp_path, MetaProperties(1, CLUSTER_ID, 1, None))
    config = static_config(tmp_path)
    with pytest.raises(StartupError, match=f"Error: directory ID not found in {tmp_path}"):
        check_log_dirs(config, rewrite=False)
    with start_storage(config) as state:
        assert state.rewritten_dirs == (str(tmp_path),)
        stored = read_meta_properties(tmp_path)
        assert stored.directory_id == state.directory_id and stored.directory_id is not None
        assert not stored.directory_id.is_reserved()
        assert (stored.version, stored.cluster_id, stored.node_id) == (1, CLUSTER_ID, 1)
    with start_storage(config) as again:
        assert again.rewritten_dirs == () and again.directory_id == stored.directory_id


def test_a_v0_meta_properties_without_cluster_id_is_refused(tmp_path: Path) -> None:
    write_meta_properties(tmp_path, MetaProperties(0, None, 1, DIR_IDS[0]))
    assert refusal(static_config(tmp_path)) == f"Error: cluster ID not found in {tmp_path}"


# ----------------------------------------------------------------------------- the lock


def test_two_servers_cannot_share_a_directory(tmp_path: Path) -> None:
    format_directory(tmp_path, node_id=1, directory_id=DIR_IDS[0])
    config = static_config(tmp_path)
    message = (f"Failed to acquire lock on file .lock in {tmp_path}. A Kafka instance in another process or "
               "thread is using this directory.")
    with start_storage(config):
        with pytest.raises(DirectoryLockedError) as info:
            start_storage(config)
        assert str(info.value) == message
    with start_storage(config) as state:  # released by close()
        assert state.lock.held
    assert not state.lock.held


def test_a_lock_held_by_another_process(tmp_path: Path) -> None:
    script = ("import fcntl, os, sys, time\n"
              "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\n"
              "fcntl.flock(fd, fcntl.LOCK_EX)\n"
              "print('locked', flush=True)\n"
              "time.sleep(60)\n")
    child = subprocess.Popen([sys.executable, "-c", script, str(tmp_path / ".lock")], stdout=subprocess.PIPE,
                             text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "locked"
        with pytest.raises(DirectoryLockedError, match="Failed to acquire lock on file .lock in"):
            DirectoryLock(tmp_path)
    finally:
        child.kill()
        child.wait()
        if child.stdout is not None:
            child.stdout.close()
    with DirectoryLock(tmp_path) as lock:
        assert lock.held


def test_uuid_sanity() -> None:
    # Test data sanity: the directory ids used above are valid, distinct, non-reserved uuids.
    assert len({str(uuid) for uuid in DIR_IDS}) == 3
    assert not any(uuid.is_reserved() for uuid in DIR_IDS)
    assert Uuid.from_string(str(DIR_IDS[0])) == DIR_IDS[0]
    assert encode_batch(noop_batch(0, 1))
