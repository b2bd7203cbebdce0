"""The reference quorum the voter commands' tests change and restore."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from integration.harness import Cluster

from tools.cluster_util import start_quorum


@pytest.fixture(scope="package")
def three(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Three dynamic controllers, shared by the test modules of reconcile, scale, replace-controller and
    the confirmation; each test leaves three healthy voters behind."""
    cluster = start_quorum(tmp_path_factory.mktemp("three"))
    try:
        yield cluster
    finally:
        cluster.close()
