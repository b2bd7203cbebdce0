"""kafka-admin-kraft: operate the KRaft controller quorum of Apache Kafka."""

__version__ = "0.1.0"
