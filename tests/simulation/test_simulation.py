"""Seeded cluster simulations of the consensus core (see ``sim.py`` for what is checked).

``test_seeds`` runs ``KRAFT_SIM_SEEDS`` seeds (300 by default) from ``KRAFT_SIM_FIRST_SEED`` (0) across
the CPUs; a failure names each failing seed with the command that replays it. The liveness tests run
fault-free clusters and bound the time to a leader and to progress; with voters of two Kafka lines,
every voter in turn must be able to win an election.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import random
import time
from collections.abc import Callable
from dataclasses import replace

import pytest

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft_server.raft import core as core_module
from kafka_admin_kraft_server.raft.api import RaftConfig
from simulation.sim import Scenario, Simulation, SimulationFailure, run_scenario, scenario_for_seed

SEEDS = int(os.environ.get("KRAFT_SIM_SEEDS", "300"))
FIRST_SEED = int(os.environ.get("KRAFT_SIM_FIRST_SEED", "0"))


def _run_seed(seed: int) -> tuple[int, str | None, dict[str, int]]:
    scenario = scenario_for_seed(seed)
    try:
        sim = run_scenario(scenario)
    except SimulationFailure as exc:
        return seed, str(exc), {}
    except Exception as exc:  # a crash inside the core is a failure of the seed too
        return seed, f"{type(exc).__name__}: {exc}\n  replay with: {scenario.command()}", {}
    snapshots = sum(
        1 for node in sim.nodes.values() if getattr(node.log.latest_snapshot(), "end_offset", 0) > 0
    )
    return (
        seed,
        None,
        {
            "elections": sim.elections,
            "committed": sim.checker.committed_end,
            "snapshots": snapshots,
            "installs": sim.installs(),
        },
    )


def test_seeds() -> None:
    """Hundreds of seeded runs with loss, duplication, reordering, partitions and crash-restarts."""
    seeds = range(FIRST_SEED, FIRST_SEED + SEEDS)
    workers = max(1, min(os.cpu_count() or 1, 8))
    started = time.monotonic()
    if workers == 1:
        results = [_run_seed(seed) for seed in seeds]
    else:
        with multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn").Pool(workers) as pool:
            results = pool.map(_run_seed, seeds, chunksize=4)
    failures = [(seed, message) for seed, message, _ in results if message is not None]
    assert not failures, f"{len(failures)} of {SEEDS} seeds failed:\n\n" + "\n\n".join(
        f"seed {seed}: {message}" for seed, message in failures
    )
    stats = [info for _, _, info in results]
    # The runs must actually exercise what they claim to: elections, commits and snapshots.
    elections = sum(info["elections"] for info in stats)
    with_snapshots = sum(1 for info in stats if info["snapshots"])
    with_installs = sum(1 for info in stats if info["installs"])
    print(
        f"{SEEDS} seeds in {time.monotonic() - started:.1f} s on {workers} processes: {elections} elections, "
        f"{with_snapshots} runs wrote snapshots, {with_installs} copied one with FetchSnapshot"
    )
    assert elections >= 2 * SEEDS  # crashes, partitions and resignations force re-elections
    assert min(info["committed"] for info in stats) > 0
    assert with_snapshots >= SEEDS * 3 // 4
    assert with_installs >= SEEDS // 4


@pytest.mark.parametrize("voters,observers,kraft_version", [(1, 0, 1), (3, 1, 1), (5, 1, 0), (5, 2, 1)])
@pytest.mark.parametrize("seed", [101, 202])
def test_liveness_without_faults(seed: int, voters: int, observers: int, kraft_version: int) -> None:
    """No faults: a leader within 2 election timeouts plus a few round trips, then steady progress."""
    scenario = Scenario(
        seed=seed,
        voters=voters,
        observers=observers,
        kraft_version=kraft_version,
        faults=False,
        duration_ms=4_000,
        heal_ms=0,
    )
    sim = Simulation(scenario)
    sim.run()
    config = RaftConfig()
    first = sim.checker.first_leader_ms
    assert first is not None, scenario.command()
    assert first <= 2 * config.election_timeout_ms + 200, (first, scenario.command())
    assert sim.elections == 1  # nobody ever had to run twice
    # Appends every ~150 ms from the election on; each one is committed within a few round trips.
    assert sim.checker.committed_end >= sim.appended, (sim.checker.committed_end, sim.appended)
    assert sim.appended >= (4_000 - first) // 300
    # Every node is at most the last two committed batches (appends in flight) behind.
    behind = sim.checker.committed[-3][1] if len(sim.checker.committed) >= 3 else 0
    for node in sim.nodes.values():
        assert node.core is not None and node.core.high_watermark >= behind


def test_a_failing_seed_names_its_replay_command(monkeypatch: pytest.MonkeyPatch) -> None:
    """The checker can fail: a core that grants every vote elects two leaders in one epoch (or loses
    committed data), and the report says how to replay it."""
    monkeypatch.setattr(core_module.RaftCore, "_can_grant_vote", lambda self, *args: True)
    failures = []
    for seed in range(6):
        scenario = scenario_for_seed(seed)
        try:
            run_scenario(scenario)
        except SimulationFailure as exc:
            failures.append((scenario, str(exc)))
    assert failures, "granting every vote went unnoticed"
    scenario, message = failures[0]
    assert f"replay with: {scenario.command()}" in message
    assert "python -m tests.simulation.sim --seed" in message


def test_the_checker_notices_a_majority_miscount(monkeypatch: pytest.MonkeyPatch) -> None:
    """A leader that commits what only it holds is caught by the durability check."""
    from kafka_admin_kraft_server.raft import leader as leader_module

    def greedy(progress: list[leader_module.ReplicaProgress]) -> int | None:
        return max((p.end_offset for p in progress if p.end_offset is not None), default=None)

    monkeypatch.setattr(leader_module, "majority_end_offset", greedy)
    with pytest.raises(SimulationFailure, match="durable on fewer than"):
        run_scenario(replace(scenario_for_seed(0), faults=False))


def test_replays_are_deterministic() -> None:
    scenario = scenario_for_seed(7)
    first, second = run_scenario(scenario), run_scenario(scenario)
    assert first.checker.committed == second.checker.committed
    assert [node.log.all_keys() for node in first.nodes.values()] == [
        node.log.all_keys() for node in second.nodes.values()
    ]
    assert random.Random(scenario.seed).random() == random.Random(7).random()
    assert messages.NoOpRecord().encode(0) == b"\x00"


def settled_leader(sim: Simulation) -> int | None:
    """The one leader every live node follows, None while they do not agree."""
    cores = [node.core for node in sim.nodes.values() if node.core is not None]
    leaders = [core for core in cores if core.is_leader]
    if len(leaders) != 1:
        return None
    leader = leaders[0]
    if any((core.epoch, core.leader_id) != (leader.epoch, leader.local_key.id) for core in cores):
        return None
    return leader.local_key.id


def advance_until(sim: Simulation, condition: Callable[[], object], within_ms: int, what: str) -> None:
    """Run the simulation a few ms at a time until ``condition`` holds (invariants checked throughout)."""
    deadline = sim.now + within_ms
    while not condition():
        if sim.now >= deadline:
            raise sim.fail(f"no {what} within {within_ms} ms")
        sim.advance(sim.now + 5)


def holds_the_log_of(sim: Simulation, node_id: int, other: int) -> bool:
    return sim.nodes[node_id].log.end_offset() == sim.nodes[other].log.end_offset()


def has_won(sim: Simulation, node_id: int, since_epoch: int) -> bool:
    return any(leader == node_id and epoch >= since_epoch
               for epoch, leader in sim.checker.leader_of_epoch.items())


SLOW = RaftConfig(election_timeout_ms=60_000, fetch_timeout_ms=60_000)
"""Timeouts that keep a voter from running for office during a test's phase (it still votes)."""


