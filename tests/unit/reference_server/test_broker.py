"""The broker's pool of connections to the controller: one request per connection at a time, idle
ones reused."""

from __future__ import annotations

import asyncio

from kafka_admin_kraft.protocol import framing, messages
from kafka_admin_kraft_server.broker import ControllerChannels
from kafka_admin_kraft_server.raft.api import Endpoint
from kafka_admin_kraft_server.security import ClientSecurity


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
