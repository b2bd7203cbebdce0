"""`kafka-features`: describe, upgrade, downgrade and disable feature levels of a KRaft cluster.

A drop-in for Kafka's tool of the same name (Kafka 4.4's options, messages and feature levels): same
subcommands, same text and exit codes. From Kafka 4.3 on, `version-mapping` and `feature-dependencies`
need no bootstrap option (KAFKA-19749). Additions: `--output json` on every subcommand that prints data;
an upgrade the controller refuses because a registered controller or broker does not support the level
gets, after Kafka's text, a ``Note:`` line on stderr naming that node, what it is and the command that
clears it where one exists (``Admin.explain_feature_refusal``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

import click

from . import output
from ._click import CONTEXT_SETTINGS, KafkaGroup
from .admin_options import (
    JAVA_INT,
    AdminTarget,
    bootstrap_options,
    open_admin,
    refusal_text,
    reported_errors,
    target,
)

if TYPE_CHECKING:
    from kafka_admin_kraft.admin import Admin
    from kafka_admin_kraft.client.answers import FeaturesAnswer
    from kafka_admin_kraft.models import FeatureMetadata

Features: TypeAlias = "FeatureMetadata | FeaturesAnswer"
"""What describe prints: the SDK's model, or the plain answer the command reads (no pydantic)."""

EXACT_ONLY = ["--output"]
"""Options Kafka's tool lacks: never matched by prefix, so they cannot make an abbreviation ambiguous."""
METADATA_VERSION = "metadata.version"
SHORT_MIN, SHORT_MAX = -32768, 32767
F = TypeVar("F", bound=Callable[..., object])


@click.group("kafka-features", cls=KafkaGroup, context_settings=CONTEXT_SETTINGS)
@bootstrap_options
@click.pass_context
def main(
    ctx: click.Context,
    bootstrap_server: str | None,
    bootstrap_controller: str | None,
    command_config: str | None,
) -> None:
    """Describe and change the finalized feature levels of a cluster (metadata.version, kraft.version,
    group.version, ...).

    \b
    Examples:
      kafka-features --bootstrap-controller localhost:9093 describe
      kafka-features --bootstrap-server localhost:9092 upgrade --release-version 4.4
      kafka-features --bootstrap-controller localhost:9093 downgrade --feature group.version=0 --dry-run
      kafka-features version-mapping --release-version 3.9
    """
    ctx.obj = AdminTarget(bootstrap_server, bootstrap_controller, command_config)


def _connect(ctx: click.Context) -> Admin:
    """Kafka's order: load `--command-config`, set the bootstrap key, create the Admin client."""
    return open_admin(target(ctx).admin_properties(target(ctx).command_properties()))


def _offline(ctx: click.Context) -> None:
    """version-mapping and feature-dependencies contact no cluster, and from Kafka 4.3 on need no
    bootstrap option (KAFKA-19749, PR #20619); the two options still exclude each other."""
    where = ctx.find_object(AdminTarget)
    if where is not None and where.bootstrap_server is not None and where.bootstrap_controller is not None:
        where.check(ctx)


# --------------------------------------------------------------------------- describe


def _level_text(feature: str, level: int) -> str:
    if feature != METADATA_VERSION:
        return str(level)
    from .feature_tables import TOOL_LINE

    known = TOOL_LINE.metadata_version(level)
    return known.release if known is not None else f"UNKNOWN {level}"


def _finalized(metadata: Features, name: str) -> int:
    finalized = metadata.finalized_features.get(name)
    return finalized.max_version_level if finalized is not None else 0


