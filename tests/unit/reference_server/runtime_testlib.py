"""A controller runtime around the fake core, run on a thread of its own, and what the tests do with it:
wait for a condition, send raw request bytes."""

from __future__ import annotations

import asyncio
import struct
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from integration.client import KafkaClient

from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.storage import BootstrapMetadata
from kafka_admin_kraft_server.authorizer import AuthorizerConfig
from kafka_admin_kraft_server.kafka_line import DEFAULT_LINE, LINES
from kafka_admin_kraft_server.raft.api import Endpoint, NodeIdentity, RaftConfig
from kafka_admin_kraft_server.runtime import ControllerRuntime, ListenerSpec, RuntimeOptions
from unit.reference_server.fakes import FakeCore, MemoryLog, identity


class Running:
    """A runtime started by ``running``: its loop and thread, and clients of its CONTROLLER listener."""

    def __init__(self, runtime: ControllerRuntime, loop: asyncio.AbstractEventLoop, thread: threading.Thread,
                 result: list[int]) -> None:
        self.runtime = runtime
        self.loop = loop
        self.thread = thread
        self.result = result
        self.host, self.port = runtime.bound["CONTROLLER"]

    @property
    def core(self) -> FakeCore:
        core = self.runtime.core
        assert isinstance(core, FakeCore)
        return core

    def call(self, fn: Callable[[], None]) -> None:
        self.loop.call_soon_threadsafe(fn)

    def client(self) -> KafkaClient:
        return KafkaClient(self.host, self.port, timeout=5)


def make_runtime(*, node_id: int = 1, lead: bool = True, idle_ms: int = 500, max_bytes: int = 1 << 20,
                 request_timeout_ms: int = 2000, bootstrap: BootstrapMetadata | None = None,
                 line: str = DEFAULT_LINE, unstable_api_versions: bool = False,
                 authorizer: AuthorizerConfig | None = None) -> ControllerRuntime:
    """A runtime around a ``FakeCore`` over a ``MemoryLog``, listening on a free local port, running as
    the Kafka ``line``, with ``authorizer`` if given."""
    log = MemoryLog()
    core = FakeCore(node_id, log, lead=lead)
    options = RuntimeOptions(listeners=(ListenerSpec("CONTROLLER", "127.0.0.1", 0),),
                             socket_request_max_bytes=max_bytes, metadata_max_idle_interval_ms=idle_ms,
                             bootstrap_metadata=bootstrap, bootstrap_source="test",
                             line=LINES[line], unstable_api_versions=unstable_api_versions,
                             authorizer=authorizer)
    return ControllerRuntime(identity(node_id), RaftConfig(request_timeout_ms=request_timeout_ms), core, log,
                             options)


@contextmanager
def running(runtime: ControllerRuntime) -> Iterator[Running]:
    """Start ``runtime`` on an event loop of its own thread; stop it on leaving."""
    loop = asyncio.new_event_loop()
    started = threading.Event()
    result: list[int] = []

    async def main() -> int:
        await runtime.start()
        started.set()
        return await runtime.run()

    def target() -> None:
        asyncio.set_event_loop(loop)
        try:
            result.append(loop.run_until_complete(main()))
        finally:
            started.set()
            loop.close()

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    assert started.wait(5)
    handle = Running(runtime, loop, thread, result)
    try:
        yield handle
    finally:
        if thread.is_alive():
            loop.call_soon_threadsafe(runtime.stop)
            thread.join(10)


def wait_for(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    """Poll ``condition`` until it holds; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.01)


def raw_request(api_key: int, version: int, correlation_id: int, body: bytes, flexible: bool = True) -> bytes:
    """A request frame around ``body`` as given, valid or not (client id ``raw``)."""
    client_id = b"raw"
    header = struct.pack(">hhih", api_key, version, correlation_id, len(client_id)) + client_id
    if flexible:
        header += b"\x00"
    payload = header + body
    return struct.pack(">i", len(payload)) + payload


def lone_runtime(bootstrap: BootstrapMetadata | None = None) -> ControllerRuntime:
    """A lone leader, which registers itself in process (its voter set names another port)."""
    log = MemoryLog()
    # Advertised port 0 stands for the port bound.
    identity = NodeIdentity(node_id=1, directory_id=Uuid(b"\x09" * 16), cluster_id="test-cluster-id-000000",
                            listeners=(Endpoint("CONTROLLER", "127.0.0.1", 0),))
    options = RuntimeOptions(listeners=(ListenerSpec("CONTROLLER", "127.0.0.1", 0),),
                             bootstrap_metadata=bootstrap, bootstrap_source="test")
    return ControllerRuntime(identity, RaftConfig(), FakeCore(1, log), log, options)
