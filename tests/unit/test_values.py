"""The SDK's values (``kafka_admin_kraft/values.py``): below the models and the client, without pydantic,
the one home of the directory id check and of ``UpgradeType``. Its messages are pinned through the
Admin calls and the models that use them (``tests/unit/client/test_arguments.py``,
``tests/unit/test_models.py``)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import kafka_admin_kraft
from kafka_admin_kraft import models, values
from kafka_admin_kraft.protocol.primitives import ZERO_UUID, Uuid

DIRECTORY = "wZoXPqWoSu6F6c8MkmdyAg"


def test_the_values_and_the_client_load_without_pydantic_or_the_models() -> None:
    code = (
        "import sys, kafka_admin_kraft.values, kafka_admin_kraft.client.config, kafka_admin_kraft.admin; "
        "assert 'pydantic' not in sys.modules and 'kafka_admin_kraft.models' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_directory_id_is_a_uuid_or_its_text_form() -> None:
    uuid = Uuid.from_string(DIRECTORY)
    assert values.directory_id(uuid, "d") is uuid
    assert values.directory_id(DIRECTORY, "d") == uuid
    assert values.directory_id(values.ZERO_UUID_TEXT, "d") == ZERO_UUID
    with pytest.raises(ValueError, match=r"^d must be a directory id: .*, got 'abc'$"):
        values.directory_id("abc", "d")
    with pytest.raises(TypeError, match=r"^d must be a directory id: .*, got bytes b'x'$"):
        values.directory_id(b"x", "d")


def test_upgrade_type_and_the_zero_directory_id_are_one_object_wherever_imported() -> None:
    assert kafka_admin_kraft.UpgradeType is models.UpgradeType is values.UpgradeType
    assert models.ZERO_UUID_TEXT == values.ZERO_UUID_TEXT == "AAAAAAAAAAAAAAAAAAAAAA"