def describe_text(metadata: Features) -> str:
    """One TAB-separated line per supported feature, sorted by name; metadata.version levels as
    release strings, an unknown epoch as `-`."""
    epoch = "-" if metadata.finalized_features_epoch is None else str(metadata.finalized_features_epoch)
    lines = []
    for name in sorted(metadata.supported_features):
        supported = metadata.supported_features[name]
        lines.append(
            f"Feature: {name}\t"
            f"SupportedMinVersion: {_level_text(name, supported.min_version)}\t"
            f"SupportedMaxVersion: {_level_text(name, supported.max_version)}\t"
            f"FinalizedVersionLevel: {_level_text(name, _finalized(metadata, name))}\t"
            f"Epoch: {epoch}\n"
        )
    return "".join(lines)


def describe_json(metadata: Features) -> dict[str, Any]:
    """Numeric levels throughout (metadata.version too); `epoch` null when unknown."""
    return {
        "features": [
            {
                "name": name,
                "supported_min_version": metadata.supported_features[name].min_version,
                "supported_max_version": metadata.supported_features[name].max_version,
                "finalized_version_level": _finalized(metadata, name),
                "epoch": metadata.finalized_features_epoch,
            }
            for name in sorted(metadata.supported_features)
        ]
    }


@main.command(exact_only=EXACT_ONLY)
@click.option(
    "--node-id",
    type=JAVA_INT,
    help="Ask this node (a broker, or a controller with --bootstrap-controller) instead of any one.",
)
@output.output_option
@click.pass_context
def describe(ctx: click.Context, node_id: int | None, output_format: str) -> None:
    """Show each feature's supported range and finalized level.

    \b
    Examples:
      kafka-features --bootstrap-controller localhost:9093 describe
      kafka-features --bootstrap-server localhost:9092 describe --node-id 1 --output json
    """
    with _connect(ctx) as admin:
        if node_id is not None and node_id < 0:
            output.fail(f"Invalid node id {node_id}: must be non-negative.")
        from kafka_admin_kraft.client.operations.describe_features import describe_features_answer

        with reported_errors():
            metadata = admin.run(lambda core: describe_features_answer(core, node_id=node_id))
    if output_format == "json":
        output.write_json(describe_json(metadata))
    else:
        output.write(describe_text(metadata))


# --------------------------------------------------------------------------- upgrade / downgrade / disable


@dataclass(frozen=True)
class Outcome:
    """One feature's requested level and what became of it (None = success)."""

    feature: str
    level: int
    error: str | None


def parse_feature_level(text: str) -> tuple[str, int]:
    """`name=level` with Kafka's messages; the level must fit a Java short."""
    if "=" not in text:
        output.fail(f"Can't parse feature=level string {text}: equals sign not found.")
    name, level_text = (part.strip() for part in text.split("=", 1))
    try:
        level = int(level_text)
    except ValueError:
        level = SHORT_MAX + 1
    if not SHORT_MIN <= level <= SHORT_MAX or not level_text.lstrip("+-").isdigit():
        output.fail(f"Can't parse feature=level string {text}: unable to parse {level_text} as a short.")
    return name, level


def _add(updates: dict[str, int], operation: str, name: str, level: int) -> None:
    """One requested level, checked as Kafka's ``FeatureUpdate`` constructor does, then for duplicates."""
    if operation == "upgrade" and level == 0:
        output.fail(
            "The upgradeType flag should be set to SAFE_DOWNGRADE or UNSAFE_DOWNGRADE when the "
            f"provided maxVersionLevel:{level} is < 1."
        )
    if level < 0:
        output.fail("Cannot specify a negative version level.")
    if name in updates:
        output.fail(f"Feature {name} was specified more than once.")
    updates[name] = level


def _refuse_blank_names(updates: dict[str, int]) -> None:
    """Kafka's Admin client refuses a blank feature name before sending (``Utils.isBlank``: nothing but
    characters up to U+0020, as Java's ``trim`` sees blanks)."""
    if any(all(char <= " " for char in name) for name in updates):
        output.fail("Provided feature can not be empty.")


