"""``host_problem``: the one host check the server (and the SDK) apply to endpoints from outside."""

from __future__ import annotations

import pytest

from kafka_admin_kraft.hosts import host_problem, printable_host

VALID = ["localhost", "n1", "kafka_1", "broker-1.example.com", "example.com.", "127.0.0.1", "::1",
         "2001:db8::5", "fe80::1%eth0", "bücher.de", "a" * 63, ".".join(["a" * 63] * 3) + ".b" * 30]


@pytest.mark.parametrize("host", VALID)
def test_valid_host_names_and_ip_literals(host: str) -> None:
    assert host_problem(host) is None


@pytest.mark.parametrize(("host", "reason"), [
    ("", "is empty"),
    ("12..0.0.1", "has an empty label"),
    (".leading", "has an empty label"),
    ("a" * 64, "has a label longer than 63 characters"),
    ("a" * 300, "has a label longer than 63 characters"),
    (".".join(["a" * 60] * 5), "is longer than 253 characters"),
    ("n1\x00", "contains the character '\\x00' (U+0000)"),
    ("n1\n", "contains the character '\\n' (U+000A)"),
    ("zero\u200bwidth", "contains the character '\\u200b' (U+200B)"),
    ("host name", "contains the character ' ' (U+0020)"),
    ("a/b", "contains '/' (a host name has letters, digits, '-', '_' and '.')"),
    ("256.1.1.1", "is not a valid IPv4 address"),
    ("1.2.3", "is not a valid IPv4 address"),
    ("::g", "is not a valid IPv6 address"),
    ("[::1]", "is not a valid IPv6 address"),
])
def test_malformed_hosts_name_what_is_wrong(host: str, reason: str) -> None:
    assert host_problem(host) == reason


def test_printable_host_escapes_control_characters_only() -> None:
    assert printable_host("n1.example.com") == "n1.example.com"
    assert printable_host("n1\x00") == "'n1\\x00'"
