"""What several handler tests build: the view of a controller of a three-voter quorum, and the
ControllerRegistration requests of controller 4."""

from __future__ import annotations

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft_server.handlers import ServerView
from unit.reference_server.fakes import voter_set

REQ = messages.ControllerRegistrationRequest
RECORD = messages.RegisterControllerRecord
INCARNATION_A = Uuid(b"\x01" * 16)
INCARNATION_B = Uuid(b"\x02" * 16)


def view(**overrides: object) -> ServerView:
    """Node 1 of voters 1-3, node 2 leading, metadata.version 29 finalized; ``overrides`` replace fields."""
    fields: dict[str, object] = dict(cluster_id="MkU3OEVBNTcwNTJENDM2Qk", node_id=1, leader_id=2,
                                     voters=voter_set(1, 2, 3), listener="CONTROLLER",
                                     finalized_features={"metadata.version": 29, "group.version": 1,
                                                         "kraft.version": 1},
                                     finalized_features_epoch=42, metadata_version=29)
    fields.update(overrides)
    return ServerView(**fields)  # type: ignore[arg-type]



def registration(controller_id: int = 4, incarnation: Uuid = INCARNATION_A, host: str = "ctl4",
                 port: int = 9093, **overrides: object) -> messages.ControllerRegistrationRequest:
    """A valid registration of one CONTROLLER listener; ``overrides`` replace request fields."""
    fields: dict[str, object] = dict(
        controller_id=controller_id, incarnation_id=incarnation, zk_migration_ready=False,
        listeners=[REQ.Listener(name="CONTROLLER", host=host, port=port, security_protocol=0)],
        features=[REQ.Feature(name="metadata.version", min_supported_version=7, max_supported_version=29)])
    fields.update(overrides)
    return REQ(**fields)  # type: ignore[arg-type]
