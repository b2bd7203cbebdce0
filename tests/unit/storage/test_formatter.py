"""The formatter of ``kafka-storage format``: checks and messages (Kafka's ``Formatter``), and the
files it writes read back record by record with the project's readers."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import time
from dataclasses import replace
from pathlib import Path

import pytest
from tools.storage_util import CLUSTER_ID, decode_scram_record, meta_properties, read_batches, tree

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.storage import (
    DynamicVoterError,
    FormatOptions,
    FormatterError,
    InitialController,
    NodeStorageConfig,
    inspect_directories,
    parse_controller_quorum_voters,
    parse_initial_controllers,
    parse_scram_credential,
    plan_format,
    read_zero_checkpoint_bootstrap,
)

U1 = "3Db5QLSqSZieL3rJBUUegA"
U2 = "wZoXPqWoSu6F6c8MkmdyAg"
U3 = "_KWDkTahTVaiVVVTaugNew"
SNAPSHOT = "__cluster_metadata-0/00000000000000000000-0000000000.checkpoint"


def node(root: Path, *, node_id: int = 1, roles: tuple[str, ...] = ("controller",), static: bool = False,
         data_dirs: tuple[str, ...] = (), unstable: bool = False) -> NodeStorageConfig:
    return NodeStorageConfig(
        node_id=node_id, process_roles=roles,
        log_dirs=(str(root / "meta"), *(str(root / d) for d in data_dirs)),
        metadata_log_dir=str(root / "meta"), controller_listener_names=("CONTROLLER", "CONTROLLER_SSL"),
        controller_endpoint=("ctl1.example", 9093) if "controller" in roles else None,
        quorum_voters_configured=static, unstable_feature_versions=unstable)


def options(**kwargs: object) -> FormatOptions:
    kwargs.setdefault("cluster_id", CLUSTER_ID)
    return FormatOptions(**kwargs)  # type: ignore[arg-type]


def refused(config: NodeStorageConfig, opts: FormatOptions) -> str:
    with pytest.raises(FormatterError) as info:
        plan_format(config, opts)
    return str(info.value)


def features_of(batches: list) -> list[tuple[str, int]]:  # type: ignore[type-arg]
    return [(message.name, message.feature_level) for key, version, message in batches[1].values
            if key == 12 and version == 0]


# --------------------------------------------------------------------------- voter strings


def test_initial_controllers_parse_with_trimming_ipv6_and_empty_entries() -> None:
    controllers = parse_initial_controllers(f" 0@controller-0:1234:{U1}, 1@[::1]:9093:{U2} ,,")
    assert controllers == [InitialController(0, "controller-0", 1234, Uuid.from_string(U1)),
                           InitialController(1, "::1", 9093, Uuid.from_string(U2))]


@pytest.mark.parametrize(("text", "message"), [
    ("1controller:9093:" + U1, "No @ found in dynamic voter string."),
    ("@controller:9093:" + U1, "Invalid @ at beginning of dynamic voter string."),
    ("x@controller:9093:" + U1, "Failed to parse node id in dynamic voter string."),
    ("-3@controller:9093:" + U1, "Invalid negative node id -3 in dynamic voter string."),
    ("1@", "No hostname found after node id."),
    ("1@[::1:9093:" + U1, "Hostname began with left bracket, but no right bracket was found."),
    ("1@controller", "No colon following hostname could be found."),
    ("1@[::1]x9093:" + U1, "Port section must start with a colon."),
    ("1@controller:9093", "No colon following port could be found."),
    ("1@controller:port:" + U1, "Failed to parse port in dynamic voter string."),
    ("1@controller:65536:" + U1, "Invalid port 65536 in dynamic voter string."),
    ("1@controller:9093:not-a-uuid", "Failed to parse directory ID in dynamic voter string."),
    (" , ", "No voters given."),
    (f"1@a:1:{U1},1@b:2:{U2}", "Node id 1 was specified more than once."),
])
def test_initial_controllers_errors_are_kafkas(text: str, message: str) -> None:
    with pytest.raises(DynamicVoterError) as info:
        parse_initial_controllers(text)
    assert str(info.value) == message


@pytest.mark.parametrize("reserved", ["AAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAQ",
                                      "AAAAAAAAAAAAAAAAAAAAYw"])
def test_reserved_directory_ids_are_refused_before_anything_is_written(reserved: str) -> None:
    """The zero id, the metadata topic id (1) and the rest below 100: a node refuses to start with one."""
    message = (f"Invalid reserved directory ID {reserved} of node 2 in dynamic voter string: the zero id and "
               "the ids below 100 are reserved by Kafka.")
    with pytest.raises(DynamicVoterError) as info:
        parse_initial_controllers(f"1@a:1:{U1},2@b:2:{reserved}")
    assert str(info.value) == message
    with pytest.raises(DynamicVoterError) as info:
        parse_controller_quorum_voters(f"1@a:1,2-{reserved}@b:2", node_id=1)
    assert str(info.value) == message


def test_controller_quorum_voters_generates_only_this_nodes_directory_id() -> None:
    voters = parse_controller_quorum_voters(f"1@ctl1:9093,2-{U2}@ctl2:9093,3-{U3}@[::1]:9095", node_id=1)
    assert [(v.node_id, v.host, v.port) for v in voters] == [
        (1, "ctl1", 9093), (2, "ctl2", 9093), (3, "::1", 9095)]
    assert voters[1].directory_id == Uuid.from_string(U2) and voters[2].directory_id == Uuid.from_string(U3)
    assert not voters[0].directory_id.is_reserved()
    assert parse_controller_quorum_voters("1@ctl1:9093", 1)[0].directory_id != voters[0].directory_id


def test_controller_quorum_voters_refuses_another_voter_without_directory_id() -> None:
    with pytest.raises(DynamicVoterError) as info:
        parse_controller_quorum_voters(f"1-{U1}@ctl1:9093,2@ctl2:9093", node_id=1)
    assert str(info.value).startswith("Voter 2 in --controller-quorum-voters has no directory id.")
    with pytest.raises(DynamicVoterError, match="Invalid negative node id -2"):
        parse_controller_quorum_voters("-2@ctl1:9093", node_id=1)
    with pytest.raises(DynamicVoterError, match="Failed to parse directory ID 'nope' of voter 2"):
        parse_controller_quorum_voters("2-nope@ctl1:9093", node_id=2)


# --------------------------------------------------------------------------- SCRAM


def hi(hash_name: str, password: bytes, salt: bytes, iterations: int) -> bytes:
    """RFC 5802 Hi(), written out: U1 = HMAC(p, salt + INT(1)), Ui = HMAC(p, Ui-1), XOR of all."""
    block = hmac.new(password, salt + b"\0\0\0\1", hash_name).digest()
    result = bytearray(block)
    for _ in range(iterations - 1):
        block = hmac.new(password, block, hash_name).digest()
        result = bytearray(a ^ b for a, b in zip(result, block, strict=True))
    return bytes(result)


@pytest.mark.parametrize(("mechanism", "hash_name", "type_id"), [("SCRAM-SHA-256", "sha256", 1),
                                                                  ("SCRAM-SHA-512", "sha512", 2)])
def test_scram_credential_keys_follow_rfc_5802(mechanism: str, hash_name: str, type_id: int) -> None:
    credential = parse_scram_credential(f"{mechanism}=[name=alice,password=alice-secret,salt=c2FsdA==,"
                                        "iterations=4097]")
    salted = hi(hash_name, b"alice-secret", b"salt", 4097)
    client_key = hmac.new(salted, b"Client Key", hash_name).digest()
    assert (credential.name, credential.mechanism_type, credential.salt, credential.iterations) == (
        "alice", type_id, b"salt", 4097)
    assert credential.stored_key == hashlib.new(hash_name, client_key).digest()
    assert credential.server_key == hmac.new(salted, b"Server Key", hash_name).digest()
    body = decode_scram_record(credential.record().body)
    assert credential.record().api_key == 11 and credential.record().version == 0
    assert body == {"name": "alice", "mechanism": type_id, "salt": b"salt",
                    "stored_key": credential.stored_key,
                    "server_key": credential.server_key, "iterations": 4097}


def test_scram_defaults_random_base36_salt_and_4096_iterations() -> None:
    first = parse_scram_credential('SCRAM-SHA-256=[name="bob",password="a,b"]')
    second = parse_scram_credential("SCRAM-SHA-256=[name=bob,password=a,b]".replace("a,b", '"a,b"'))
    assert first.iterations == 4096 and first.name == "bob"
    assert first.salt != second.salt
    assert set(first.salt.decode()) <= set("0123456789abcdefghijklmnopqrstuvwxyz")
    salted = hi("sha256", b"a,b", first.salt, 4096)
    assert first.server_key == hmac.new(salted, b"Server Key", "sha256").digest()


def test_scram_salted_password_is_used_as_given() -> None:
    salted = bytes(range(32))
    credential = parse_scram_credential("SCRAM-SHA-256=[name=carol,salt=c2FsdA==,"
                                        "saltedpassword=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=]")
    assert credential.server_key == hmac.new(salted, b"Server Key", "sha256").digest()


@pytest.mark.parametrize(("text", "fragment"), [
    ("SCRAM-SHA-1=[name=a,password=b]", "unknown SCRAM mechanism"),
    ("SCRAM-SHA-256=name=a", "expected SCRAM-SHA-256=[name=...,password=...]"),
    ("SCRAM-SHA-256=[password=b]", "name is required"),
    ("SCRAM-SHA-256=[name=a]", "give either password or saltedpassword"),
    ("SCRAM-SHA-256=[name=a,password=b,iterations=100]", "a whole number from 4096 to 16384."),
    ("SCRAM-SHA-256=[name=a,password=b,iterations=99999999999999999999999]", "from 4096 to 16384"),
    ("SCRAM-SHA-256=[name=a,password=b,iterations=x]", "iterations must be a whole number"),
    ("SCRAM-SHA-256=[name=a,saltedpassword=AAAA]", "saltedpassword needs the salt"),
    ("SCRAM-SHA-256=[name=a,password=b,salt=***]", "salt is not base64"),
    ("SCRAM-SHA-256=[name=a,password=b,colour=red]", "unknown key colour"),
    ('SCRAM-SHA-256=[name="a,password=b]', "unterminated quote"),
])
def test_scram_errors(text: str, fragment: str) -> None:
    with pytest.raises(FormatterError) as info:
        parse_scram_credential(text)
    assert str(info.value).startswith(f"Invalid --add-scram value {text}: ") and fragment in str(info.value)


# --------------------------------------------------------------------------- refusals, in Kafka's words


def test_refusals_have_kafkas_messages(tmp_path: Path) -> None:
    config = node(tmp_path)
    static = node(tmp_path, static=True)
    broker = node(tmp_path, roles=("broker",))
    assert refused(node(tmp_path, roles=()), options(standalone=True)) == (
        "The kafka configuration file appears to be for a legacy cluster. Formatting is only supported for "
        "clusters in KRaft mode.")
    assert refused(config, options(standalone=True, release_version="2.8")).startswith(
        "Unknown metadata.version '2.8'. Supported metadata.version are: 3.3-IV3, 3.4-IV0, ")
    # Kafka 4.4 lists up to its production 4.4-IV2, or its unstable 4.5-IV0 when those are enabled (PR #23235)
    assert refused(config, options(standalone=True, release_version="2.8")).endswith(", 4.3-IV0, 4.4-IV0, "
                                                                                     "4.4-IV1, 4.4-IV2")
    assert refused(node(tmp_path, unstable=True), options(standalone=True, release_version="2.8")).endswith(
        ", 4.4-IV2, 4.5-IV0")
    assert refused(config, options(standalone=True, features=["group.version"])) == (
        "Can't parse feature=level string group.version: equals sign not found.")
    assert refused(config, options(standalone=True, features=["group.version=x"])) == (
        "Can't parse feature=level string group.version=x: unable to parse x as a short.")
    assert refused(config, options(standalone=True, features=["group.version=1", "group.version=0"])) == (
        "Feature group.version was specified more than once.")
    assert refused(static, options(standalone=True)) == (
        "You cannot specify controller.quorum.voters and format the node with --initial-controllers or "
        "--standalone. If you want to use dynamic quorum, please remove controller.quorum.voters and specify "
        "controller.quorum.bootstrap.servers instead.")
    assert refused(broker, options(standalone=True)) == "You can only use --standalone on a controller."
    assert refused(config, options()) == (
        "Because controller.quorum.voters is not set on this controller, you must specify one of the "
        "following: --standalone, --initial-controllers, or --no-initial-controllers.")
    assert refused(config, options(cluster_id="", standalone=True)) == "You must specify the cluster id."
    assert refused(config, options(standalone=True, release_version="3.9",
                                   features=["metadata.version=21"])) == (
        "Use --release-version instead of --feature metadata.version=X to avoid ambiguity.")
    assert refused(config, options(standalone=True, features=["metadata.version=34"])) == (
        "metadata.version 4.5-IV0 is not yet stable.")
    assert refused(config, options(standalone=True, release_version="4.5-IV0")).startswith(
        "Unknown metadata.version '4.5-IV0'. Supported metadata.version are: 3.3-IV3, ")
    # Kafka's Formatter keeps the supported features in a TreeMap: the list is sorted by name
    assert refused(config, options(standalone=True, features=["foo.version=1"])) == (
        "Unsupported feature: foo.version. Supported features are: eligible.leader.replicas.version, "
        "group.version, kraft.version, share.version, streams.version, transaction.version")
    assert refused(config, options(standalone=True, features=["share.version=3"])) == (
        "No feature:share.version with feature level 3")
    # the levels are checked in name order, so group.version is refused before transaction.version
    twice = options(standalone=True, features=["transaction.version=9", "group.version=9"])
    assert refused(config, twice) == "No feature:group.version with feature level 9"
    assert refused(config, options(no_initial_controllers=True, features=["kraft.version=0"])) == (
        "Cannot set kraft.version to 0 if controller.quorum.voters is empty and one of the flags "
        "--standalone, --initial-controllers, or --no-initial-controllers is used. For dynamic controllers "
        "support, try removing the --feature flag for kraft.version.")
    assert refused(static, options(features=["kraft.version=1"])) == (
        "Cannot set kraft.version to 1 unless controller.quorum.voters is empty and one of the flags "
        "--standalone, --initial-controllers, or --no-initial-controllers is used. For dynamic controllers "
        "support, try using one of --standalone, --initial-controllers, or --no-initial-controllers and "
        "removing controller.quorum.voters.")
    assert refused(config, options(standalone=True, features=["group.version=7"])) == (
        "No feature:group.version with feature level 7")
    assert refused(config, options(standalone=True, release_version="3.9",
                                   features=["eligible.leader.replicas.version=1"])) == (
        "eligible.leader.replicas.version could not be set to 1 because it depends on metadata.version "
        "level 23")
    assert refused(config, options(standalone=True, release_version="3.5-IV1",
                                   add_scram=["SCRAM-SHA-256=[name=a,password=b]"])) == (
        "SCRAM is only supported in metadata.version 3.5-IV2 or later.")


def test_nothing_is_written_when_a_directory_is_already_formatted(tmp_path: Path) -> None:
    config = node(tmp_path, data_dirs=("data-a", "data-b"))
    only_a = replace(config, log_dirs=(str(tmp_path / "data-a"),), metadata_log_dir=str(tmp_path / "data-a"))
    plan_format(only_a, options(no_initial_controllers=True)).write()  # data-b and meta stay unformatted
    before = tree(tmp_path)
    assert refused(config, options(standalone=True)) == (
        f"Log directory {tmp_path / 'data-a'} is already formatted. Use --ignore-formatted to ignore this "
        "directory and format the others.")
    assert tree(tmp_path) == before
    rest = plan_format(config, options(standalone=True, ignore_formatted=True))
    assert [t.path for t in rest.targets] == [str(tmp_path / "data-b"), str(tmp_path / "meta")]
    assert rest.already_formatted == (str(tmp_path / "data-a"),)


def test_ignore_formatted_refuses_directories_of_another_cluster_or_node(tmp_path: Path) -> None:
    config = node(tmp_path, data_dirs=("data",))
    only_data = replace(config, log_dirs=(str(tmp_path / "data"),), metadata_log_dir=str(tmp_path / "data"))
    plan_format(only_data, options(no_initial_controllers=True)).write()
    before = tree(tmp_path)
    message = refused(config, options(cluster_id="AAAAAAAAAAAAAAAAAAAAAg", no_initial_controllers=True,
                                      ignore_formatted=True))
    assert message.startswith(f"Log directory {tmp_path / 'data'} is already formatted for cluster "
                              f"{CLUSTER_ID} and node 1, not cluster AAAAAAAAAAAAAAAAAAAAAg and node 1")
    other_node = refused(node(tmp_path, node_id=2, data_dirs=("data",)),
                         options(no_initial_controllers=True, ignore_formatted=True))
    assert other_node.startswith(f"Log directory {tmp_path / 'data'} is already formatted for cluster "
                                 f"{CLUSTER_ID} and node 1, not cluster {CLUSTER_ID} and node 2")
    assert tree(tmp_path) == before


def test_unreadable_directories_are_ignored_and_none_left_is_refused(tmp_path: Path) -> None:
    (tmp_path / "meta").write_text("a file, not a directory")
    config = node(tmp_path, data_dirs=("data",))
    plan = plan_format(config, options(no_initial_controllers=True))
    assert plan.unreadable == (str(tmp_path / "meta"),)
    assert [t.path for t in plan.targets] == [str(tmp_path / "data")]
    assert refused(node(tmp_path), options(no_initial_controllers=True)) == (
        "No available log directories to format.")


# --------------------------------------------------------------------------- what is written


FEATURES_44 = [("metadata.version", 33), ("eligible.leader.replicas.version", 1), ("group.version", 1),
               ("share.version", 2), ("streams.version", 1), ("transaction.version", 2)]
"""Kafka 4.4's defaults at 4.4-IV2: share.version 2 (PR #23235)."""
FEATURES_43 = [("metadata.version", 30), ("eligible.leader.replicas.version", 1), ("group.version", 1),
               ("share.version", 1), ("streams.version", 1), ("transaction.version", 2)]


