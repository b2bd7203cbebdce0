"""The files of a formatted KRaft log directory besides segments and snapshots."""

from kafka_admin_kraft.storage.bootstrap import (
    BootstrapMetadata,
    InitialController,
    bootstrap_records,
    read_bootstrap_checkpoint,
    read_zero_checkpoint_bootstrap,
    write_bootstrap_checkpoint,
    write_bootstrap_snapshot,
    write_zero_checkpoint,
)
from kafka_admin_kraft.storage.errors import StorageFormatError
from kafka_admin_kraft.storage.formatter import (
    DirectoryReport,
    DynamicVoterError,
    FormatOptions,
    FormatPlan,
    FormatTarget,
    FormatterError,
    NodeStorageConfig,
    ScramCredential,
    inspect_directories,
    parse_controller_quorum_voters,
    parse_initial_controllers,
    parse_scram_credential,
    plan_format,
)
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
    "DirectoryReport",
    "DynamicVoterError",
    "EpochEntry",
    "FormatOptions",
    "FormatPlan",
    "FormatTarget",
    "FormatterError",
    "InitialController",
    "MetaProperties",
    "NodeStorageConfig",
    "PartitionMetadata",
    "QuorumState",
    "ScramCredential",
    "StorageFormatError",
    "bootstrap_records",
    "inspect_directories",
    "parse_controller_quorum_voters",
    "parse_initial_controllers",
    "parse_scram_credential",
    "plan_format",
    "read_bootstrap_checkpoint",
    "read_leader_epoch_checkpoint",
    "read_meta_properties",
    "read_partition_metadata",
    "read_quorum_state",
    "read_zero_checkpoint_bootstrap",
    "write_bootstrap_checkpoint",
    "write_bootstrap_snapshot",
    "write_leader_epoch_checkpoint",
    "write_meta_properties",
    "write_partition_metadata",
    "write_quorum_state",
    "write_zero_checkpoint",
]
