"""What each API answers when it fails before its handler (Kafka's ``getErrorResponse`` of each request
class): which field carries the error, and whether the exception's message, the error code's own
message or none goes with it."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_admin_kraft.protocol import framing, messages
from kafka_admin_kraft.protocol.api_keys import ApiKey
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft_server.handlers import CONTROLLER_APIS
from kafka_admin_kraft_server.handlers.error_responses import error_response, refusable

DENIED = 31
TEXT = "Request Request(...) is not authorized."
DEFAULT = "Cluster authorization failed."


def answer(key: int, body: Any = None, version: int = 0) -> Any:
    response = error_response(key, body, version, DENIED, TEXT)
    framing.encode_response(response, version, 1)  # it encodes at the version asked
    return response


@pytest.mark.parametrize("key", [ApiKey.DESCRIBE_CLUSTER, ApiKey.UNREGISTER_BROKER,
                                 ApiKey.UNREGISTER_CONTROLLER, ApiKey.DESCRIBE_ACLS])
def test_the_exceptions_message(key: int) -> None:
    response = answer(key)
    assert (response.error_code, response.error_message) == (DENIED, TEXT)


def test_update_features_sets_the_top_level_error_and_no_results() -> None:
    response = answer(ApiKey.UPDATE_FEATURES, version=1)
    assert (response.error_code, response.error_message, response.results) == (DENIED, TEXT, [])


@pytest.mark.parametrize("key", [ApiKey.ADD_RAFT_VOTER, ApiKey.REMOVE_RAFT_VOTER,
                                 ApiKey.CONTROLLER_REGISTRATION])
def test_the_error_codes_own_message(key: int) -> None:
    response = answer(key)
    assert (response.error_code, response.error_message) == (DENIED, DEFAULT)


@pytest.mark.parametrize("key", [ApiKey.DESCRIBE_QUORUM, ApiKey.VOTE, ApiKey.BEGIN_QUORUM_EPOCH,
                                 ApiKey.END_QUORUM_EPOCH, ApiKey.FETCH_SNAPSHOT, ApiKey.UPDATE_RAFT_VOTER,
                                 ApiKey.BROKER_REGISTRATION, ApiKey.BROKER_HEARTBEAT])
def test_the_error_code_alone(key: int) -> None:
    response = answer(key)
    assert response.error_code == DENIED
    assert response == messages.response_class(key)(**{
        name: value for name, value in (("error_code", DENIED), ("throttle_time_ms", 0))
        if name in type(response).__init__.__code__.co_varnames})
    if key == ApiKey.DESCRIBE_QUORUM:
        assert response.error_message == "" and response.topics == []


def test_envelope_carries_the_code_and_no_response() -> None:
    response = answer(ApiKey.ENVELOPE)
    assert (response.error_code, response.response_data) == (DENIED, None)


def test_acl_requests_get_one_result_per_item() -> None:
    create = messages.CreateAclsRequest(creations=[messages.CreateAclsRequest.AclCreation()] * 2)
    assert [(r.error_code, r.error_message) for r in answer(ApiKey.CREATE_ACLS, create, 2).results] == [
        (DENIED, TEXT)] * 2
    delete = messages.DeleteAclsRequest(filters=[messages.DeleteAclsRequest.DeleteAclsFilter()] * 3)
    assert [(r.error_code, r.error_message, r.matching_acls)
            for r in answer(ApiKey.DELETE_ACLS, delete, 2).filter_results] == [(DENIED, TEXT, [])] * 3


def test_fetch_below_v13_repeats_the_error_per_partition() -> None:
    F = messages.FetchRequest
    request = F(session_id=5, topics=[F.FetchTopic(topic="__cluster_metadata", topic_id=Uuid(b"\x01" * 16),
                                                   partitions=[F.FetchPartition(partition=0),
                                                               F.FetchPartition(partition=1)])])
    old = answer(ApiKey.FETCH, request, 12)
    assert (old.error_code, old.session_id) == (DENIED, 5)
    assert [(t.topic, [(p.partition_index, p.error_code, p.high_watermark) for p in t.partitions])
            for t in old.responses] == [("__cluster_metadata", [(0, DENIED, -1), (1, DENIED, -1)])]
    new = answer(ApiKey.FETCH, request, 13)
    assert (new.error_code, new.session_id, new.responses) == (DENIED, 5, [])


def test_every_controller_api_but_api_versions_has_an_error_response() -> None:
    assert {key for key in CONTROLLER_APIS if not refusable(key)} == {ApiKey.API_VERSIONS}
