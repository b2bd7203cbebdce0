"""The exceptions kafka-admin-kraft raises.

::

    KafkaAdminError
    +-- ProtocolError                 bytes or values that are not what Kafka sends or stores
    |   +-- DecodeError               names the message or file, the field path and the byte offset
    |   |   +-- CorruptRecordError    a record batch or log file that fails its checks
    |   +-- EncodeError               a value that cannot be written at the chosen version
    |   +-- UndefinedVersionError     a message version the schema does not define
    +-- KafkaApiError                 an error code from a Kafka server; one subclass per code, named
                                      after it (NotLeaderOrFollowerError, DuplicateVoterError, ...)

``error_for_code(code, message)`` builds the exception for a code; ``ERRORS`` is the whole table.
"""

from kafka_admin_kraft.protocol.error_codes import *  # noqa: F403
from kafka_admin_kraft.protocol.error_codes import ERRORS, ERRORS_BY_NAME, ErrorCode, error_for_code
from kafka_admin_kraft.protocol.exceptions import (
    CorruptRecordError,
    DecodeError,
    EncodeError,
    KafkaAdminError,
    KafkaApiError,
    ProtocolError,
    UndefinedVersionError,
)

__all__ = [
    "ERRORS",
    "ERRORS_BY_NAME",
    "CorruptRecordError",
    "DecodeError",
    "EncodeError",
    "ErrorCode",
    "KafkaAdminError",
    "KafkaApiError",
    "ProtocolError",
    "UndefinedVersionError",
    "error_for_code",
]
