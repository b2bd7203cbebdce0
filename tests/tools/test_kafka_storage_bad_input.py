"""The installed ``kafka-storage`` given hostile input: every case ends with Kafka's exit status and, for
an error, one line on stderr (after the usage line for a parse error), never a Python traceback; a
format that fails writes nothing anywhere.

Directories the tool may not write are tested for real: as an ordinary user the permission bits apply;
as root the tool runs without the capabilities that let root ignore them (CAP_DAC_OVERRIDE and
CAP_DAC_READ_SEARCH, dropped from its bounding set before it starts), so the kernel refuses it as it
refuses any user."""
# ruff: noqa: E501

from __future__ import annotations

import ctypes
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from console_scripts import console_script

from tools.cluster_util import run
from tools.storage_util import CLUSTER_ID, controller_props, tree, write_config

U1 = "3Db5QLSqSZieL3rJBUUegA"
U2 = "wZoXPqWoSu6F6c8MkmdyAg"
RESERVED = "AAAAAAAAAAAAAAAAAAAAAQ"
PR_CAPBSET_DROP = 24
CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 1, 2


def one_error_line(result: subprocess.CompletedProcess[str], message: str) -> None:
    """Kafka's failure: exit status 1, the message as the last (and, past any usage line, only) line on
    stderr, nothing that looks like a traceback."""
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 1, (result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert lines and lines[-1].startswith(message), result.stderr
    assert len(lines) == 1 or (len(lines) == 2 and lines[0].startswith("usage: ")), result.stderr


FMT = ["format", "-c", "{config}", "-t", CLUSTER_ID]
UNKNOWN = "Unknown metadata.version '{}'. Supported metadata.version are: 3.3-IV3, "
CASES: dict[str, tuple[list[str], int, str]] = {
    # name: (arguments, Kafka's exit status, the start of the last stderr line); {tmp} is the test's
    # directory, {config} a good controller config whose log directory is {tmp}/meta-1
    "release version empty": ([*FMT, "-N", "-r", ""], 1, UNKNOWN.format("")),
    "release version without a minor": ([*FMT, "-N", "-r", "4"], 1, UNKNOWN.format("4")),
    "release version unstable": ([*FMT, "-N", "-r", "4.5-IV0"], 1, UNKNOWN.format("4.5-IV0")),
    "release version huge": ([*FMT, "-N", "-r", "99999999999999999999.1"], 1, UNKNOWN.format("99999999999999999999.1")),
    "release version with a blank": ([*FMT, "-N", "-r", " 3.9"], 1, UNKNOWN.format(" 3.9")),
    "cluster id empty": (["format", "-c", "{config}", "-t", "", "-N"], 1, "You must specify the cluster id."),
    # Kafka takes any cluster id string (KIP-78 never required a uuid), and so does this tool
    "cluster id short": (["format", "-c", "{config}", "-t", "short", "-N"], 0, ""),
    "cluster id outside base64": (["format", "-c", "{config}", "-t", "XcZZOzUqS4yHOjhMQB6JL!", "-N"], 0, ""),
    "initial controllers empty": ([*FMT, "-I", ""], 1, "No voters given."),
    "initial controllers only commas": ([*FMT, "-I", " , ,"], 1, "No voters given."),
    "initial controllers no host": ([*FMT, "-I", "1@"], 1, "No hostname found after node id."),
    "initial controllers huge node id": ([*FMT, "-I", f"99999999999@h:1:{U1}"], 1, "Failed to parse node id in dynamic voter string."),
    "initial controllers huge port": ([*FMT, "-I", f"1@h:99999:{U1}"], 1, "Invalid port 99999 in dynamic voter string."),
    "initial controllers open bracket": ([*FMT, "-I", f"1@[::1:9093:{U1}"], 1, "Hostname began with left bracket, but no right bracket was found."),
    "initial controllers short directory id": ([*FMT, "-I", "1@h:1:AAAA"], 1, "Failed to parse directory ID in dynamic voter string."),
    "initial controllers repeated node": ([*FMT, "-I", f"1@h:1:{U1},1@h:2:{U2}"], 1, "Node id 1 was specified more than once."),
    "initial controllers reserved directory id": ([*FMT, "-I", f"1@h:1:{RESERVED}"], 1, f"Invalid reserved directory ID {RESERVED} of node 1 in dynamic voter string"),
    "proposal voters reserved directory id": ([*FMT, "--controller-quorum-voters", f"1-{RESERVED}@h:1"], 1, f"Invalid reserved directory ID {RESERVED} of node 1 in dynamic voter string"),
    # Kafka's Formatter lists the supported features from a TreeMap: sorted by name
    "feature with a blank name": ([*FMT, "-N", "-f", " =1"], 1, "Unsupported feature: . Supported features are: eligible.leader.replicas.version, group.version, kraft.version, "),
    "feature without an equals sign": ([*FMT, "-N", "-f", "group.version"], 1, "Can't parse feature=level string group.version: equals sign not found."),
    "feature without a level": ([*FMT, "-N", "-f", "group.version="], 1, "Can't parse feature=level string group.version=: unable to parse  as a short."),
    "feature with a word for a level": ([*FMT, "-N", "-f", "group.version=b"], 1, "Can't parse feature=level string group.version=b: unable to parse b as a short."),
    "feature with a huge level": ([*FMT, "-N", "-f", "group.version=99999999999"], 1, "Can't parse feature=level string group.version=99999999999: unable to parse 99999999999 as a short."),
    "feature with two equals signs": ([*FMT, "-N", "-f", "group.version=1=2"], 1, "Can't parse feature=level string group.version=1=2: unable to parse 1=2 as a short."),
    "feature negative": ([*FMT, "-N", "-f", "group.version=-1"], 1, "No feature:group.version with feature level -1"),
    "feature twice, once with blanks": ([*FMT, "-N", "-f", "group.version=1", "-f", " group.version = 0 "], 1, "Feature group.version was specified more than once."),
    "scram empty": ([*FMT, "-N", "-S", ""], 1, "Invalid --add-scram value : unknown SCRAM mechanism ''"),
    "scram huge iterations": ([*FMT, "-N", "-S", "SCRAM-SHA-256=[name=a,password=b,iterations=" + "9" * 30 + "]"], 1, "Invalid --add-scram value SCRAM-SHA-256=[name=a,password=b,iterations=999"),
    "config missing": (["format", "-c", "{tmp}/missing", "-t", CLUSTER_ID, "-N"], 1, "Unable to read config file {tmp}/missing: No such file or directory"),
    "config is a directory": (["info", "-c", "{tmp}/folder"], 1, "Unable to read config file {tmp}/folder: Is a directory"),
    "config empty path": (["info", "-c", ""], 1, "Unable to read config file : Is a directory"),
    "config not UTF-8": (["format", "-c", "{tmp}/latin1.properties", "-t", CLUSTER_ID, "-N"], 1, "Invalid value \u00ff\u00fe1 for configuration node.id: Not a number of type INT"),
    "log dir with a NUL byte": (["format", "-c", "{tmp}/nul.properties", "-t", CLUSTER_ID, "-N"], 1, "Error while writing meta.properties file {tmp}/a\0b: embedded null byte"),
    "arguments file missing": (["@{tmp}/missing.args"], 1, "kafka-storage: error: Could not read arguments from file {tmp}/missing.args: No such file or directory"),
    "arguments file not UTF-8": (["@{tmp}/latin1.args"], 1, "kafka-storage: error: Could not read arguments from file {tmp}/latin1.args: not UTF-8 text (byte 0xe9 at offset 19)"),
    "arguments file is a directory": (["@{tmp}/folder"], 1, "kafka-storage: error: Could not read arguments from file {tmp}/folder: Is a directory"),
    "feature dependencies blank name": (["feature-dependencies", "-f", "=1"], 1, "Unknown feature: "),
    "feature dependencies no level": (["feature-dependencies", "-f", "group.version="], 1, "Invalid feature format: group.version=. Expected format: 'feature=version' (e.g. 'group.version=1')"),
    "feature dependencies two equals signs": (["feature-dependencies", "-f", "group.version=1=2"], 1, "Invalid feature format: group.version=1=2. Expected format: 'feature=version' (e.g. 'group.version=1')"),
    "feature dependencies negative level": (["feature-dependencies", "-f", "group.version=-1"], 1, "Feature level -1 is not supported for feature group.version"),
    "feature dependencies huge level": (["feature-dependencies", "-f", "metadata.version=40000"], 1, "Invalid version format: 40000 for feature metadata.version"),
    "version mapping empty": (["version-mapping", "-r", ""], 1, UNKNOWN.format("")),
}


@pytest.mark.parametrize("case", list(CASES))
def test_hostile_arguments_get_kafkas_exit_status_and_one_line(tmp_path: Path, case: str) -> None:
    config = write_config(tmp_path / "c.properties", **controller_props(tmp_path, 1, 9093))
    (tmp_path / "folder").mkdir()
    (tmp_path / "latin1.args").write_bytes(b"version-mapping\n-r\n\xe9\n")
    (tmp_path / "latin1.properties").write_bytes(config.read_bytes().replace(b"node.id=1", b"node.id=\xff\xfe1"))
    write_config(tmp_path / "nul.properties", **controller_props(tmp_path, 1, 9093, log_dirs=f"{tmp_path}/a\\u0000b"))
    arguments, status, message = CASES[case]

    def fill(text: str) -> str:
        return text.replace("{tmp}", str(tmp_path)).replace("{config}", str(config))

    before = tree(tmp_path)
    result = run("kafka-storage", *map(fill, arguments))
    if status:
        one_error_line(result, fill(message))
        assert tree(tmp_path) == before
    else:
        assert (result.returncode, result.stderr) == (0, ""), result.stderr


@pytest.mark.parametrize("tool", ["kafka-storage", "kafka-features"])
@pytest.mark.parametrize("stdout", ["a full disk", "closed"])
def test_an_output_that_cannot_be_written_is_one_line(tool: str, stdout: str) -> None:
    if stdout == "a full disk" and not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    with open("/dev/full" if stdout == "a full disk" else os.devnull, "w") as sink:
        result = subprocess.run(
            [console_script(tool), *([] if tool == "kafka-storage" else ["--bootstrap-controller", "h:1"]),
             "version-mapping"], stdout=sink, stderr=subprocess.PIPE, text=True, timeout=60,
            preexec_fn=None if stdout == "a full disk" else lambda: os.close(1))
    reason = "No space left on device" if stdout == "a full disk" else "standard output is closed"
    assert (result.returncode, result.stderr) == (1, f"Cannot write the output: {reason}\n")


# --------------------------------------------------------------------------- directories it cannot write


def test_log_dir_under_a_regular_file_fails_the_format_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("a regular file")
    bad = tmp_path / "plain" / "data"
    config = write_config(tmp_path / "c.properties", **controller_props(
        tmp_path, 1, 9093, log_dirs=f"{tmp_path / 'meta-1'},{tmp_path / 'new' / 'data'},{bad}"))
    before = tree(tmp_path)
    result = run("kafka-storage", "format", "-c", str(config), "-t", CLUSTER_ID, "--standalone")
    one_error_line(result, f"Error while writing meta.properties file {bad}: Not a directory")
    assert result.stdout == ""
    assert tree(tmp_path) == before  # meta-1 and new/ were made, then removed again

    info = run("kafka-storage", "info", "-c", str(config))
    assert "Traceback" not in info.stderr and (info.returncode, info.stderr) == (1, "")
    assert info.stdout == (f"Found problems:\n  {tmp_path / 'meta-1'} does not exist\n"
                           f"  {tmp_path / 'new' / 'data'} does not exist\n  {bad} does not exist\n\n")


def without_permission_override() -> Callable[[], None] | None:
    """What makes the tool subject to permission bits: nothing for an ordinary user; for root, dropping
    the capabilities that bypass them from the bounding set of the child before it starts."""
    if os.geteuid() != 0:
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        pytest.skip("running as root without prctl(2), so permission bits cannot be enforced on the tool")

    def drop() -> None:
        for capability in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
            if prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")

    return drop


def run_unprivileged(*args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run([console_script("kafka-storage"), *args], capture_output=True, text=True,
                              timeout=60, stdin=subprocess.DEVNULL, preexec_fn=without_permission_override())
    except subprocess.SubprocessError as exc:
        pytest.skip(f"running as root, and the capabilities that bypass permission bits cannot be dropped: {exc}")


def test_unwritable_directories_fail_the_format_and_nothing_is_written(tmp_path: Path) -> None:
    """A log directory inside a read-only directory cannot be made; an existing read-only log directory
    cannot take files. Either way the other directories are left as they were."""
    locked = tmp_path / "locked"
    (locked / "empty").mkdir(parents=True)
    (locked / "empty").chmod(0o555)
    locked.chmod(0o555)
    try:
        for bad, reason in [(locked / "data", "Permission denied"),
                            (locked / "empty", f"Permission denied: {locked / 'empty' / 'meta.properties.tmp'}")]:
            config = write_config(tmp_path / f"{bad.name}.properties", **controller_props(
                tmp_path, 1, 9093, log_dirs=f"{tmp_path / 'a-data'},{bad},{tmp_path / 'meta-1'}",
                metadata_log_dir=str(tmp_path / "meta-1")))
            before = tree(tmp_path)
            result = run_unprivileged("format", "-c", str(config), "-t", CLUSTER_ID, "--standalone")
            one_error_line(result, f"Error while writing meta.properties file {bad}: {reason}")
            assert result.stdout == ""
            assert tree(tmp_path) == before

            info = run_unprivileged("info", "-c", str(config))
            assert "Traceback" not in info.stderr and (info.returncode, info.stderr) == (1, "")
            assert f"  {bad} " in info.stdout
        unreadable = tmp_path / "unreadable.properties"
        unreadable.write_text("process.roles=controller\n")
        unreadable.chmod(0)
        one_error_line(run_unprivileged("info", "-c", str(unreadable)),
                       f"Unable to read config file {unreadable}: Permission denied")
    finally:
        locked.chmod(0o755)
        (locked / "empty").chmod(0o755)
