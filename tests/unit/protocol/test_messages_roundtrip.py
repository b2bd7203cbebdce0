"""Every version of every message survives encode -> decode -> encode unchanged, unknown tagged
fields included."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_admin_kraft.protocol.spec import all_messages
from unit.protocol.strategies import MessageStrategies

CASES = [(spec.name, version) for spec in all_messages() for version in spec.version_list]
SPECS = {spec.name: MessageStrategies(spec) for spec in all_messages()}


@pytest.mark.parametrize(("name", "version"), CASES, ids=[f"{n}-v{v}" for n, v in CASES])
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_round_trip(name: str, version: int, data: st.DataObject) -> None:
    strategies = SPECS[name]
    message = data.draw(strategies.message(version))
    encoded = message.encode(version)
    decoded = strategies.cls.decode(encoded, version)
    assert decoded == message
    assert decoded.encode(version) == encoded
    assert decoded.to_dict() == message.to_dict()


def test_every_version_is_covered() -> None:
    assert len(CASES) == sum(len(s.version_list) for s in all_messages())
    assert ("DescribeQuorumResponse", 3) in CASES and ("FetchRequest", 18) in CASES
