"""`kafka-metadata-quorum reconcile`, `scale` and `replace-controller`: the parsing and rendering on
their own, the refusals that need no server in-process, and the installed tool against reference
quorums: a standalone controller grown to three, voters removed and added back (also answering the
confirmation on a terminal), and a wiped controller swapped in under its new directory id."""

from __future__ import annotations

import io
import json
import os
import pty
import select
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import pytest
from click.testing import CliRunner, Result
from console_scripts import console_script
from integration.harness import Cluster, wait_until
from integration.test_voters import FAST, format_observer

from kafka_admin_kraft.errors import (
    KafkaTimeoutError,
    VoterChangeError,
    VoterChangeRefusedError,
    VoterChangeTimeoutError,
)
from kafka_admin_kraft.models import Endpoint
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.storage import MetaProperties, write_meta_properties
from kafka_admin_kraft.voters import (
    DesiredVoter,
    Progress,
    ReconcileResult,
    StepOutcome,
    VoterPlan,
    VoterStep,
)
from kafka_admin_kraft_cli.metadata_quorum import main
from kafka_admin_kraft_cli.metadata_quorum.scale import scaled
from kafka_admin_kraft_cli.metadata_quorum.voter_entries import (
    VoterEntry,
    VoterSpecError,
    desired_voters,
    parse_entries,
    with_configured,
)
from kafka_admin_kraft_cli.metadata_quorum.voter_progress import StepReporter
from kafka_admin_kraft_cli.metadata_quorum.voter_text import (
    done_text,
    failure_text,
    nothing_to_do_text,
    plan_text,
    result_json,
    voter_names,
)
from tools.cluster_util import start_quorum

TOOL = "kafka-metadata-quorum"
D1, D2, D3, D4 = (str(Uuid.random()) for _ in range(4))


# ----------------------------------------------------------------------------- parsing


def test_entries_in_each_form() -> None:
    entries = parse_entries([f"1, 2@{D2}", f"3@ctl3.example:9093:{D3}", f"4@[::1]:9094:{D4}"])
    assert entries == [
        VoterEntry(1),
        VoterEntry(2, D2),
        VoterEntry(3, D3, "ctl3.example", 9093),
        VoterEntry(4, D4, "::1", 9094),
    ]
    assert parse_entries([","]) == []
    voters = desired_voters(entries, "CONTROLLER")
    assert voters[0] == DesiredVoter(1)
    assert voters[2].endpoints == (Endpoint(listener="CONTROLLER", host="ctl3.example", port=9093),)
    with pytest.raises(VoterSpecError, match="give --controller-listener"):
        desired_voters(entries, None)
    assert desired_voters(entries[:2], None) == [DesiredVoter(1), DesiredVoter(2, D2)]


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("x", "'x' is not a node id"),
        ("-1", "'-1' is not a node id"),
        ("2147483648", "is not a node id"),
        ("1@nope", "'nope' is not a directory id"),
        ("1@AAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAA is a reserved directory id"),
        ("1@host:9093", "No colon following port could be found."),
        (f"1@host:port:{D1}", "Failed to parse port"),
        ("1,1", "node id 1 is given more than once"),
    ],
)
def test_bad_entries_say_what_is_wrong(text: str, fragment: str) -> None:
    with pytest.raises(VoterSpecError) as info:
        parse_entries([text])
    assert fragment in str(info.value)
    assert str(info.value).startswith("Invalid --voters")
    assert "\n" not in str(info.value)


def test_scaling_adds_and_removes_from_the_current_voters() -> None:
    assert scaled([1, 2, 3], [VoterEntry(4), VoterEntry(5, D4)], []) == [
        VoterEntry(1), VoterEntry(2), VoterEntry(3), VoterEntry(4), VoterEntry(5, D4)]
    assert scaled([1, 2, 3], [], [VoterEntry(2)]) == [VoterEntry(1), VoterEntry(3)]
    assert scaled([1, 2, 3], [VoterEntry(2, D2)], [VoterEntry(1)]) == [VoterEntry(2, D2), VoterEntry(3)]
    with pytest.raises(VoterSpecError, match=r"Node 7 is not a voter \(the voters are 1, 2, 3\)"):
        scaled([1, 2, 3], [], [VoterEntry(7)])
    with pytest.raises(VoterSpecError, match="both --add and --remove"):
        scaled([1, 2, 3], [VoterEntry(2)], [VoterEntry(2)])
    with pytest.raises(VoterSpecError, match="--remove takes node ids"):
        scaled([1, 2, 3], [], [VoterEntry(2, D2)])


