"""The security protocols of Kafka's listeners and clients, shared by client and server settings.

A leaf module of constants, so that the client's start-up does not load the server's settings.
"""

from __future__ import annotations

from typing import Final

SECURITY_PROTOCOLS: Final = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
"""Kafka's ``SecurityProtocol`` names, each at the index of its id (what ControllerRegistration and
BrokerRegistration carry)."""
TLS_PROTOCOLS: Final = ("SSL", "SASL_SSL")
"""The protocols that run over TLS."""

PLAIN_MODULE: Final = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_MODULE: Final = "org.apache.kafka.common.security.scram.ScramLoginModule"
KERBEROS_MODULE: Final = "com.sun.security.auth.module.Krb5LoginModule"
OAUTHBEARER_MODULE: Final = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
"""The JAAS login modules of ``sasl.jaas.config`` (Kafka's, and the JDK's for Kerberos)."""
