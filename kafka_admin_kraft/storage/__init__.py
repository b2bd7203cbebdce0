"""The files of a formatted KRaft log directory besides segments and snapshots."""

from kafka_admin_kraft.storage.bootstrap import (
    BootstrapMetadata,
    InitialController,
    bootstrap_records,
    read_bootstrap_checkpoint,
    write_bootstrap_checkpoint,
    write_bootstrap_snapshot,
)
from kafka_admin_kraft.storage.errors import StorageFormatError
from kafka_admin_kraft.storage.leader_epoch_checkpoint import (
    EpochEntry,
    read_leader_epoch_checkpoint,
    write_leader_epoch_checkpoint,
)
from kafka_admin_kraft.storage.meta_properties import (
    MetaProperties,
    read_meta_properties,
    write_meta_properties,
)
from kafka_admin_kraft.storage.partition_metadata import (
    PartitionMetadata,
    read_partition_metadata,
    write_partition_metadata,
)
from kafka_admin_kraft.storage.quorum_state import QuorumState, read_quorum_state, write_quorum_state

__all__ = [
    "BootstrapMetadata",
    "EpochEntry",
    "InitialController",
    "MetaProperties",
    "PartitionMetadata",
    "QuorumState",
    "StorageFormatError",
    "bootstrap_records",
    "read_bootstrap_checkpoint",
    "read_leader_epoch_checkpoint",
    "read_meta_properties",
    "read_partition_metadata",
    "read_quorum_state",
    "write_bootstrap_checkpoint",
    "write_bootstrap_snapshot",
    "write_leader_epoch_checkpoint",
    "write_meta_properties",
    "write_partition_metadata",
    "write_quorum_state",
]
