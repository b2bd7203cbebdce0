"""The SDK's values and their checks: node, cluster and directory ids, endpoints, feature updates.

One home for what a value must look like, below everything that takes one: the result models check
what users build with these functions, ``client.arguments`` checks ``Admin`` arguments with them, and
the voter planner and the health rules name voters by these ids (``VoterKey``). A check returns the
value in the form the SDK uses (a directory id as a ``Uuid``), or raises ``TypeError`` (wrong type) or
``ValueError`` (wrong value) naming the field and the forms it accepts (the constants below). ``bool``
is refused where an int is meant.

No pydantic and no models here: the tools import the client, and with it this module, at start-up.
"""

from __future__ import annotations

import enum
from typing import Final

from kafka_admin_kraft.protocol.primitives import ZERO_UUID, Uuid

ZERO_UUID_TEXT: Final = str(ZERO_UUID)
"""Kafka's ``Uuid.ZERO_UUID`` in text form (``AAAAAAAAAAAAAAAAAAAAAA``): "no directory id"."""

INT16_MAX: Final = 2**15 - 1
INT32_MAX: Final = 2**31 - 1

NODE_ID: Final = "a node id: an int from 0 to 2147483647"
DIRECTORY_ID: Final = (
    "a directory id: a Uuid or its text form, 22 characters of URL-safe base64 "
    "(the directoryId that describe --status shows)"
)
LISTENER: Final = "an upper-case listener name such as 'CONTROLLER', without whitespace"
PORT: Final = "a TCP port: an int from 1 to 65535"
LEVEL: Final = "a feature level: an int from 0 to 32767"
UPGRADE_TYPES: Final = "an UpgradeType (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE) or its code 1-3"


def shown(value: object) -> str:
    """A value as an error message quotes it: type and (shortened) repr."""
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


def integer(value: object, name: str, accepted: str, *, low: int = 0, high: int = INT32_MAX) -> int:
    """An int (not a bool) in ``low..high``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be {accepted}, got {shown(value)}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be {accepted}, got {value}")
    return value


# ---------------------------------------------------------------------- ids


def node_id(value: object, name: str) -> int:
    return integer(value, name, NODE_ID)


def optional_node_id(value: object, name: str) -> int | None:
    return None if value is None else integer(value, name, f"None or {NODE_ID}")


def directory_id(value: object, name: str) -> Uuid:
    """A Uuid, or its text form. The zero uuid is the server's to refuse (INVALID_REQUEST), as in Kafka."""
    if isinstance(value, Uuid):
        return value
    if not isinstance(value, str):
        raise TypeError(f"{name} must be {DIRECTORY_ID}, got {shown(value)}")
    try:
        return Uuid.from_string(value)
    except ValueError:
        raise ValueError(f"{name} must be {DIRECTORY_ID}, got {value!r}") from None


VoterKey = tuple[int, Uuid]
"""(node id, directory id): how KIP-853 names a voter."""


def voter_order(key: VoterKey) -> tuple[int, str]:
    """Sorts voters by node id, then by directory id as printed (a ``Uuid`` has no order of its own)."""
    return key[0], str(key[1])


def cluster_id(value: object, name: str = "cluster_id") -> str | None:
    """None (any cluster) or the cluster's id, which the server compares with its own."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{name} must be None or the cluster id (str), got {shown(value)}")
    if not value or value != value.strip():
        raise ValueError(f"{name} must be None or a cluster id without surrounding whitespace, got {value!r}")
    return value


# ---------------------------------------------------------------------- endpoints


def endpoint_fields(
    listener: object, host: object, port: object, where: str = "Endpoint"
) -> tuple[str, str, int]:
    """One listener of a controller: its name, a valid host name or IP literal, a port to dial."""
    # Imported on use: the tools load this module at start-up, and most never check an endpoint.
    from kafka_admin_kraft.hosts import host_problem

    if not isinstance(listener, str):
        raise TypeError(f"{where} listener must be {LISTENER}, got {shown(listener)}")
    if not listener or listener != listener.upper() or any(c.isspace() for c in listener):
        raise ValueError(f"{where} listener must be {LISTENER}, got {listener!r}")
    if not isinstance(host, str):
        raise TypeError(f"{where} host must be a host name or IP address (str), got {shown(host)}")
    problem = host_problem(host)
    if problem is not None:
        raise ValueError(f"{where} host {host!r} {problem}: expected a host name or IP address")
    return listener, host, integer(port, f"{where} port", PORT, low=1, high=65535)


def endpoint_text(listener: str, host: str, port: int) -> str:
    """``LISTENER://host:port``, an IPv6 host in brackets, as Kafka prints a ``RaftVoterEndpoint``."""
    return f"{listener}://[{host}]:{port}" if ":" in host else f"{listener}://{host}:{port}"


# ---------------------------------------------------------------------- features


class UpgradeType(enum.IntEnum):
    """How UpdateFeatures may move a level (the wire codes of UpdateFeatures v1+)."""

    UNKNOWN = 0
    UPGRADE = 1
    SAFE_DOWNGRADE = 2
    UNSAFE_DOWNGRADE = 3


def feature_update_fields(
    level: object, upgrade_type: object, where: str = "FeatureUpdate"
) -> tuple[int, UpgradeType]:
    """A target level and how to get there; level 0 (removing the feature) needs a downgrade."""
    checked = integer(level, f"{where} level", LEVEL, high=INT16_MAX)
    if isinstance(upgrade_type, UpgradeType):
        kind = upgrade_type
    elif isinstance(upgrade_type, int) and not isinstance(upgrade_type, bool):
        if upgrade_type not in (1, 2, 3):
            raise ValueError(f"{where} upgrade_type must be {UPGRADE_TYPES}, got {upgrade_type}")
        kind = UpgradeType(upgrade_type)
    else:
        raise TypeError(f"{where} upgrade_type must be {UPGRADE_TYPES}, got {shown(upgrade_type)}")
    if kind == UpgradeType.UNKNOWN:
        raise ValueError(f"{where} upgrade_type must be {UPGRADE_TYPES}: UNKNOWN cannot be sent")
    if checked == 0 and kind == UpgradeType.UPGRADE:
        raise ValueError(f"{where} level 0 removes the feature: give upgrade_type SAFE_DOWNGRADE or "
                         "UNSAFE_DOWNGRADE, not UPGRADE")
    return checked, kind
