"""Shared test fixtures: where the reference material beside the project lives, if it is there."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parent.parent.parent / "shared"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """``../shared`` next to the project; tests that need it skip in a user's clone without it."""
    if not SHARED.is_dir():
        pytest.skip("../shared (Kafka's reference specs) is not present")
    return SHARED
