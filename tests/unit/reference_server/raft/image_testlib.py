"""Metadata records for the image tests: feature levels, and opaque records the image keeps by
reference."""

from __future__ import annotations

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.records import RawMetadataRecord


def config(index: int) -> RawMetadataRecord:
    """A ConfigRecord (api key 4) left undecoded, as the image keeps it."""
    return RawMetadataRecord(4, 0, f"config-{index}".encode())


def feature(name: str, level: int) -> messages.FeatureLevelRecord:
    return messages.FeatureLevelRecord(name=name, feature_level=level)
