"""The blocking-socket and asyncio transports (``client/transport.py``): a host that cannot be dialled
fails like an unknown host."""

from __future__ import annotations

import asyncio

import pytest

from kafka_admin_kraft.client.transport import SocketTransport, StreamTransport
from kafka_admin_kraft.errors import KafkaConnectionError

pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")


def test_a_host_the_idna_codec_refuses_fails_to_connect_like_an_unknown_host() -> None:
    """A node may advertise such a host (DescribeCluster); dialling it is that node's failure."""
    with pytest.raises(KafkaConnectionError, match=r"a\.\.b:9: cannot resolve the host name"):
        SocketTransport().connect(("a..b", 9), 1)

    async def main() -> None:
        with pytest.raises(KafkaConnectionError, match=r"a\.\.b:9: cannot resolve the host name"):
            await StreamTransport().connect(("a..b", 9), 1)

    asyncio.run(main())
