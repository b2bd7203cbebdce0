"""The exceptions kafka-admin-kraft raises.

::

    KafkaAdminError
    +-- ProtocolError                 bytes or values that are not what Kafka sends or stores
    |   +-- DecodeError               names the message or file, the field path and the byte offset
    |   |   +-- CorruptRecordError    a record batch or log file that fails its checks
    |   +-- EncodeError               a value that cannot be written at the chosen version
    |   +-- UndefinedVersionError     a message version the schema does not define
    +-- KafkaApiError                 an error code from a Kafka server; one subclass per code, named
    |                                 after it (NotLeaderOrFollowerError, DuplicateVoterError, ...),
    |                                 carrying the server's message, the operation and the node, and
    |                                 for CLUSTER_AUTHORIZATION_FAILED a ``Refusal``: the principal
    |                                 refused and the ACL that would allow it
    +-- KafkaClientError              raised by the admin client itself
        +-- ConfigError               unknown, unsupported or inconsistent client properties (also a
        |                             ValueError)
        +-- KafkaConnectionError      a connection could not be made or was lost (names the address)
        |   +-- BootstrapError        no bootstrap address was reachable: lists each one and why
        +-- KafkaTimeoutError         an operation ran out of time: names it and the last error seen
        +-- UnknownNodeError          the cluster has no node with the id a call names
        +-- UnsupportedOperationError the server does not speak the API (or a version able to carry
        |                             the request): too old for this operation
        +-- AuthenticationError       SASL or TLS authentication failed (wrong password, unknown
        |                             mechanism, certificate refused)
        +-- VoterChangeError          a voter reconciliation stopped: lists the steps it completed
            +-- VoterChangeRefusedError  the plan would stop the quorum, or cannot be made
            +-- VoterChangeTimeoutError  a step's precondition did not hold in time

``ErrorCode`` names every code (``ErrorCode.NOT_CONTROLLER == 41``) and is its row of the table;
``error_for_code(code, message)`` builds the exception for a code; ``ERRORS`` maps each number to its
``ErrorCode``.
Retriable server errors (``retriable`` class attribute) and lost connections are retried by the
admin client until the operation's timeout; everything else surfaces at once.
"""

from __future__ import annotations

from collections.abc import Sequence

from kafka_admin_kraft.protocol.error_codes import *  # noqa: F403
from kafka_admin_kraft.protocol.error_codes import ERRORS, ERRORS_BY_NAME, ErrorCode, error_for_code
from kafka_admin_kraft.protocol.exceptions import (
    CorruptRecordError,
    DecodeError,
    EncodeError,
    KafkaAdminError,
    KafkaApiError,
    ProtocolError,
    Refusal,
    UndefinedVersionError,
)


class KafkaClientError(KafkaAdminError):
    """Base class of the errors the admin client raises on its own (not a server error code)."""


class ConfigError(KafkaClientError, ValueError):
    """Client configuration that cannot be used; ``names`` lists the offending properties."""

    def __init__(self, message: str, names: Sequence[str] = ()) -> None:
        self.names = tuple(names)
        super().__init__(message)


class KafkaConnectionError(KafkaClientError):
    """A connection to ``address`` could not be opened, or was lost; ``timed_out`` when the peer did
    not answer in time. The admin client retries these until the operation's timeout."""

    def __init__(self, address: str, reason: str, *, timed_out: bool = False) -> None:
        self.address = address
        self.reason = reason
        self.timed_out = timed_out
        super().__init__(f"{address}: {reason}")


class BootstrapError(KafkaConnectionError):
    """None of the bootstrap addresses could be used; ``failures`` maps each address to why."""

    def __init__(self, failures: dict[str, str], setting: str = "bootstrap.servers") -> None:
        self.failures = dict(failures)
        self.setting = setting
        lines = "; ".join(f"{address}: {why}" for address, why in self.failures.items())
        KafkaClientError.__init__(self, f"could not reach any of {setting}: {lines}")
        self.address = ",".join(self.failures)
        self.reason = lines
        self.timed_out = False


class UnknownNodeError(KafkaClientError):
    """The cluster has no node with the id a call names: DescribeCluster, asked just then, lists none.
    Not retried: waiting (as Kafka's client does) only turns a wrong id into a timeout."""


class KafkaTimeoutError(KafkaClientError):
    """``operation`` did not complete within ``timeout`` seconds; ``last_error`` is the last error
    seen while retrying (None if there was none). The message quotes that error's own text, which
    names the node and what went wrong (``[NOT_CONTROLLER] ...``, ``host:port: connection refused``)."""

    def __init__(self, operation: str, timeout: float, last_error: BaseException | None = None) -> None:
        self.operation = operation
        self.timeout = timeout
        self.last_error = last_error
        tail = f"; last error: {last_error}" if last_error else ""
        super().__init__(f"{operation} timed out after {round(timeout, 3):g} s{tail}")


class UnsupportedOperationError(KafkaClientError):
    """The server does not support ``api`` (or no version of it this client can use for the request):
    it is too old for ``operation``."""

    def __init__(self, operation: str, api: str, node: str, detail: str) -> None:
        self.operation = operation
        self.api = api
        self.node = node
        super().__init__(f"{operation}: the server at {node} is too old: {detail}")


class AuthenticationError(KafkaClientError):
    """SASL or TLS authentication with ``node`` failed, or the client's security settings do not fit the
    listener there. ``reason`` is Kafka's message where Kafka's client has one, and the setting to
    change; ``java_exception`` names the class Kafka's client raises for the same failure (in
    ``org.apache.kafka.common.errors``: SaslAuthenticationException, SslAuthenticationException, ...)."""

    def __init__(self, node: str, reason: str, *, java_exception: str = "AuthenticationException") -> None:
        self.node = node
        self.reason = reason
        self.java_exception = java_exception
        super().__init__(f"authentication with {node} failed: {reason}")


class VoterChangeError(KafkaClientError):
    """A voter reconciliation stopped; ``completed`` holds the steps that were committed before it
    (``kafka_admin_kraft.voters.StepOutcome``), so nothing stops half-done unsaid. The cause, when a
    server error or a timeout ended it, is ``__cause__``."""

    def __init__(self, message: str, completed: Sequence[object] = ()) -> None:
        self.completed = tuple(completed)
        super().__init__(message)


class VoterChangeRefusedError(VoterChangeError):
    """The plan was refused: following it would stop the quorum, or a desired voter cannot be added."""


class VoterChangeTimeoutError(VoterChangeError):
    """A step's precondition (an observer catching up, a change committing, a leader) did not hold in
    time."""


__all__ = [
    "ERRORS",
    "ERRORS_BY_NAME",
    "AuthenticationError",
    "BootstrapError",
    "ConfigError",
    "CorruptRecordError",
    "DecodeError",
    "EncodeError",
    "ErrorCode",
    "KafkaAdminError",
    "KafkaApiError",
    "KafkaClientError",
    "KafkaConnectionError",
    "KafkaTimeoutError",
    "ProtocolError",
    "Refusal",
    "UndefinedVersionError",
    "UnknownNodeError",
    "UnsupportedOperationError",
    "VoterChangeError",
    "VoterChangeRefusedError",
    "VoterChangeTimeoutError",
    "error_for_code",
]