def requested_levels(
    operation: str,
    metadata: str | None,
    release_version: str | None,
    features: Sequence[str],
    *,
    json_output: bool = False,
) -> dict[str, int]:
    """The levels `upgrade` / `downgrade` asks for, checked in Kafka's order with its messages."""
    from .feature_tables import TOOL_LINE

    if release_version is not None and (metadata is not None or features):
        output.fail("Can not specify `release-version` with other feature flags.")
    updates: dict[str, int] = {}
    if metadata is not None:
        notice = " `metadata` flag is deprecated and may be removed in a future release.\n"
        if json_output:
            click.echo(notice, err=True, nl=False)
        else:
            output.write(notice)
        try:
            level = TOOL_LINE.metadata_version_from_string(metadata, unstable=True)
        except ValueError as exc:
            output.fail(str(exc))
        _add(updates, operation, METADATA_VERSION, level)
    for text in features:
        _add(updates, operation, *parse_feature_level(text))
    if release_version is not None:
        try:
            mapping = TOOL_LINE.version_mapping(release_version, unstable=True)
        except ValueError as exc:
            output.fail(str(exc))
        for name, level in mapping.items():
            if name == METADATA_VERSION or level > 0 or operation == "downgrade":
                updates[name] = level
    if not updates:
        output.fail(f"You must specify at least one feature to {operation}")
    return updates


def upgrade_type_name(operation: str, unsafe: bool) -> str:
    """UPGRADE for upgrade; SAFE_DOWNGRADE, or UNSAFE_DOWNGRADE with --unsafe, for downgrade and disable."""
    if operation == "upgrade":
        return "UPGRADE"
    return "UNSAFE_DOWNGRADE" if unsafe else "SAFE_DOWNGRADE"


def apply_updates(
    admin: Admin, operation: str, updates: dict[str, int], *, unsafe: bool, dry_run: bool
) -> list[Outcome]:
    """Send one UpdateFeatures request; a request-wide error becomes every feature's error, as the Java
    client reports it."""
    from kafka_admin_kraft.errors import KafkaAdminError, KafkaApiError
    from kafka_admin_kraft.models import FeatureUpdate, UpgradeType

    upgrade_type = UpgradeType[upgrade_type_name(operation, unsafe)]
    request = {name: FeatureUpdate(level=level, upgrade_type=upgrade_type) for name, level in updates.items()}
    try:
        results = admin.update_features(request, validate_only=dry_run)
    except KafkaApiError as exc:
        message = exc.message if exc.refusal is None else refusal_text(exc.refusal)
        return [Outcome(name, level, message) for name, level in sorted(updates.items())]
    except KafkaAdminError as exc:
        return [Outcome(name, level, str(exc)) for name, level in sorted(updates.items())]
    outcomes = []
    for name, level in sorted(updates.items()):
        result = results[name]
        error = None if result.ok else (result.error_message or str(result.exception()))
        outcomes.append(Outcome(name, level, error))
    return outcomes


def outcome_text(operation: str, outcomes: Sequence[Outcome], *, dry_run: bool) -> str:
    """One line per feature, sorted by name: done, possible (dry run) or refused with the reason."""
    past = {"upgrade": "upgraded", "downgrade": "downgraded", "disable": "disabled"}[operation]
    lines = []
    for outcome in sorted(outcomes, key=lambda o: o.feature):
        target_text = "" if operation == "disable" else f" to {outcome.level}"
        if outcome.error is None:
            verb = "can be" if dry_run else "was"
            lines.append(f"{outcome.feature} {verb} {past}{target_text}.\n")
        else:
            refusal = "Can not" if dry_run else "Could not"
            lines.append(f"{refusal} {operation} {outcome.feature}{target_text}. {outcome.error}\n")
    return "".join(lines)


def outcome_json(
    operation: str, outcomes: Sequence[Outcome], *, dry_run: bool, unsafe: bool
) -> dict[str, Any]:
    """The same outcomes for scripts: `error` is null on success."""
    return {
        "operation": operation,
        "dry_run": dry_run,
        "upgrade_type": upgrade_type_name(operation, unsafe),
        "results": [
            {"feature": o.feature, "level": o.level, "ok": o.error is None, "error": o.error}
            for o in sorted(outcomes, key=lambda o: o.feature)
        ],
    }


