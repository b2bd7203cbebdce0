"""``kafka-storage``: format and inspect KRaft log directories, a drop-in for Kafka's tool.

Subcommands, options, text output, feature levels and exit codes are Kafka 4.4's (``info``,
``format``, ``version-mapping``, ``feature-dependencies``, ``random-uuid``); ``--output json`` and
``format --controller-quorum-voters`` are additions. ``format`` writes Kafka 4.4's layout (KIP-1170:
the bootstrap records in the zero checkpoint of a controller's metadata directory, no
``bootstrap.checkpoint``), and, another addition, the layout of Kafka 4.3 and older when the release
version is older than 4.4, so that the line it names can start the directory. The checks and the
writing live in
:mod:`kafka_admin_kraft.storage.formatter`; this module parses arguments and prints. The SDK is
imported inside the commands so that ``--help`` and argument errors stay fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from ._click import CONTEXT_SETTINGS, Exclusive, KafkaGroup
from .output import fail, output_option, progress, write, write_json

if TYPE_CHECKING:
    from kafka_admin_kraft.storage.formatter import FormatPlan, NodeStorageConfig
    from kafka_admin_kraft.storage.meta_properties import MetaProperties

PROG = "kafka-storage"

CONFIG_HELP = ("The Kafka server properties file of this node (process.roles, node.id, log.dirs, "
               "metadata.log.dir, controller.listener.names, ...). Example: -c config/controller.properties")


@click.group(PROG, cls=KafkaGroup, context_settings=CONTEXT_SETTINGS, from_file_prefix="@")
def main() -> None:
    """Format and inspect the log directories of a KRaft node.

    Arguments may also be read from a file, one per line: kafka-storage @format-args.txt
    """


def _load_config(path: str) -> NodeStorageConfig:
    """The parts of the server properties the formatter needs; an invalid file ends the tool with
    the configuration error (exit code 1)."""
    from kafka_admin_kraft.config.server import ConfigError, load_config
    from kafka_admin_kraft.storage.formatter import NodeStorageConfig

    try:
        config = load_config(path)
    except ConfigError as exc:
        fail(str(exc))
    endpoints = config.advertised_controller_listeners
    return NodeStorageConfig(
        node_id=config.node_id,
        process_roles=config.process_roles,
        log_dirs=config.log_dirs,
        metadata_log_dir=config.metadata_log_dir,
        controller_listener_names=config.controller_listener_names,
        controller_endpoint=(endpoints[0].host, endpoints[0].port) if endpoints else None,
        quorum_voters_configured=bool(config.quorum_voters),
        unstable_feature_versions=config.unstable_feature_versions_enable,
    )


# --------------------------------------------------------------------------- info


INFO_PROBLEMS = {"does not exist": "does not exist", "not a directory": "is not a directory",
                 "not formatted": "is not formatted."}


def _properties_text(meta: MetaProperties) -> str:
    """``{cluster.id=..., directory.id=..., node.id=..., version=1}``: keys sorted, as Kafka prints."""
    props = meta.to_properties()
    return "{" + ", ".join(f"{key}={props[key]}" for key in sorted(props)) + "}"


def _section(title: str, plural: str, items: list[str]) -> str:
    if not items:
        return ""
    return (plural if len(items) > 1 else title) + ":\n" + "".join(f"  {item}\n" for item in items) + "\n"


@main.command("info", help="Show the log directories of a node, its metadata (cluster id, node id, directory "
             "id) and any problem with them. Exits with 1 when there are problems.\n\n"
             "Example: kafka-storage info -c config/server.properties")
@click.option("--config", "-c", "config", required=True, metavar="CONFIG", help=CONFIG_HELP)
@output_option
def info(config: str, output_format: str) -> None:
    from kafka_admin_kraft.storage.formatter import inspect_directories

    node = _load_config(config)
    reports = inspect_directories(node.directories)
    found = [r.path for r in reports if r.problem not in ("does not exist", "not a directory")]
    problems: list[str] = []
    for report in reports:
        if report.problem is not None:
            problems.append(f"{report.path} {INFO_PROBLEMS[report.problem]}")
        elif report.error is not None:
            problems.append(f"Error loading {report.path}/meta.properties: {report.error}")
    metas = [r.meta for r in reports if r.meta is not None]
    if len({meta.cluster_id for meta in metas}) > 1:
        problems.append("Mismatched cluster IDs between storage directories.")
    if len({meta.node_id for meta in metas}) > 1:
        problems.append("Mismatched node IDs between storage directories.")
    if any(meta.version == 0 for meta in metas):
        problems.append("The kafka configuration file appears to be for a cluster in KRaft mode, but the "
                        "directories are formatted for legacy mode.")
    if output_format == "json":
        write_json({"log_directories": found,
                    "metadata": metas[0].to_properties() if metas else None,
                    "problems": problems})
    else:
        write(_section("Found log directory", "Found log directories", found)
              + (f"Found metadata: {_properties_text(metas[0])}\n\n" if metas else "")
              + _section("Found problem", "Found problems", problems))
    if problems:
        raise SystemExit(1)


# --------------------------------------------------------------------------- format

FORMAT_HELP = """Format the log directories of a node. Every directory in log.dirs and metadata.log.dir
gets meta.properties. As Kafka 4.4's tool does (KIP-1170), a controller's metadata directory also gets
the zero checkpoint __cluster_metadata-0/00000000000000000000-0000000000.checkpoint, holding
kraft.version, the initial voters of --standalone or --initial-controllers, and the bootstrap metadata
(metadata.version, the other feature levels, the --add-scram credentials); a broker gets
meta.properties alone. Kafka 4.3 and older cannot start such a directory, so with an older release
version (below 4.4-IV0) the format writes their layout instead, which Kafka 4.4 starts too: the
bootstrap metadata in bootstrap.checkpoint in every directory, and the zero checkpoint with the initial
voters alone. (Kafka 4.4's own tool writes its layout whatever the release version.) Refuses, writing
nothing, when a directory is already formatted or cannot be written.

The default metadata.version is Kafka 4.4's, 4.4-IV2 (level 33): an older Kafka refuses to start on
it (3.9: "No MetadataVersion with feature level 33"). For an older Kafka pass its release:

\b
  Kafka  --release-version  metadata.version written
  3.9    3.9                3.9-IV0 (21)
  4.0    4.0                4.0-IV3 (25)
  4.1    4.1                4.1-IV1 (27)
  4.2    4.2                4.2-IV1 (29)
  4.3    4.3                4.3-IV0 (30)
  4.4    4.4 (default)      4.4-IV2 (33)

\b
Examples:
  kafka-storage format -c controller.properties -t $(kafka-storage random-uuid) --standalone
  kafka-storage format -c controller.properties -t CLUSTER_ID \\
      --initial-controllers 1@ctl1:9093:DIR_ID_1,2@ctl2:9093:DIR_ID_2,3@ctl3:9093:DIR_ID_3
  kafka-storage format -c broker.properties -t CLUSTER_ID --no-initial-controllers
"""


def _format_json(plan: FormatPlan, written: dict[str, list[str]]) -> dict[str, Any]:
    from .feature_tables import TOOL_LINE

    controllers = plan.initial_controllers
    return {
        "cluster_id": plan.cluster_id,
        "node_id": plan.node_id,
        "metadata_version": {"level": plan.metadata_version,
                             "release": TOOL_LINE.release_string(plan.metadata_version)},
        "features": plan.feature_levels,
        "scram_credentials": [{"mechanism": c.mechanism, "name": c.name, "iterations": c.iterations}
                              for c in plan.scram_credentials],
        "initial_controllers": None if controllers is None else [
            {"id": c.node_id, "host": c.host, "port": c.port, "directory_id": str(c.directory_id)}
            for c in controllers],
        "directories": [{"path": t.path, "kind": t.kind, "directory_id": str(t.directory_id),
                         "files": written[t.path]} for t in plan.targets],
        "already_formatted": list(plan.already_formatted),
        "ignored": list(plan.unreadable),
    }


@main.command("format", help=FORMAT_HELP, exclusive=[Exclusive(
    ("standalone", "no_initial_controllers", "initial_controllers", "controller_quorum_voters"))],
    exact_only=["--controller-quorum-voters"])
@click.option("--config", "-c", "config", required=True, metavar="CONFIG", help=CONFIG_HELP)
@click.option("--cluster-id", "-t", "cluster_id", required=True, metavar="CLUSTER_ID",
              help="The cluster id, usually made with random-uuid. Example: -t XcZZOzUqS4yHOjhMQB6JLQ")
@click.option("--add-scram", "-S", "add_scram", multiple=True, metavar="ADD_SCRAM",
              help="A SCRAM credential to create with the cluster (repeatable; needs metadata.version "
              "3.5-IV2 or later). Keys: name, password or salt+saltedpassword (base64), iterations "
              "(default 4096). "
              "Example: -S 'SCRAM-SHA-256=[name=alice,password=alice-secret]'")
@click.option("--ignore-formatted", "-g", "ignore_formatted", is_flag=True,
              help="Skip directories that are already formatted instead of refusing. Example: -g")
@click.option("--release-version", "-r", "release_version", metavar="RELEASE_VERSION",
              help="The metadata.version to start with, and the default levels of the other features "
              "(default: Kafka 4.4's, 4.4-IV2, which Kafka 3.9 to 4.3 refuse: pass their release, "
              "-r 3.9 to -r 4.3, to format for them, in the file layout they start from). Example: -r 3.9")
@click.option("--feature", "-f", "feature", multiple=True, metavar="FEATURE",
              help="A feature level to start with instead of the release's default (repeatable). "
              "Example: -f transaction.version=1")
@click.option("--standalone", "-s", "standalone", is_flag=True,
              help="Bootstrap a dynamic quorum with this controller as its only voter. Example: -s")
@click.option("--no-initial-controllers", "-N", "no_initial_controllers", is_flag=True,
              help="Format a controller of a dynamic quorum that joins later, or a broker, without initial "
              "voters. Example: -N")
@click.option("--initial-controllers", "-I", "initial_controllers", metavar="INITIAL_CONTROLLERS",
              help="The initial voters of a dynamic quorum, <id>@<host>:<port>:<directory-id> comma "
              "separated; give every controller the same list. Example: -I "
              "1@ctl1:9093:3Db5QLSqSZieL3rJBUUegA,2@ctl2:9093:4Pc6RMTrTaZjfM4sKCVVfB")
@click.option("--controller-quorum-voters", "controller_quorum_voters", metavar="VOTERS",
              help="The initial voters in the form the dynamic-quorum proposal gave, "
              "<id>[-<directory-id>]@<host>:<port> comma separated: like --initial-controllers, but this "
              "node's directory id may be left out and is then generated (every other voter needs one). "
              "Not abbreviable. Example: --controller-quorum-voters "
              "1@ctl1:9093,2-4Pc6RMTrTaZjfM4sKCVVfB@ctl2:9093")
@output_option
def format_command(config: str, cluster_id: str, add_scram: tuple[str, ...], ignore_formatted: bool,
                   release_version: str | None, feature: tuple[str, ...], standalone: bool,
                   no_initial_controllers: bool, initial_controllers: str | None,
                   controller_quorum_voters: str | None, output_format: str) -> None:
    from kafka_admin_kraft.storage.formatter import (
        DynamicVoterError,
        FormatOptions,
        FormatterError,
        plan_format,
    )

    from .feature_tables import TOOL_LINE
    node = _load_config(config)
    options = FormatOptions(cluster_id=cluster_id, release_version=release_version, features=feature,
                            add_scram=add_scram, ignore_formatted=ignore_formatted, standalone=standalone,
                            initial_controllers=initial_controllers,
                            no_initial_controllers=no_initial_controllers,
                            controller_quorum_voters=controller_quorum_voters)
    try:
        plan = plan_format(node, options)
    except (FormatterError, DynamicVoterError) as exc:
        fail(str(exc))
    text = output_format == "text"
    if text:
        write("".join(f"I/O error trying to read log directory {path}. Ignoring...\n"
                      for path in plan.unreadable))
    if not plan.targets and text:
        write("All of the log directories are already formatted.\n")
        return
    with progress(f"Formatting {len(plan.targets)} log directories"):
        try:
            written = plan.write()
        except FormatterError as exc:
            fail(str(exc))
    if not text:
        write_json(_format_json(plan, {path: [str(file) for file in files]
                                       for path, files in written.items()}))
        return
    write(f"Bootstrap metadata: {plan.bootstrap_metadata_string()}\n"
          + "".join(f"Formatting {target.kind} {target.path} with metadata.version "
                    f"{TOOL_LINE.release_string(plan.metadata_version)}.\n" for target in plan.targets))


# --------------------------------------------------------------------------- the feature tables


@main.command("version-mapping", help="Show the feature levels a release version brings: metadata.version "
             "and every other feature's default level.\n\nExample: kafka-storage version-mapping -r 3.9")
@click.option("--release-version", "-r", "release_version", metavar="RELEASE_VERSION",
              help="The release, as 3.9 or 3.9-IV0 (default: the latest production version, 4.4-IV2). "
              "Example: -r 4.0-IV3")
@output_option
def version_mapping(release_version: str | None, output_format: str) -> None:
    from .feature_tables import FeatureTableError, render_version_mapping, version_mapping_json

    try:
        if output_format == "json":
            write_json(version_mapping_json(release_version))
        else:
            write(render_version_mapping(release_version))
    except FeatureTableError as exc:
        fail(str(exc))


@main.command("feature-dependencies", help="Show what each feature level needs of the other features.\n\n"
             "Example: kafka-storage feature-dependencies -f eligible.leader.replicas.version=1 "
             "-f metadata.version=17")
@click.option("--feature", "-f", "feature", multiple=True, required=True, metavar="FEATURE",
              help="A feature level, name=level (repeatable). Example: -f transaction.version=2")
@output_option
def feature_dependencies(feature: tuple[str, ...], output_format: str) -> None:
    from .feature_tables import (
        FeatureTableError,
        feature_dependencies_json,
        parse_feature_arguments,
        render_feature_dependencies,
    )

    try:
        levels = parse_feature_arguments(feature, "kafka-storage")
        if output_format == "json":
            write_json(feature_dependencies_json(levels, "kafka-storage"))
        else:
            write(render_feature_dependencies(levels, "kafka-storage"))
    except FeatureTableError as exc:
        fail(str(exc))


# --------------------------------------------------------------------------- random-uuid


@main.command("random-uuid", help="Print a new random uuid (22 base64url characters), e.g. for --cluster-id."
             "\n\nExample: kafka-storage random-uuid")
@output_option
def random_uuid(output_format: str) -> None:
    from kafka_admin_kraft.protocol.primitives import Uuid

    uuid = str(Uuid.random())
    if output_format == "json":
        write_json({"uuid": uuid})
    else:
        write(uuid + "\n")