def standalone_voter(tmp_path: Path, voters: messages.VotersRecord) -> None:
    """The VotersRecord of --standalone: this node, its first controller listener, kraft.version 0-1."""
    V = messages.VotersRecord
    meta = meta_properties(tmp_path / "meta")
    assert voters == V(version=0, voters=[V.Voter(
        voter_id=1, voter_directory_id=Uuid.from_string(meta["directory.id"]),
        endpoints=[V.Endpoint(name="CONTROLLER", host="ctl1.example", port=9093)],
        k_raft_version_feature=V.KRaftVersionFeature(min_supported_version=0, max_supported_version=1))])


def test_standalone_writes_kafka_4_4s_files(tmp_path: Path) -> None:
    """KIP-1170: the bootstrap records follow KRaft's control records in the zero checkpoint of the
    metadata directory; no bootstrap.checkpoint, and a data directory gets meta.properties alone."""
    config = node(tmp_path, data_dirs=("data",))
    before = time.time_ns() // 1_000_000
    plan = plan_format(config, options(standalone=True))
    assert [(t.path, t.kind) for t in plan.targets] == [
        (str(tmp_path / "data"), "data directory"),
        (str(tmp_path / "meta"), "dynamic metadata voter directory")]
    written = plan.write()
    assert written == {str(tmp_path / "data"): [tmp_path / "data" / "meta.properties"],
                       str(tmp_path / "meta"): [tmp_path / "meta" / SNAPSHOT,
                                                 tmp_path / "meta" / "meta.properties"]}
    voter = plan.initial_controllers
    assert voter is not None and len(voter) == 1
    assert (voter[0].node_id, voter[0].host, voter[0].port) == (1, "ctl1.example", 9093)

    meta = meta_properties(tmp_path / "meta")
    assert meta == {"version": "1", "cluster.id": CLUSTER_ID, "node.id": "1",
                    "directory.id": str(voter[0].directory_id)}
    data_meta = meta_properties(tmp_path / "data")
    assert data_meta["directory.id"] not in (meta["directory.id"], "AAAAAAAAAAAAAAAAAAAAAA")
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["meta.properties"]
    assert sorted(p.name for p in (tmp_path / "meta").iterdir()) == [
        "__cluster_metadata-0", "meta.properties"]
    assert [p.name for p in (tmp_path / "meta" / "__cluster_metadata-0").iterdir()] == [
        "00000000000000000000-0000000000.checkpoint"]

    snapshot = read_batches(tmp_path / "meta" / SNAPSHOT)
    assert [(b.base_offset, b.epoch, b.control, b.offsets) for b in snapshot] == [
        (0, 0, True, [0, 1, 2]), (3, 0, False, [3, 4, 5, 6, 7, 8]), (9, 0, True, [9])]
    assert all(b.producer == (-1, -1, -1) and b.compression == 0 for b in snapshot)
    header, kraft, voters = snapshot[0].values
    assert before <= header.last_contained_log_timestamp <= time.time_ns() // 1_000_000
    assert header == messages.SnapshotHeaderRecord(
        version=0, last_contained_log_timestamp=header.last_contained_log_timestamp)
    assert kraft == messages.KRaftVersionRecord(version=0, k_raft_version=1)
    standalone_voter(tmp_path, voters)
    assert features_of(snapshot) == FEATURES_44
    assert snapshot[2].values == [messages.SnapshotFooterRecord(version=0)]


