"""Vote granting (KIP-595 + KIP-996 pre-vote), elections, the start-of-epoch control batch, and
elections among voters of different Kafka lines (a 3.9 voter: no pre-vote, Vote v0-1)."""

from __future__ import annotations

import pytest

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.error_codes import ErrorCode
from kafka_admin_kraft.protocol.exceptions import EncodeError
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft.protocol.primitives import ZERO_UUID
from kafka_admin_kraft.records import decode_control_batch
from kafka_admin_kraft_server.raft import rpc
from kafka_admin_kraft_server.raft.api import OutboundRequest, RaftConfig
from unit.reference_server.raft.raft_testlib import (
    Network,
    Replica,
    make_replica,
    noop_batch,
    request,
    single_reply,
    uuid,
    vote,
    voter_set,
)

VOTE = 52
VOTERS = voter_set([1, 2, 3])


def answer(
    replica: Replica, body: messages.VoteRequest, now: int = 0, version: int = 2
) -> messages.VoteResponse.PartitionData:
    replica.core.handle_request(request(VOTE, body, version), now)
    response = single_reply(replica, now)
    assert isinstance(response, messages.VoteResponse)
    assert response.error_code == 0
    return response.topics[0].partitions[0]


def with_log(replica_id: int, epochs: list[int]) -> Replica:
    """A replica whose log holds one batch per listed epoch (offsets 0, 1, ...)."""
    replica = make_replica(replica_id, VOTERS)
    for offset, epoch in enumerate(epochs):
        replica.log.append(noop_batch(offset, epoch))
    replica.log.flush()
    return make_replica(replica_id, VOTERS, log=replica.log)


def test_grants_one_vote_per_epoch_and_persists_it_before_answering() -> None:
    replica = make_replica(1, VOTERS)
    assert replica.core.role == "unattached" and replica.core.epoch == 0
    granted = answer(replica, vote(epoch=1, candidate=2, last_epoch=0, last_offset=0))
    assert granted.vote_granted and granted.leader_epoch == 1 and granted.leader_id == -1
    state = replica.store.state
    assert state is not None and (state.leader_epoch, state.voted_id, state.voted_directory_id) == (
        1,
        2,
        uuid(2),
    )
    assert state.data_version == 1
    # Another candidate in the same epoch is refused; the first one is granted again.
    assert not answer(replica, vote(epoch=1, candidate=3, last_epoch=0, last_offset=0)).vote_granted
    assert answer(replica, vote(epoch=1, candidate=2, last_epoch=0, last_offset=0)).vote_granted
    # The same id with another directory id is another replica.
    other_disk = vote(epoch=1, candidate=2, last_epoch=0, last_offset=0, candidate_directory=uuid(42))
    assert not answer(replica, other_disk).vote_granted
    # A vote survives a restart: quorum-state was written.
    restarted = make_replica(1, VOTERS, log=replica.log, store=replica.store)
    assert restarted.core.voted_key is not None and restarted.core.voted_key.id == 2
    assert not answer(restarted, vote(epoch=1, candidate=3, last_epoch=0, last_offset=0)).vote_granted


def test_candidate_log_must_be_at_least_as_up_to_date() -> None:
    replica = with_log(1, [1, 1, 3])  # last epoch 3, end offset 3
    assert not answer(replica, vote(epoch=5, candidate=2, last_epoch=2, last_offset=10)).vote_granted
    assert not answer(replica, vote(epoch=5, candidate=3, last_epoch=3, last_offset=2)).vote_granted
    # Rejections do not use up the vote of epoch 5.
    assert replica.store.state is not None and replica.store.state.voted_id == -1
    assert answer(replica, vote(epoch=5, candidate=2, last_epoch=3, last_offset=3)).vote_granted
    replica = with_log(1, [1, 1, 3])
    assert answer(replica, vote(epoch=6, candidate=3, last_epoch=4, last_offset=1)).vote_granted


