"""The one table of the APIs the reference server serves, and what a handler is.

Every handler module registers the APIs it answers once, when it is imported (``register``), as
franz-go's kfake has one file per API: the API key; the handler for each listener kind that serves
it; and, for an API a broker forwards to the active controller, the answer a broker gives when no
controller can be reached. A handler may only be given for a listener kind the API's spec lists
(``LISTENERS``, Kafka's ``listeners``). The versions served are the node's Kafka line's
(``kafka_line.ServerLine.versions``): ApiVersions (``served_versions``), the runtime's and the
broker's dispatch (``api``, ``accepts``) and the controller's check of forwarded requests
(``forwarded``) read this table and the line, nothing else. The
package ``kafka_admin_kraft_server.handlers`` imports every handler module, so the table is whole
once anything in it has been imported.

Listener kinds are the specs' names: ``controller`` (the listeners named in
``controller.listener.names``) and ``broker`` (the client listeners of a node with the broker
role). The raft APIs name the consensus core as their handler (``handlers.raft_apis``). SaslHandshake
and SaslAuthenticate have none: a SASL listener's session answers them before authentication
(``kafka_admin_kraft_server.security``), and ApiVersions lists them on SASL listeners only.

Adding an API takes its spec and one handler module that calls ``register`` (listed in
``handlers/__init__``), the operation on the cluster it needs (``kafka_admin_kraft.acl``) and the
answer it gives when refused (``handlers.error_responses``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from kafka_admin_kraft import acl
from kafka_admin_kraft.protocol import framing, messages
from kafka_admin_kraft.protocol.api_keys import ApiKey
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.records import ApiMessageAndVersion

from ..authorizer import StandardAuthorizer
from ..kafka_line import ServerLine
from ..raft.api import NodeIdentity, RaftDriverFacing, ReplicatedLog
from ..security import ANONYMOUS
from .view import BrokerView, ServerView

CONTROLLER: Final = acl.CONTROLLER
BROKER: Final = acl.BROKER

Answer = tuple[Struct, int] | None
"""A response and the version to encode it at; None closes the connection."""


@dataclass(frozen=True)
class Call:
    """One decoded request and where it came from, as a handler receives it."""

    request: framing.RequestFrame
    listener: str
    """The listener it arrived on (for a forwarded request: the one the Envelope arrived on)."""
    peer: str
    """The remote end of the connection, ``/<ip>:<port>``."""
    frame: bytes = b""
    """Its header and body as received, without the size prefix: what a broker forwards."""
    client_host: str = ""
    """The client's IP address, which a broker puts in the Envelope and ACL hosts are matched with."""
    principal: str = ""
    """The name of the client's principal (``ANONYMOUS`` when empty), which a broker puts in the
    Envelope and the authorizer decides for."""
    principal_type: str = "User"
    """The type of the client's principal: ``User``, or what a forwarding broker said."""
    protocol: str = "PLAINTEXT"
    """The security protocol of the listener the request (or its Envelope) arrived on."""
    connection_id: str = ""
    """Kafka's connection id: ``<local ip>:<port>-<remote ip>:<port>-<index>``."""
    processor: int = 0
    """The network processor Kafka would have handed the connection to (named in refusals)."""
    session: int = 0
    """The identity hash of the session object a Kafka refusal prints (``Session@<hex>``)."""
    envelope: Call | None = None
    """For a request a broker forwarded: the Envelope it arrived in."""

    @property
    def kafka_principal(self) -> str:
        """The principal as Kafka prints it and ACLs name it: ``User:alice``."""
        return f"{self.principal_type}:{self.principal or ANONYMOUS}"

    @property
    def api_key(self) -> int:
        return self.request.header.request_api_key

    @property
    def version(self) -> int:
        return self.request.header.request_api_version

    @property
    def body(self) -> Struct | None:
        return self.request.body


class ControllerRole(Protocol):
    """What a handler may use of a node's controller role (the runtime): its state, the core, and the
    answers that wait for a commit."""

    @property
    def identity(self) -> NodeIdentity: ...

    @property
    def core(self) -> RaftDriverFacing: ...

    @property
    def log(self) -> ReplicatedLog: ...

    @property
    def authorizer(self) -> StandardAuthorizer | None:
        """The node's authorizer, None when ``authorizer.class.name`` is not set."""

    @property
    def active(self) -> bool:
        """Whether this node is the active controller (leads, and its epoch's first offset is
        committed and applied)."""

    def now_ms(self) -> int: ...

    def view(self, listener: str) -> ServerView: ...

    def uncommitted_levels(self) -> Mapping[str, int]:
        """Feature levels appended but not committed yet, in append order: the controller's own view."""

    def uncommitted_records(self) -> list[Struct]:
        """The records handed to ``when_committed`` and not committed yet, in append order: what
        Kafka's controller has replayed already but the committed image does not show."""

    def wake(self) -> None:
        """Poll the core soon: something was handed to it."""

    def live_brokers(self, now_ms: int) -> frozenset[int]:
        """The brokers whose session has not expired."""

    def renew_session(self, broker_id: int, now_ms: int) -> None: ...

    async def when_committed(self, offset: int, response: Struct, not_controller: Callable[[], Struct],
                             changes: Mapping[str, int] | None = None,
                             records: Sequence[ApiMessageAndVersion] = ()) -> Struct | None:
        """``response`` once ``offset`` is committed and applied, ``not_controller()`` if this node
        stops leading first; None when the connection went away. ``changes``: the feature levels the
        records finalize; ``records``: those appended up to ``offset`` (``uncommitted_records``)."""

    async def ask_core(self, call: Call) -> Struct | None:
        """Hand a raft request to the consensus core and wait for its answer."""

    async def dispatch(self, call: Call) -> Answer:
        """The answer to a request on a controller listener; None when it is not served there."""


