"""What the golden tests of the codec share: the encode and decode tests over (class, version, message,
bytes worked out by hand) cases, so each module lists its cases and states nothing twice."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

GoldenTest = Callable[[type, int, object, bytes], None]


def golden_tests(cases: Sequence[Any]) -> tuple[GoldenTest, GoldenTest]:
    """``test_encode_matches_golden`` and ``test_decode_matches_golden`` over ``cases``, for a test module
    to bind under those names."""

    @pytest.mark.parametrize(("cls", "version", "obj", "golden"), cases)
    def test_encode_matches_golden(cls: type, version: int, obj: object, golden: bytes) -> None:
        assert type(obj) is cls
        assert obj.encode(version).hex(" ") == golden.hex(" ")  # type: ignore[attr-defined]

    @pytest.mark.parametrize(("cls", "version", "obj", "golden"), cases)
    def test_decode_matches_golden(cls: type, version: int, obj: object, golden: bytes) -> None:
        decoded = cls.decode(golden, version)  # type: ignore[attr-defined]
        assert decoded == obj, f"{decoded!r} != {obj!r}"

    return test_encode_matches_golden, test_decode_matches_golden
