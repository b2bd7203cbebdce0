"""Configuration files of Kafka nodes: ``server.properties`` (:mod:`kafka_admin_kraft.config.server`)."""
