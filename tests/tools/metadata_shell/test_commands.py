"""Kafka's command handlers: their output byte for byte, globs, and the JSON form."""

from __future__ import annotations

import pytest
from unit.image.image_testlib import batches, broker, config, feature, partition, topic

from kafka_admin_kraft.image.model import MetadataImage
from kafka_admin_kraft.image.nodes import root_node
from kafka_admin_kraft.image.replay import ImageBuilder
from kafka_admin_kraft_cli.metadata_shell.commands import State, glob_regex, ls_entries, run


class FakeShell:
    def __init__(self, width: int = 80, entries: list[str] | None = None) -> None:
        self.width = width
        self.entries = entries or []
        self.exited = False

    def screen_width(self) -> int:
        return self.width

    def history(self) -> list[str]:
        return self.entries

    def exit(self) -> None:
        self.exited = True


@pytest.fixture
def state() -> State:
    builder = ImageBuilder()
    groups = [
        [feature("metadata.version", 33), feature("group.version", 1)],
        [broker(1), broker(2)],
        [topic("orders"), partition(0, [1, 2])],
        [config(2, "orders", "retention.ms", "1")],
    ]
    for batch in batches(groups):
        builder.apply_batch(batch)
    return State(root_node(builder.image, lambda: "0.1.0"))


def text(state: State, *words: str, shell: FakeShell | None = None) -> str:
    return run(list(words), state, shell).text


def test_ls(state: State) -> None:
    assert text(state, "ls") == "image\nlocal\n"
    assert text(state, "ls", "/image/features") == ("finalized_group.version\nmetadataVersion\n")
    # Files first, then each directory under its name when more than one thing is listed.
    assert text(state, "ls", "/image/features/metadataVersion", "/local") == (
        "metadataVersion\n\nlocal:\ncommitId\nversion\n"
    )
    assert (
        text(state, "ls", "/local", "/image/cluster")
        == "local:\ncommitId\nversion\n\ncluster:\nbrokers\ncontrollers\n"
    )
    assert (
        text(state, "ls", "/nope", "/local") == "ls: /nope: no such file or directory.\ncommitId\nversion\n"
    )


def test_ls_columns_fit_the_screen_in_the_shell(state: State) -> None:
    # Four columns of 14, 17, 13 and 8: five (61) would not fit in 60.
    assert text(state, "ls", "/image", shell=FakeShell(60)) == (
        "acls          configs          producerIds  topics\n"
        "clientQuotas  delegationToken  provenance   \n"  # Kafka pads every column but the last
        "cluster       features         scram        \n"
    )
    assert ls_entries(["a", "b"], 7) == "a\nb\n"  # a screen under 8 columns wide: one column


def test_cat(state: State) -> None:
    assert text(state, "cat", "/image/features/metadataVersion") == "Optional[4.4-IV2]\n"
    assert text(state, "cat", "/image/cluster/brokers/*") == "".join(
        f"BrokerRegistration(id={n}, epoch=10, incarnationId=MJkaH0j0RwuC3W2GHQHtWA, listeners=[Endpoint("
        f"listenerName='INTERNAL', securityProtocol=PLAINTEXT, host='localhost', port={9090 + n})], "
        "supportedFeatures={metadata.version: 1-4}, rack=Optional.empty, fenced=true, "
        "inControlledShutdown=false, isMigratingZkBroker=false, directories=[])\n"
        for n in (1, 2)
    )
    assert (
        text(state, "cat", "/image", "/x")
        == "cat: /image: Is a directory\ncat: /x: No such file or directory.\n"
    )


def test_find_prints_the_path_as_given(state: State) -> None:
    assert text(state, "find", "/image/cluster") == (
        "/image/cluster\n/image/cluster/brokers\n/image/cluster/brokers/1\n/image/cluster/brokers/2\n"
        "/image/cluster/controllers\n"
    )
    assert text(state, "find", "/image/clu*/c*") == "/image/clu*/c*\n"
    assert text(state, "find", "/x") == "find: /x: no such file or directory.\n"


