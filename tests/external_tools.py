"""Programs from outside the project that some tests drive (Prometheus, promtool, Chromium): found on
``PATH`` (and in ``/usr/bin``, where Debian's packages put them, which a scrubbed ``PATH`` keeps).

A test skips without its program on a developer's machine; where ``KAFKA_ADMIN_KRAFT_REQUIRE_TOOLS``
is set (``.ci/run`` sets it after installing them), a missing program fails the test instead, so
that CI never passes by skipping."""

from __future__ import annotations

import os
import shutil

import pytest

REQUIRE = "KAFKA_ADMIN_KRAFT_REQUIRE_TOOLS"


def external_tool(*names: str, package: str) -> str:
    """The path of the first of ``names`` that is installed; ``package`` is the Debian package that
    provides it, named in the skip or failure."""
    for name in names:
        found = shutil.which(name) or shutil.which(name, path="/usr/bin")
        if found:
            return found
    message = f"{' or '.join(names)} is not installed (apt-get install {package})"
    if os.environ.get(REQUIRE):
        pytest.fail(message)
    pytest.skip(message)
