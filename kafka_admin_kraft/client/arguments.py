"""Checks of ``Admin`` / ``AsyncAdmin`` arguments: timeouts, bootstrap lists, client properties, paths,
and the endpoints and feature updates an operation takes, as the models it sends.

One place for both clients, run when a call is made, before anything is encoded or sent: a bad argument
fails at once with ``TypeError`` (wrong type) or ``ValueError`` (wrong value), naming the argument and
the forms it accepts, instead of surfacing later from the encoder, the server or a retry loop that waits
out the timeout. ``bool`` is refused where an int is meant. Each check returns the value in the form the
operations use. Single values (ids, an endpoint's fields, a feature level) are checked by
``kafka_admin_kraft.values``; the models, and with them pydantic, are imported on call, off the
client's import path.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

from kafka_admin_kraft.values import INT32_MAX, UpgradeType, endpoint_fields, feature_update_fields, shown

if TYPE_CHECKING:
    from kafka_admin_kraft.models import Endpoint, FeatureUpdate

MAX_TIMEOUT: Final = INT32_MAX / 1000
"""Kafka's timeouts are int milliseconds."""
BOOTSTRAP_PROPERTIES: Final = ("bootstrap.servers", "bootstrap.controllers")
ENDPOINT_FIELDS: Final = frozenset({"listener", "host", "port"})

TIMEOUT: Final = f"a number of seconds (int or float) above 0 and at most {MAX_TIMEOUT}, or None"
BOOTSTRAP: Final = "'host:port,host:port' or a list of 'host:port' strings"
ENDPOINTS: Final = (
    "a mapping of listener name to (host, port), e.g. {'CONTROLLER': ('ctl4', 9093)}, or an iterable of "
    "Endpoint or of mappings with the keys listener, host and port"
)
UPDATES: Final = "a mapping of feature name to level (int) or FeatureUpdate, e.g. {'group.version': 1}"


def flag(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {shown(value)}")
    return value


def timeout(value: object, name: str = "timeout") -> float | None:
    """None (``default.api.timeout.ms``) or a finite number of seconds above 0."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be {TIMEOUT}, got {shown(value)}")
    if not 0 < value <= MAX_TIMEOUT:  # also refuses NaN and infinity
        raise ValueError(f"{name} must be {TIMEOUT}, got {value}")
    return float(value)


def bootstrap(value: object, name: str) -> str | None:
    """A bootstrap list as the comma-separated text Kafka's ``bootstrap.*`` properties hold."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(part, str) for part in value):
        return ",".join(value)
    raise TypeError(f"{name} must be {BOOTSTRAP}, got {shown(value)}")


def property_value(key: str, value: object) -> str:
    """A client property's value as text: a str, an int, or for ``bootstrap.*`` a list of addresses."""
    if key in BOOTSTRAP_PROPERTIES:
        return bootstrap(value, key) or ""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise TypeError(f"the client property {key} must be a str or an int, got {shown(value)}")
    return str(value)


def properties(value: object, name: str = "config") -> Mapping[str, Any]:
    """Kafka client properties: a mapping whose keys are property names."""
    example = "{'bootstrap.controllers': 'ctl1:9093'}"
    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a mapping of client property names to values, e.g. {example}, "
                        f"got {shown(value)}")
    for key in value:
        if not isinstance(key, str):
            raise TypeError(f"{name} keys must be client property names (str), got {shown(key)}")
    return value


def path(value: object, name: str = "path") -> str:
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(
            f"{name} must be the path of a .properties file (str or os.PathLike), got {shown(value)}"
        )
    return os.fspath(value)


# ---------------------------------------------------------------------- endpoints


def endpoints(value: object, name: str = "endpoints") -> list[Endpoint]:
    """The listeners of a new voter, in any of the accepted forms; at least one, no name twice."""
    from kafka_admin_kraft.models import Endpoint

    if isinstance(value, (str, bytes, Endpoint)) or not isinstance(value, Iterable):
        raise TypeError(f"{name} must be {ENDPOINTS}, got {shown(value)}")
    found: list[tuple[str, str, int]] = []
    if isinstance(value, Mapping):
        if set(value) == ENDPOINT_FIELDS:
            raise TypeError(
                f"{name} got the fields of a single endpoint: put it in a list, or pass {ENDPOINTS}"
            )
        for listener, address in value.items():
            where = f"{name}[{listener!r}]"
            if not isinstance(address, (tuple, list)) or len(address) != 2:
                raise TypeError(f"{where} must be a (host, port) pair, got {shown(address)}")
            found.append(endpoint_fields(listener, address[0], address[1], where))
    else:
        for index, item in enumerate(value):
            where = f"{name}[{index}]"
            if isinstance(item, Endpoint):
                found.append(endpoint_fields(item.listener, item.host, item.port, where))
            elif isinstance(item, Mapping) and set(item) == ENDPOINT_FIELDS:
                found.append(endpoint_fields(item["listener"], item["host"], item["port"], where))
            else:
                raise TypeError(
                    f"{where} must be an Endpoint or a mapping with exactly the keys listener, host and "
                    f"port, got {shown(item)}"
                )
    if not found:
        raise ValueError(f"{name} must name at least one listener (the leader needs the one it listens on), "
                         f"as {ENDPOINTS}")
    seen: set[str] = set()
    for listener, _, _ in found:
        if listener in seen:
            raise ValueError(f"{name} names the listener {listener!r} more than once")
        seen.add(listener)
    return [Endpoint.model_construct(listener=key, host=host, port=port) for key, host, port in found]


# ---------------------------------------------------------------------- features


def feature_updates(value: object, name: str = "updates") -> dict[str, FeatureUpdate]:
    """Target levels by feature name; an int is an upgrade to that level."""
    from kafka_admin_kraft.models import FeatureUpdate

    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be {UPDATES}, got {shown(value)}")
    if not value:
        raise ValueError(f"{name} must name at least one feature, as {UPDATES}")
    checked: dict[str, FeatureUpdate] = {}
    for feature, update in value.items():
        if not isinstance(feature, str):
            raise TypeError(f"{name} keys must be feature names (str) such as 'metadata.version', got "
                            f"{shown(feature)}")
        if not feature.strip():
            raise ValueError(f"{name} keys must be feature names such as 'metadata.version', got {feature!r}")
        where = f"{name}[{feature!r}]"
        if isinstance(update, FeatureUpdate):
            checked[feature] = update
        elif isinstance(update, int) and not isinstance(update, bool):
            level, kind = feature_update_fields(update, UpgradeType.UPGRADE, where)
            checked[feature] = FeatureUpdate.model_construct(level=level, upgrade_type=kind)
        else:
            raise TypeError(f"{where} must be a level (int) or a FeatureUpdate, got {shown(update)}")
    return checked