# ----------------------------------------------------------------------------- rendering


def _step(action: Literal["add", "remove"], node_id: int, directory: str, after: set[tuple[int, str]],
          tolerance: int) -> VoterStep:
    return VoterStep(action, node_id, directory, frozenset(after), tolerance,
                     f"because; {len(after)} voters afterwards, fault tolerance {tolerance}")


GROW = VoterPlan(
    current=frozenset({(1, D1)}),
    desired=frozenset({(1, D1), (2, D2), (3, D3)}),
    steps=(_step("add", 2, D2, {(1, D1), (2, D2)}, 0), _step("add", 3, D3, {(1, D1), (2, D2), (3, D3)}, 1)),
    fault_tolerance=0,
)


def test_a_configured_controller_fills_in_its_entry_once() -> None:
    endpoint = Endpoint(listener="CONTROLLER", host="ctl4", port=9093)
    configured = {4: DesiredVoter(4, D4, (endpoint,))}
    assert with_configured([DesiredVoter(1), DesiredVoter(4)], configured, "--voters") == [
        DesiredVoter(1), DesiredVoter(4, D4, (endpoint,))]
    with pytest.raises(VoterSpecError, match="describes controller 4, which --voters does not name"):
        with_configured([DesiredVoter(1)], configured, "--voters")
    with pytest.raises(VoterSpecError, match="Controller 4 is given both in --voters and by --controller"):
        with_configured([DesiredVoter(4, D4)], configured, "--voters")


def test_plan_text() -> None:
    assert plan_text(GROW) == (
        "Current voters:  1\n"
        "Desired voters:  1, 2, 3\n"
        "Fault tolerance: 0 now, 1 after the change\n"
        "Plan (2 steps, each committed before the next):\n"
        f"  1. Add voter 2 (directory id {D2})\n"
        "     because; 2 voters afterwards, fault tolerance 0\n"
        f"  2. Add voter 3 (directory id {D3})\n"
        "     because; 3 voters afterwards, fault tolerance 1\n"
    )
    waiting = VoterPlan(frozenset({(1, D1)}), frozenset(), waiting="node 4 is not fetching yet")
    assert plan_text(waiting, [1, 4]).splitlines()[1:] == [
        "Desired voters:  1, 4", "Fault tolerance: 0 now", "Waiting: node 4 is not fetching yet",
        "Plan: known once that holds"]


def test_a_replaced_directory_shows_both_ids() -> None:
    current, desired = {(1, D1), (2, D2)}, {(1, D1), (2, D4)}
    assert voter_names(current, desired) == f"1, 2@{D2}"
    assert voter_names(desired, current) == f"1, 2@{D4}"
    assert voter_names(desired) == "1, 2"
    assert voter_names(()) == "none"


def test_results_as_text_and_json() -> None:
    outcomes = (StepOutcome(GROW.steps[0], 0.25), StepOutcome(GROW.steps[1], 0.5))
    assert done_text(ReconcileResult(GROW, outcomes)) == (
        "Done: the voters are now 1, 2, 3, fault tolerance 1 (2 steps committed in 0.75 s)\n")
    assert nothing_to_do_text(VoterPlan(frozenset({(2, D2), (1, D1)}), frozenset())) == (
        "Nothing to do: the voters are already 1, 2\n")
    document = result_json(GROW, outcomes[:1], False, "it broke")
    assert document["plan"]["steps"][1] == {"action": "add", "node_id": 3, "directory_id": D3,
                                            "why": GROW.steps[1].why, "fault_tolerance_after": 1}
    assert document["plan"]["current_voters"] == [{"node_id": 1, "directory_id": D1}]
    assert document["completed"] == [{"action": "add", "node_id": 2, "directory_id": D2, "seconds": 0.25}]
    assert (document["changed"], document["dry_run"], document["error"]) == (True, False, "it broke")
    assert result_json(None, (), True, "refused")["plan"] is None


def test_failures_are_one_line_naming_the_completed_steps() -> None:
    done = [StepOutcome(GROW.steps[0], 0.3)]
    assert failure_text(VoterChangeRefusedError("no majority (no step was completed)"), ()) == (
        "Voter change refused: no majority (no step was completed)")
    timeout = VoterChangeTimeoutError("gave up after 5 s: node 3 lags (completed: x)", done)
    assert failure_text(timeout, done) == f"Voter change timed out: {timeout}"
    assert failure_text(VoterChangeError("Add voter 3 failed 3 times (completed: x)", done), done) == (
        "Voter change failed: Add voter 3 failed 3 times (completed: x)")
    text = failure_text(KafkaTimeoutError("describe_metadata_quorum", 5.0), done)
    assert text.startswith("org.apache.kafka.common.errors.TimeoutException: ")
    assert text.endswith(f" (completed: Add voter 2 (directory id {D2}))")
    assert "\n" not in text


