"""What the tests of the storage files share: a directory id."""

from __future__ import annotations

from kafka_admin_kraft.protocol.primitives import Uuid

DIR_ID = Uuid.from_string("3Db5QLSqSZieL3rJBUUegA")