def test_epoch_checks() -> None:
    replica = make_replica(1, VOTERS)
    answer(replica, vote(epoch=4, candidate=2, last_epoch=0, last_offset=0))
    stale = answer(replica, vote(epoch=3, candidate=3, last_epoch=0, last_offset=0))
    assert (
        stale.error_code == 74 and not stale.vote_granted and stale.leader_epoch == 4
    )  # FENCED_LEADER_EPOCH
    # A standard vote's last epoch must be below the candidate epoch; a pre-vote's may equal it.
    assert answer(replica, vote(epoch=4, candidate=2, last_epoch=4, last_offset=0)).error_code == 42
    assert (
        answer(replica, vote(epoch=4, candidate=2, last_epoch=4, last_offset=0, pre_vote=True)).error_code
        == 0
    )
    assert (
        answer(replica, vote(epoch=4, candidate=2, last_epoch=5, last_offset=0, pre_vote=True)).error_code
        == 42
    )
    assert answer(replica, vote(epoch=4, candidate=2, last_epoch=0, last_offset=-1)).error_code == 42


def test_cluster_id_and_voter_key_checks() -> None:
    replica = make_replica(1, VOTERS)
    replica.core.handle_request(request(VOTE, vote(1, 2, 0, 0, cluster_id="another-cluster"), 2), 0)
    response = single_reply(replica, 0)
    assert isinstance(response, messages.VoteResponse)
    assert response.error_code == 104 and response.topics == []  # INCONSISTENT_CLUSTER_ID
    assert answer(replica, vote(1, 2, 0, 0, cluster_id=None)).vote_granted  # a null cluster id is accepted
    # VoterId / VoterDirectoryId naming another replica: INVALID_VOTER_KEY (v1+).
    wrong_id = answer(replica, vote(2, 2, 0, 0, voter=3))
    assert wrong_id.error_code == 125 and not wrong_id.vote_granted
    wrong_disk = answer(replica, vote(2, 2, 0, 0, voter=1, voter_directory=uuid(77)))
    assert wrong_disk.error_code == 125
    assert answer(replica, vote(2, 2, 0, 0, voter=1, voter_directory=uuid(1))).vote_granted
    assert answer(replica, vote(3, 2, 0, 0, voter=1, voter_directory=ZERO_UUID)).vote_granted
    # Version 0 has no voter key: not checked.
    assert answer(replica, vote(4, 2, 0, 0, voter=3), version=0).vote_granted


def test_pre_vote_is_neither_persisted_nor_epoch_bumping() -> None:
    replica = make_replica(1, VOTERS)
    writes = replica.store.writes
    granted = answer(replica, vote(epoch=0, candidate=2, last_epoch=0, last_offset=0, pre_vote=True))
    assert granted.vote_granted and replica.core.epoch == 0 and replica.store.writes == writes
    # Pre-votes are not binding: both prospectives get one, and a real vote is still free.
    assert answer(
        replica, vote(epoch=0, candidate=3, last_epoch=0, last_offset=0, pre_vote=True)
    ).vote_granted
    assert answer(replica, vote(epoch=1, candidate=3, last_epoch=0, last_offset=0)).vote_granted
    # After voting, pre-votes still only look at the logs.
    assert answer(
        replica, vote(epoch=1, candidate=2, last_epoch=0, last_offset=0, pre_vote=True)
    ).vote_granted


def test_a_follower_that_hears_from_its_leader_rejects_pre_votes() -> None:
    network = Network([make_replica(node, VOTERS, seed=node) for node in (1, 2, 3)])
    network.run(until=5000)
    leader = network.leader()
    assert leader is not None
    follower = next(r for r in network.replicas.values() if r is not leader)
    assert follower.core.role == "follower"
    end = follower.log.end_offset()
    ask = vote(
        epoch=follower.core.epoch,
        candidate=leader.node_id % 3 + 1,
        last_epoch=follower.log.last_epoch(),
        last_offset=end,
        pre_vote=True,
    )
    rejected = answer(follower, ask, network.now)
    assert not rejected.vote_granted and rejected.leader_id == leader.node_id
    # A standard vote in a newer epoch moves it on and is granted (its log is as long).
    newer = vote(
        epoch=follower.core.epoch + 1,
        candidate=3 if follower.node_id != 3 else 2,
        last_epoch=follower.log.last_epoch(),
        last_offset=end,
    )
    assert answer(follower, newer, network.now).vote_granted
    assert follower.core.role == "unattached"