def test_standalone_at_4_3_writes_kafka_4_3s_files(tmp_path: Path) -> None:
    """Below 4.4-IV0 the format keeps the layout of Kafka 4.3 and older, which those lines start:
    bootstrap.checkpoint in every directory, the zero checkpoint with KRaft's control records alone."""
    config = node(tmp_path, data_dirs=("data",))
    before = time.time_ns() // 1_000_000
    plan = plan_format(config, options(standalone=True, release_version="4.3"))
    assert not plan.zero_checkpoint_layout
    written = plan.write()
    assert written == {str(tmp_path / "data"): [tmp_path / "data" / "bootstrap.checkpoint",
                                                 tmp_path / "data" / "meta.properties"],
                       str(tmp_path / "meta"): [tmp_path / "meta" / SNAPSHOT,
                                                 tmp_path / "meta" / "bootstrap.checkpoint",
                                                 tmp_path / "meta" / "meta.properties"]}
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == [
        "bootstrap.checkpoint", "meta.properties"]
    assert sorted(p.name for p in (tmp_path / "meta").iterdir()) == [
        "__cluster_metadata-0", "bootstrap.checkpoint", "meta.properties"]

    for directory in ("data", "meta"):
        batches = read_batches(tmp_path / directory / "bootstrap.checkpoint")
        assert [(b.base_offset, b.epoch, b.control, b.offsets) for b in batches] == [
            (0, 0, True, [0]), (1, 0, False, [1, 2, 3, 4, 5, 6]), (7, 0, True, [7])]
        assert all(b.producer == (-1, -1, -1) and b.compression == 0 for b in batches)
        assert batches[0].values == [messages.SnapshotHeaderRecord(version=0, last_contained_log_timestamp=0)]
        assert features_of(batches) == FEATURES_43
        assert batches[2].values == [messages.SnapshotFooterRecord(version=0)]

    snapshot = read_batches(tmp_path / "meta" / SNAPSHOT)
    assert [(b.base_offset, b.epoch, b.control, b.offsets) for b in snapshot] == [
        (0, 0, True, [0, 1, 2]), (3, 0, True, [3])]
    header, kraft, voters = snapshot[0].values
    assert before <= header.last_contained_log_timestamp <= time.time_ns() // 1_000_000
    assert kraft == messages.KRaftVersionRecord(version=0, k_raft_version=1)
    standalone_voter(tmp_path, voters)
    assert snapshot[1].values == [messages.SnapshotFooterRecord(version=0)]


