"""Seeded cluster simulations of the consensus core (see ``sim.py`` for what is checked).

``test_seeds`` runs ``KRAFT_SIM_SEEDS`` seeds (300 by default) from ``KRAFT_SIM_FIRST_SEED`` (0) across
the CPUs; a failure names each failing seed with the command that replays it. The liveness tests run
fault-free clusters and bound the time to a leader and to progress.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import time
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
