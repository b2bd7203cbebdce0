"""Errors of the log-directory files (meta.properties, quorum-state, checkpoints).

``StorageFormatError`` is a :class:`DecodeError`: ``what`` names the file, ``path`` the key or line
that is wrong.
"""

from __future__ import annotations

from kafka_admin_kraft.protocol.exceptions import DecodeError


class StorageFormatError(DecodeError):
    """A log-directory file whose content Kafka would refuse."""
