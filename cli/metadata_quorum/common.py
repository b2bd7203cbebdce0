"""What Kafka's own subcommands of the tool (``describe``, ``add-controller``, ``remove-controller``)
share."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kafka_admin_kraft.protocol.primitives import Uuid

EXACT_ONLY = ["--output"]
"""Options Kafka's tool lacks: never matched by prefix, so they cannot make an abbreviation ambiguous."""


def change_json(
    controller_id: int,
    directory_id: Uuid,
    endpoints: list[str] | None,
    dry_run: bool,
    notes: list[str] | None = None,
) -> Any:
    """The ``--output json`` document of ``add-controller`` (with ``endpoints``) and
    ``remove-controller`` (with ``notes``)."""
    document: dict[str, Any] = {"node_id": controller_id, "directory_id": str(directory_id)}
    if endpoints is not None:
        document["endpoints"] = endpoints
    document["dry_run"] = dry_run
    if notes is not None:
        document["notes"] = notes
    return document
