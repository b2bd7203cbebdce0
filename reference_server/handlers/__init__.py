"""Handlers of the APIs the reference server answers, one module per API, and the table they register
in (``registry``).

Each module opens with the versions it serves and what each version added, and registers its APIs
when imported; this package imports them all, so the table is whole. A decision is a plain function
of the decoded request, its version and a view of the node (``ServerView`` on a controller listener,
``BrokerView`` on a broker listener) that returns the response, or the records to commit before
answering; the module's handler connects it to the node (``registry.ControllerRole`` or
``registry.BrokerRole``). The runtime decodes, routes through the table, encodes and writes.
"""

from __future__ import annotations

from typing import Final

from . import (
    acls,
    api_versions,
    broker_lifecycle,
    controller_registration,
    describe_cluster,
    envelope,
    metadata,
    raft_apis,
    sasl,
    unregister,
    update_features,
)
from .registry import BROKER, CONTROLLER, served
from .view import BrokerView, ServerView

CONTROLLER_APIS: Final = served(CONTROLLER)
"""What a controller listener serves (ApiVersions lists these, with the SASL APIs on SASL listeners)."""
BROKER_APIS: Final = served(BROKER)
"""What a broker listener serves: Metadata, ApiVersions and DescribeCluster from the broker's image, the
rest forwarded to the active controller."""

__all__ = ["BROKER_APIS", "CONTROLLER_APIS", "BrokerView", "ServerView", "acls", "api_versions",
           "broker_lifecycle", "controller_registration", "describe_cluster", "envelope", "metadata",
           "raft_apis", "sasl",
           "unregister", "update_features"]
