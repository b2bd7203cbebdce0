"""The progress of a voter change written as lines, without a terminal."""

from __future__ import annotations

import io

from kafka_admin_kraft.voters import Progress, VoterPlan
from kafka_admin_kraft_cli.metadata_quorum.voter_progress import StepReporter
from tools.metadata_quorum.voter_util import D2, D3, GROW


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
    reporter(Progress("watching", rest, None, "watching controller 4 for 5 s"))
    reporter.close()
    lines = stream.getvalue().splitlines()
    assert lines[0] == "Step 1/2: waiting: node 2 is still catching up"
    assert lines[1].startswith(f"Step 1/2: Add voter 2 (directory id {D2}) ... committed in 0.")
    assert lines[2] == f"Step 2/2: Add voter 3 (directory id {D3}) ..."
    assert lines[3] == "Watching controller 4 for 5 s"
    assert len(lines) == 4 and stream.getvalue().endswith("\n")
    assert [step.node_id for step, _ in reporter.committed] == [2]


def test_each_unregistration_is_a_line_of_its_own() -> None:
    stream = io.StringIO()
    reporter = StepReporter(stream, terminal=False)
    done = VoterPlan(GROW.desired, GROW.desired, unregister=(4,))
    reporter(Progress("unregistered", done, None, "unregistered controller 4"))
    reporter.close()
    assert stream.getvalue() == "Unregistered controller 4\n" and reporter.committed == []
