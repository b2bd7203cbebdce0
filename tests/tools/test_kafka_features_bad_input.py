"""The installed ``kafka-features`` given hostile input: Kafka's one-line message and exit status 1 (the
usage line first for a parse error), never a Python traceback. Nothing listens at the bootstrap
address: every case fails before a request would be sent."""
# ruff: noqa: E501

from __future__ import annotations

from pathlib import Path

import pytest

from tools.cluster_util import run

NOWHERE = "127.0.0.1:1"
BLANK = "Provided feature can not be empty."
NEGATIVE = "Cannot specify a negative version level."
UNKNOWN = ("Unknown metadata.version '{}'. Supported metadata.version are: 3.3-IV3, 3.4-IV0, 3.5-IV0, 3.5-IV1, "
           "3.5-IV2, 3.6-IV0, 3.6-IV1, 3.6-IV2, 3.7-IV0, 3.7-IV1, 3.7-IV2, 3.7-IV3, 3.7-IV4, 3.8-IV0, 3.9-IV0, "
           "4.0-IV0, 4.0-IV1, 4.0-IV2, 4.0-IV3, 4.1-IV0, 4.1-IV1, 4.2-IV0, 4.2-IV1, 4.3-IV0, 4.4-IV0, 4.4-IV1, "
           "4.4-IV2, 4.5-IV0")  # Kafka 4.4's levels, unstable ones included (PR #23235)
DEPRECATED = " `metadata` flag is deprecated and may be removed in a future release.\n"

CASES: dict[str, tuple[list[str], str]] = {
    # name: (arguments after the bootstrap option, the last stderr line); {tmp} is the test's directory
    "upgrade, no name": (["upgrade", "--feature", "=1"], BLANK),
    "upgrade, blank name": (["upgrade", "--feature", " \t=1"], BLANK),
    "downgrade, no name": (["downgrade", "--feature", "=1"], BLANK),
    "upgrade, blank name among good ones": (["upgrade", "--feature", "group.version=1", "--feature", " = 2"], BLANK),
    "disable, empty name": (["disable", "--feature", ""], BLANK),
    "disable, blank name": (["disable", "--feature", "  "], BLANK),
    "no level": (["upgrade", "--feature", "group.version="], "Can't parse feature=level string group.version=: unable to parse  as a short."),
    "a word for a level": (["upgrade", "--feature", "a=b"], "Can't parse feature=level string a=b: unable to parse b as a short."),
    "no equals sign": (["downgrade", "--feature", "a"], "Can't parse feature=level string a: equals sign not found."),
    "two equals signs": (["upgrade", "--feature", "a=1=2"], "Can't parse feature=level string a=1=2: unable to parse 1=2 as a short."),
    "level beyond a short": (["upgrade", "--feature", "a=32768"], "Can't parse feature=level string a=32768: unable to parse 32768 as a short."),
    "huge level": (["upgrade", "--feature", "a=99999999999999999999"], "Can't parse feature=level string a=99999999999999999999: unable to parse 99999999999999999999 as a short."),
    "upgrade, negative level": (["upgrade", "--feature", "a=-1"], NEGATIVE),
    "downgrade, negative level": (["downgrade", "--feature", "a=-1"], NEGATIVE),
    "upgrade to 0": (["upgrade", "--feature", "a=0"], "The upgradeType flag should be set to SAFE_DOWNGRADE or UNSAFE_DOWNGRADE when the provided maxVersionLevel:0 is < 1."),
    "level checked before the duplicate": (["upgrade", "--feature", "a=1", "--feature", "a=0"], "The upgradeType flag should be set to SAFE_DOWNGRADE or UNSAFE_DOWNGRADE when the provided maxVersionLevel:0 is < 1."),
    "duplicate, once with blanks": (["upgrade", "--feature", "group.version=1", "--feature", " group.version = 1 "], "Feature group.version was specified more than once."),
    "duplicate disable": (["disable", "--feature", "a", "--feature", "a"], "Feature a was specified more than once."),
    "release version empty": (["upgrade", "--release-version", ""], UNKNOWN.format("")),
    "release version huge": (["downgrade", "--release-version", "99999999999.1"], UNKNOWN.format("99999999999.1")),
    "metadata empty": (["upgrade", "--metadata", ""], UNKNOWN.format("")),
    "version mapping, unstable release without IV": (["version-mapping", "--release-version", "4.5"], UNKNOWN.format("4.5")),
    "dependencies, no name": (["feature-dependencies", "--feature", "=1"], "Unknown feature: "),
    "dependencies, no level": (["feature-dependencies", "--feature", "group.version="], "Can't parse feature=level string group.version=: unable to parse  as a short."),
    "dependencies, negative level": (["feature-dependencies", "--feature", "group.version=-1"], "No feature:group.version with feature level -1"),
    "dependencies, unknown metadata.version": (["feature-dependencies", "--feature", "metadata.version=32767"], "Unknown metadata.version 32767"),
    "node id huge": (["describe", "--node-id", "99999999999"], "kafka-features describe: error: argument --node-id: could not convert '99999999999' to Integer (For input string: \"99999999999\")"),
    "node id empty": (["describe", "--node-id", ""], "kafka-features describe: error: argument --node-id: could not convert '' to Integer (For input string: \"\")"),
    "command config missing": (["--command-config", "{tmp}/missing", "describe"], "Properties file {tmp}/missing does not exists!"),
    "arguments file (Kafka's tool reads none)": (["@{tmp}/args"], "kafka-features: error: invalid choice: '@{tmp}/args' (choose from 'describe', 'upgrade', 'downgrade', 'disable', 'version-mapping', 'feature-dependencies')"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_hostile_arguments_get_one_line_and_exit_status_1(tmp_path: Path, case: str) -> None:
    arguments, message = CASES[case]

    def fill(text: str) -> str:
        return text.replace("{tmp}", str(tmp_path))

    result = run("kafka-features", "--bootstrap-controller", NOWHERE, *map(fill, arguments), timeout=30)
    assert "Traceback" not in result.stderr, result.stderr
    assert (result.returncode, result.stdout) == (1, DEPRECATED if "--metadata" in arguments else "")
    lines = result.stderr.splitlines()
    assert lines[-1] == fill(message)
    assert len(lines) == 1 or (len(lines) == 2 and lines[0].startswith("usage: "))
