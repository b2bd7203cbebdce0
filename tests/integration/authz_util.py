"""A reference quorum with Kafka's StandardAuthorizer on, for the authorization tests of the SDK and the
tools: three controllers on SASL_PLAINTEXT with SCRAM-SHA-256, node 1 also a broker (its BROKER
listener on SASL_PLAINTEXT too), ``super.users=User:admin`` (the principal the nodes use with each
other, so the quorum itself keeps working), ``allow.everyone.if.no.acl.found=false``, and a user
``alice`` who holds no ACL to begin with."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from integration.harness import FAST_ELECTIONS, HOST, Cluster, wait_until
from kafka_admin_kraft import Admin

SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"
MECHANISM = "SCRAM-SHA-256"
USERS = {"admin": "admin-secret", "alice": "alice-secret"}
AUTHORIZER = {
    "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "super.users": "User:admin",
    "allow.everyone.if.no.acl.found": "false",
}


def _jaas() -> str:
    users = " ".join(f'user_{name}="{password}"' for name, password in USERS.items())
    return f'{SCRAM} required username="admin" password="{USERS["admin"]}" {users};'


def properties() -> dict[str, str]:
    """The nodes' settings: SASL on both listeners, the admin between nodes, the authorizer."""
    return {**FAST_ELECTIONS, **AUTHORIZER,
            "listener.security.protocol.map": "CONTROLLER:SASL_PLAINTEXT,BROKER:SASL_PLAINTEXT",
            "sasl.enabled.mechanisms": MECHANISM,
            "sasl.mechanism.controller.protocol": MECHANISM,
            "listener.name.controller.scram-sha-256.sasl.jaas.config": _jaas(),
            "listener.name.broker.scram-sha-256.sasl.jaas.config": _jaas()}


def client_properties(user: str) -> dict[str, str]:
    """Kafka client properties logging in as ``user``."""
    return {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": MECHANISM,
            "sasl.jaas.config": f'{SCRAM} required username="{user}" password="{USERS[user]}";'}


def write_client_properties(path: Path, user: str) -> str:
    """A ``--command-config`` file for ``user``."""
    path.write_text("".join(f"{key}={value}\n" for key, value in client_properties(user).items()))
    return str(path)


def broker_address(cluster: Cluster) -> str:
    port = cluster.nodes[1].broker_port
    assert port is not None
    return f"{HOST}:{port}"


def admin(cluster: Cluster, user: str, *, brokers: bool = False, timeout_ms: int = 20000) -> Admin:
    """An Admin for ``user``, through the controllers or through node 1's broker listener."""
    options: dict[str, Any] = {key.replace(".", "_"): value for key, value in client_properties(user).items()}
    target = {"bootstrap_servers": broker_address(cluster)} if brokers \
        else {"bootstrap_controllers": cluster.bootstrap_servers()}
    return Admin(**target, default_api_timeout_ms=timeout_ms, request_timeout_ms=5000, **options)


def start(make_cluster: Callable[..., Cluster]) -> Cluster:
    """The quorum started, every voter caught up and the broker registered (as the admin sees it).
    ``make_cluster``: the integration tests' fixture (formats and starts nothing) or the SDK tests' (starts
    the quorum it makes)."""
    cluster = make_cluster(3, properties=properties(), combined_ids={1})
    if not cluster.running_nodes():
        cluster.format().start_all()
    with admin(cluster, "admin", timeout_ms=60000) as a:
        def ready() -> bool:
            cluster.assert_running()
            quorum = a.describe_metadata_quorum()
            voters = sorted(v.replica_id for v in quorum.voters)
            return voters == [1, 2, 3] and all(v.log_end_offset >= quorum.high_watermark > 0
                                                for v in quorum.voters)

        wait_until(ready, 60, "the secured quorum to form and catch up", interval=0.2)
    with admin(cluster, "admin", brokers=True, timeout_ms=60000) as through_broker:
        wait_until(lambda: through_broker.describe_cluster().nodes, 60, "the broker to be registered",
                   interval=0.2)
    return cluster


def eventually(call: Callable[[], Any], timeout: float = 20.0) -> Any:
    """``call()`` once it stops raising (an ACL takes effect on each node once it has replayed it)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return call()
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
