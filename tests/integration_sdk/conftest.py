"""Fixtures: reference quorums started as processes by ``tests/integration/harness.py``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from integration.harness import FAST_ELECTIONS, Cluster


@pytest.fixture
def make_cluster(tmp_path: Path) -> Iterator[Callable[..., Cluster]]:
    """``make_cluster(size)``: a formatted and started quorum with quick elections; killed at teardown."""
    made: list[Cluster] = []

    def factory(size: int, **options: Any) -> Cluster:
        options.setdefault("properties", dict(FAST_ELECTIONS))
        cluster = Cluster(tmp_path / f"cluster-{len(made)}", size, **options)
        made.append(cluster)
        return cluster.format().start_all()

    yield factory
    for cluster in made:
        cluster.close()
