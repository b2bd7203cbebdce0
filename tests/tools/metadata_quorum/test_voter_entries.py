"""Voter entries as `reconcile --voters` and `scale --add` take them, and `--controller-config`
controllers merged into them."""

from __future__ import annotations

import pytest

from kafka_admin_kraft.models import Endpoint
from kafka_admin_kraft.voters import DesiredVoter
from kafka_admin_kraft_cli.metadata_quorum.voter_entries import (
    ConfiguredController,
    VoterEntry,
    VoterSpecError,
    desired_voters,
    parse_entries,
    with_configured,
)
from tools.metadata_quorum.voter_util import D1, D2, D3, D4


def test_entries_in_each_form() -> None:
    entries = parse_entries([f"1, 2@{D2}", f"3@ctl3.example:9093:{D3}", f"4@[::1]:9094:{D4}"])
    assert entries == [
        VoterEntry(1),
        VoterEntry(2, D2),
        VoterEntry(3, D3, "ctl3.example", 9093),
        VoterEntry(4, D4, "::1", 9094),
    ]
    assert parse_entries([","]) == []
    voters = desired_voters(entries, "CONTROLLER")
    assert voters[0] == DesiredVoter(1)
    assert voters[2].endpoints == (Endpoint(listener="CONTROLLER", host="ctl3.example", port=9093),)
    with pytest.raises(VoterSpecError, match="give --controller-listener"):
        desired_voters(entries, None)
    assert desired_voters(entries[:2], None) == [DesiredVoter(1), DesiredVoter(2, D2)]


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("x", "'x' is not a node id"),
        ("-1", "'-1' is not a node id"),
        ("2147483648", "is not a node id"),
        ("1@nope", "'nope' is not a directory id"),
        ("1@AAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAA is a reserved directory id"),
        ("1@host:9093", "No colon following port could be found."),
        (f"1@host:port:{D1}", "Failed to parse port"),
        ("1,1", "node id 1 is given more than once"),
    ],
)
def test_bad_entries_say_what_is_wrong(text: str, fragment: str) -> None:
    with pytest.raises(VoterSpecError) as info:
        parse_entries([text])
    assert fragment in str(info.value)
    assert str(info.value).startswith("Invalid --voters")
    assert "\n" not in str(info.value)


def test_a_configured_controller_fills_in_its_entry_once() -> None:
    endpoint = Endpoint(listener="CONTROLLER", host="ctl4", port=9093)
    configured = {4: ConfiguredController(DesiredVoter(4, D4, (endpoint,)), auto_join=False)}
    assert with_configured([DesiredVoter(1), DesiredVoter(4)], configured, "--voters") == [
        DesiredVoter(1), DesiredVoter(4, D4, (endpoint,))]
    stray = "describes controller 4, which --voters does not name and which is not a voter"
    with pytest.raises(VoterSpecError, match=stray):
        with_configured([DesiredVoter(1)], configured, "--voters", [1, 2])
    with pytest.raises(VoterSpecError, match="Controller 4 is given both in --voters and by --controller"):
        with_configured([DesiredVoter(4, D4)], configured, "--voters")


def test_a_configured_controller_that_the_change_removes_only_informs_the_plan() -> None:
    """Its file tells whether it would add itself back (controller.quorum.auto.join.enable); it adds
    nothing to the voters wanted."""
    configured = {4: ConfiguredController(DesiredVoter(4, D4), auto_join=True)}
    assert with_configured([DesiredVoter(1)], configured, "--voters", [1, 4]) == [DesiredVoter(1)]
