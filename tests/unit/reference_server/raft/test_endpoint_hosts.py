"""AddRaftVoter and UpdateRaftVoter whose endpoint host is no valid host name or IP address are
answered INVALID_REQUEST, with nothing appended and the voter set unchanged."""

from __future__ import annotations

import pytest

from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft_server.raft.api import Endpoint
from unit.reference_server.raft.raft_testlib import LISTENER
from unit.reference_server.raft.test_add_voter import add_body, answer, ask, cluster, leader, update_body

BAD_HOSTS = {
    "12..0.0.1": "'12..0.0.1' has an empty label",
    "a" * 300: "has a label longer than 63 characters",
    "n4\x00evil": "contains the character '\\x00' (U+0000)",
    "": "'' is empty",
    "host name": "contains the character ' ' (U+0020)",
}


@pytest.mark.parametrize("host", list(BAD_HOSTS))
def test_add_voter_with_a_malformed_host_is_an_invalid_request(host: str) -> None:
    network = cluster()
    lead = leader(network)
    end_offset = lead.core._log.end_offset()
    rid = ask(network, lead.node_id, 80, add_body(4, listeners=[Endpoint(LISTENER, host, 9004)]), 0)
    code, message = answer(network, rid)
    assert code == 42
    assert message is not None and message.startswith(
        "Add voter request has an invalid endpoint for listener ListenerName(CONTROLLER): the host ")
    assert BAD_HOSTS[host] in message and "\x00" not in message
    assert lead.core.voters.ids() == {1, 2, 3}
    assert lead.core._log.end_offset() == end_offset


def test_a_malformed_host_on_another_listener_is_refused_too() -> None:
    network = cluster()
    lead = leader(network)
    rid = ask(network, lead.node_id, 80, add_body(4, listeners=[Endpoint(LISTENER, "n4", 9004),
                                                                  Endpoint("OTHER", "bad..host", 1)]), 0)
    assert answer(network, rid) == (42, "Add voter request has an invalid endpoint for listener "
                                        "ListenerName(OTHER): the host 'bad..host' has an empty label")


@pytest.mark.parametrize("host", ["n4", "127.0.0.1", "::1", "fe80::1%eth0", "kafka_1.example.com."])
def test_valid_hosts_pass_the_endpoint_check(host: str) -> None:
    network = cluster()
    lead = leader(network)
    rid = ask(network, lead.node_id, 80, add_body(4, listeners=[Endpoint(LISTENER, host, 9004)]), 0)
    code, message = answer(network, rid)
    assert code != 42 or "invalid endpoint" not in (message or "")


@pytest.mark.parametrize("host", list(BAD_HOSTS))
def test_update_voter_with_a_malformed_host_is_an_invalid_request(host: str) -> None:
    network = cluster()
    lead = leader(network)
    before = lead.core.voters.voters[2].endpoints
    end_offset = lead.core._log.end_offset()
    body = update_body(network, 2, listeners=[Endpoint(LISTENER, host, 9002)])
    rid = ask(network, lead.node_id, 82, body, 0)
    answered = network.client_replies.pop(rid)
    assert isinstance(answered, messages.UpdateRaftVoterResponse)
    assert answered.error_code == 42
    assert lead.core.voters.voters[2].endpoints == before
    assert lead.core._log.end_offset() == end_offset