def zero_checkpoint_summary(directory: Path) -> list[tuple[int, bool, list[str]]]:
    """(base offset, control, what each record is) per batch of the zero checkpoint."""
    summary = []
    for b in read_batches(directory / SNAPSHOT):
        kinds = ([type(value).__name__ for value in b.values] if b.control
                 else [getattr(message, "name", f"key {key}") for key, _, message in b.values])
        summary.append((b.base_offset, b.control, kinds))
    return summary


@pytest.mark.parametrize(("roles", "static", "extra", "kinds"), [
    (("controller",), True, {}, ["SnapshotHeaderRecord"]),
    (("controller",), False, {"no_initial_controllers": True},
     ["SnapshotHeaderRecord", "KRaftVersionRecord"]),
    (("controller",), False, {"initial_controllers": f"1@a:1:{U1},2@b:2:{U2}"},
     ["SnapshotHeaderRecord", "KRaftVersionRecord", "VotersRecord"]),
    (("broker", "controller"), False, {"standalone": True},
     ["SnapshotHeaderRecord", "KRaftVersionRecord", "VotersRecord"]),
], ids=["static", "no-initial-controllers", "initial-controllers", "combined-standalone"])
def test_every_controller_gets_the_zero_checkpoint_in_its_metadata_directory_only(
        tmp_path: Path, roles: tuple[str, ...], static: bool, extra: dict[str, object],
        kinds: list[str]) -> None:
    plan = plan_format(node(tmp_path, roles=roles, static=static, data_dirs=("data",)), options(**extra))
    plan.write()
    assert sorted(p.name for p in (tmp_path / "data").iterdir()) == ["meta.properties"]
    assert sorted(p.name for p in (tmp_path / "meta").iterdir()) == [
        "__cluster_metadata-0", "meta.properties"]
    names = [name for name, _ in FEATURES_44]
    assert zero_checkpoint_summary(tmp_path / "meta") == [
        (0, True, kinds), (len(kinds), False, names),
        (len(kinds) + len(names), True, ["SnapshotFooterRecord"])]
    metadata = read_zero_checkpoint_bootstrap(tmp_path / "meta")
    assert metadata is not None and metadata.records == plan.records and metadata.metadata_version == 33


