"""Kafka's wire format: primitives, generated messages, headers and frames, and the error table.

``from kafka_admin_kraft.protocol import messages`` gives one class per message, named as in Kafka
(``messages.DescribeQuorumResponse``), with ``decode(body, version)``, ``encode(version)`` and
``to_dict()``.
"""
