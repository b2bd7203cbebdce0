"""Kafka's configuration files, read as Kafka reads them, for the client, the tools and the server.

- :mod:`kafka_admin_kraft.config.properties`: the ``.properties`` text format (``java.util.Properties``
  load and store): the one reader of server, client and ``meta.properties`` files, the writer of
  ``meta.properties`` and of configuration files.
- :mod:`kafka_admin_kraft.config.server`: ``server.properties`` as a validated ``ServerConfig`` (node
  id, roles, listeners, advertised listeners, the security protocol map, controller listener names,
  quorum voters and bootstrap servers, log directories, ...) with Kafka's messages, and the grammars
  of those settings (``parse_listener``, ``parse_voters``, ``csv_list``, ...) for the tools that read
  a server's file without validating all of it.
- :mod:`kafka_admin_kraft.config.security`: the security protocols, shared by client and server.

Client settings (``AdminClientConfig``) are :mod:`kafka_admin_kraft.client.config`, which reads its
files through :mod:`~kafka_admin_kraft.config.properties`.

Nothing is imported here, so that reading a file loads only the properties module.
"""