def test_a_broker_gets_meta_properties_alone(tmp_path: Path) -> None:
    """StorageTool writes the zero checkpoint on controllers only (PR #20707): a broker cannot write its
    records to the metadata log."""
    plan = plan_format(node(tmp_path, roles=("broker",), data_dirs=("data",)),
                       options(add_scram=["SCRAM-SHA-256=[name=a,password=b]"]))
    assert plan.zero_checkpoint_layout
    assert plan.write() == {str(tmp_path / d): [tmp_path / d / "meta.properties"] for d in ("data", "meta")}
    assert sorted(p.name for p in tmp_path.rglob("*")) == [
        "data", "meta", "meta.properties", "meta.properties"]
    at_43 = tmp_path / "at-4.3"
    plan_format(node(at_43, roles=("broker",)), options(release_version="4.3")).write()
    assert sorted(p.name for p in (at_43 / "meta").iterdir()) == ["bootstrap.checkpoint", "meta.properties"]


def test_scram_credentials_follow_the_features_in_the_zero_checkpoint(tmp_path: Path) -> None:
    plan = plan_format(node(tmp_path, static=True), options(add_scram=[
        "SCRAM-SHA-512=[name=alice,password=pw,salt=c2FsdA==,iterations=8192]",
        "SCRAM-SHA-256=[name=bob,password=pw2]"]))
    plan.write()
    data = read_batches(tmp_path / "meta" / SNAPSHOT)[1]
    assert [(key, version) for key, version, _ in data.values] == [(12, 0)] * 6 + [(11, 0)] * 2
    salted = hi("sha512", b"pw", b"salt", 8192)
    alice, bob = (decode_scram_record(body) for _, _, body in data.values[6:])
    assert alice == {
        "name": "alice", "mechanism": 2, "salt": b"salt", "iterations": 8192,
        "stored_key": hashlib.sha512(hmac.new(salted, b"Client Key", "sha512").digest()).digest(),
        "server_key": hmac.new(salted, b"Server Key", "sha512").digest()}
    assert (bob["name"], bob["mechanism"], bob["iterations"]) == ("bob", 1, 4096)


