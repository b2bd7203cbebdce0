"""Exceptions raised by the codec, the record readers and Kafka error codes.

Every exception the package raises derives from :class:`KafkaAdminError`::

    KafkaAdminError
    +-- ProtocolError                 bytes that are not what Kafka would send or store
    |   +-- DecodeError               names the message, version, field path and byte offset
    |   |   +-- CorruptRecordError    a record batch or log file that fails its checks
    |   +-- EncodeError               a value that cannot be written at the chosen version
    |   +-- UndefinedVersionError     a message version the schema does not define
    +-- KafkaApiError                 an error code returned by a Kafka server (one subclass per code,
                                      see ``kafka_admin_kraft.protocol.error_codes``)
"""

from __future__ import annotations

from dataclasses import dataclass


class KafkaAdminError(Exception):
    """Base class of every error raised by kafka-admin-kraft."""


class ProtocolError(KafkaAdminError):
    """Bytes or values that do not follow Kafka's wire or disk format; says where.

    ``what`` names the message and version (or file), ``path`` the field path inside it
    (``Topics[0].Partitions[1].LeaderId``) and ``offset`` the byte position, when known.
    """

    def __init__(self, reason: str, *, what: str = "", path: str = "", offset: int = -1) -> None:
        self.reason = reason
        self.what = what
        self.path = path
        self.offset = offset
        super().__init__(self._render())

    def _render(self) -> str:
        where = self.what
        if self.path:
            where = f"{where}: field {self.path}" if where else f"field {self.path}"
        if self.offset >= 0:
            where = f"{where} at byte {self.offset}" if where else f"at byte {self.offset}"
        return f"{where}: {self.reason}" if where else self.reason

    def nested(self, field: str, offset: int | None = None) -> ProtocolError:
        """Prefix the path with the enclosing field as the error travels outwards."""
        self.path = f"{field}.{self.path}" if self.path else field
        if offset is not None and self.offset < 0:
            self.offset = offset
        self.args = (self._render(),)
        return self

    def describe(self, what: str) -> ProtocolError:
        """Name the message and version (or file) once the error reaches the top level."""
        self.what = what
        self.args = (self._render(),)
        return self


class DecodeError(ProtocolError):
    """Input that cannot be decoded."""


class CorruptRecordError(DecodeError):
    """A record batch, record or log file that fails a length, CRC or format check."""


class EncodeError(ProtocolError):
    """A value that cannot be encoded: out of range, wrong type, null where not nullable, or set on a
    version that lacks the field."""


class UndefinedVersionError(ProtocolError):
    """A message version outside the range the schema defines."""


@dataclass(frozen=True)
class Refusal:
    """Who a server refused, for which API and what would grant it: the explanation of an
    authorization error, which Kafka's own text does not give."""

    principal: str
    """The principal the client is seen as: ``User:alice``."""
    api: str
    """The API refused: ``DescribeCluster``."""
    listener: str
    """Where it was sent: ``controller`` or ``broker``."""
    operation: str
    """The operation on the cluster the API needs: ``ALTER``."""
    forwarded: bool = False
    """A broker forwards the API to the active controller, which decides."""
    broker_operation: str | None = None
    """For an API refused by a controller: what it needs through a broker (None: nothing)."""
    server_message: str | None = None
    """The server's own text (Kafka's ``Request ... is not authorized.``, else the error's default)."""

    def text(self, brokers: str = "bootstrap.servers") -> str:
        """The explanation; ``brokers`` names the setting (or option) that connects through brokers."""
        resource = "the cluster (the CLUSTER resource, kafka-cluster)"
        if self.listener == "controller":
            where = f"to a controller, which allows it to principals with {self.operation} on {resource}"
        elif self.forwarded:
            where = (f"through a broker: the active controller it is forwarded to allows it to principals "
                     f"with {self.operation} on {resource}")
        else:
            where = f"to a broker, which allows it to principals with {self.operation} on {resource}"
        text = (f"{self.principal} is not authorized to send {self.api} {where}; an ACL allowing "
                f"{self.principal} {self.operation} on the cluster grants it")
        if self.listener == "controller" and self.broker_operation != self.operation:
            needs = ("no permission" if self.broker_operation is None
                     else f"{self.broker_operation} on the cluster")
            text += f"; through brokers ({brokers}) {self.api} needs {needs}"
        return text


class KafkaApiError(KafkaAdminError):
    """An error code returned by a Kafka server.

    Subclasses exist for every code in Kafka's error table; ``code``, ``name``, ``retriable`` and the
    default ``description`` are class attributes, ``message`` is what the server said (or the default).
    """

    code: int = -1
    name: str = "UNKNOWN_SERVER_ERROR"
    retriable: bool = False
    description: str = ""
    java_exception: str = "UnknownServerException"
    """The class Kafka's Java client raises for this code (in ``org.apache.kafka.common.errors``)."""

    operation: str | None = None
    """The admin operation that got this error, once the client knows it."""
    node: str | None = None
    """The node that answered (``id host:port`` or ``host:port``), once the client knows it."""
    hint: str | None = None
    """What to do about it, when the operation knows (``str()`` ends with it; ``message`` stays the
    server's, which Kafka's tools print)."""
    refusal: Refusal | None = None
    """For an authorization error: who was refused and what would grant it, once the client knows it
    (``message`` then says it; the server's own text is ``refusal.server_message``)."""

    def __init__(self, message: str | None = None) -> None:
        self.message = message if message else self.description
        super().__init__(self._render())

    def _render(self) -> str:
        text = f"[{self.name}] {self.message}" if self.message else f"[{self.name}]"
        where = " on ".join(part for part in (self.operation, self.node) if part)
        text = f"{text} ({where})" if where else text
        return f"{text}: {self.hint}" if self.hint else text

    def in_context(self, operation: str | None = None, node: str | None = None) -> KafkaApiError:
        """Name the operation and the node that answered; returns ``self``."""
        if operation is not None:
            self.operation = operation
        if node is not None:
            self.node = node
        self.args = (self._render(),)
        return self

    def with_hint(self, hint: str) -> KafkaApiError:
        """Say what to do about the error; returns ``self``."""
        self.hint = hint
        self.args = (self._render(),)
        return self

    def refused(self, refusal: Refusal) -> KafkaApiError:
        """Explain an authorization error; returns ``self``."""
        self.refusal = refusal
        self.message = refusal.text()
        self.args = (self._render(),)
        return self
