"""The broker's pool of connections to the controller: one request per connection at a time, idle
ones reused; and what the broker answers when the controller refuses its Envelope."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from kafka_admin_kraft.protocol import framing, messages
from kafka_admin_kraft.protocol.message import Struct
from kafka_admin_kraft_server.broker import BrokerFrontend, BrokerOptions, ControllerChannels
from kafka_admin_kraft_server.handlers.registry import Call
from kafka_admin_kraft_server.raft.api import Endpoint
from kafka_admin_kraft_server.security import ClientSecurity
from unit.reference_server.fakes import voter_set


class ScriptedController:
    """Answers ApiVersions and BrokerHeartbeat, counting the connections it accepted."""

    def __init__(self) -> None:
        self.connections = 0

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        splitter = framing.FrameSplitter()
        while data := await reader.read(65536):
            for frame in splitter.feed(data):
                request = framing.decode_request(frame)
                header = request.header
                reply: messages.ApiVersionsResponse | messages.BrokerHeartbeatResponse
                if header.request_api_key == 18:
                    A = messages.ApiVersionsResponse
                    reply = A(api_keys=[A.ApiVersion(api_key=18, min_version=0, max_version=4),
                                        A.ApiVersion(api_key=63, min_version=0, max_version=1)])
                else:
                    await asyncio.sleep(0.05)
                    reply = messages.BrokerHeartbeatResponse(is_fenced=False)
                version = header.request_api_version
                writer.write(framing.encode_response(reply, version, header.correlation_id))
        writer.close()


def test_requests_share_idle_connections_and_concurrent_ones_open_more() -> None:
    async def scenario() -> tuple[int, int, int]:
        controller = ScriptedController()
        server = await asyncio.start_server(controller.serve, "127.0.0.1", 0)
        endpoint = Endpoint("CONTROLLER", "127.0.0.1", server.sockets[0].getsockname()[1])
        channels = ControllerChannels(100, ClientSecurity(), 1 << 20)
        body = messages.BrokerHeartbeatRequest(broker_id=100)
        try:
            for _ in range(3):
                answer = await channels.request(endpoint, body, 5)
                assert isinstance(answer, messages.BrokerHeartbeatResponse) and answer.is_fenced is False
            sequential = controller.connections
            await asyncio.gather(*(channels.request(endpoint, body, 5) for _ in range(3)))
            return sequential, controller.connections, channels.idle(endpoint)
        finally:
            channels.close()
            server.close()
            await server.wait_closed()

    sequential, total, idle = asyncio.run(scenario())
    assert sequential == 1  # one connection carried the three requests in turn
    assert total == 3 and idle == 3  # three at once: two more connections, all kept afterwards


class RefusingController:
    """Answers ApiVersions, and every Envelope with ``error`` (no inner response)."""

    def __init__(self, error: int) -> None:
        self.error = error

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        splitter = framing.FrameSplitter()
        while data := await reader.read(65536):
            for frame in splitter.feed(data):
                header = framing.decode_request(frame).header
                reply: messages.ApiVersionsResponse | messages.EnvelopeResponse
                if header.request_api_key == 18:
                    A = messages.ApiVersionsResponse
                    reply = A(api_keys=[A.ApiVersion(api_key=18, min_version=0, max_version=4),
                                        A.ApiVersion(api_key=58, min_version=0, max_version=0)])
                else:
                    reply = messages.EnvelopeResponse(response_data=None, error_code=self.error)
                version = header.request_api_version
                writer.write(framing.encode_response(reply, version, header.correlation_id))
        writer.close()


def forwarded(error: int, body: Struct) -> Struct | None:
    """What the broker answers ``body`` with when the controller refuses its Envelope with ``error``."""
    async def scenario() -> Struct | None:
        controller = RefusingController(error)
        server = await asyncio.start_server(controller.serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        core = SimpleNamespace(leader_id=1, voters=voter_set(1, port=port - 1))
        channels = ControllerChannels(100, ClientSecurity(), 1 << 20)
        broker = BrokerFrontend(BrokerOptions({"BROKER": ("127.0.0.1", 9092)}, "CONTROLLER"), 100, "c",
                                core, lambda listener: None, {}, channels)  # type: ignore[arg-type]
        frame = framing.encode_request(body, 2, 7, "client")[4:]
        try:
            return await broker.forward(Call(framing.decode_request(frame), "BROKER", "/127.0.0.1:1", frame,
                                             "127.0.0.1", "alice"))
        finally:
            channels.close()
            server.close()
            await server.wait_closed()

    return asyncio.run(scenario())


def test_an_envelope_refused_by_the_controller_is_an_unknown_server_error_for_the_client() -> None:
    """Kafka's ForwardingManager: an envelope error (here CLUSTER_AUTHORIZATION_FAILED, the broker's own
    principal lacking CLUSTER_ACTION) is not the client's; it gets UNKNOWN_SERVER_ERROR in the API's
    response, and UNSUPPORTED_VERSION closes its connection."""
    update = messages.UpdateFeaturesRequest(feature_updates=[])
    answer = forwarded(31, update)
    assert isinstance(answer, messages.UpdateFeaturesResponse)
    assert (answer.error_code, answer.error_message) == (
        -1, "The server experienced an unexpected error when processing the request.")
    create = messages.CreateAclsRequest(creations=[messages.CreateAclsRequest.AclCreation()] * 2)
    created = forwarded(31, create)
    assert isinstance(created, messages.CreateAclsResponse)
    assert [r.error_code for r in created.results] == [-1, -1]
    assert forwarded(35, update) is None