def test_progress_lines_without_a_terminal() -> None:
    stream = io.StringIO()
    reporter = StepReporter(stream, terminal=False)
    rest = VoterPlan(GROW.current, GROW.desired, GROW.steps[1:], fault_tolerance=0)
    reporter(Progress("plan", GROW))
    reporter(Progress("waiting", GROW, GROW.steps[0], "node 2 is still catching up"))
    reporter(Progress("waiting", GROW, GROW.steps[0], "node 2 is still catching up"))
    reporter(Progress("step", GROW, GROW.steps[0]))
    reporter(Progress("committed", GROW, GROW.steps[0]))
    reporter(Progress("step", rest, rest.steps[0]))
    reporter.close()
    lines = stream.getvalue().splitlines()
    assert lines[0] == "Step 1/2: waiting: node 2 is still catching up"
    assert lines[1].startswith(f"Step 1/2: Add voter 2 (directory id {D2}) ... committed in 0.")
    assert lines[2] == f"Step 2/2: Add voter 3 (directory id {D3}) ..."
    assert len(lines) == 3 and stream.getvalue().endswith("\n")
    assert [step.node_id for step, _ in reporter.committed] == [2]


# ----------------------------------------------------------------------------- refusals without a server


def quorum(*args: str) -> Result:
    return CliRunner().invoke(main, ["--bootstrap-controller", "127.0.0.1:1", *args], prog_name=TOOL)


def one_line(result: Result, message: str) -> None:
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", message + "\n")


def test_refusals_before_any_request(tmp_path: Path) -> None:
    one_line(quorum("reconcile", "--voters", "1,x"),
             "Invalid --voters entry 'x': 'x' is not a node id; expected <id>, <id>@<directory-id> or "
             "<id>@<host>:<port>:<directory-id>")
    one_line(quorum("scale", "--add", "4,4"), "Invalid --add: node id 4 is given more than once")
    result = quorum("scale", "--yes")
    assert result.exit_code == 1
    assert result.stderr.endswith(
        f"{TOOL} scale: error: one of the arguments --add --remove --controller-config is required\n")
    result = quorum("reconcile", "--voters", "1", "--no-probe")
    assert result.stderr.endswith(f"{TOOL} reconcile: error: unrecognized arguments: '--no-probe'\n")
    one_line(quorum("replace-controller", "--controller-id", "3"),
             "You must supply the configuration file of the new controller when using replace-controller.")
    metadata = tmp_path / "metadata"
    metadata.mkdir()
    write_meta_properties(metadata, MetaProperties(version=1, cluster_id="c", node_id=2,
                                                   directory_id=Uuid.from_string(D2)))
    config = tmp_path / "controller-2.properties"
    config.write_text(f"process.roles=controller\nnode.id=2\ncontroller.listener.names=CONTROLLER\n"
                      f"listeners=CONTROLLER://:9093\nmetadata.log.dir={metadata}\n")
    one_line(quorum("--command-config", str(config), "replace-controller", "--controller-id", "3"),
             f"--controller-id 3 differs from node.id 2 in {config}: is it the replaced controller's file?")


# ----------------------------------------------------------------------------- against reference quorums


def tool(cluster: Cluster, *args: str) -> subprocess.CompletedProcess[str]:
    command = [console_script(TOOL), "--bootstrap-controller", cluster.bootstrap_servers(), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL)


