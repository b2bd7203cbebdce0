"""kafka-storage, run in-process: the text of Kafka's ``StorageTool`` byte for byte, exit codes,
argparse4j-style parsing, JSON output, and nothing written when a format is refused."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tools.storage_util import (
    CLUSTER_ID,
    bootstrap_values,
    controller_props,
    meta_properties,
    read_batches,
    run_tool,
    tree,
    write_config,
)

U1 = "3Db5QLSqSZieL3rJBUUegA"
U2 = "wZoXPqWoSu6F6c8MkmdyAg"
SNAPSHOT = "__cluster_metadata-0/00000000000000000000-0000000000.checkpoint"
LATEST_BOOTSTRAP = (  # Kafka 4.4's defaults: 4.4-IV2 and share.version 2 (PR #23235)
    "Bootstrap metadata: BootstrapMetadata(records=[ApiMessageAndVersion(FeatureLevelRecord("
    "name='metadata.version', featureLevel=33) at version 0), ApiMessageAndVersion(FeatureLevelRecord("
    "name='eligible.leader.replicas.version', featureLevel=1) at version 0), ApiMessageAndVersion("
    "FeatureLevelRecord(name='group.version', featureLevel=1) at version 0), ApiMessageAndVersion("
    "FeatureLevelRecord(name='share.version', featureLevel=2) at version 0), "
    "ApiMessageAndVersion(FeatureLevelRecord(name='streams.version', featureLevel=1) at version 0), "
    "ApiMessageAndVersion(FeatureLevelRecord(name='transaction.version', featureLevel=2) at version 0)], "
    "metadataVersionLevel=33, source=format command)\n")


@pytest.fixture
def config(tmp_path: Path) -> Path:
    """Controller 1 of a dynamic quorum: metadata dir ``meta-1`` plus data dirs ``d2`` and ``d1``."""
    return write_config(tmp_path / "controller.properties", **controller_props(
        tmp_path, 1, 9093, log_dirs=f"{tmp_path / 'd2'},{tmp_path / 'd1'}",
        metadata_log_dir=str(tmp_path / "meta-1")))


# --------------------------------------------------------------------------- the feature tables


def test_version_mapping_golden() -> None:
    result = run_tool("version-mapping", "--release-version", "3.9")
    assert (result.code, result.err) == (0, "")
    assert result.out == ("metadata.version=21 (3.9)\nkraft.version=1\ntransaction.version=0\n"
                          "group.version=0\neligible.leader.replicas.version=0\nshare.version=0\nstreams.version=0\n")
    assert run_tool("version-mapping").out == (
        "metadata.version=33 (4.4-IV2)\nkraft.version=1\ntransaction.version=2\ngroup.version=1\n"
        "eligible.leader.replicas.version=1\nshare.version=2\nstreams.version=1\n")
    assert run_tool("version-mapping", "-r", "4.0-IV1").out.splitlines()[:4] == [
        "metadata.version=23 (4.0-IV1)", "kraft.version=1", "transaction.version=0", "group.version=1"]
    assert run_tool("version-mapping", "-r", "4.5-IV0").out.startswith("metadata.version=34 (4.5-IV0)\n")


def test_version_mapping_unknown_release() -> None:
    result = run_tool("version-mapping", "-r", "2.8")
    assert (result.code, result.out) == (1, "")
    assert result.err == ("Unknown metadata.version '2.8'. Supported metadata.version are: 3.3-IV3, 3.4-IV0, "
                          "3.5-IV0, 3.5-IV1, 3.5-IV2, 3.6-IV0, 3.6-IV1, 3.6-IV2, 3.7-IV0, 3.7-IV1, "
                          "3.7-IV2, 3.7-IV3, 3.7-IV4, 3.8-IV0, 3.9-IV0, 4.0-IV0, 4.0-IV1, 4.0-IV2, "
                          "4.0-IV3, 4.1-IV0, 4.1-IV1, 4.2-IV0, 4.2-IV1, 4.3-IV0, 4.4-IV0, 4.4-IV1, "
                          "4.4-IV2, 4.5-IV0\n")


def test_feature_dependencies_golden() -> None:
    result = run_tool("feature-dependencies", "--feature", "metadata.version=17", "-f",
                      "eligible.leader.replicas.version=1", "-f", "transaction.version=2",
                      "-f", "group.version=0")
    assert (result.code, result.err) == (0, "")
    assert result.out == ("metadata.version=17 (3.7-IV2) has no dependencies.\n"
                          "eligible.leader.replicas.version=1 requires:\n"
                          "    metadata.version=23 (4.0-IV1)\n"
                          "transaction.version=2 has no dependencies.\n"
                          "group.version=0 has no dependencies.\n")


@pytest.mark.parametrize(("argument", "message"), [
    ("group.version", "Invalid feature format: group.version. Expected format: 'feature=version' "
                      "(e.g. 'group.version=1')"),
    ("group.version=one", "Invalid version format: one for feature group.version"),
    ("metadata.version=99", "Unknown metadata.version 99"),
    ("group.version=5", "Feature level 5 is not supported for feature group.version"),
    ("colour.version=1", "Unknown feature: colour.version"),
])
def test_feature_dependencies_errors(argument: str, message: str) -> None:
    result = run_tool("feature-dependencies", "-f", "transaction.version=1", "-f", argument)
    assert (result.code, result.out, result.err) == (1, "", message + "\n")


def test_feature_tables_json() -> None:
    mapping = json.loads(run_tool("version-mapping", "-r", "3.9", "--output", "json").out)
    assert mapping == {"release_version": "3.9", "metadata_version": {"level": 21, "release": "3.9-IV0"},
                       "features": {"kraft.version": 1, "transaction.version": 0, "group.version": 0,
                                    "eligible.leader.replicas.version": 0, "share.version": 0,
                                    "streams.version": 0}}
    dependencies = json.loads(run_tool("feature-dependencies", "-f", "eligible.leader.replicas.version=1",
                                       "-f", "metadata.version=17", "--output", "json").out)
    assert dependencies == {"features": [
        {"feature": "eligible.leader.replicas.version", "level": 1,
         "dependencies": [{"feature": "metadata.version", "level": 23, "release": "4.0-IV1"}]},
        {"feature": "metadata.version", "level": 17, "release": "3.7-IV2", "dependencies": []}]}


def test_random_uuid() -> None:
    first, second = run_tool("random-uuid"), run_tool("random-uuid")
    assert first.code == 0 and re.fullmatch(r"[A-Za-z0-9_-]{22}\n", first.out)
    assert first.out != second.out
    document = json.loads(run_tool("random-uuid", "--output", "json").out)
    assert re.fullmatch(r"[A-Za-z0-9_-]{22}", document["uuid"])


# --------------------------------------------------------------------------- info


def test_info_unformatted_directory_golden(tmp_path: Path) -> None:
    directory = tmp_path / "meta-1"
    directory.mkdir()
    config = write_config(tmp_path / "c.properties", **controller_props(tmp_path, 1, 9093))
    result = run_tool("info", "-c", str(config))
    assert (result.code, result.err) == (1, "")
    assert result.out == (f"Found log directory:\n  {directory}\n\n"
                          f"Found problem:\n  {directory} is not formatted.\n\n")


def test_info_formatted_and_problems(tmp_path: Path, config: Path) -> None:
    assert run_tool("format", "-c", str(config), "-t", CLUSTER_ID, "-N").code == 0
    result = run_tool("info", "-c", str(config))
    dirs = [tmp_path / "d1", tmp_path / "d2", tmp_path / "meta-1"]
    first = meta_properties(dirs[0])
    assert (result.code, result.err) == (0, "")
    assert result.out == ("Found log directories:\n" + "".join(f"  {d}\n" for d in dirs) + "\n"
                          f"Found metadata: {{cluster.id={CLUSTER_ID}, directory.id={first['directory.id']}, "
                          "node.id=1, version=1}\n\n")

    (dirs[1] / "meta.properties").write_text("version=1\ncluster.id=AAAAAAAAAAAAAAAAAAAAAg\nnode.id=2\n")
    (dirs[2] / "meta.properties").write_text("version=5\n")
    problems = run_tool("info", "-c", str(config))
    assert problems.code == 1
    assert problems.out.split("\n\n")[2] == (
        "Found problems:\n"
        f"  Error loading {dirs[2]}/meta.properties: Unknown meta.properties version number 5\n"
        "  Mismatched cluster IDs between storage directories.\n"
        "  Mismatched node IDs between storage directories.")
    assert json.loads(run_tool("info", "-c", str(config), "--output", "json").out) == {
        "log_directories": [str(d) for d in dirs],
        "metadata": {"version": "1", "cluster.id": CLUSTER_ID, "node.id": "1",
                     "directory.id": first["directory.id"]},
        "problems": [f"Error loading {dirs[2]}/meta.properties: Unknown meta.properties version number 5",
                     "Mismatched cluster IDs between storage directories.",
                     "Mismatched node IDs between storage directories."]}


def test_info_missing_directory_and_legacy_format(tmp_path: Path) -> None:
    (tmp_path / "meta-1").mkdir()
    (tmp_path / "meta-1" / "meta.properties").write_text("version=0\nbroker.id=1\ncluster.id=abc\n")
    config = write_config(tmp_path / "c.properties", **controller_props(
        tmp_path, 1, 9093, log_dirs=f"{tmp_path / 'meta-1'},{tmp_path / 'gone'}"))
    result = run_tool("info", "-c", str(config))
    assert result.code == 1
    assert result.out == (f"Found log directory:\n  {tmp_path / 'meta-1'}\n\n"
                          "Found metadata: {broker.id=1, cluster.id=abc, version=0}\n\n"
                          f"Found problems:\n  {tmp_path / 'gone'} does not exist\n"
                          "  The kafka configuration file appears to be for a cluster in KRaft mode, but the "
                          "directories are formatted for legacy mode.\n\n")


# --------------------------------------------------------------------------- format


def test_format_standalone_golden(tmp_path: Path, config: Path) -> None:
    result = run_tool("format", "--config", str(config), "--cluster-id", CLUSTER_ID, "--standalone")
    assert (result.code, result.err) == (0, "")
    assert result.out == (LATEST_BOOTSTRAP
                          + f"Formatting data directory {tmp_path / 'd1'} with metadata.version 4.4-IV2.\n"
                          + f"Formatting data directory {tmp_path / 'd2'} with metadata.version 4.4-IV2.\n"
                          + f"Formatting dynamic metadata voter directory {tmp_path / 'meta-1'} with "
                          "metadata.version 4.4-IV2.\n")
    snapshot = read_batches(tmp_path / "meta-1" / SNAPSHOT)
    (voter,) = snapshot[0].values[2].voters
    directory_id = meta_properties(tmp_path / "meta-1")["directory.id"]
    assert (voter.voter_id, str(voter.voter_directory_id)) == (1, directory_id)
    assert [(e.name, e.host, e.port) for e in voter.endpoints] == [("CONTROLLER", "127.0.0.1", 9093)]

    again = run_tool("format", "-c", str(config), "-t", CLUSTER_ID, "-s", "-g")
    assert (again.code, again.out) == (0, "All of the log directories are already formatted.\n")


def test_format_release_39_with_scram_and_feature(tmp_path: Path, config: Path) -> None:
    result = run_tool("format", "-c", str(config), "-t", CLUSTER_ID, "-N", "-r", "3.9-IV0", "-f",
                      "group.version=1", "-S", "SCRAM-SHA-256=[name=alice,password=alice-secret]")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0].startswith(
        "Bootstrap metadata: BootstrapMetadata(records=[ApiMessageAndVersion(FeatureLevelRecord("
        "name='metadata.version', featureLevel=21) at version 0), ApiMessageAndVersion(FeatureLevelRecord("
        "name='group.version', featureLevel=1) at version 0), ApiMessageAndVersion(UserScramCredentialRecord("
        "name='alice', mechanism=1, salt=[")
    assert lines[0].endswith(
        "iterations=4096) at version 0)], metadataVersionLevel=21, source=format command)")
    assert lines[3] == f"Formatting metadata directory {tmp_path / 'meta-1'} with metadata.version 3.9-IV0."
    batches = read_batches(tmp_path / "meta-1" / "bootstrap.checkpoint")
    assert [(key, version) for key, version, _ in batches[1].values] == [(12, 0), (12, 0), (11, 0)]
    assert not (tmp_path / "meta-1" / "__cluster_metadata-0").exists()


def test_format_initial_controllers_and_proposal_syntax(tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.properties", **controller_props(tmp_path, 2, 9094))
    result = run_tool("format", "-c", str(config), "-t", CLUSTER_ID, "--initial-controllers",
                      f"1@ctl1:9093:{U1},2@ctl2:9094:{U2}")
    assert result.code == 0, result.err
    assert result.out.endswith(f"Formatting dynamic metadata voter directory {tmp_path / 'meta-2'} with "
                               "metadata.version 4.4-IV2.\n")
    assert meta_properties(tmp_path / "meta-2")["directory.id"] == U2

    other = tmp_path / "other"
    config = write_config(other / "c.properties", **controller_props(other, 2, 9094))
    result = run_tool("format", "-c", str(config), "-t", CLUSTER_ID, "--controller-quorum-voters",
                      f"1-{U1}@ctl1:9093,2@ctl2:9094")
    assert result.code == 0, result.err
    voters = read_batches(other / "meta-2" / SNAPSHOT)[0].values[2].voters
    assert [(v.voter_id, v.endpoints[0].host, v.endpoints[0].port) for v in voters] == [
        (1, "ctl1", 9093), (2, "ctl2", 9094)]
    assert str(voters[1].voter_directory_id) == meta_properties(other / "meta-2")["directory.id"] != U2


def test_format_json(tmp_path: Path, config: Path) -> None:
    result = run_tool("format", "-c", str(config), "-t", CLUSTER_ID, "-I", f"1@ctl1:9093:{U1}",
                      "--output", "json")
    assert result.code == 0, result.err
    document = json.loads(result.out)
    dirs = [str(tmp_path / name) for name in ("d1", "d2", "meta-1")]
    assert document["cluster_id"] == CLUSTER_ID and document["node_id"] == 1
    assert document["metadata_version"] == {"level": 33, "release": "4.4-IV2"}
    assert document["features"] == {"kraft.version": 1, "transaction.version": 2, "group.version": 1,
                                    "eligible.leader.replicas.version": 1, "share.version": 2,
                                    "streams.version": 1}
    assert document["initial_controllers"] == [{"id": 1, "host": "ctl1", "port": 9093, "directory_id": U1}]
    assert [(d["path"], d["kind"]) for d in document["directories"]] == [
        (dirs[0], "data directory"), (dirs[1], "data directory"),
        (dirs[2], "dynamic metadata voter directory")]
    assert document["directories"][2]["directory_id"] == U1
    assert document["directories"][0]["files"] == [f"{dirs[0]}/meta.properties"]
    assert document["directories"][2]["files"] == [
        f"{dirs[2]}/__cluster_metadata-0/00000000000000000000-0000000000.checkpoint",
        f"{dirs[2]}/meta.properties"]
    assert document["already_formatted"] == [] and document["ignored"] == []


@pytest.mark.parametrize(("args", "message"), [
    (["-N", "-f", "kraft.version=0"], "Cannot set kraft.version to 0 if controller.quorum.voters is empty"),
    (["-I", "1@ctl1"], "No colon following hostname could be found."),
    (["--controller-quorum-voters", "1@ctl1:9093,2@ctl2:9093"],
     "Voter 2 in --controller-quorum-voters has no"),
    (["-s", "-r", "3.5-IV1", "-S", "SCRAM-SHA-256=[name=a,password=b]"],
     "SCRAM is only supported in metadata.version 3.5-IV2 or later."),
    ([], "Because controller.quorum.voters is not set on this controller, you must specify one of"),
])
def test_refused_format_writes_nothing(tmp_path: Path, config: Path, args: list[str], message: str) -> None:
    before = tree(tmp_path)
    result = run_tool("format", "-c", str(config), "-t", CLUSTER_ID, *args)
    assert (result.code, result.out) == (1, "")
    assert result.err.startswith(message) and result.err.endswith("\n")
    assert tree(tmp_path) == before


def test_already_formatted_is_refused_and_untouched(tmp_path: Path, config: Path) -> None:
    (tmp_path / "d2").mkdir()
    (tmp_path / "d2" / "meta.properties").write_text(f"version=1\ncluster.id={CLUSTER_ID}\nnode.id=1\n")
    before = tree(tmp_path)
    result = run_tool("format", "-c", str(config), "-t", CLUSTER_ID, "-s")
    assert (result.code, result.out) == (1, "")
    assert result.err == (f"Log directory {tmp_path / 'd2'} is already formatted. Use --ignore-formatted to "
                          "ignore this directory and format the others.\n")
    assert tree(tmp_path) == before
    other = run_tool("format", "-c", str(config), "-t", "AAAAAAAAAAAAAAAAAAAAAg", "-s", "-g")
    assert other.code == 1 and "already formatted for cluster" in other.err
    assert tree(tmp_path) == before
    result = run_tool("format", "-c", str(config), "-t", CLUSTER_ID, "-s", "-g")
    assert result.code == 0
    assert [line.split(" with ")[0] for line in result.out.splitlines()[1:]] == [
        f"Formatting data directory {tmp_path / 'd1'}",
        f"Formatting dynamic metadata voter directory {tmp_path / 'meta-1'}"]


def test_static_quorum_rejects_standalone_and_invalid_config(tmp_path: Path) -> None:
    config = write_config(tmp_path / "c.properties", **controller_props(
        tmp_path, 1, 9093, controller_quorum_voters="1@127.0.0.1:9093"))
    result = run_tool("format", "-c", str(config), "-t", CLUSTER_ID, "--standalone")
    assert result.code == 1 and result.err.startswith(
        "You cannot specify controller.quorum.voters and format the node with --initial-controllers or "
        "--standalone.")
    assert run_tool("format", "-c", str(config), "-t", CLUSTER_ID).code == 0
    bad = write_config(tmp_path / "bad.properties", process_roles="controller", node_id="x")
    result = run_tool("format", "-c", str(bad), "-t", CLUSTER_ID, "-s")
    assert (result.code, result.err) == (
        1, "Invalid value x for configuration node.id: Not a number of type INT\n")


# --------------------------------------------------------------------------- which Kafka a format is for

README = Path(__file__).resolve().parents[2] / "README.md"
HELP_ROW = re.compile(r"^ +(\d\.\d) +(\d\.\d)( \(default\))? +(\d\.\d-IV\d) \((\d+)\)$")
README_ROW = re.compile(r"^\| (\d\.\d) \| `(\d\.\d)`( \(the default\))? \| (\d\.\d-IV\d) \((\d+)\) \|$")
ReleaseRow = tuple[str, str, bool, str, int]


def release_rows(text: str, row: re.Pattern[str]) -> list[ReleaseRow]:
    """(Kafka line, --release-version, is the default, metadata.version, level) per table row."""
    return [(m[1], m[2], m[3] is not None, m[4], int(m[5]))
            for m in map(row.match, text.splitlines()) if m is not None]


def format_help() -> str:
    result = run_tool("format", "--help")
    assert result.code == 0
    return result.out


def test_format_help_says_which_release_version_each_kafka_needs() -> None:
    text = format_help()
    # each line's MetadataVersion.LATEST_PRODUCTION: 4.0 PR #18902, 4.1 PR #20137, 4.2 PR #20993,
    # 4.3 Kafka 4.3's upgrade notes, 4.4 PR #23235
    assert release_rows(text, HELP_ROW) == [("3.9", "3.9", False, "3.9-IV0", 21),
                                            ("4.0", "4.0", False, "4.0-IV3", 25),
                                            ("4.1", "4.1", False, "4.1-IV1", 27),
                                            ("4.2", "4.2", False, "4.2-IV1", 29),
                                            ("4.3", "4.3", False, "4.3-IV0", 30),
                                            ("4.4", "4.4", True, "4.4-IV2", 33)]
    words = " ".join(text.split())
    assert "The default metadata.version is Kafka 4.4's, 4.4-IV2 (level 33)" in words
    assert '"No MetadataVersion with feature level 33"' in words
    assert "(default: Kafka 4.4's, 4.4-IV2, which Kafka 3.9 to 4.3 refuse" in words
    assert release_rows(README.read_text(), README_ROW) == release_rows(text, HELP_ROW)


@pytest.mark.parametrize("row", release_rows(format_help(), HELP_ROW), ids=lambda row: f"kafka-{row[0]}")
def test_each_documented_release_version_formats_the_stated_metadata_version(
        tmp_path: Path, row: ReleaseRow) -> None:
    _, release, default, release_string, level = row
    runs = [(tmp_path / "given", ["-r", release])] + ([(tmp_path / "default", [])] if default else [])
    for root, extra in runs:
        config = write_config(root / "c.properties", **controller_props(root, 1, 9093))
        result = run_tool("format", "-c", str(config), "-t", CLUSTER_ID, "-N", *extra)
        assert result.code == 0, result.err
        assert result.out.endswith(f"with metadata.version {release_string}.\n")
        records = bootstrap_values(root / "meta-1")
        assert records[0][:2] == (12, 0)  # FeatureLevelRecord v0 first, as Kafka writes it
        assert (records[0][2].name, records[0][2].feature_level) == ("metadata.version", level)


# --------------------------------------------------------------------------- argument parsing (argparse4j)


def test_abbreviated_long_options(tmp_path: Path, config: Path) -> None:
    result = run_tool("format", "--con", str(config), "--clu", CLUSTER_ID, "--stand", "--ignore")
    assert result.code == 0, result.err
    assert run_tool("version-mapping", "--rel", "3.9").out.startswith("metadata.version=21 (3.9)\n")


@pytest.mark.parametrize(("args", "error"), [
    ([], "kafka-storage: error: too few arguments"),
    (["frobnicate"], "kafka-storage: error: invalid choice: 'frobnicate' (choose from 'info', 'format', "
                     "'version-mapping', 'feature-dependencies', 'random-uuid')"),
    (["format", "-c", "x"], "kafka-storage format: error: argument --cluster-id/-t is required"),
    (["format", "--c", "x", "-t", "y"], "kafka-storage format: error: ambiguous option: --c could match "
                                        "--cluster-id, --config"),
    (["format", "-c", "x", "-t", "y", "-s", "-N"], "kafka-storage format: error: argument "
                                                   "--no-initial-controllers/-N: not allowed with argument "
                                                   "--standalone/-s"),
    (["format", "-c", "x", "-t", "y", "-I", "z", "--controller-quorum-voters", "v"],
     "kafka-storage format: error: argument --controller-quorum-voters: not allowed with argument "
     "--initial-controllers/-I"),
    (["format", "-c", "x", "-t", "y", "--controller-quorum", "v"],
     "kafka-storage format: error: unrecognized arguments: '--controller-quorum'"),
    (["info", "-c"], "kafka-storage info: error: argument --config/-c: expected one argument"),
    (["info", "-c", "x", "extra"], "kafka-storage info: error: unrecognized arguments: 'extra'"),
    (["feature-dependencies"],
     "kafka-storage feature-dependencies: error: argument --feature/-f is required"),
])
def test_parse_errors(tmp_path: Path, args: list[str], error: str) -> None:
    result = run_tool(*args)
    assert (result.code, result.out) == (1, "")
    usage, message = result.err.splitlines()
    assert usage.startswith("usage: kafka-storage")
    assert message == error
    assert list(tmp_path.iterdir()) == []


def test_usage_line_and_help() -> None:
    result = run_tool("format", "-c", "x")
    assert result.err.splitlines()[0] == (
        "usage: kafka-storage format [-h] --config CONFIG --cluster-id CLUSTER_ID [--add-scram ADD_SCRAM] "
        "[--ignore-formatted] [--release-version RELEASE_VERSION] [--feature FEATURE] [--standalone] "
        "[--no-initial-controllers] [--initial-controllers INITIAL_CONTROLLERS] "
        "[--controller-quorum-voters VOTERS] [--output {text,json}]")
    for flag in ("-h", "--help", "--he"):
        help_text = run_tool("format", flag)
        assert help_text.code == 0 and help_text.out.startswith("usage: kafka-storage format [-h]")
        assert "Example: -I" in help_text.out and "--standalone" in help_text.out
    assert run_tool("-h").out.startswith("usage: kafka-storage [-h] {info,format,version-mapping,"
                                         "feature-dependencies,random-uuid} ...\n")


def test_arguments_from_file(tmp_path: Path) -> None:
    arguments = tmp_path / "args.txt"
    arguments.write_text("version-mapping\n--release-version\n3.9\n")
    assert run_tool(f"@{arguments}").out.startswith("metadata.version=21 (3.9)\n")
    assert run_tool("version-mapping", f"@{arguments}").code == 1


def test_standalone_uses_advertised_listener_and_localhost_for_a_wildcard(tmp_path: Path) -> None:
    wildcard = write_config(tmp_path / "a.properties", **controller_props(
        tmp_path, 1, 9093, listeners="CONTROLLER://:9093"))
    assert run_tool("format", "-c", str(wildcard), "-t", CLUSTER_ID, "-s").code == 0
    (voter,) = read_batches(tmp_path / "meta-1" / SNAPSHOT)[0].values[2].voters
    assert [(e.name, e.host, e.port) for e in voter.endpoints] == [("CONTROLLER", "localhost", 9093)]
    advertised = write_config(tmp_path / "b.properties", **controller_props(
        tmp_path, 2, 9094, advertised_listeners="CONTROLLER://ctl2.example:19094"))
    assert run_tool("format", "-c", str(advertised), "-t", CLUSTER_ID, "-s").code == 0
    (voter,) = read_batches(tmp_path / "meta-2" / SNAPSHOT)[0].values[2].voters
    assert [(e.name, e.host, e.port) for e in voter.endpoints] == [("CONTROLLER", "ctl2.example", 19094)]
