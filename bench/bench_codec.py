"""DescribeQuorumResponse v2 decode and encode throughput, next to kafka-python's codec.

The message is what a leader answers for a large quorum: 5 voters, 200 observers and 5 nodes.
Both codecs work on the same bytes, taking turns so that they meet the same load; kafka-python's
figures are skipped if it is not installed. Each rate is the median over the rounds, each speed-up
the median of the rounds' ratios. Rates are messages per second of the process's CPU time, which a
shared machine's load moves less than the wall time (``--wall`` for the wall time).

    python bench/bench_codec.py [--seconds 2] [--rounds 10] [--wall]
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid
from collections.abc import Callable
from typing import Any

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.error_codes import ErrorCode
from kafka_admin_kraft.protocol.primitives import Uuid

R = messages.DescribeQuorumResponse
NOW_MS = 1_763_700_000_000


def quorum_response() -> Any:
    def replica(replica_id: int) -> Any:
        return R.ReplicaState(replica_id=replica_id, replica_directory_id=Uuid.random(),
                              log_end_offset=1_000_000 + replica_id, last_fetch_timestamp=NOW_MS,
                              last_caught_up_timestamp=NOW_MS - 5)

    partition = R.PartitionData(partition_index=0, leader_id=1, leader_epoch=7, high_watermark=1_000_000,
                                current_voters=[replica(i) for i in range(1, 6)],
                                observers=[replica(i) for i in range(100, 300)])
    nodes = [R.Node(node_id=i, listeners=[R.Listener(name="CONTROLLER", host=f"controller-{i}.example",
                                                     port=9093)]) for i in range(1, 6)]
    return R(error_message=None, nodes=nodes,
             topics=[R.TopicData(topic_name="__cluster_metadata", partitions=[partition])])


def peer_quorum_response(peer: Any, message: Any) -> Any:
    """The same response built from kafka-python's classes, as a server using it would."""
    topic_cls = peer.TopicData
    partition_cls = topic_cls.PartitionData
    replica_cls = partition_cls.ReplicaState

    def replicas(states: list[Any]) -> list[Any]:
        return [replica_cls(replica_id=s.replica_id,
                            replica_directory_id=uuid.UUID(bytes=s.replica_directory_id.bytes),
                            log_end_offset=s.log_end_offset, last_fetch_timestamp=s.last_fetch_timestamp,
                            last_caught_up_timestamp=s.last_caught_up_timestamp) for s in states]

    topics = [topic_cls(topic_name=t.topic_name, partitions=[partition_cls(
        partition_index=p.partition_index, error_code=p.error_code, error_message=p.error_message,
        leader_id=p.leader_id, leader_epoch=p.leader_epoch, high_watermark=p.high_watermark,
        current_voters=replicas(p.current_voters), observers=replicas(p.observers))
        for p in t.partitions]) for t in message.topics]
    nodes = [peer.Node(node_id=n.node_id, listeners=[peer.Node.Listener(name=x.name, host=x.host, port=x.port)
                                                     for x in n.listeners]) for n in message.nodes]
    return peer(version=2, error_code=ErrorCode.NONE, error_message=None, topics=topics, nodes=nodes)


def rate(operation: Callable[[], object], seconds: float, clock: Callable[[], float]) -> float:
    """Operations per second of ``clock`` (CPU or wall time), measured over at least ``seconds``."""
    count, start = 0, clock()
    while True:
        for _ in range(10):
            operation()
        count += 10
        elapsed = clock() - start
        if elapsed >= seconds:
            return count / elapsed


def take_turns(operations: dict[str, Callable[[], object]], seconds: float, rounds: int,
               clock: Callable[[], float]) -> dict[str, list[float]]:
    """The rate of each operation in each of ``rounds`` rounds, ``seconds`` in all per operation.

    Within a round the operations run one after the other for a short slice each, every other round
    in reverse order, so that neighbours (a codec and its peer) meet the same load on a shared
    machine; a ratio taken within one round is then fair.
    """
    for operation in operations.values():
        for _ in range(20):
            operation()
    found: dict[str, list[float]] = {name: [] for name in operations}
    order = list(operations)
    for _ in range(rounds):
        for name in order:
            found[name].append(rate(operations[name], seconds / rounds, clock))
        order.reverse()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=2.0, help="time per figure")
    parser.add_argument("--rounds", type=int, default=10, help="turns the figures take (see take_turns)")
    parser.add_argument("--wall", action="store_true", help="rates per second of wall time, not CPU time")
    args = parser.parse_args()
    clock = time.perf_counter if args.wall else time.process_time
    message = quorum_response()
    body = message.encode(2)
    assert R.decode(body, 2) == message
    print(f"message: DescribeQuorumResponse v2, 5 voters, 200 observers, 5 nodes, {len(body)} bytes")
    ours: dict[str, Callable[[], object]] = {"decode": lambda: R.decode(body, 2),
                                             "encode": lambda: message.encode(2)}
    try:
        import kafka
        from kafka.protocol.admin.cluster import DescribeQuorumResponse as PeerResponse
    except ImportError:
        found = take_turns({f"kafka-admin-kraft {kind}": run for kind, run in ours.items()}, args.seconds,
                           args.rounds, clock)
        for name, rates in found.items():
            print(f"{name}: {statistics.median(rates):,.0f} msg/s")
        print("kafka-python: not installed, no comparison")
        return
    peer = PeerResponse.decode(body, version=2)
    assert peer.topics[0].partitions[0].observers[199].replica_id == 299
    peer_message = peer_quorum_response(PeerResponse, message)
    assert bytes(peer_message.encode(version=2)) == body
    theirs: dict[str, Callable[[], object]] = {"decode": lambda: PeerResponse.decode(body, version=2),
                                               "encode": lambda: peer_message.encode(version=2)}
    peer_name = f"kafka-python {kafka.__version__}"
    operations: dict[str, Callable[[], object]] = {}
    for kind in ours:
        operations[f"kafka-admin-kraft {kind}"] = ours[kind]
        operations[f"{peer_name} {kind}"] = theirs[kind]
    found = take_turns(operations, args.seconds, args.rounds, clock)
    for name, rates in found.items():
        print(f"{name}: {statistics.median(rates):,.0f} msg/s")
    for kind in ours:
        pairs = zip(found[f"kafka-admin-kraft {kind}"], found[f"{peer_name} {kind}"], strict=True)
        ratios = sorted(a / b for a, b in pairs)
        print(f"{kind} speed-up over kafka-python: {statistics.median(ratios):.1f}x "
              f"(rounds from {ratios[0]:.1f}x to {ratios[-1]:.1f}x)")


if __name__ == "__main__":
    main()