def voters(cluster: Cluster) -> dict[int, str]:
    """Node id -> directory id of the committed voters, as `describe --status --output json` shows them."""
    result = tool(cluster, "describe", "--status", "--output", "json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["committed_voters"] == document["current_voters"]
    return {v["id"]: v["directory_id"] for v in document["current_voters"]}


def entry(cluster: Cluster, node_id: int) -> str:
    node = cluster.nodes[node_id]
    return f"{node_id}@127.0.0.1:{node.port}:{node.directory_id}"


@pytest.fixture
def standalone(tmp_path: Path) -> Iterator[Cluster]:
    """Node 1 formatted with --standalone, nodes 2 and 3 with --no-initial-controllers (observers)."""
    cluster = Cluster(tmp_path / "standalone", 3, properties=dict(FAST))
    try:
        for node in cluster.nodes.values():
            cluster.write_config(node)
        cluster.format_node(cluster.nodes[1], initial_controllers=[1])
        for node_id in (2, 3):
            format_observer(cluster, cluster.nodes[node_id])
        cluster.start_all()
        cluster.wait_for_leader(30)
        yield cluster
    finally:
        cluster.close()


def test_grow_a_standalone_controller_to_three(standalone: Cluster) -> None:
    cluster = standalone
    wanted = ["--voters", f"1,{entry(cluster, 2)},{entry(cluster, 3)}"]
    before = voters(cluster)
    assert list(before) == [1]

    dry = tool(cluster, "reconcile", *wanted, "--dry-run")
    assert (dry.returncode, dry.stderr) == (0, ""), dry.stderr
    lines = dry.stdout.splitlines()
    assert lines[:4] == ["Current voters:  1", "Desired voters:  1, 2, 3",
                         "Fault tolerance: 0 now, 1 after the change",
                         "Plan (2 steps, each committed before the next):"]
    assert lines[4] == f"  1. Add voter 2 (directory id {cluster.nodes[2].directory_id})"
    assert lines[6] == f"  2. Add voter 3 (directory id {cluster.nodes[3].directory_id})"
    assert lines[-1] == "Dry run: no change made."

    unconfirmed = tool(cluster, "reconcile", *wanted)
    assert unconfirmed.returncode == 1
    assert unconfirmed.stdout == dry.stdout.replace("Dry run: no change made.\n", "")
    assert unconfirmed.stderr == ("No terminal to confirm on: add --yes to change voters from a script "
                                  "(no change made)\n")

    nothing = tool(cluster, "reconcile", "--voters", ",", "--yes")
    assert (nothing.returncode, nothing.stdout) == (1, "")
    assert nothing.stderr == (
        "Voter change refused: the quorum needs at least one voter (no step was completed)\n")
    assert voters(cluster) == before

    grown = tool(cluster, "reconcile", *wanted, "--yes")
    assert grown.returncode == 0, grown.stderr
    assert grown.stdout.startswith(unconfirmed.stdout)
    assert grown.stdout.splitlines()[-1].startswith(
        "Done: the voters are now 1, 2, 3, fault tolerance 1 (2 steps committed in ")
    progress = grown.stderr.splitlines()
    assert [line.split(" ... ")[0] for line in progress] == [
        f"Step 1/2: Add voter 2 (directory id {cluster.nodes[2].directory_id})",
        f"Step 2/2: Add voter 3 (directory id {cluster.nodes[3].directory_id})"]
    assert all(" ... committed in " in line for line in progress)
    assert voters(cluster) == {i: str(n.directory_id) for i, n in cluster.nodes.items()}

    again = tool(cluster, "reconcile", *wanted)
    assert (again.returncode, again.stdout, again.stderr) == (
        0, "Nothing to do: the voters are already 1, 2, 3\n", "")


@pytest.fixture(scope="module")
def three(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Three dynamic controllers; each test leaves three healthy voters behind."""
    cluster = start_quorum(tmp_path_factory.mktemp("three"))
    try:
        yield cluster
    finally:
        cluster.close()


def follower(cluster: Cluster) -> int:
    leader, _ = cluster.wait_for_leader(30)
    return next(i for i in (3, 2, 1) if i != leader)


def test_scale_remove_and_add_back_as_json(three: Cluster) -> None:
    cluster = three
    gone = follower(cluster)
    removed = tool(cluster, "scale", "--remove", str(gone), "--yes", "--output", "json")
    assert removed.returncode == 0, removed.stderr
    document = json.loads(removed.stdout)
    directory = str(cluster.nodes[gone].directory_id)
    assert [(s["action"], s["node_id"], s["directory_id"], s["fault_tolerance_after"])
            for s in document["plan"]["steps"]] == [("remove", gone, directory, 0)]
    assert document["plan"]["fault_tolerance"] == 1
    assert [(c["action"], c["node_id"]) for c in document["completed"]] == [("remove", gone)]
    assert document["completed"][0]["seconds"] >= 0
    assert (document["changed"], document["dry_run"], document["error"]) == (True, False, None)
    assert gone not in voters(cluster)

    # the node fetches on as an observer: adding it back (its endpoint given) restores the quorum
    back = tool(cluster, "scale", "--add", entry(cluster, gone), "--yes", "--output", "json")
    assert back.returncode == 0, back.stderr
    assert [(c["action"], c["node_id"]) for c in json.loads(back.stdout)["completed"]] == [("add", gone)]
    assert voters(cluster)[gone] == directory

    unknown = tool(cluster, "scale", "--remove", "9", "--yes")
    assert (unknown.returncode, unknown.stdout) == (1, "")
    assert unknown.stderr == "Node 9 is not a voter (the voters are 1, 2, 3)\n"

    # the controller's own properties file gives its node id, directory id and endpoint
    assert tool(cluster, "scale", "--remove", str(gone), "--yes").returncode == 0
    config = str(cluster.nodes[gone].config_path)
    twice = tool(cluster, "scale", "--add", entry(cluster, gone), "--controller-config", config, "--yes")
    assert (twice.returncode, twice.stderr) == (1, f"Controller {gone} is given both in --add and by "
                                                   "--controller-config\n")
    again = tool(cluster, "scale", "--controller-config", config, "--yes")
    assert again.returncode == 0, again.stderr
    assert voters(cluster)[gone] == directory


def on_a_terminal(cluster: Cluster, answer: str, *args: str) -> tuple[int, str]:
    """Run the tool with a pseudo-terminal for stdin, stdout and stderr; answer its question."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen([console_script(TOOL), "--bootstrap-controller", cluster.bootstrap_servers(),
                                *args], stdin=terminal, stdout=terminal, stderr=terminal, close_fds=True)
    os.close(terminal)
    seen = b""
    answered = False
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([controller], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # the terminal closed: the process is gone
                break
            if not chunk:
                break
            seen += chunk
        if not answered and b"[y/N]: " in seen:
            os.write(controller, answer.encode() + b"\n")
            answered = True
        if process.poll() is not None and not ready:
            break
    os.close(controller)
    return process.wait(10), seen.decode(errors="replace").replace("\r\n", "\n")


def test_the_question_on_a_terminal(three: Cluster) -> None:
    cluster = three
    gone = follower(cluster)
    code, text = on_a_terminal(cluster, "n", "scale", "--remove", str(gone))
    assert code == 1
    assert "Change the voters in 1 step? [y/N]: n\nAborted: no change made\n" in text
    assert gone in voters(cluster)

    code, text = on_a_terminal(cluster, "y", "scale", "--remove", str(gone))
    assert code == 0, text
    assert f"Remove voter {gone} (directory id {cluster.nodes[gone].directory_id}) ... committed in" in text
    assert "Done: the voters are now" in text
    assert gone not in voters(cluster)
    restored = tool(cluster, "scale", "--add", entry(cluster, gone), "--yes")
    assert restored.returncode == 0, restored.stderr


def test_replace_a_wiped_controller(three: Cluster) -> None:
    cluster = three
    victim = follower(cluster)
    node = cluster.nodes[victim]
    old = str(node.directory_id)
    cluster.kill(victim)
    shutil.rmtree(node.metadata_dir)
    node.directory_id = Uuid.random()
    format_observer(cluster, node)
    cluster.start(victim)
    config = str(node.config_path)

    other = str(victim + 10)
    wrong = tool(cluster, "--command-config", config, "replace-controller", "--controller-id", other)
    assert (wrong.returncode, wrong.stdout) == (1, "")
    assert wrong.stderr.startswith(f"--controller-id {victim + 10} differs from node.id {victim} in ")

    dry = tool(cluster, "--command-config", config, "replace-controller", "--controller-id", str(victim),
               "--dry-run")
    assert dry.returncode == 0, dry.stderr
    current = ", ".join(f"{i}@{old}" if i == victim else str(i) for i in (1, 2, 3))
    assert f"Current voters:  {current}\n" in dry.stdout
    assert f"  1. Remove voter {victim} (directory id {old})" in dry.stdout
    assert f"  2. Add voter {victim} (directory id {node.directory_id})" in dry.stdout
    assert voters(cluster)[victim] == old

    replaced = tool(cluster, "--command-config", config, "replace-controller", "--controller-id", str(victim),
                    "--yes")
    assert replaced.returncode == 0, replaced.stderr
    assert [line.split(" ... ")[0] for line in replaced.stderr.splitlines() if " ... " in line] == [
        f"Step 1/2: Remove voter {victim} (directory id {old})",
        f"Step 2/2: Add voter {victim} (directory id {node.directory_id})"]
    wait_until(lambda: voters(cluster).get(victim) == str(node.directory_id), 10, "the new directory id")
    again = tool(cluster, "--command-config", config, "replace-controller", "--controller-id", str(victim))
    assert (again.returncode, again.stdout) == (0, "Nothing to do: the voters are already 1, 2, 3\n")
    cluster.assert_running()
