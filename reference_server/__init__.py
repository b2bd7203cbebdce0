"""A reference KRaft controller quorum: real processes speaking Kafka's protocol, storing Kafka's files."""
