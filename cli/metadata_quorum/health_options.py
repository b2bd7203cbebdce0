"""What `check`, `watch` and `exporter` share: the health thresholds as options and the JSON form of a
check's result.

Nothing here imports the SDK at module level (the tool's start-up stays fast).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from kafka_admin_kraft.health import HealthThresholds
    from kafka_admin_kraft.health_rules import HealthView, Limits

F = TypeVar("F", bound=Callable[..., object])

HEALTH_OPTIONS = [
    "--max-lag-offsets",
    "--max-lag-ms",
    "--pending-change-ms",
    "--probe-timeout-ms",
    "--fenced-broker-ms",
    "--no-probe",
]
"""The options below; none is Kafka's, so each is matched exactly (see `_click`)."""


def threshold_options(command: F) -> F:
    """Add the thresholds of ``HealthThresholds`` (same defaults) and ``--no-probe``."""
    options = [
        click.option(
            "--max-lag-offsets",
            type=click.IntRange(min=0),
            default=10_000,
            show_default=True,
            help="Offsets a voter may be behind the leader before it counts as lagging.",
        ),
        click.option(
            "--max-lag-ms",
            type=click.IntRange(min=0),
            default=2_000,
            show_default=True,
            help="Milliseconds since a voter was last caught up before it counts as lagging "
            "(Kafka's default controller.quorum.fetch.timeout.ms).",
        ),
        click.option(
            "--pending-change-ms",
            type=click.IntRange(min=0),
            default=5_000,
            show_default=True,
            help="How long a voter change may stay uncommitted before it is a warning.",
        ),
        click.option(
            "--probe-timeout-ms",
            type=click.IntRange(min=1),
            default=2_000,
            show_default=True,
            help="How long each node's ApiVersions probe may take.",
        ),
        click.option(
            "--fenced-broker-ms",
            type=click.IntRange(min=0),
            default=3_600_000,
            show_default=True,
            help="How long a broker may be seen registered and fenced, across the checks of watch and "
            "exporter, before it is a warning (with --bootstrap-server).",
        ),
        click.option(
            "--no-probe",
            is_flag=True,
            help="Do not send ApiVersions to each node (when the controllers are not reachable from here).",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def limits(options: dict[str, Any]) -> Limits:
    """The thresholds of the options ``threshold_options`` added, plain (taken out of ``options``; a
    command that dropped some gets their defaults); click has checked their ranges."""
    from kafka_admin_kraft.health_rules import Limits

    return Limits(**{name: options.pop(name) for name in Limits._fields if name in options})


def thresholds(options: dict[str, Any]) -> HealthThresholds:
    """The ``HealthThresholds`` of the options ``threshold_options`` added (as ``limits``), for the
    commands that run ``Admin.check_quorum``."""
    from kafka_admin_kraft.health import HealthThresholds

    return HealthThresholds(**limits(options)._asdict())


def health_json(health: HealthView) -> dict[str, Any]:
    """A check's result as a JSON document: names for the enums, epoch milliseconds for times."""
    quorum = health.quorum
    return {
        "status": health.status.name,
        "exit_code": health.exit_code,
        "fault_tolerance": health.fault_tolerance,
        "checked_at_ms": health.checked_at_ms,
        "cluster_id": health.cluster_id,
        "leader_id": quorum.leader_id if quorum is not None else None,
        "leader_epoch": quorum.leader_epoch if quorum is not None else None,
        "high_watermark": quorum.high_watermark if quorum is not None else None,
        "voters": [v.replica_id for v in quorum.voters] if quorum is not None else [],
        "healthy_voters": list(health.healthy_voters()),
        "voter_change_since_ms": health.voter_change_since_ms,
        "finalized_features": dict(health.finalized_features),
        **_registrations_json(health),
        "findings": [
            {
                "code": f.code,
                "severity": f.severity.name,
                "node_id": f.node_id,
                "directory_id": None if f.directory_id is None else str(f.directory_id),
                "message": f.message,
                "fix": f.fix,
            }
            for f in health.findings
        ],
        "probes": [
            {"node_id": p.node_id, "address": p.address, "reachable": p.reachable, "error": p.error}
            for p in health.probes
        ],
    }


def _registrations_json(health: HealthView) -> dict[str, Any]:
    """``registered_controllers`` (with bootstrap controllers), ``fenced_brokers`` (with bootstrap
    servers: ``[{node_id, fenced_since_ms}]``, when first seen fenced): null where not known."""
    found = health.registrations
    controllers = found.controllers if found is not None else None
    fenced = found.fenced_brokers if found is not None else None
    return {
        "registered_controllers": None if controllers is None else list(controllers),
        "fenced_brokers": None if fenced is None else [
            {"node_id": node_id, "fenced_since_ms": since} for node_id, since in sorted(fenced.items())
        ],
    }
