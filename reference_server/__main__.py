"""``kraft-server --config controller.properties [--release-version 4.2]`` (or
``python -m kafka_admin_kraft_server --config ...``).

``--release-version`` picks the Kafka line the node runs as, 3.9 to 4.4 (default the newest): the API
versions it advertises, accepts and sends, its feature levels and rules, and how it holds elections
(``kafka_line``).

Loads the Kafka-style properties file, runs Kafka's start-up checks (formatted directories, cluster
and node ids, the ``.lock`` file, kraft.version and the voter set), opens the metadata log and
``quorum-state``, builds the consensus core and runs the asyncio runtime until SIGTERM or SIGINT.
A refusal to start prints Kafka's message and exits with status 1, as ``kafka-server-start`` does.
"""

from __future__ import annotations

import os
import signal
import socket

# SIGTERM while the modules below load: nothing is open yet, so just leave (main() takes over next).
signal.signal(signal.SIGTERM, lambda signum, frame: os._exit(0))

import argparse  # noqa: E402
import asyncio  # noqa: E402
import logging  # noqa: E402
import random  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from pathlib import Path  # noqa: E402

from kafka_admin_kraft.config.server import ConfigError, ServerConfig, load_config  # noqa: E402
from kafka_admin_kraft.storage.bootstrap import BOOTSTRAP_FILE  # noqa: E402

from . import faults, kafka_line, settings  # noqa: E402
from .authorizer import AuthorizerConfig, authorizer_config, config_keys  # noqa: E402
from .broker import BrokerOptions  # noqa: E402
from .connections import ConnectionLimits  # noqa: E402
from .kafka_line import ServerLine  # noqa: E402
from .raft.core import RaftCore  # noqa: E402
from .runtime import (  # noqa: E402
    ControllerRuntime,
    ListenerSpec,
    RuntimeOptions,
    configure_logging,
)
from .security import ClientSecurity, Security  # noqa: E402
from .security import from_config as security_from_config  # noqa: E402
from .startup import StartupError, StartupState, start_storage  # noqa: E402

log = logging.getLogger("kafka.Kafka$")
version_log = logging.getLogger("org.apache.kafka.common.utils.AppInfoParser")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="kraft-server", description="Run one node (controller, broker "
                                     "or both) of the reference KRaft quorum from a Kafka-style properties "
                                     "file.")
    parser.add_argument("-c", "--config", required=True, type=Path, help="the server properties file")
    parser.add_argument("--release-version", default=kafka_line.DEFAULT_LINE, metavar="LINE",
                        help="the Kafka line to run as: its API versions, feature levels and behaviour; "
                             f"one of {', '.join(kafka_line.LINE_NAMES)} (default {kafka_line.DEFAULT_LINE})")
    parser.add_argument("--log-level", default="INFO", type=str.upper, choices=LOG_LEVELS,
                        help="log level of the lines written to stderr (default INFO)")
    parser.add_argument("--faults", type=Path, metavar="FILE",
                        help="for tests: a file naming faults to inject while running (network "
                             "partitions, a full disk), read again whenever it changes "
                             "(kafka_admin_kraft_server.faults)")
    return parser.parse_args(argv)


