"""SaslHandshake and SaslAuthenticate where no SASL exchange is due: answered ILLEGAL_SASL_STATE, as
Kafka's ControllerApis and KafkaApis answer them, instead of a closed connection."""

from __future__ import annotations

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.error_codes import ErrorCode
from kafka_admin_kraft_server.handlers.sasl import AFTER_AUTHENTICATION
from unit.reference_server.runtime_testlib import make_runtime, running


def test_a_plaintext_listener_answers_the_sasl_apis_with_illegal_sasl_state() -> None:
    with running(make_runtime()) as server, server.client() as client:
        listed = {k.api_key: (k.min_version, k.max_version) for k in client.api_versions().api_keys}
        handshake = client.request(messages.SaslHandshakeRequest(mechanism="PLAIN"), 1)
        authenticate = client.request(messages.SaslAuthenticateRequest(auth_bytes=b"\0u\0p"), 2)
        still_open = client.request(messages.DescribeClusterRequest(endpoint_type=2), 1)
    assert (listed[17], listed[36]) == ((0, 1), (0, 2))
    assert (handshake.error_code, handshake.mechanisms) == (ErrorCode.ILLEGAL_SASL_STATE, [])
    assert (authenticate.error_code, authenticate.error_message, authenticate.auth_bytes) == (
        ErrorCode.ILLEGAL_SASL_STATE, AFTER_AUTHENTICATION, b"")
    assert still_open.error_code == ErrorCode.NONE