@pytest.mark.parametrize(("extra", "layout"), [
    ({"release_version": "4.3"}, False), ({"release_version": "3.9"}, False),
    ({"features": ["metadata.version=30"]}, False), ({"features": ["metadata.version=31"]}, True),
    ({"release_version": "4.4-IV0"}, True), ({"release_version": "4.4"}, True), ({}, True),
], ids=lambda value: str(value))
def test_the_release_chooses_the_layout(tmp_path: Path, extra: dict[str, object], layout: bool) -> None:
    """Kafka 4.4's tool always writes its layout; this one keeps Kafka 4.3's below 4.4-IV0, so that the
    line the release names can start the directory."""
    plan = plan_format(node(tmp_path), options(no_initial_controllers=True, **extra))
    assert plan.zero_checkpoint_layout is layout
    plan.write()
    assert (tmp_path / "meta" / "bootstrap.checkpoint").exists() is not layout
    assert (tmp_path / "meta" / SNAPSHOT).exists() is layout


def test_bootstrap_records_beyond_one_batch_are_refused_before_writing(tmp_path: Path) -> None:
    """Kafka 4.4 appends them to the zero checkpoint in one batch of at most 8 MiB (KIP-1170)."""
    salted = base64.b64encode(b"k" * 64).decode()
    scram = [f"SCRAM-SHA-512=[name={'u' * 60000}{i},salt=c2FsdA==,saltedpassword={salted}]"
             for i in range(140)]
    config = node(tmp_path, static=True)
    before = tree(tmp_path)
    message = refused(config, options(add_scram=scram))
    assert message.startswith("The total record(s) size of ")
    assert ("exceeds the maximum allowed batch size of 8388608: Kafka 4.4 keeps the bootstrap records in "
            "one batch of the zero checkpoint (KIP-1170). Give fewer --add-scram credentials (140 given)"
            in message)
    assert tree(tmp_path) == before
    plan_format(config, options(add_scram=scram[:130])).write()  # fits
    broker = replace(config, process_roles=("broker",), log_dirs=(str(tmp_path / "b"),),
                     metadata_log_dir=str(tmp_path / "b"))
    plan_format(broker, options(add_scram=scram)).write()  # a broker writes no zero checkpoint
    plan_format(node(tmp_path / "old", static=True), options(add_scram=scram, release_version="4.3")).write()
    assert len(read_batches(tmp_path / "old" / "meta" / "bootstrap.checkpoint")) == 4  # split in two


