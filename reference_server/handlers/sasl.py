"""SaslHandshake (API 17), versions 0-1, and SaslAuthenticate (API 36), versions 0-2, on SASL listeners
(controller and broker alike).

They have no handler here: a SASL listener's session (``kafka_admin_kraft_server.security``) answers
them before the connection is authenticated, and ApiVersions lists them on SASL listeners only. After
authentication, or on a listener without SASL, they are served nowhere and close the connection.
"""

from __future__ import annotations

from kafka_admin_kraft.protocol.api_keys import ApiKey

from . import registry

registry.register(ApiKey.SASL_HANDSHAKE, sasl=True)
registry.register(ApiKey.SASL_AUTHENTICATE, sasl=True)