def _run_updates(
    ctx: click.Context,
    operation: str,
    updates_of: Callable[[], dict[str, int]],
    *,
    unsafe: bool,
    dry_run: bool,
    output_format: str,
) -> None:
    with _connect(ctx) as admin:
        updates = updates_of()
        _refuse_blank_names(updates)
        outcomes = apply_updates(admin, operation, updates, unsafe=unsafe, dry_run=dry_run)
        note = None
        if operation == "upgrade":
            note = blocked_note(admin, outcomes, target(ctx).connect_options())
    if output_format == "json":
        output.write_json(outcome_json(operation, outcomes, dry_run=dry_run, unsafe=unsafe))
    else:
        output.write(outcome_text(operation, outcomes, dry_run=dry_run))
    failed = sum(1 for o in outcomes if o.error is not None)
    if failed:
        summary = f"{failed} out of {len(outcomes)} operation(s) failed."
        output.fail(summary + (f"\nNote: {note}" if note is not None else ""))


def blocked_note(admin: Admin, outcomes: Sequence[Outcome], connect: str) -> str | None:
    """What clears an upgrade the controller refused because a registered node does not support the
    level (``Admin.explain_feature_refusal``): the node, what it is and the command where one exists,
    for the line after Kafka's text; None when no refusal names a node, or the cluster cannot say."""
    from kafka_admin_kraft.errors import KafkaAdminError

    for refusal in dict.fromkeys(o.error for o in outcomes if o.error is not None):
        try:
            finding = admin.explain_feature_refusal(refusal, connect=connect)
        except KafkaAdminError:
            return None
        if finding is not None:
            return finding.message + (f"; fix: {finding.fix}" if finding.fix is not None else "")
    return None


def _level_options(command: F) -> F:
    """The options upgrade and downgrade share."""
    for option in reversed(
        [
            click.option(
                "--metadata",
                metavar="VERSION",
                help="Deprecated: the metadata.version as a release string. Example: --metadata 3.9-IV0",
            ),
            click.option(
                "--release-version",
                metavar="VERSION",
                help="Set metadata.version and every feature to the defaults of this release "
                "(see version-mapping). Example: --release-version 4.1",
            ),
            click.option(
                "--feature",
                "features",
                multiple=True,
                metavar="NAME=LEVEL",
                help="A feature and its level; repeatable. Example: --feature group.version=1",
            ),
            click.option(
                "--dry-run", is_flag=True, help="Let the controller validate the change without making it."
            ),
        ]
    ):
        command = option(command)
    return command


@main.command(exact_only=EXACT_ONLY)
@_level_options
@output.output_option
@click.pass_context
def upgrade(
    ctx: click.Context,
    metadata: str | None,
    release_version: str | None,
    features: tuple[str, ...],
    dry_run: bool,
    output_format: str,
) -> None:
    """Raise feature levels. With --release-version, only the features whose level for that release is
    above 0 are sent.

    \b
    Examples:
      kafka-features --bootstrap-controller localhost:9093 upgrade --release-version 4.4
      kafka-features --bootstrap-controller localhost:9093 upgrade --feature transaction.version=2 --dry-run
    """

    def updates() -> dict[str, int]:
        return requested_levels(
            "upgrade", metadata, release_version, features, json_output=output_format == "json"
        )

    _run_updates(ctx, "upgrade", updates, unsafe=False, dry_run=dry_run, output_format=output_format)


