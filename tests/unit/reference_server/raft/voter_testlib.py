"""What the tests of the voter changes share: a quorum of three voters (and observers) with a leader,
requests sent to a replica and their answers, the bodies of AddRaftVoter, RemoveRaftVoter and
UpdateRaftVoter, the texts Kafka's answers give replica keys and voter sets, and malformed hosts."""

from __future__ import annotations

from simulation.memory import MemoryLog

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft_server.raft.api import Address, Endpoint, RaftConfig, ReplicaKey, VoterInfo, VoterSet
from unit.reference_server.raft.raft_testlib import (
    CLUSTER,
    Network,
    Replica,
    endpoint,
    make_replica,
    request,
    uuid,
    voter_set,
)

VOTERS = voter_set([1, 2, 3])
BOOTSTRAP = (Address("n1", 9001), Address("n2", 9002), Address("n3", 9003))


def cluster(observers: tuple[int, ...] = (4,), *, voters: VoterSet = VOTERS, kraft_version: int = 1,
            config: RaftConfig | None = None, until: int = 4000) -> Network:
    """The voters (bootstrapped with kraft.version 1 unless told) and observers, run until one leads."""
    replicas = [make_replica(node, voters, seed=node, kraft_version=kraft_version)
                for node in sorted(voters.voters)]
    for node in observers:
        replicas.append(make_replica(node, voters, seed=node, log=MemoryLog(), bootstrap_servers=BOOTSTRAP,
                                     config=config))
    network = Network(replicas)
    network.run(until=until)
    assert network.leader() is not None
    return network


def leader(network: Network) -> Replica:
    """The replica leading ``network``."""
    replica = network.leader()
    assert replica is not None
    return replica


_ids = iter(range(1, 1000))


def ask(network: Network, node: int, api_key: int, body: Struct, version: int) -> int:
    """Hand ``body`` to ``node`` as a client request and deliver what follows; the request id."""
    request_id = next(_ids)
    network.replicas[node].core.handle_request(request(api_key, body, version, request_id), network.now)
    network.pump()
    return request_id


def add_body(voter: int, directory: Uuid | None = None, *, listeners: list[Endpoint] | None = None,
             cluster_id: str | None = CLUSTER, ack: bool = True) -> messages.AddRaftVoterRequest:
    return messages.AddRaftVoterRequest(
        cluster_id=cluster_id, timeout_ms=30000, voter_id=voter,
        voter_directory_id=uuid(voter) if directory is None else directory,
        listeners=[messages.AddRaftVoterRequest.Listener(name=e.name, host=e.host, port=e.port)
                   for e in (listeners if listeners is not None else [endpoint(voter)])],
        ack_when_committed=ack)


def remove_body(voter: int, directory: Uuid | None = None, *,
                cluster_id: str | None = CLUSTER) -> messages.RemoveRaftVoterRequest:
    return messages.RemoveRaftVoterRequest(cluster_id=cluster_id, voter_id=voter,
                                           voter_directory_id=uuid(voter) if directory is None else directory)


def update_body(network: Network, voter: int, *, epoch: int | None = None, directory: Uuid | None = None,
                listeners: list[Endpoint] | None = None, low: int = 0, high: int = 1,
                cluster_id: str | None = CLUSTER) -> messages.UpdateRaftVoterRequest:
    return messages.UpdateRaftVoterRequest(
        cluster_id=cluster_id, current_leader_epoch=leader(network).core.epoch if epoch is None else epoch,
        voter_id=voter, voter_directory_id=uuid(voter) if directory is None else directory,
        listeners=[messages.UpdateRaftVoterRequest.Listener(name=e.name, host=e.host, port=e.port)
                   for e in (listeners if listeners is not None else [endpoint(voter)])],
        k_raft_version_feature=messages.UpdateRaftVoterRequest.KRaftVersionFeature(
            min_supported_version=low, max_supported_version=high))


def answer(network: Network, request_id: int) -> tuple[int, str | None]:
    """Error code and message of the AddRaftVoter or RemoveRaftVoter answer to ``request_id``."""
    body = network.client_replies.pop(request_id)
    assert isinstance(body, messages.AddRaftVoterResponse | messages.RemoveRaftVoterResponse)
    return body.error_code, body.error_message


def key_text(node: int, directory: Uuid | None = None) -> str:
    """A replica key as Kafka's messages print it."""
    return str(ReplicaKey(node, uuid(node) if directory is None else directory))


def voters_text(ids: list[int]) -> str:
    """A voter set as Kafka's messages print it."""
    return "[" + ", ".join(key_text(i) for i in ids) + "]"


def static_voters(ids: list[int]) -> VoterSet:
    """``controller.quorum.voters``: no directory ids, kraft.version 0..0."""
    return VoterSet({i: VoterInfo(ReplicaKey(i), (endpoint(i),), 0, 0) for i in ids})


BAD_HOSTS = {  # each malformed host and what the refusal says of it
    "12..0.0.1": "'12..0.0.1' has an empty label",
    "a" * 300: "has a label longer than 63 characters",
    "n4\x00evil": "contains the character '\\x00' (U+0000)",
    "": "'' is empty",
    "host name": "contains the character ' ' (U+0020)",
}
