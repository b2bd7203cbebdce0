"""The result and argument models (``kafka_admin_kraft/models.py``): what they print, that they are
frozen, and that the ones users build are checked as the Admin arguments are."""
# ruff: noqa: E501

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from kafka_admin_kraft import Endpoint, FeatureUpdate, UpgradeType
from kafka_admin_kraft.models import (
    ZERO_UUID_TEXT,
    FinalizedVersionRange,
    ReplicaState,
    SupportedVersionRange,
)
from kafka_admin_kraft.protocol.primitives import ZERO_UUID, Uuid


def test_models() -> None:
    endpoint = Endpoint(listener="CONTROLLER", host="::1", port=9093)
    assert str(endpoint) == "CONTROLLER://[::1]:9093"
    for bad in ("controller", " CONTROLLER", ""):
        with pytest.raises(ValueError):
            Endpoint(listener=bad, host="h", port=1)
    with pytest.raises(ValueError):
        endpoint.__setattr__("port", 1)  # frozen
    assert FeatureUpdate(level=0, upgrade_type=UpgradeType.SAFE_DOWNGRADE).level == 0
    for level, kind in ((-1, UpgradeType.SAFE_DOWNGRADE), (0, UpgradeType.UPGRADE), (1, UpgradeType.UNKNOWN)):
        with pytest.raises(ValueError):
            FeatureUpdate(level=level, upgrade_type=kind)
    with pytest.raises(ValueError):
        SupportedVersionRange(min_version=2, max_version=1)
    with pytest.raises(ValueError):
        FinalizedVersionRange(min_version_level=-1, max_version_level=1)


MODELS: list[tuple[str, Callable[[], Any], type[BaseException], tuple[str, ...]]] = [
    ("endpoint-port-text", lambda: Endpoint(listener="C", host="h", port="1"), TypeError, ("Endpoint port",)),
    ("endpoint-port-range", lambda: Endpoint(listener="C", host="h", port=70000), ValueError,
     ("Endpoint port", "1 to 65535")),
    ("endpoint-listener-lower", lambda: Endpoint(listener="c", host="h", port=1), ValueError, ("Endpoint listener",)),
    ("endpoint-listener-padded", lambda: Endpoint(listener=" C", host="h", port=1), ValueError, ("listener",)),
    ("endpoint-host-bad", lambda: Endpoint(listener="C", host="a..b", port=1), ValueError,
     ("Endpoint host", "empty label")),
    ("endpoint-host-int", lambda: Endpoint(listener="C", host=1, port=1), TypeError, ("Endpoint host",)),
    ("endpoint-missing-port", lambda: Endpoint(listener="C", host="h"), TypeError, ("port",)),
    ("endpoint-validated-dict", lambda: Endpoint.model_validate({"listener": "C", "host": "h", "port": 0}),
     ValueError, ("Endpoint port",)),
    ("update-level-negative", lambda: FeatureUpdate(level=-1, upgrade_type=UpgradeType.SAFE_DOWNGRADE),
     ValueError, ("FeatureUpdate level",)),
    ("update-level-text", lambda: FeatureUpdate(level="1"), TypeError, ("FeatureUpdate level",)),
    ("update-level-zero-upgrade", lambda: FeatureUpdate(level=0), ValueError, ("FeatureUpdate level 0",)),
    ("update-type-unknown", lambda: FeatureUpdate(level=1, upgrade_type=UpgradeType.UNKNOWN), ValueError,
     ("upgrade_type", "UNKNOWN")),
    ("update-type-code", lambda: FeatureUpdate(level=1, upgrade_type=4), ValueError, ("upgrade_type",)),
    ("update-type-text", lambda: FeatureUpdate(level=1, upgrade_type="SAFE"), TypeError, ("upgrade_type",)),
    ("update-type-bool", lambda: FeatureUpdate(level=1, upgrade_type=True), TypeError, ("upgrade_type",)),
]


@pytest.mark.parametrize(("build", "error", "fragments"), [case[1:] for case in MODELS],
                         ids=[case[0] for case in MODELS])
def test_models_built_by_users_are_checked_the_same_way(
    build: Callable[[], Any], error: type[BaseException], fragments: tuple[str, ...]
) -> None:
    with pytest.raises(error) as info:
        build()
    for fragment in fragments:
        assert fragment in str(info.value)


def test_a_directory_id_given_as_text_is_held_as_a_uuid_and_dumped_as_the_same_text() -> None:
    text = "wZoXPqWoSu6F6c8MkmdyAg"
    replica = ReplicaState(replica_id=4, replica_directory_id=text, log_end_offset=7)
    assert replica.replica_directory_id == Uuid.from_string(text)
    assert replica == ReplicaState(replica_id=4, replica_directory_id=Uuid.from_string(text), log_end_offset=7)
    assert replica.model_dump(mode="json")["replica_directory_id"] == text
    assert json.loads(replica.model_dump_json())["replica_directory_id"] == text
    assert replica.model_dump()["replica_directory_id"] == Uuid.from_string(text)
    unknown = ReplicaState(replica_id=4, log_end_offset=7)
    assert unknown.replica_directory_id == ZERO_UUID
    assert json.loads(unknown.model_dump_json())["replica_directory_id"] == ZERO_UUID_TEXT
    with pytest.raises(ValueError, match="replica_directory_id must be a directory id"):
        ReplicaState(replica_id=4, replica_directory_id="abc", log_end_offset=7)
    with pytest.raises(TypeError, match="replica_directory_id must be a directory id"):
        ReplicaState(replica_id=4, replica_directory_id=5, log_end_offset=7)