def test_leader_and_candidate_refuse_votes_in_their_epoch() -> None:
    network = Network([make_replica(node, VOTERS, seed=node) for node in (1, 2, 3)])
    network.run(until=5000)
    leader = network.leader()
    assert leader is not None
    epoch, end = leader.core.epoch, leader.log.end_offset()
    assert not answer(leader, vote(epoch, 2, epoch - 1, end + 10), network.now).vote_granted
    assert not answer(leader, vote(epoch, 2, epoch, end + 10, pre_vote=True), network.now).vote_granted
    assert leader.core.is_leader


def test_election_through_pre_vote_and_the_leader_change_batch() -> None:
    replicas = [make_replica(node, VOTERS, seed=node) for node in (1, 2, 3)]
    network = Network(replicas)
    network.run(until=5000)
    leader = network.leader()
    assert leader is not None and leader.core.epoch == 1
    assert all(r.core.epoch == 1 and r.core.leader_id == leader.node_id for r in replicas)
    state = leader.store.state
    assert state is not None and (state.leader_id, state.leader_epoch, state.voted_id) == (
        leader.node_id,
        1,
        leader.node_id,
    )
    first = next(iter(leader.log.batches(0)))
    assert first.is_control and first.partition_leader_epoch == 1 and first.base_offset == 0
    values = [record.value for record in decode_control_batch(first)]
    change = values[0]
    assert isinstance(change, messages.LeaderChangeMessage)
    assert change.leader_id == leader.node_id
    assert [v.voter_id for v in change.voters] == [1, 2, 3]
    assert leader.node_id in [v.voter_id for v in change.granting_voters]
    assert len(change.granting_voters) >= 2
    # kraft.version 1 and the voters only in the bootstrap snapshot: KRaftVersion + Voters follow.
    assert isinstance(values[1], messages.KRaftVersionRecord) and values[1].k_raft_version == 1
    assert isinstance(values[2], messages.VotersRecord) and [v.voter_id for v in values[2].voters] == [
        1,
        2,
        3,
    ]
    # The high watermark passes the LeaderChange batch on every replica.
    assert all(r.core.high_watermark >= 1 for r in replicas)


def test_static_quorum_leader_change_batch_has_no_voters_record() -> None:
    static = voter_set([1, 2, 3], directories=False)
    replicas = [make_replica(node, static, kraft_version=0, seed=node) for node in (1, 2, 3)]
    network = Network(replicas)
    network.run(until=5000)
    leader = network.leader()
    assert leader is not None
    first = next(iter(leader.log.batches(0)))
    values = [record.value for record in decode_control_batch(first)]
    assert len(values) == 1 and isinstance(values[0], messages.LeaderChangeMessage)
    state = leader.store.state
    assert state is not None and state.data_version == 0 and state.current_voters == (1, 2, 3)


def test_single_voter_elects_itself_at_once() -> None:
    replica = make_replica(1, voter_set([1]))
    result = replica.core.poll(0)
    assert replica.core.is_leader and replica.core.epoch == 1
    assert result.committed_offset == replica.log.end_offset() == 3  # LeaderChange, KRaftVersion, Voters