def runtime_options(config: ServerConfig, state: StartupState, security: Security | None,
                    limits: ConnectionLimits, line: ServerLine,
                    authorizer: AuthorizerConfig | None = None) -> RuntimeOptions:
    bootstrap_file = state.metadata_dir / BOOTSTRAP_FILE
    source = (f"the binary bootstrap metadata file: {bootstrap_file}" if bootstrap_file.exists()
              else "the default bootstrap")
    broker_listeners = [item for item in config.listeners
                        if config.is_broker and item.name not in config.controller_listener_names]
    advertised = {item.name: item for item in config.advertised_listeners or config.listeners}
    broker = None
    if broker_listeners:
        endpoints = {}
        for item in broker_listeners:
            shown = advertised.get(item.name, item)
            endpoints[item.name] = (shown.host or socket.getfqdn(), shown.port)
        protocols = {item.name: config.listener_security_protocol_map.get(item.name, "PLAINTEXT")
                     for item in broker_listeners}
        broker = BrokerOptions(endpoints, config.default_listener_name, protocols,
                               state.identity.directory_id, config.broker_heartbeat_interval_ms)
    return RuntimeOptions(
        listeners=tuple(ListenerSpec(item.name, item.host, item.port)
                        for item in [*config.controller_listeners, *broker_listeners]),
        socket_request_max_bytes=config.socket_request_max_bytes,
        metadata_max_idle_interval_ms=config.metadata_max_idle_interval_ms,
        bootstrap_metadata=state.bootstrap_metadata,
        bootstrap_source=source,
        broker=broker,
        broker_session_timeout_ms=config.broker_session_timeout_ms,
        connection_limits=limits,
        unstable_feature_versions=config.unstable_feature_versions_enable,
        line=line,
        unstable_api_versions=settings.unstable_api_versions_enable(config),
        security=security.listeners if security is not None else {},
        peer_security=security.client if security is not None else ClientSecurity(),
        authorizer=authorizer,
    )


async def serve(runtime: ControllerRuntime) -> int:
    try:
        await runtime.start()
    except OSError as exc:
        log.error("Exiting Kafka due to fatal exception during startup: unable to bind a listener: %s", exc)
        return 1
    runtime.install_signal_handlers()
    log.info("[KafkaRaftServer nodeId=%d] Kafka Server started", runtime.identity.node_id)
    return await runtime.run()


class _Interrupted(Exception):
    """SIGTERM before the runtime took over signal handling."""


def _interrupt(signum: int, frame: object) -> None:
    raise _Interrupted(signal.Signals(signum).name)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        line = kafka_line.line(args.release_version)
    except ValueError as exc:
        print(f"kraft-server: error: argument --release-version: {exc}", file=sys.stderr)
        return 2
    configure_logging(args.log_level)
    faults.install(args.faults)
    version_log.info("Kafka version: %s (the reference server runs as Kafka %s: --release-version)",
                     line.name, line.name)
    # Until the runtime installs its own handlers, SIGTERM stops start-up cleanly (lock released).
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        config = load_config(args.config)
        security = security_from_config(config)
        authorizer = authorizer_config(config.originals)
        settings.warn_unknown_keys(config, line, security.keys | config_keys(authorizer))
        limits = settings.connection_limits(config)
        settings.unstable_api_versions_enable(config)  # a bad value stops the start here, in one line
        state = start_storage(config, line)
    except _Interrupted as exc:
        log.info("Received %s during start-up, exiting", exc)
        return 0
    except (ConfigError, StartupError) as exc:
        log.error("Exiting Kafka due to fatal exception during startup: %s", exc)
        return 1
    except Exception as exc:  # a directory Kafka could not load either (corrupt files, I/O errors)
        log.error("Exiting Kafka due to fatal exception during startup: %s: %s", type(exc).__name__, exc)
        return 1
    try:
        for warning in state.warnings:
            log.warning("%s", warning)
        now_ms = time.time_ns() // 1_000_000
        core = RaftCore(state.identity, state.raft_config, state.bootstrap, state.log, state.store,
                        random.Random(), now_ms)
        runtime = ControllerRuntime(state.identity, state.raft_config, core, state.log,
                                    runtime_options(config, state, security, limits, line, authorizer))
        return asyncio.run(serve(runtime))
    except (KeyboardInterrupt, _Interrupted):
        log.info("Interrupted during start-up, exiting")
        return 0
    except Exception:
        log.exception("Exiting Kafka due to fatal exception")
        return 1
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # exiting anyway: let the files close
        state.close()


if __name__ == "__main__":
    raise SystemExit(main())
