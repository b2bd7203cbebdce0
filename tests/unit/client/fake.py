"""An in-memory Kafka network for the admin client: fake nodes answer decoded requests.

``FakeNetwork`` is a sync transport (``clock``/``sleep``/``connect``) on a fake clock;
``AsyncFakeNetwork`` wraps it for ``AsyncAdmin``. Each ``FakeNode`` answers with ``handlers[api_key]``
(``fn(node, version, body) -> response | HANG | DROP | bytes``, bytes being sent as the response body
after the right correlation id); defaults model a KRaft controller quorum. ``admin(net)`` is an
``Admin`` on the network with short backoffs and timeouts (``FAST``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kafka_admin_kraft import Admin
from kafka_admin_kraft.client.config import Address, format_address
from kafka_admin_kraft.errors import KafkaConnectionError
from kafka_admin_kraft.protocol import framing, messages
from kafka_admin_kraft.protocol.primitives import Uuid

HANG = object()
DROP = object()
HOST = "10.0.0.1"
CLUSTER_ID = "MkU3OEVBNTcwNTJENDM2Qg"

ALL_APIS: dict[int, tuple[int, int]] = {
    18: (0, 4),
    60: (0, 2),
    55: (0, 3),
    80: (0, 1),
    81: (0, 0),
    57: (0, 2),
    17: (0, 1),
    36: (0, 2),
    64: (0, 0),
    94: (0, 0),
}

Handler = Callable[["FakeNode", int, Any], Any]


@dataclass
class FakeNode:
    node_id: int
    port: int
    network: FakeNetwork
    versions: dict[int, tuple[int, int]] = field(default_factory=lambda: dict(ALL_APIS))
    handlers: dict[int, Handler] = field(default_factory=dict)
    up: bool = True
    is_broker: bool = False
    fenced: bool = False
    """A fenced broker: DescribeCluster lists it only when asked for fenced brokers (v2+)."""
    directory_id: Uuid = field(default_factory=Uuid.random)

    @property
    def address(self) -> Address:
        return (self.network.host, self.port)

    def answer(self, api_key: int, version: int, body: Any) -> Any:
        handler = self.handlers.get(api_key) or DEFAULT_HANDLERS[api_key]
        return handler(self, version, body)


class FakeNetwork:
    """Nodes on a fake clock. ``requests`` logs (node id, API name, version, body); ``opened`` holds
    every connection made."""

    def __init__(self, size: int = 3, leader: int | None = 1, *, brokers: int = 0) -> None:
        self.now = 1000.0
        self.host = HOST
        self.sleeps: list[float] = []
        self.nodes: dict[int, FakeNode] = {}
        self.leader = leader
        self.requests: list[tuple[int, str, int, Any]] = []
        self.connects: list[Address] = []
        self.opened: list[FakeConnection] = []
        self.registrations: set[int] = set()
        """Node ids with a registration, which UnregisterBroker / UnregisterController remove."""
        for i in range(1, size + 1):
            self.nodes[i] = FakeNode(i, 9090 + i, self)
        for i in range(101, 101 + brokers):
            self.nodes[i] = FakeNode(i, 9000 + i, self, is_broker=True)
        self.registrations.update(self.nodes)

    def controllers(self) -> str:
        return ",".join(f"{self.host}:{n.port}" for n in self.nodes.values() if not n.is_broker)

    def brokers(self) -> str:
        return ",".join(f"{self.host}:{n.port}" for n in self.nodes.values() if n.is_broker)

    def sent(self, api: str) -> list[tuple[int, int, Any]]:
        return [(node, version, body) for node, name, version, body in self.requests if name == api]

    # transport interface
    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def connect(self, address: Address, timeout: float) -> FakeConnection:
        self.connects.append(address)
        node = next((n for n in self.nodes.values() if n.address == address), None)
        if node is None or not node.up:
            raise KafkaConnectionError(format_address(address), "connection refused")
        conn = FakeConnection(self, node)
        self.opened.append(conn)
        return conn


class FakeConnection:
    def __init__(self, network: FakeNetwork, node: FakeNode) -> None:
        self.network = network
        self.node = node
        self.closed = False

    def exchange(self, frame: bytes, timeout: float) -> bytes:
        label = format_address(self.node.address)
        if self.closed or not self.node.up:
            raise KafkaConnectionError(label, "connection closed by the server")
        request = framing.decode_request(frame[4:])
        header = request.header
        api_key, version = header.request_api_key, header.request_api_version
        name = messages.request_class(api_key).NAME.removesuffix("Request")
        self.network.requests.append((self.node.node_id, name, version, request.body))
        theirs = self.node.versions.get(api_key)
        if api_key == 18 and (theirs is None or version > theirs[1]):
            low, high = theirs or (0, 0)
            response = messages.ApiVersionsResponse(
                error_code=35,
                api_keys=[
                    messages.ApiVersionsResponse.ApiVersion(api_key=18, min_version=low, max_version=high)
                ],
            )
            return framing.encode_response(response, 0, header.correlation_id)[4:]
        if theirs is None or not theirs[0] <= version <= theirs[1]:
            self.closed = True
            raise KafkaConnectionError(label, "connection closed by the server")
        response = self.node.answer(api_key, version, request.body)
        if response is HANG:
            self.network.now += timeout
            self.closed = True
            raise KafkaConnectionError(label, f"no response within {timeout:.3g} s", timed_out=True)
        if response is DROP:
            self.closed = True
            raise KafkaConnectionError(label, "connection closed by the server")
        if isinstance(response, bytes):
            return header.correlation_id.to_bytes(4, "big", signed=True) + response
        return framing.encode_response(response, version, header.correlation_id)[4:]

    def close(self) -> None:
        self.closed = True


class AsyncFakeNetwork:
    """The same network for AsyncAdmin."""

    def __init__(self, network: FakeNetwork) -> None:
        self.network = network

    def clock(self) -> float:
        return self.network.now

    async def sleep(self, seconds: float) -> None:
        self.network.sleep(seconds)

    async def connect(self, address: Address, timeout: float) -> AsyncFakeConnection:
        return AsyncFakeConnection(self.network.connect(address, timeout))


class AsyncFakeConnection:
    def __init__(self, conn: FakeConnection) -> None:
        self.conn = conn

    async def exchange(self, frame: bytes, timeout: float) -> bytes:
        return self.conn.exchange(frame, timeout)

    async def close(self) -> None:
        self.conn.close()


# ------------------------------------------------------------------ default handlers: a KRaft quorum


def api_versions(node: FakeNode, version: int, body: Any) -> Any:
    r = messages.ApiVersionsResponse
    return r(
        api_keys=[
            r.ApiVersion(api_key=k, min_version=lo, max_version=hi) for k, (lo, hi) in node.versions.items()
        ],
        supported_features=[
            r.SupportedFeatureKey(name="metadata.version", min_version=7, max_version=29),
            r.SupportedFeatureKey(name="kraft.version", min_version=0, max_version=1),
        ],
        finalized_features=[
            r.FinalizedFeatureKey(name="metadata.version", min_version_level=29, max_version_level=29)
        ],
        finalized_features_epoch=42,
    )


def describe_cluster(node: FakeNode, version: int, body: Any) -> Any:
    r = messages.DescribeClusterResponse
    net = node.network
    wanted = body.endpoint_type if version >= 1 else 1
    if node.is_broker != (wanted == 1):
        return r(error_code=114, error_message="wrong endpoint type", endpoint_type=wanted)
    same_kind = [n for n in net.nodes.values() if n.is_broker == node.is_broker]
    controller = net.leader if not node.is_broker else same_kind[0].node_id
    with_fenced = version >= 2 and body.include_fenced_brokers
    return r(
        cluster_id=CLUSTER_ID,
        endpoint_type=wanted,
        controller_id=controller if controller is not None else -1,
        brokers=[
            r.DescribeClusterBroker(broker_id=n.node_id, host=net.host, port=n.port, is_fenced=n.fenced)
            for n in same_kind
            if with_fenced or not n.fenced
        ],
    )


def leader_of(node: FakeNode) -> FakeNode | None:
    """The node that answers leader-only requests: itself if leader; brokers forward to the leader."""
    net = node.network
    if node.is_broker:
        return net.nodes.get(net.leader) if net.leader is not None else None
    return node if net.leader == node.node_id else None


def describe_quorum(node: FakeNode, version: int, body: Any) -> Any:
    r = messages.DescribeQuorumResponse
    net = node.network
    leader = leader_of(node)
    if leader is None:
        return r(
            topics=[
                r.TopicData(
                    topic_name="__cluster_metadata",
                    partitions=[
                        r.PartitionData(partition_index=0, error_code=6, error_message="not the leader")
                    ],
                )
            ]
        )
    voters = [n for n in net.nodes.values() if not n.is_broker]

    def state(n: FakeNode) -> Any:
        directory = n.directory_id if version >= 2 else Uuid(bytes(16))
        return r.ReplicaState(
            replica_id=n.node_id,
            replica_directory_id=directory,
            log_end_offset=100,
            last_fetch_timestamp=-1 if n is leader else 5000,
            last_caught_up_timestamp=-1 if n is leader else 4000,
        )

    partition = r.PartitionData(
        partition_index=0,
        leader_id=leader.node_id,
        leader_epoch=7,
        high_watermark=100,
        current_voters=[state(n) for n in voters],
        committed_voters=[state(n) for n in voters[:-1]] if version >= 3 else [],
        observers=[r.ReplicaState(replica_id=101, log_end_offset=90)],
    )
    return r(
        topics=[r.TopicData(topic_name="__cluster_metadata", partitions=[partition])],
        nodes=[
            r.Node(node_id=n.node_id, listeners=[r.Listener(name="CONTROLLER", host=net.host, port=n.port)])
            for n in voters
        ]
        if version >= 2
        else [],
    )


def add_raft_voter(node: FakeNode, version: int, body: Any) -> Any:
    if leader_of(node) is None:
        return messages.AddRaftVoterResponse(error_code=6, error_message="not the leader")
    return messages.AddRaftVoterResponse()


def remove_raft_voter(node: FakeNode, version: int, body: Any) -> Any:
    if leader_of(node) is None:
        return messages.RemoveRaftVoterResponse(error_code=6, error_message="not the leader")
    return messages.RemoveRaftVoterResponse()


def unregister_broker(node: FakeNode, version: int, body: Any) -> Any:
    r = messages.UnregisterBrokerResponse
    net = node.network
    if leader_of(node) is None:
        return r(error_code=41, error_message="not the active controller")
    if body.broker_id not in net.registrations:
        return r(error_code=102, error_message=f"Broker ID {body.broker_id} is not currently registered")
    net.registrations.discard(body.broker_id)
    return r(error_message="")


def unregister_controller(node: FakeNode, version: int, body: Any) -> Any:
    """Refuses a voter (every controller of the network) with INVALID_REQUEST."""
    r = messages.UnregisterControllerResponse
    net = node.network
    wanted = body.controller_id
    if leader_of(node) is None:
        return r(error_code=41, error_message="not the active controller")
    if wanted not in net.registrations:
        return r(error_code=136, error_message=f"Controller {wanted} is not registered.")
    if wanted in net.nodes and not net.nodes[wanted].is_broker:
        return r(error_code=42, error_message=f"Controller {wanted} is a voter.")
    net.registrations.discard(wanted)
    return r(error_message="")


def update_features(node: FakeNode, version: int, body: Any) -> Any:
    r = messages.UpdateFeaturesResponse
    if leader_of(node) is None:
        return r(error_code=41, error_message="not the active controller")
    results = [
        r.UpdatableFeatureResult(feature=u.feature, error_message="NONE") for u in body.feature_updates
    ]
    return r(results=results if version < 2 else [])


def sasl_handshake(node: FakeNode, version: int, body: Any) -> Any:
    """A listener without SASL: Kafka's KafkaApis and ControllerApis refuse the handshake."""
    return messages.SaslHandshakeResponse(error_code=34, mechanisms=[])


DEFAULT_HANDLERS: dict[int, Handler] = {
    17: sasl_handshake,
    18: api_versions,
    60: describe_cluster,
    55: describe_quorum,
    80: add_raft_voter,
    81: remove_raft_voter,
    57: update_features,
    64: unregister_broker,
    94: unregister_controller,
}


FAST = {
    "retry_backoff_ms": 100,
    "retry_backoff_max_ms": 1000,
    "request_timeout_ms": 5000,
    "default_api_timeout_ms": 20000,
}
"""Client options for the fake clock: short backoffs, and timeouts a test reaches in a few fake seconds."""


def admin(net: FakeNetwork, *, brokers: bool = False, **options: Any) -> Admin:
    """An ``Admin`` on ``net`` with the ``FAST`` options (overridden by ``options``), bootstrapping from
    its controllers, or from its brokers."""
    opts = {**FAST, **options}
    if brokers:
        return Admin(bootstrap_servers=net.brokers(), transport=net, **opts)
    return Admin(bootstrap_controllers=net.controllers(), transport=net, **opts)