@main.command(exact_only=EXACT_ONLY)
@_level_options
@click.option(
    "--unsafe",
    is_flag=True,
    help="Allow a downgrade that may lose metadata (UNSAFE_DOWNGRADE); the controller may still refuse.",
)
@output.output_option
@click.pass_context
def downgrade(
    ctx: click.Context,
    metadata: str | None,
    release_version: str | None,
    features: tuple[str, ...],
    dry_run: bool,
    unsafe: bool,
    output_format: str,
) -> None:
    """Lower feature levels (0 disables a feature). With --release-version, every feature is sent.

    \b
    Examples:
      kafka-features --bootstrap-controller localhost:9093 downgrade --release-version 3.9 --dry-run
      kafka-features --bootstrap-controller localhost:9093 downgrade --feature metadata.version=20
    """

    def updates() -> dict[str, int]:
        return requested_levels(
            "downgrade", metadata, release_version, features, json_output=output_format == "json"
        )

    _run_updates(ctx, "downgrade", updates, unsafe=unsafe, dry_run=dry_run, output_format=output_format)


@main.command(exact_only=EXACT_ONLY)
@click.option(
    "--feature",
    "features",
    multiple=True,
    metavar="NAME",
    help="A feature to disable (set to level 0); repeatable. Example: --feature share.version",
)
@click.option("--unsafe", is_flag=True, help="Allow a downgrade that may lose metadata (UNSAFE_DOWNGRADE).")
@click.option("--dry-run", is_flag=True, help="Let the controller validate the change without making it.")
@output.output_option
@click.pass_context
def disable(
    ctx: click.Context, features: tuple[str, ...], unsafe: bool, dry_run: bool, output_format: str
) -> None:
    """Disable features (downgrade them to level 0).

    \b
    Example:
      kafka-features --bootstrap-controller localhost:9093 disable --feature streams.version --dry-run
    """

    def updates() -> dict[str, int]:
        levels: dict[str, int] = {}
        for name in features:
            _add(levels, "disable", name, 0)
        if not levels:
            output.fail("You must specify at least one feature to disable")
        return levels

    _run_updates(ctx, "disable", updates, unsafe=unsafe, dry_run=dry_run, output_format=output_format)


# --------------------------------------------------------------------------- tables


@main.command("version-mapping", exact_only=EXACT_ONLY)
@click.option(
    "--release-version",
    metavar="VERSION",
    help="A release (3.9) or metadata.version (3.9-IV0); default: the latest production one. "
    "Example: --release-version 3.9",
)
@output.output_option
@click.pass_context
def version_mapping(ctx: click.Context, release_version: str | None, output_format: str) -> None:
    """Show the metadata.version and the feature levels a release defaults to (what upgrade and
    downgrade --release-version send). Needs no cluster and no bootstrap option.

    \b
    Example:
      kafka-features version-mapping --release-version 3.9
    """
    from . import feature_tables

    _offline(ctx)
    try:
        if output_format == "json":
            output.write_json(feature_tables.version_mapping_json(release_version))
        else:
            output.write(feature_tables.render_version_mapping(release_version))
    except feature_tables.FeatureTableError as exc:
        output.fail(str(exc))


@main.command("feature-dependencies", exact_only=EXACT_ONLY)
@click.option(
    "--feature",
    "features",
    multiple=True,
    required=True,
    metavar="NAME=LEVEL",
    help="A feature level whose dependencies to show; repeatable. "
    "Example: --feature eligible.leader.replicas.version=1",
)
@output.output_option
@click.pass_context
def feature_dependencies(ctx: click.Context, features: tuple[str, ...], output_format: str) -> None:
    """Show which levels of other features each given feature level needs. Needs no cluster and no
    bootstrap option.

    \b
    Example:
      kafka-features feature-dependencies \\
          --feature eligible.leader.replicas.version=1 --feature metadata.version=17
    """
    from . import feature_tables

    _offline(ctx)
    try:
        levels = feature_tables.parse_feature_arguments(features, "kafka-features")
        if output_format == "json":
            output.write_json(feature_tables.feature_dependencies_json(levels, "kafka-features"))
        else:
            output.write(feature_tables.render_feature_dependencies(levels, "kafka-features"))
    except feature_tables.FeatureTableError as exc:
        output.fail(str(exc))