def test_rejected_candidate_backs_off_and_retries_with_pre_vote() -> None:
    config = RaftConfig(election_timeout_ms=100, election_backoff_max_ms=200)
    replica = make_replica(1, VOTERS, config=config, seed=3)
    replica.core.poll(0)
    result = replica.core.poll(1000)
    assert replica.core.role == "prospective"
    pre_votes = [send for send in result.sends if send.api_key == VOTE]
    assert len(pre_votes) == 2
    assert all(
        isinstance(s.body, messages.VoteRequest)
        and s.body.topics[0].partitions[0].pre_vote
        and s.body.topics[0].partitions[0].replica_epoch == 0
        for s in pre_votes
    )
    # One pre-vote is enough with our own: candidate at epoch 1, vote for ourselves persisted.
    granted = messages.VoteResponse(
        topics=[
            messages.VoteResponse.TopicData(
                topic_name="__cluster_metadata",
                partitions=[
                    messages.VoteResponse.PartitionData(leader_epoch=0, leader_id=-1, vote_granted=True)
                ],
            )
        ]
    )
    replica.core.handle_response(pre_votes[0].request_id, granted, 1001)
    assert replica.core.role == "candidate" and replica.core.epoch == 1
    assert replica.store.state is not None and replica.store.state.voted_id == 1
    result = replica.core.poll(1001)
    votes = [send for send in result.sends if send.api_key == VOTE]
    assert len(votes) == 2 and not any(
        isinstance(s.body, messages.VoteRequest) and s.body.topics[0].partitions[0].pre_vote for s in votes
    )
    rejected = messages.VoteResponse(
        topics=[
            messages.VoteResponse.TopicData(
                topic_name="__cluster_metadata",
                partitions=[
                    messages.VoteResponse.PartitionData(leader_epoch=1, leader_id=-1, vote_granted=False)
                ],
            )
        ]
    )
    for send in votes:
        replica.core.handle_response(send.request_id, rejected, 1002)
    assert replica.core.role == "candidate"
    later = replica.core.poll(1002)
    assert later.next_poll_ms <= 1002 + 200  # backing off, at most election_backoff_max_ms
    replica.core.poll(1002 + 201)
    assert replica.core.role == "prospective" and replica.core.epoch == 1  # no epoch bump without pre-votes


# -- Quorums whose voters run different Kafka lines: a Kafka 3.9 voter speaks Vote v0-1 and runs no
# -- pre-vote (KIP-996 came with Vote v2 in Kafka 4.0).

NO_PRE_VOTE = RaftConfig(election_timeout_ms=100, election_backoff_max_ms=200, pre_vote=False)


def vote_answer(epoch: int, granted: bool) -> messages.VoteResponse:
    partition = messages.VoteResponse.PartitionData(leader_epoch=epoch, leader_id=-1, vote_granted=granted)
    return messages.VoteResponse(topics=[messages.VoteResponse.TopicData(topic_name="__cluster_metadata",
                                                                         partitions=[partition])])


def vote_sends(sends: list[OutboundRequest]) -> dict[int, OutboundRequest]:
    """The Vote requests among ``sends``, by the voter they go to."""
    votes = {}
    for send in sends:
        if send.api_key == VOTE:
            assert send.destination.node_id is not None
            votes[send.destination.node_id] = send
    return votes


def is_pre_vote(send: OutboundRequest) -> bool:
    assert isinstance(send.body, messages.VoteRequest)
    return send.body.topics[0].partitions[0].pre_vote


def prospective(config: RaftConfig | None = None) -> tuple[Replica, dict[int, OutboundRequest]]:
    """Voter 1 of {1, 2, 3} past its election timeout, with its pre-votes to 2 and 3."""
    replica = make_replica(1, VOTERS, config=config or RaftConfig(election_timeout_ms=100), seed=3)
    replica.core.poll(0)
    pre_votes = vote_sends(replica.core.poll(1000).sends)
    assert replica.core.role == "prospective" and sorted(pre_votes) == [2, 3]
    assert all(is_pre_vote(send) for send in pre_votes.values())
    return replica, pre_votes


