"""kafka-admin-kraft: operate the KRaft controller quorum of Apache Kafka.

``Admin`` / ``AsyncAdmin`` and the result models load on first use (pydantic is not imported by
``import kafka_admin_kraft``), so that command-line tools start quickly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafka_admin_kraft.lazy import lazy_names

__version__ = "0.1.0"

if TYPE_CHECKING:
    from kafka_admin_kraft.acl import AclBinding as AclBinding
    from kafka_admin_kraft.acl import AclBindingFilter as AclBindingFilter
    from kafka_admin_kraft.acl import AclOperation as AclOperation
    from kafka_admin_kraft.acl import AclPermissionType as AclPermissionType
    from kafka_admin_kraft.acl import PatternType as PatternType
    from kafka_admin_kraft.acl import ResourceType as ResourceType
    from kafka_admin_kraft.admin import Admin as Admin
    from kafka_admin_kraft.admin import AsyncAdmin as AsyncAdmin
    from kafka_admin_kraft.health import Finding as Finding
    from kafka_admin_kraft.health import FindingCode as FindingCode
    from kafka_admin_kraft.health import HealthStatus as HealthStatus
    from kafka_admin_kraft.health import HealthThresholds as HealthThresholds
    from kafka_admin_kraft.health import QuorumHealth as QuorumHealth
    from kafka_admin_kraft.health import Severity as Severity
    from kafka_admin_kraft.models import ClusterDescription as ClusterDescription
    from kafka_admin_kraft.models import ClusterNode as ClusterNode
    from kafka_admin_kraft.models import Endpoint as Endpoint
    from kafka_admin_kraft.models import FeatureMetadata as FeatureMetadata
    from kafka_admin_kraft.models import FeatureUpdate as FeatureUpdate
    from kafka_admin_kraft.models import FeatureUpdateResult as FeatureUpdateResult
    from kafka_admin_kraft.models import FinalizedVersionRange as FinalizedVersionRange
    from kafka_admin_kraft.models import Node as Node
    from kafka_admin_kraft.models import QuorumInfo as QuorumInfo
    from kafka_admin_kraft.models import RaftVoterEndpoint as RaftVoterEndpoint
    from kafka_admin_kraft.models import ReplicaState as ReplicaState
    from kafka_admin_kraft.models import SupportedVersionRange as SupportedVersionRange
    from kafka_admin_kraft.values import UpgradeType as UpgradeType

_LAZY = {
    "Admin": "kafka_admin_kraft.admin",
    "AsyncAdmin": "kafka_admin_kraft.admin",
    **{name: "kafka_admin_kraft.health" for name in (
        "Finding", "FindingCode", "HealthStatus", "HealthThresholds", "QuorumHealth", "Severity")},
    **{name: "kafka_admin_kraft.models" for name in (
        "ClusterDescription", "ClusterNode", "Endpoint", "FeatureMetadata", "FeatureUpdate",
        "FeatureUpdateResult", "FinalizedVersionRange", "Node", "QuorumInfo", "RaftVoterEndpoint",
        "ReplicaState", "SupportedVersionRange")},
    "UpgradeType": "kafka_admin_kraft.values",
    **{name: "kafka_admin_kraft.acl" for name in (
        "AclBinding", "AclBindingFilter", "AclOperation", "AclPermissionType", "PatternType",
        "ResourceType")},
}

__all__ = ["__version__", *_LAZY]


__getattr__, __dir__ = lazy_names(__name__, _LAZY)
