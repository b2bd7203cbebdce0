"""A bootstrap address that answers with bytes that are not Kafka (a huge or negative size prefix, an
HTTP reply, an undecodable body) fails that node only: Admin and AsyncAdmin drop the connection and
use the next address, a real reference controller, with no "generator ignored GeneratorExit" left
behind; with only such addresses the call ends in a timeout that says what the server sent."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest
from integration.harness import Cluster, one_controller

from integration_sdk.bad_server import ANSWERS, garbage_server
from kafka_admin_kraft import Admin, AsyncAdmin
from kafka_admin_kraft.errors import KafkaTimeoutError

pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")


@pytest.fixture(scope="module")
def controller(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """One reference controller, the quorum's leader."""
    with one_controller(tmp_path_factory.mktemp("bad-servers")) as cluster:
        yield cluster


@pytest.fixture(params=sorted(ANSWERS))
def bad_address(request: pytest.FixtureRequest) -> Iterator[str]:
    with garbage_server(ANSWERS[request.param]) as address:
        yield address


OPTIONS = {"request_timeout_ms": 5000, "default_api_timeout_ms": 10000}
SHORT = {"request_timeout_ms": 1000, "default_api_timeout_ms": 1000}


def test_admin_moves_on_from_a_server_that_answers_garbage(controller: Cluster, bad_address: str) -> None:
    bootstrap = f"{bad_address},{controller.bootstrap_servers()}"
    for _ in range(3):  # each new client starts with the bad address
        with Admin(bootstrap_controllers=bootstrap, **OPTIONS) as admin:
            assert admin.describe_cluster().cluster_id == controller.cluster_id
            assert admin.describe_metadata_quorum().leader_id == 1


def test_async_admin_moves_on_from_a_server_that_answers_garbage(
    controller: Cluster, bad_address: str
) -> None:
    bootstrap = f"{bad_address},{controller.bootstrap_servers()}"

    async def main() -> None:
        for _ in range(3):
            async with AsyncAdmin(bootstrap_controllers=bootstrap, **OPTIONS) as admin:
                assert (await admin.describe_cluster()).cluster_id == controller.cluster_id
                assert (await admin.describe_metadata_quorum()).leader_id == 1

    asyncio.run(main())


def test_only_garbage_ends_in_a_timeout_that_says_what_the_server_sent() -> None:
    with garbage_server(ANSWERS["huge-frame"]) as address:
        started = time.monotonic()
        with (
            Admin(bootstrap_controllers=address, **SHORT) as admin,
            pytest.raises(KafkaTimeoutError) as info,
        ):
            admin.describe_metadata_quorum()
        assert time.monotonic() - started < 3
        message = str(info.value)
        sent = "the server sent bytes that are not a Kafka response: frame size 2147483647"
        assert f"last error: {address}: {sent}" in message
        assert "_Established" not in message

        async def main() -> None:
            async with AsyncAdmin(bootstrap_controllers=address, **SHORT) as aadmin:
                with pytest.raises(KafkaTimeoutError, match="not a Kafka response"):
                    await aadmin.describe_cluster()

        asyncio.run(main())