class BrokerRole(Protocol):
    """What a handler may use of a node's broker role (``broker.BrokerFrontend``)."""

    @property
    def authorizer(self) -> StandardAuthorizer | None:
        """The node's authorizer, None when ``authorizer.class.name`` is not set."""

    def server_view(self, listener: str) -> ServerView: ...

    def view(self, listener: str) -> BrokerView: ...

    async def forward(self, call: Call) -> Struct | None:
        """The controller's answer to ``call`` forwarded in an Envelope, or the API's answer for an
        unreachable controller; None to close the client's connection (the controller refused the
        Envelope's version)."""


ControllerHandler = Callable[[ControllerRole, Call], Awaitable[Answer]]
BrokerHandler = Callable[[BrokerRole, Call], Awaitable[Answer]]
UnreachableAnswer = Callable[[int, int, Struct | None], Struct]
"""(API version, the broker's node id, the request) -> what a broker answers when no controller can be
reached: the error that makes clients retry, in the API's own response (one result per item of the
request where the response has them)."""


@dataclass(frozen=True)
class Api:
    """One row of the table."""

    key: ApiKey
    request: type[Struct]
    """The generated request class: the versions the codec speaks and the spec's listener kinds."""
    controller: ControllerHandler | None = None
    broker: BrokerHandler | None = None
    unreachable: UnreachableAnswer | None = None
    """Set for the APIs a broker forwards to the active controller."""

    @property
    def versions(self) -> tuple[int, int]:
        return self.request.VERSIONS

    @property
    def forwarded(self) -> bool:
        return self.unreachable is not None

    def serves(self, kind: str) -> bool:
        return (self.controller if kind == CONTROLLER else self.broker) is not None


_TABLE: dict[int, Api] = {}


async def forward(node: BrokerRole, call: Call) -> Answer:
    """A broker listener's handler of a forwarded API: the active controller answers."""
    body = await node.forward(call)
    return None if body is None else (body, call.version)


def register(key: ApiKey, *, controller: ControllerHandler | None = None,
             broker: BrokerHandler | None = None, forwarded: UnreachableAnswer | None = None) -> Api:
    """Add an API to the table, once. ``forwarded``: a broker forwards the API, answering with this
    when no controller can be reached (its broker handler is then ``forward``)."""
    request = messages.request_class(key)
    if key in _TABLE:
        raise ValueError(f"{request.NAME} is registered twice")
    if forwarded is not None:
        if broker is not None:
            raise ValueError(f"{request.NAME}: a forwarded API has no broker handler of its own")
        broker = forward
    for kind, handler in ((CONTROLLER, controller), (BROKER, broker)):
        if handler is not None and kind not in request.LISTENERS:
            raise ValueError(f"{request.NAME} is served by {' and '.join(request.LISTENERS)} listeners in "
                             f"Kafka, not by {kind} listeners")
    entry = Api(key, request, controller, broker, forwarded)
    _TABLE[key] = entry
    return entry


def api(key: int) -> Api | None:
    """The row of an API key, None when the server does not serve it."""
    return _TABLE.get(key)


def served(kind: str) -> tuple[ApiKey, ...]:
    """The API keys a listener of ``kind`` serves, in key order."""
    return tuple(sorted(entry.key for entry in _TABLE.values() if entry.serves(kind)))


def served_versions(kind: str, line: ServerLine, *,
                    unstable_api_versions: bool = False) -> dict[int, tuple[int, int]]:
    """API key -> the versions a listener of ``kind`` serves on a node of ``line``, in key order (an
    API of which the line serves no version is left out)."""
    found = {}
    for key in served(kind):
        versions = line.versions(key, unstable_api_versions=unstable_api_versions)
        if versions is not None:
            found[int(key)] = versions
    return found


def accepts(kind: str, key: int, version: int, line: ServerLine, *,
            unstable_api_versions: bool = False) -> bool:
    """Whether a listener of ``kind`` on a node of ``line`` takes the request: an API it serves at a
    version the line has. Kafka closes the connection otherwise (ApiVersions has its own answer)."""
    entry = _TABLE.get(key)
    if entry is None or not entry.serves(kind):
        return False
    versions = line.versions(key, unstable_api_versions=unstable_api_versions)
    return versions is not None and versions[0] <= version <= versions[1]


def forwarded(key: int) -> bool:
    """Whether a broker forwards the API (so a controller accepts it inside an Envelope)."""
    entry = _TABLE.get(key)
    return entry is not None and entry.forwarded


__all__ = ["BROKER", "CONTROLLER", "Answer", "Api", "BrokerHandler", "BrokerRole", "Call",
           "ControllerHandler", "ControllerRole", "UnreachableAnswer", "accepts", "api", "forward",
           "forwarded", "register", "served", "served_versions"]
