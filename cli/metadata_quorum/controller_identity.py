"""Who a controller is, read from its own properties file: what AddRaftVoter needs to add it
(``add-controller``, ``replace-controller``, ``--controller-config`` of ``reconcile`` and ``scale``), and
for the voter commands whether it joins the voters by itself (``controller.quorum.auto.join.enable``)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import output

if TYPE_CHECKING:
    from kafka_admin_kraft.config.server import Listener
    from kafka_admin_kraft.models import Endpoint
    from kafka_admin_kraft.protocol.primitives import Uuid

INVALID_CONFIG = "Is this a valid controller configuration file?"


@dataclass(frozen=True)
class ControllerIdentity:
    """What AddRaftVoter needs about a controller, read from its own configuration."""

    node_id: int
    directory_id: Uuid
    endpoints: tuple[Endpoint, ...]

    def describe(self) -> str:
        endpoints = ", ".join(str(endpoint) for endpoint in self.endpoints)
        return f"controller {self.node_id} with directory id {self.directory_id} and endpoints: {endpoints}"


def _listeners_by_name(properties: dict[str, str]) -> dict[str, Listener]:
    """`listeners`, then `advertised.listeners` over them, by name: Kafka's tool keeps the last entry
    of a name."""
    from kafka_admin_kraft.config.server import (
        ADVERTISED_LISTENERS,
        LISTENERS,
        ConfigError,
        csv_list,
        parse_listener,
    )

    found: dict[str, Listener] = {}
    for key in (LISTENERS, ADVERTISED_LISTENERS):
        for entry in csv_list(properties.get(key, "")):
            try:
                listener = parse_listener(entry)
            except ConfigError:
                output.fail(f"Unable to parse {entry} as a listener: expected NAME://host:port")
            found[listener.name] = listener
    return found


def controller_identity(properties: dict[str, str]) -> ControllerIdentity:
    """Node id, metadata directory id and controller endpoints from a controller's properties, checked in
    Kafka's order and with its messages."""
    from kafka_admin_kraft.config.server import (
        CONTROLLER_LISTENER_NAMES,
        LOG_DIRS,
        METADATA_LOG_DIR,
        NODE_ID,
        PROCESS_ROLES,
        csv_list,
    )
    from kafka_admin_kraft.models import Endpoint
    from kafka_admin_kraft.storage.meta_properties import META_PROPERTIES_FILE, read_meta_properties

    node_text = properties.get(NODE_ID)
    if node_text is None:
        output.fail(f"{NODE_ID} not found in configuration file. {INVALID_CONFIG}")
    if not re.fullmatch(r"[+-]?\d+", node_text.strip()):
        output.fail(f'For input string: "{node_text}"')
    node_id = int(node_text.strip())
    if node_id < 0:
        output.fail(f"{NODE_ID} was negative in configuration file. {INVALID_CONFIG}")
    if "controller" not in csv_list(properties.get(PROCESS_ROLES, "")):
        output.fail(f"{PROCESS_ROLES} did not contain 'controller' in configuration file. {INVALID_CONFIG}")
    metadata_dir = properties.get(METADATA_LOG_DIR)
    if metadata_dir is None and LOG_DIRS in properties:
        metadata_dir = properties[LOG_DIRS].split(",")[0].strip()
    if metadata_dir is None:
        output.fail(f"Neither {METADATA_LOG_DIR} nor {LOG_DIRS} were found. {INVALID_CONFIG}")
    try:
        meta = read_meta_properties(os.path.join(metadata_dir, META_PROPERTIES_FILE))
    except (OSError, ValueError):
        output.fail(f"Unable to read {META_PROPERTIES_FILE} from {metadata_dir}")
    directory_id = meta.directory_id
    if directory_id is None:
        output.fail(f"No directory id found in {metadata_dir}")
    names = properties.get(CONTROLLER_LISTENER_NAMES)
    if names is None:
        output.fail(f"{CONTROLLER_LISTENER_NAMES} was not found. {INVALID_CONFIG}")
    listeners = _listeners_by_name(properties)
    endpoints = []
    for name in (name.upper() for name in csv_list(names)):
        listener = listeners.get(name)
        if listener is None:
            output.fail(f"Cannot find information about controller listener name: {name}")
        try:
            endpoints.append(Endpoint(listener=name, host=listener.host or "localhost", port=listener.port))
        except ValueError as exc:
            output.fail(str(exc))
    return ControllerIdentity(node_id, directory_id, tuple(endpoints))


def auto_join_enabled(properties: dict[str, str]) -> bool:
    """``controller.quorum.auto.join.enable`` (Kafka 4.2+, default false), read as Kafka reads a
    boolean setting: true or false in any case, surrounding blanks ignored. Kafka's own
    ``add-controller`` does not read it, so only the voter commands ask."""
    from kafka_admin_kraft.config.server import QUORUM_AUTO_JOIN_ENABLE

    raw = properties.get(QUORUM_AUTO_JOIN_ENABLE, "false")
    text = raw.strip().lower()
    if text not in ("true", "false"):
        output.fail(
            f"Invalid value {raw} for configuration {QUORUM_AUTO_JOIN_ENABLE}: Expected value to be either "
            "true or false"
        )
    return text == "true"