@pytest.mark.parametrize(("voters", "old_voters"), [(3, 1), (3, 2), (5, 2), (5, 4)])
@pytest.mark.parametrize("seed", [31, 32])
def test_every_voter_of_a_mixed_quorum_can_win_an_election(seed: int, voters: int, old_voters: int) -> None:
    """Voters of both lines (the last ``old_voters`` as Kafka 3.9: no pre-vote, Vote v0-1), each in
    turn the one whose timer runs out: once it holds all of the leader's log, the leader is cut off
    and every other voter restarts with timeouts too long to run itself. The target must be elected
    by the others, whatever line each runs (a 4.x node falls back from pre-vote when a 3.9 voter is
    asked); then everyone is back to the usual timeouts and the quorum settles on a leader."""
    scenario = Scenario(seed=seed, voters=voters, observers=1, old_voters=old_voters, faults=False,
                        duration_ms=10**9, heal_ms=0)
    sim = Simulation(scenario)
    sim.start()
    voter_ids = range(1, voters + 1)
    won: list[int] = []
    while set(won) != set(voter_ids):
        advance_until(sim, lambda: settled_leader(sim) is not None, 15_000, "settled leader")
        leader = settled_leader(sim)
        assert leader is not None
        # The next voter still to win that does not lead now; the leader itself once all others
        # have won (after one of them took over from it).
        target = next((voter for voter in voter_ids if voter not in won and voter != leader),
                      next(voter for voter in voter_ids if voter != leader))
        advance_until(sim, functools.partial(holds_the_log_of, sim, target, leader), 5_000,
                      f"moment n{target} holds all of leader n{leader}'s log")
        first_epoch = max(sim.checker.leader_of_epoch) + 1
        sim.partition = {node_id: int(node_id == leader) for node_id in sim.nodes}
        others = [voter for voter in voter_ids if voter not in (leader, target)]
        for voter in others:
            sim.restart(voter, SLOW)
        sim.trace.append(f"{sim.now}: n{leader} cut off, only n{target} may run")
        advance_until(sim, functools.partial(has_won, sim, target, first_epoch), 10_000,
                      f"election won by n{target}")
        won.append(target)
        sim.partition = None
        for voter in others:
            sim.restart(voter)
    assert sorted(set(won)) == list(voter_ids)
    committed = sim.checker.committed_end
    advance_until(sim, lambda: settled_leader(sim) is not None and sim.checker.committed_end > committed,
                  15_000, "settled leader committing new records")
