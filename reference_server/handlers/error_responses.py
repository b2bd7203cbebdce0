"""What each API answers when a request fails before its handler runs (refused by the authorizer, or
forwarded through an Envelope that failed): Kafka's ``AbstractRequest.getErrorResponse`` of each request
class, which decides which fields carry the error and whether a message goes with it.

Three kinds of answers, by API:

- the exception's message (``ApiError.fromThrowable`` or ``getMessage``): DescribeCluster,
  UpdateFeatures (top-level, no per-feature results), UnregisterBroker, UnregisterController,
  DescribeAcls, CreateAcls (one result per creation) and DeleteAcls (one result per filter);
- the error code's own message (``Errors.message``, ``Cluster authorization failed.``): AddRaftVoter,
  RemoveRaftVoter and ControllerRegistration;
- the error code alone: DescribeQuorum, Vote, BeginQuorumEpoch, EndQuorumEpoch, FetchSnapshot,
  UpdateRaftVoter, BrokerRegistration, BrokerHeartbeat and Envelope, and Fetch (with the request's
  SessionId, and below v13 every requested partition with the error and a high watermark of -1).

The other fields keep their schema defaults, as Kafka's do.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.api_keys import ApiKey
from kafka_admin_kraft.protocol.error_codes import ErrorCode
from kafka_admin_kraft.protocol.message import Struct

INVALID_HIGH_WATERMARK: Final = -1

Builder = Callable[[Struct | None, int, int, str], Struct]
"""(request body, version, error code, message) -> the response."""


def _fetch(body: Struct | None, version: int, code: int, message: str) -> Struct:
    assert isinstance(body, messages.FetchRequest)
    R = messages.FetchResponse
    topics = []
    if version < 13:
        topics = [R.FetchableTopicResponse(topic=topic.topic, topic_id=topic.topic_id, partitions=[
            R.PartitionData(partition_index=p.partition, error_code=code,
                            high_watermark=INVALID_HIGH_WATERMARK)
            for p in topic.partitions]) for topic in body.topics]
    return R(throttle_time_ms=0, error_code=code, session_id=body.session_id, responses=topics)


def _update_features(body: Struct | None, version: int, code: int, message: str) -> Struct:
    return messages.UpdateFeaturesResponse(throttle_time_ms=0, error_code=code, error_message=message,
                                           results=[])


def _create_acls(body: Struct | None, version: int, code: int, message: str) -> Struct:
    R = messages.CreateAclsResponse
    creations = body.creations if isinstance(body, messages.CreateAclsRequest) else []
    return R(throttle_time_ms=0, results=[R.AclCreationResult(error_code=code, error_message=message)
                                          for _ in creations])


def _delete_acls(body: Struct | None, version: int, code: int, message: str) -> Struct:
    R = messages.DeleteAclsResponse
    filters = body.filters if isinstance(body, messages.DeleteAclsRequest) else []
    return R(throttle_time_ms=0, filter_results=[
        R.DeleteAclsFilterResult(error_code=code, error_message=message, matching_acls=[])
        for _ in filters])


def _code_and_message(cls: Callable[..., Struct]) -> Builder:
    def build(body: Struct | None, version: int, code: int, message: str) -> Struct:
        return cls(throttle_time_ms=0, error_code=code, error_message=message)

    return build


def _code_and_its_message(cls: Callable[..., Struct]) -> Builder:
    def build(body: Struct | None, version: int, code: int, message: str) -> Struct:
        return cls(throttle_time_ms=0, error_code=code, error_message=ErrorCode(code).message)

    return build


def _code(cls: Callable[..., Struct], *, throttle: bool = True) -> Builder:
    def build(body: Struct | None, version: int, code: int, message: str) -> Struct:
        return cls(throttle_time_ms=0, error_code=code) if throttle else cls(error_code=code)

    return build


def _sasl_authenticate(body: Struct | None, version: int, code: int, message: str) -> Struct:
    return messages.SaslAuthenticateResponse(error_code=code, error_message=message, auth_bytes=b"")


def _envelope(body: Struct | None, version: int, code: int, message: str) -> Struct:
    return messages.EnvelopeResponse(response_data=None, error_code=code)


_BUILDERS: Final[Mapping[int, Builder]] = {
    ApiKey.DESCRIBE_CLUSTER: _code_and_message(messages.DescribeClusterResponse),
    ApiKey.UPDATE_FEATURES: _update_features,
    ApiKey.UNREGISTER_BROKER: _code_and_message(messages.UnregisterBrokerResponse),
    ApiKey.UNREGISTER_CONTROLLER: _code_and_message(messages.UnregisterControllerResponse),
    ApiKey.DESCRIBE_ACLS: _code_and_message(messages.DescribeAclsResponse),
    ApiKey.CREATE_ACLS: _create_acls,
    ApiKey.DELETE_ACLS: _delete_acls,
    ApiKey.ADD_RAFT_VOTER: _code_and_its_message(messages.AddRaftVoterResponse),
    ApiKey.REMOVE_RAFT_VOTER: _code_and_its_message(messages.RemoveRaftVoterResponse),
    ApiKey.CONTROLLER_REGISTRATION: _code_and_its_message(messages.ControllerRegistrationResponse),
    ApiKey.DESCRIBE_QUORUM: _code(messages.DescribeQuorumResponse, throttle=False),
    ApiKey.VOTE: _code(messages.VoteResponse, throttle=False),
    ApiKey.BEGIN_QUORUM_EPOCH: _code(messages.BeginQuorumEpochResponse, throttle=False),
    ApiKey.END_QUORUM_EPOCH: _code(messages.EndQuorumEpochResponse, throttle=False),
    ApiKey.FETCH_SNAPSHOT: _code(messages.FetchSnapshotResponse),
    ApiKey.UPDATE_RAFT_VOTER: _code(messages.UpdateRaftVoterResponse),
    ApiKey.BROKER_REGISTRATION: _code(messages.BrokerRegistrationResponse),
    ApiKey.BROKER_HEARTBEAT: _code(messages.BrokerHeartbeatResponse),
    ApiKey.FETCH: _fetch,
    ApiKey.ENVELOPE: _envelope,
    ApiKey.SASL_HANDSHAKE: _code(messages.SaslHandshakeResponse, throttle=False),
    ApiKey.SASL_AUTHENTICATE: _sasl_authenticate,
}


def error_response(api_key: int, body: Struct | None, version: int, code: int, message: str) -> Struct:
    """The response Kafka gives a request of ``api_key`` that failed with ``code`` and an exception
    whose message is ``message``; KeyError for an API that is never refused (ApiVersions)."""
    return _BUILDERS[api_key](body, version, code, message)


def refusable(api_key: int) -> bool:
    """Whether ``error_response`` knows the API."""
    return api_key in _BUILDERS


__all__ = ["error_response", "refusable"]
