"""Fixtures for tests that start real reference-server processes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from integration.harness import Cluster


@pytest.fixture
def make_cluster(tmp_path: Path) -> Iterator[Callable[..., Cluster]]:
    """``make_cluster(size, **options)`` formats a cluster under ``tmp_path``; every process it starts
    is killed at teardown, and the server logs are printed when the test failed."""
    made: list[Cluster] = []

    def factory(size: int, **options: Any) -> Cluster:
        cluster = Cluster(tmp_path / f"cluster-{len(made)}", size, **options)
        made.append(cluster)
        return cluster

    yield factory
    for cluster in made:
        cluster.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed:
        root = item.funcargs.get("tmp_path") if hasattr(item, "funcargs") else None
        if isinstance(root, Path):
            for log in sorted(root.glob("cluster-*/node-*/server.log")):
                text = log.read_text(errors="replace")[-4000:]
                report.sections.append((f"server log {log.parent.name}", text))