def test_initial_controllers_for_a_node_outside_the_list(tmp_path: Path) -> None:
    plan = plan_format(node(tmp_path, node_id=4), options(initial_controllers=f"1@a:1:{U1},2@b:2:{U2}"))
    (target,) = plan.targets
    assert target.kind == "dynamic metadata directory"
    assert target.directory_id not in (Uuid.from_string(U1), Uuid.from_string(U2))
    plan.write()
    snapshot = read_batches(tmp_path / "meta" / SNAPSHOT)
    assert [v.voter_id for v in snapshot[0].values[2].voters] == [1, 2]
    assert [str(v.voter_directory_id) for v in snapshot[0].values[2].voters] == [U1, U2]


def test_release_39_static_quorum_and_scram(tmp_path: Path) -> None:
    config = node(tmp_path, static=True)
    plan = plan_format(config, options(release_version="3.9", add_scram=[
        "SCRAM-SHA-512=[name=alice,password=pw,salt=c2FsdA==,iterations=8192]"]))
    (target,) = plan.targets
    assert target.kind == "metadata directory"
    assert plan.feature_levels == {"kraft.version": 0, "transaction.version": 0, "group.version": 0,
                                   "eligible.leader.replicas.version": 0, "share.version": 0,
                                   "streams.version": 0}
    plan.write()
    assert not (tmp_path / "meta" / "__cluster_metadata-0").exists()
    batches = read_batches(tmp_path / "meta" / "bootstrap.checkpoint")
    assert [(b.base_offset, b.offsets) for b in batches] == [(0, [0]), (1, [1, 2]), (3, [3])]
    assert features_of(batches) == [("metadata.version", 21)]
    key, version, body = batches[1].values[1]
    assert (key, version) == (11, 0)
    salted = hi("sha512", b"pw", b"salt", 8192)
    assert decode_scram_record(body) == {
        "name": "alice", "mechanism": 2, "salt": b"salt", "iterations": 8192,
        "stored_key": hashlib.sha512(hmac.new(salted, b"Client Key", "sha512").digest()).digest(),
        "server_key": hmac.new(salted, b"Server Key", "sha512").digest()}
    text = plan.bootstrap_metadata_string()
    assert text.startswith("BootstrapMetadata(records=[ApiMessageAndVersion(FeatureLevelRecord("
                           "name='metadata.version', featureLevel=21) at version 0), ApiMessageAndVersion("
                           "UserScramCredentialRecord(name='alice', mechanism=2, salt=[115, 97, 108, 116], "
                           "storedKey=[")
    assert text.endswith(", iterations=8192) at version 0)], metadataVersionLevel=21, source=format command)")


def test_default_features_and_kraft_version_of_each_quorum_kind(tmp_path: Path) -> None:
    dynamic = plan_format(node(tmp_path), options(no_initial_controllers=True))
    assert dynamic.metadata_version == 33 and dynamic.feature_levels["kraft.version"] == 1
    assert dynamic.targets[0].kind == "metadata directory" and dynamic.initial_controllers is None
    static = plan_format(node(tmp_path, static=True), options())
    assert static.feature_levels["kraft.version"] == 0
    unstable = plan_format(node(tmp_path, unstable=True), options(no_initial_controllers=True))
    assert unstable.metadata_version == 34
    chosen = plan_format(node(tmp_path), options(no_initial_controllers=True, release_version="4.0",
                                                 features=["group.version=0", "kraft.version=1"]))
    assert chosen.metadata_version == 25
    assert chosen.feature_levels == {"kraft.version": 1, "transaction.version": 2, "group.version": 0,
                                     "eligible.leader.replicas.version": 0, "share.version": 0,
                                     "streams.version": 0}
    broker = plan_format(node(tmp_path, roles=("broker",)), options())
    assert broker.feature_levels["kraft.version"] == 1 and broker.targets[0].kind == "metadata directory"