def test_a_voter_without_vote_v2_turns_a_pre_vote_round_into_a_standard_election() -> None:
    replica, pre_votes = prospective()
    writes = replica.store.writes
    # The driver could not write the pre-vote at voter 3's Vote version and answers for it.
    unsupported = rpc.error_response(VOTE, ErrorCode.UNSUPPORTED_VERSION)
    replica.core.handle_response(pre_votes[3].request_id, unsupported, 1001)
    assert replica.core.role == "candidate" and replica.core.epoch == 1
    state = replica.store.state
    assert state is not None and (state.leader_epoch, state.voted_id) == (1, 1)
    assert replica.store.writes == writes + 1
    # Voter 2's pre-vote answer comes late: it belongs to the round that is over.
    replica.core.handle_response(pre_votes[2].request_id, vote_answer(0, True), 1002)
    assert replica.core.role == "candidate" and replica.core.epoch == 1
    votes = vote_sends(replica.core.poll(1002).sends)
    assert sorted(votes) == [2, 3] and not any(is_pre_vote(send) for send in votes.values())
    # The standard vote fits Vote v1, which voter 3 speaks: it grants, and 1 leads.
    assert rpc.lowest_version(votes[3].body) == 0
    replica.core.handle_response(votes[3].request_id, vote_answer(1, True), 1003)
    assert replica.core.is_leader and replica.core.epoch == 1


def test_unsupported_version_is_an_error_outside_a_pre_vote_round() -> None:
    replica, pre_votes = prospective()
    replica.core.handle_response(pre_votes[2].request_id, vote_answer(0, True), 1001)
    assert replica.core.role == "candidate" and replica.core.epoch == 1
    votes = vote_sends(replica.core.poll(1001).sends)
    # A candidate's standard vote answered UNSUPPORTED_VERSION counts for nothing: no new epoch.
    replica.core.handle_response(votes[2].request_id,
                                 rpc.error_response(VOTE, ErrorCode.UNSUPPORTED_VERSION), 1002)
    assert replica.core.role == "candidate" and replica.core.epoch == 1
    assert not replica.core.is_leader


def test_a_node_without_pre_vote_runs_standard_elections_from_every_timeout() -> None:
    replica = make_replica(1, VOTERS, config=NO_PRE_VOTE, seed=3)
    replica.core.poll(0)
    # Election timeout while unattached: a candidacy in epoch 1 at once, persisted before the votes.
    votes = vote_sends(replica.core.poll(1000).sends)
    assert replica.core.role == "candidate" and replica.core.epoch == 1
    assert replica.store.state is not None and replica.store.state.voted_id == 1
    assert sorted(votes) == [2, 3] and not any(is_pre_vote(send) for send in votes.values())
    # Lost: after the backoff the next candidacy bumps the epoch again (no pre-vote round between).
    for send in votes.values():
        replica.core.handle_response(send.request_id, vote_answer(1, False), 1001)
    replica.core.poll(1001)
    replica.core.poll(1001 + 201)
    assert replica.core.role == "candidate" and replica.core.epoch == 2
    # A follower whose fetch timeout expires runs for the next epoch too.
    follower = make_replica(2, VOTERS, config=NO_PRE_VOTE, seed=5)
    follower.core.handle_request(request(53, messages.BeginQuorumEpochRequest(
        cluster_id=None, topics=[messages.BeginQuorumEpochRequest.TopicData(
            topic_name="__cluster_metadata", partitions=[messages.BeginQuorumEpochRequest.PartitionData(
                leader_id=3, leader_epoch=4)])]), 1), 0)
    follower.core.poll(0)
    assert follower.core.role == "follower" and follower.core.epoch == 4
    votes = vote_sends(follower.core.poll(RaftConfig().fetch_timeout_ms).sends)
    assert follower.core.role == "candidate" and follower.core.epoch == 5
    assert sorted(votes) == [1, 3] and not any(is_pre_vote(send) for send in votes.values())