def test_tree(state: State) -> None:
    assert text(state, "tree", "/image/configs") == "TOPIC:orders:\n  retention.ms:\n    1\n"
    assert text(state, "tree", "/image/topics/byName/orders/name") == "orders\n"
    assert text(state, "tree", "/y") == "tree: /y: No such file or directory.\n"


def test_cd_pwd_and_relative_paths(state: State) -> None:
    shell = FakeShell()
    assert text(state, "cd", "/image/topics/byName", shell=shell) == ""
    assert text(state, "pwd", shell=shell) == "/image/topics/byName\n"
    assert text(state, "cat", "orders/name", shell=shell) == "orders\n"
    assert text(state, "ls", "../..", shell=shell).startswith("acls  ")
    assert text(state, "cd", "orders/name", shell=shell) == "cd: orders/name: not a directory.\n"
    assert text(state, "cd", "missing", shell=shell) == "cd: missing: no such directory.\n"
    assert text(state, "cd", shell=shell) == "" and state.working_directory == "/"


def test_history_man_help_and_exit(state: State) -> None:
    shell = FakeShell(entries=["ls", "cd /image", "history 2"])
    assert text(state, "history", shell=shell) == "    0  ls\n    1  cd /image\n    2  history 2\n"
    assert text(state, "history", "2", shell=shell) == "    1  cd /image\n    2  history 2\n"
    assert text(state, "history", "-1", shell=shell) == ""
    assert (
        text(state, "man", "nope", shell=shell)
        == "man: unknown command nope. Type help to get a list of commands.\n"
    )
    assert text(state, "help", shell=shell).startswith("Welcome to the Apache Kafka metadata shell.\n")
    run(["exit"], state, shell)
    assert shell.exited


@pytest.mark.parametrize(
    ("glob", "regex"),
    [
        ("plain", None),
        ("a*", "^a.*$"),
        ("a?c", "^a.c$"),
        ("{x,y}z", "^(?:(?:x)|(?:y))z$"),
        ("[!ab]", "^[^ab]$"),
        ("a.b*", "^a\\.b.*$"),
        ("\\*x*", "^\\*x.*$"),
    ],
)
def test_globs_translate_as_kafkas_glob_component(glob: str, regex: str | None) -> None:
    assert glob_regex(glob) == regex


def test_glob_matching(state: State) -> None:
    assert text(state, "ls", "/image/features/{meta*,nope}") == "metadataVersion\n"
    assert text(state, "cat", "/image/topics/byName/[o]rders/name") == "orders\n"
    assert (
        text(state, "ls", "/image/topics/byName/{orders")
        == "ls: /image/topics/byName/{orders: no such file or directory.\n"
    )


def test_json_documents(state: State) -> None:
    assert run(["cat", "/image/cluster/brokers/1"], state).document["nodes"][0]["value"]["fenced"] is True
    listing = run(["ls", "/local", "/nope"], state)
    assert listing.document == {
        "listings": [{"path": "/local", "directory": True, "children": ["commitId", "version"]}],
        "errors": ["/nope: no such file or directory"],
    }
    assert listing.errors == 1
    assert run(["find", "/local"], state).document["paths"] == ["/local", "/local/commitId", "/local/version"]
    assert run(["tree", "/image/configs"], state).document["trees"] == [
        {"path": "/image/configs", "tree": {"TOPIC:orders": {"retention.ms": "1"}}}
    ]
    assert run(["pwd"], state).document == {
        "error": "invalid choice: 'pwd' (choose from 'cat', 'find', 'ls', 'tree')"
    }


def test_an_empty_image(state: State) -> None:
    empty = State(root_node(MetadataImage(), lambda: "v"))
    assert text(empty, "cat", "/image/features/metadataVersion", "/image/provenance") == (
        "Optional.empty\noffset -1, epoch -1, time 1969-12-31T23:59:59.999Z[UTC]\n"
    )
    assert text(empty, "ls", "/image/topics/byName") == ""