def test_inspect_directories(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    (tmp_path / "empty").mkdir()
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "meta.properties").write_text("version=7\n")
    reports = inspect_directories([str(tmp_path / n) for n in ("missing", "file", "empty", "bad")])
    assert [(r.problem, r.error) for r in reports] == [
        ("does not exist", None), ("not a directory", None), ("not formatted", None),
        (None, "Unknown meta.properties version number 7")]


def test_inspect_reports_a_meta_properties_that_is_a_directory(tmp_path: Path) -> None:
    (tmp_path / "odd" / "meta.properties").mkdir(parents=True)
    (report,) = inspect_directories([str(tmp_path / "odd")])
    assert (report.problem, report.error) == (None, "Is a directory")


# --------------------------------------------------------------------------- failed writes leave no trace


def listing(root: Path) -> dict[str, bytes | str | None]:
    """Every entry under ``root``: file bytes, symlink targets, None for directories."""
    found: dict[str, bytes | str | None] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            key = str(path.relative_to(root))
            if path.is_symlink():
                found[key] = os.readlink(path)
            else:
                found[key] = None if path.is_dir() else path.read_bytes()
    return found


def unmakeable(root: Path, kind: str) -> tuple[Path, str]:
    """A log directory that cannot be made, and the reason the operating system gives."""
    if kind == "under a regular file":
        (root / "z-file").write_text("not a directory")
        return root / "z-file" / "dir", "Not a directory"
    if kind == "name too long":
        return root / "z-new" / ("x" * 300), "File name too long"
    if kind == "dangling symlink":
        (root / "z-link").symlink_to(root / "nowhere")
        return root / "z-link", "File exists"
    if kind == "symlink loop":
        (root / "z-loop").symlink_to(root / "z-loop")
        return root / "z-loop" / "dir", "Too many levels of symbolic links"
    return root / "z-nul\0dir", "embedded null byte"


@pytest.mark.parametrize("kind", ["under a regular file", "name too long", "dangling symlink", "symlink loop",
                                  "a NUL byte"])
def test_a_directory_that_cannot_be_made_fails_the_format_and_nothing_is_written(
        tmp_path: Path, kind: str) -> None:
    bad, reason = unmakeable(tmp_path, kind)
    config = replace(node(tmp_path, data_dirs=("a-data", "b-new/deeper/data")),
                     log_dirs=(str(tmp_path / "meta"), str(tmp_path / "a-data"),
                               str(tmp_path / "b-new" / "deeper" / "data"), str(bad)))
    plan = plan_format(config, options(standalone=True))
    assert [t.path for t in plan.targets][-1] == str(bad)  # the others come first and are undone
    before = listing(tmp_path)
    with pytest.raises(FormatterError) as info:
        plan.write()
    assert str(info.value) == f"Error while writing meta.properties file {bad}: {reason}"
    assert listing(tmp_path) == before


def test_a_file_that_cannot_be_written_undoes_the_directories_already_formatted(tmp_path: Path) -> None:
    config = node(tmp_path, data_dirs=("a-data", "new/data"))
    (tmp_path / "meta" / "bootstrap.checkpoint.tmp").mkdir(parents=True)  # where the file must go
    (tmp_path / "meta" / "keep.txt").write_text("left alone")
    plan = plan_format(config, options(standalone=True, release_version="4.3"))
    assert [t.path for t in plan.targets] == [str(tmp_path / d) for d in ("a-data", "meta", "new/data")]
    before = listing(tmp_path)
    with pytest.raises(FormatterError) as info:
        plan.write()
    assert str(info.value) == (f"Error while writing meta.properties file {tmp_path / 'meta'}: "
                               f"Is a directory: {tmp_path / 'meta' / 'bootstrap.checkpoint.tmp'}")
    assert listing(tmp_path) == before


def test_a_zero_checkpoint_that_cannot_be_written_undoes_the_directories_already_formatted(
        tmp_path: Path) -> None:
    config = node(tmp_path, data_dirs=("a-data", "new/data"))
    (tmp_path / "meta").mkdir()
    (tmp_path / "meta" / "__cluster_metadata-0").write_text("a file where the partition directory goes")
    plan = plan_format(config, options(standalone=True))
    before = listing(tmp_path)
    with pytest.raises(FormatterError) as info:
        plan.write()
    assert str(info.value) == (f"Error while writing meta.properties file {tmp_path / 'meta'}: "
                               f"File exists: {tmp_path / 'meta' / '__cluster_metadata-0'}")
    assert listing(tmp_path) == before
