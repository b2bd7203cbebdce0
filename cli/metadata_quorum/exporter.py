"""`kafka-metadata-quorum exporter`: serve the quorum's health as Prometheus metrics on /metrics.

One long-lived Admin client checks the quorum (``Admin.check_quorum``) when a scrape asks for it, at
most once per ``--min-interval-ms`` however many scrapers there are, and hands each check the last
one that reached the quorum, so that a voter change's pending time carries over from check to
check. Each check gets 80% of ``--scrape-timeout-ms`` (or of the shorter time Prometheus's scrape
allows, ``metrics.budget_from_header``) as its own deadline, so an unreachable quorum is reported by
the check itself (``up 0``, status UNKNOWN, finding ``QUORUM_UNREACHABLE``) within the scrape;
``metrics`` says what a scrape serves when a check takes longer still.
Metric names and meanings: the HELP lines of /metrics, and ``monitoring/`` for rules and a dashboard.

Like node_exporter it listens on every interface by default (Prometheus scrapes from elsewhere), over
plain HTTP to anyone unless ``--web-config-file`` names a Prometheus web configuration file
(``web_config``: TLS, client certificates, basic authentication, headers, a rate limit), read and
checked before the exporter connects or listens; ``--redact`` leaves out what maps the cluster (its id,
node addresses, directory ids). Idle, slow and surplus connections are ``http_server``'s to bound: a
crowd of them costs descriptors, never threads, and scrapes still get in.
"""

from __future__ import annotations

import signal
import threading
from typing import Any

import click

from .. import output
from .._click import KafkaCommand
from ..admin_options import connect
from .health_options import HEALTH_OPTIONS, threshold_options, thresholds

DEFAULT_LISTEN = "0.0.0.0:9309"
"""Every IPv4 interface, as node_exporter's ``:9100``: Prometheus scrapes from another host."""


def _listen_address(ctx: click.Context, param: click.Parameter, value: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:9309`` for IPv6; an empty host is every IPv4 address, port 0 any free one)."""
    host, colon, port = value.rpartition(":")
    if not colon or not port.isdigit() or int(port) > 65535:
        raise click.BadParameter(f"expected HOST:PORT, got '{value}'", ctx, param)
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host or "0.0.0.0", int(port)


def _url(host: str, port: int, tls: bool) -> str:
    return f"http{'s' if tls else ''}://{f'[{host}]' if ':' in host else host}:{port}/metrics"


@click.command(
    "exporter",
    cls=KafkaCommand,
    exact_only=[*HEALTH_OPTIONS, "--listen", "--min-interval-ms", "--scrape-timeout-ms", "--web-config-file",
                "--redact"],
)
@threshold_options
@click.option(
    "--listen",
    metavar="HOST:PORT",
    default=DEFAULT_LISTEN,
    show_default=True,
    callback=_listen_address,
    help="Address to serve /metrics on; port 0 picks a free port (the line on stderr names it).",
)
@click.option(
    "--min-interval-ms",
    type=click.IntRange(min=0),
    default=5_000,
    show_default=True,
    help="Read the quorum at most once per interval; scrapes in between get the last reading.",
)
@click.option(
    "--scrape-timeout-ms",
    type=click.IntRange(min=1),
    default=5_000,
    show_default=True,
    help="Longest a scrape waits for a read of the quorum before it serves kraft_quorum_up 0. A scrape "
    "from Prometheus waits at most its job's scrape_timeout less half a second, when that is shorter.",
)
@click.option(
    "--web-config-file",
    metavar="FILE",
    help="Prometheus web configuration file (the exporter toolkit's format, as node_exporter's "
    "--web.config.file): TLS, client certificates, basic auth users with bcrypt hashes, headers.",
)
@click.option(
    "--redact",
    is_flag=True,
    help="Leave out the cluster id, node addresses and directory ids (node ids stay).",
)
@click.pass_context
def exporter(
    ctx: click.Context,
    /,
    listen: tuple[str, int],
    min_interval_ms: int,
    scrape_timeout_ms: int,
    web_config_file: str | None,
    redact: bool,
    no_probe: bool,
    **limits: Any,
) -> None:
    """Serve the quorum's health as Prometheus metrics (kraft_quorum_*) until SIGTERM or Ctrl-C.

    A client has 5 s to send its whole request (TLS handshake included), 10 s to read the answer, and
    a keep-alive connection 30 s between requests. At most 1024 connections are open (fewer under a
    low ulimit -n, which keeps 64 descriptors aside): one more closes the one that has waited longest.

    \b
    Examples:
      kafka-metadata-quorum --bootstrap-controller localhost:9093 exporter
      kafka-metadata-quorum --bootstrap-controller localhost:9093 exporter --listen 127.0.0.1:9309 \\
          --min-interval-ms 10000 --max-lag-ms 5000
      kafka-metadata-quorum --bootstrap-controller localhost:9093 exporter --web-config-file web.yml
    """
    limits_given = thresholds(limits)
    web = None
    if web_config_file is not None:
        from .web_config import WebConfigError, load_web_config

        try:
            web = load_web_config(web_config_file)
        except WebConfigError as exc:
            output.fail(str(exc))
    _, admin = connect(ctx)
    from prometheus_client import make_wsgi_app

    from kafka_admin_kraft.health import QuorumHealth

    from .metrics import QuorumCache, exporter_registry, scraped_within_budget
    from .web_server import make_server

    def read(previous: QuorumHealth | None, seconds: float) -> QuorumHealth:
        return admin.check_quorum(thresholds=limits_given, probe=not no_probe, previous=previous,
                                  timeout=seconds)

    cache = QuorumCache(read, min_interval=min_interval_ms / 1000, scrape_timeout=scrape_timeout_ms / 1000)
    host, port = listen
    app = scraped_within_budget(make_wsgi_app(exporter_registry(cache, redact=redact)))
    try:
        server = make_server(host, port, app, web)
    except OSError as exc:
        admin.close()
        output.fail(f"Cannot listen on {host}:{port}: {exc.strerror or exc}")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    stop = threading.Event()
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, lambda *_: stop.set())
    tls = web is not None and web.tls is not None
    click.echo(f"Serving quorum metrics on {_url(host, server.server_port, tls)}", err=True)
    stop.wait()
    server.shutdown()
    server.server_close()
    if not cache.reading:  # a read in flight holds the client; the process exit closes its sockets
        admin.close()