def test_a_voter_waiting_for_an_election_keeps_its_timer_when_the_epoch_moves() -> None:
    """A candidate with a stale log bumps the epoch again and again; the voters that refuse it keep
    the election deadline they had (Kafka's QuorumState.transitionToUnattached), so one of them runs
    in time instead of waiting behind each new epoch."""

    def first_election_ms(replica: Replica, stale_votes_at: tuple[int, ...] = ()) -> int:
        for now in range(0, 5000, 5):
            if now in stale_votes_at:
                epoch = replica.core.epoch + 1
                refused = answer(replica, vote(epoch=epoch, candidate=2, last_epoch=1, last_offset=1), now)
                assert not refused.vote_granted and replica.core.epoch == epoch
            replica.core.poll(now)
            if replica.core.role == "prospective":
                return now
        raise AssertionError("no election")

    undisturbed = first_election_ms(with_log(1, [1, 1]))
    stale_votes_at = (undisturbed // 4 // 5 * 5, undisturbed // 2 // 5 * 5, undisturbed * 3 // 4 // 5 * 5)
    assert first_election_ms(with_log(1, [1, 1]), stale_votes_at) == undisturbed


@pytest.mark.parametrize("config", [NO_PRE_VOTE, RaftConfig()], ids=["3.9-like", "4.x"])
def test_a_quorum_of_one_line_elects_a_leader(config: RaftConfig) -> None:
    replicas = [make_replica(node, VOTERS, config=config, seed=node) for node in (1, 2, 3)]
    network = Network(replicas)
    network.run(until=5000)
    leader = network.leader()
    assert leader is not None
    assert all(r.core.epoch == leader.core.epoch and r.core.leader_id == leader.node_id for r in replicas)


def test_a_4_x_voter_wins_through_a_3_9_voter_that_cannot_take_pre_votes() -> None:
    """Voter 3 runs as Kafka 3.9 (no pre-vote, Vote v0-1, a long election timeout), voter 2 is down:
    voter 1 (Kafka 4.x) can only win with 3's vote, and 3 never sees its pre-vote."""
    slow_3_9 = RaftConfig(pre_vote=False, election_timeout_ms=3000)
    replicas = [make_replica(node, VOTERS, seed=node, config=slow_3_9 if node == 3 else RaftConfig())
                for node in (1, 2, 3)]
    network = Network(replicas)
    network.max_versions[3] = {VOTE: 1}
    network.dropped.add(2)
    seen: list[tuple[int | None, int | None, Struct, str]] = []
    network.on_message = lambda m: seen.append((m.source, m.target, m.body, m.fate))
    network.run(until=2900)  # before 3's first election timeout
    leader = network.leader()
    assert leader is not None and leader.node_id == 1 and leader.core.epoch == 1
    assert replicas[2].core.leader_id == 1
    to_old = [(body, fate) for _, target, body, fate in seen
              if target == 3 and isinstance(body, messages.VoteRequest)]
    # The pre-vote never reached voter 3; the standard vote of epoch 1 did.
    assert [(body.topics[0].partitions[0].pre_vote, fate) for body, fate in to_old] == [
        (True, "unsupported"), (False, "delivered")]


@pytest.mark.parametrize(("body", "lowest"), [
    (vote(0, 1, 0, 0, pre_vote=True), 2),
    (vote(1, 1, 0, 0), 0),
    (messages.AddRaftVoterRequest(cluster_id=None, voter_id=4, ack_when_committed=False), 1),
    (messages.AddRaftVoterRequest(cluster_id=None, voter_id=4), 0),
    (messages.BeginQuorumEpochRequest(cluster_id=None), 0),
])
def test_lowest_version_is_where_the_codec_starts_to_accept_the_request(body: Struct, lowest: int) -> None:
    assert rpc.lowest_version(body) == lowest
    body.encode(lowest)
    if lowest > type(body).VERSIONS[0]:
        with pytest.raises(EncodeError, match="no place in version"):
            body.encode(lowest - 1)


@pytest.mark.parametrize("api_key", [1, 52, 53, 54, 59, 80, 81, 82, 18])
def test_error_response_is_the_apis_response_with_the_error(api_key: int) -> None:
    response = rpc.error_response(api_key, ErrorCode.UNSUPPORTED_VERSION)
    assert type(response) is messages.response_class(api_key)
    high = type(response).VERSIONS[1]
    decoded = type(response).decode(response.encode(high), high)
    assert decoded == response and getattr(decoded, "error_code") == ErrorCode.UNSUPPORTED_VERSION  # noqa: B009
