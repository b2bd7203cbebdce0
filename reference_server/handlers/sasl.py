"""SaslHandshake (API 17), versions 0-1, and SaslAuthenticate (API 36), versions 0-2, on every listener
(controller and broker alike), as Kafka's ``ControllerApis`` and ``KafkaApis`` serve them.

Before authentication a SASL listener's session (``kafka_admin_kraft_server.security``) answers them.
What reaches the handlers here comes after a successful authentication or on a listener without SASL:
ILLEGAL_SASL_STATE, as Kafka answers it (SaslHandshake with no mechanisms, SaslAuthenticate with
Kafka's message), and ApiVersions lists both on every listener.
"""

from __future__ import annotations

from kafka_admin_kraft.protocol.api_keys import ApiKey
from kafka_admin_kraft.protocol.error_codes import ErrorCode

from . import registry
from .error_responses import error_response
from .registry import Answer, Call

AFTER_AUTHENTICATION = "SaslAuthenticate request received after successful authentication"
"""Kafka's message (``KafkaApis.handleSaslAuthenticateRequest``)."""


async def on_sasl(node: object, call: Call) -> Answer:
    message = AFTER_AUTHENTICATION if call.api_key == ApiKey.SASL_AUTHENTICATE else ""
    body = error_response(call.api_key, call.body, call.version, ErrorCode.ILLEGAL_SASL_STATE, message)
    return body, call.version


registry.register(ApiKey.SASL_HANDSHAKE, controller=on_sasl, broker=on_sasl)
registry.register(ApiKey.SASL_AUTHENTICATE, controller=on_sasl, broker=on_sasl)
