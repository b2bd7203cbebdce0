"""Arguments of the public SDK are checked at the boundary (``client/arguments.py``, with
``kafka_admin_kraft.values``): a table of wrong calls (every public method and argument of Admin and
AsyncAdmin), each refused at once with the right exception type and a message that names the argument
and the accepted forms, before anything is sent; and the accepted forms, which reach the wire as meant.
The models users build are checked the same way: see ``tests/unit/test_models.py``."""
# ruff: noqa: E501

from __future__ import annotations

import asyncio
import math
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kafka_admin_kraft import Admin, AsyncAdmin, Endpoint, FeatureUpdate
from kafka_admin_kraft.client.config import load_properties
from kafka_admin_kraft.errors import ConfigError
from kafka_admin_kraft.protocol.primitives import Uuid
from unit.client.fake import AsyncFakeNetwork, FakeNetwork

DIRECTORY = "wZoXPqWoSu6F6c8MkmdyAg"
ENDPOINTS = {"CONTROLLER": ("127.0.0.1", 9093)}
NODE_ID = "an int from 0 to 2147483647"
TIMEOUT = "a number of seconds"
GOOD = "h1:9093"

# ------------------------------------------------------------------ construction

Build = Callable[[type[Any]], Any]


def _construct(**kwargs: Any) -> Build:
    return lambda cls: cls(**kwargs)


def _from_config(*args: Any, **kwargs: Any) -> Build:
    return lambda cls: cls.from_config(*args, **kwargs)


CONSTRUCTION: list[tuple[str, Build, type[BaseException], tuple[str, ...]]] = [
    ("controllers-int", _construct(bootstrap_controllers=123), TypeError, ("bootstrap_controllers", "host:port")),
    ("controllers-bytes", _construct(bootstrap_controllers=b"h:1"), TypeError, ("bootstrap_controllers",)),
    ("controllers-list-of-int", _construct(bootstrap_controllers=["h:1", 2]), TypeError, ("bootstrap_controllers",)),
    ("controllers-set", _construct(bootstrap_controllers={"h:1"}), TypeError, ("bootstrap_controllers", "list")),
    ("servers-int", _construct(bootstrap_servers=9092), TypeError, ("bootstrap_servers",)),
    ("controllers-only-commas", _construct(bootstrap_controllers=",,,"), ConfigError,
     ("bootstrap.controllers", "no address", "host:port")),
    ("servers-only-commas", _construct(bootstrap_servers=" , "), ConfigError, ("bootstrap.servers", "no address")),
    ("empty-label-host", _construct(bootstrap_controllers="12..0.0.1:9"), ConfigError,
     ("bootstrap.controllers", "'12..0.0.1:9'", "empty label")),
    ("bad-ipv6", _construct(bootstrap_controllers="[zz::1]:9093"), ConfigError,
     ("bootstrap.controllers", "IPv6")),
    ("host-with-bad-character", _construct(bootstrap_controllers="h$st:9093"), ConfigError,
     ("bootstrap.controllers", "'h$st'")),
    ("no-port", _construct(bootstrap_controllers="h1"), ConfigError, ("bootstrap.controllers", "host:port")),
    ("port-zero", _construct(bootstrap_controllers="h1:0"), ConfigError, ("bootstrap.controllers", "1-65535")),
    ("port-too-big", _construct(bootstrap_controllers="h1:65536"), ConfigError, ("bootstrap.controllers", "1-65535")),
    ("port-in-other-digits", _construct(bootstrap_controllers="h1:\uff19\uff10"), ConfigError,
     ("bootstrap.controllers", "host:port")),
    ("one-bad-address-of-two", _construct(bootstrap_controllers=["h1:1", "h2:x"]), ConfigError,
     ("bootstrap.controllers", "'h2:x'")),
    ("both-bootstraps", _construct(bootstrap_servers=GOOD, bootstrap_controllers=GOOD), ConfigError,
     ("bootstrap.servers", "bootstrap.controllers")),
    ("no-bootstrap", _construct(), ConfigError, ("bootstrap.servers", "bootstrap.controllers")),
    ("timeout-text", _construct(bootstrap_controllers=GOOD, request_timeout_ms="soon"), ConfigError,
     ("request.timeout.ms", "integer")),
    ("timeout-bool", _construct(bootstrap_controllers=GOOD, request_timeout_ms=True), TypeError,
     ("request.timeout.ms", "a str or an int")),
    ("timeout-float", _construct(bootstrap_controllers=GOOD, request_timeout_ms=1.5), TypeError,
     ("request.timeout.ms",)),
    ("timeout-zero", _construct(bootstrap_controllers=GOOD, request_timeout_ms=0), ConfigError,
     ("request.timeout.ms", "at least 1")),
    ("retries-negative", _construct(bootstrap_controllers=GOOD, retries=-1), ConfigError, ("retries",)),
    ("client-id-list", _construct(bootstrap_controllers=GOOD, client_id=["x"]), TypeError, ("client.id",)),
    ("unknown-option", _construct(bootstrap_controllers=GOOD, linger_ms=5), ConfigError, ("linger.ms",)),
    ("security-protocol", _construct(bootstrap_controllers=GOOD, security_protocol="TLS"), ConfigError,
     ("security.protocol", "SASL_SSL")),
    ("config-not-a-mapping", _from_config("bootstrap.controllers=h1:9093"), TypeError, ("config", "mapping")),
    ("config-int-key", _from_config({"bootstrap.controllers": GOOD, 1: "x"}), TypeError, ("config", "str")),
    ("config-bootstrap-int", _from_config({"bootstrap.controllers": 123}), TypeError,
     ("bootstrap.controllers", "host:port")),
    ("config-bootstrap-commas", _from_config({"bootstrap.controllers": ",,,"}), ConfigError,
     ("bootstrap.controllers",)),
    ("config-bad-host", _from_config({"bootstrap.servers": "a..b:1"}), ConfigError, ("bootstrap.servers", "a..b")),
    ("config-unknown-keyword", _from_config({"bootstrap.servers": GOOD}, timeout=5), TypeError, ("timeout",)),
]


@pytest.mark.parametrize("cls", [Admin, AsyncAdmin])
@pytest.mark.parametrize(("build", "error", "fragments"), [case[1:] for case in CONSTRUCTION],
                         ids=[case[0] for case in CONSTRUCTION])
def test_wrong_construction_is_refused_naming_the_argument(
    cls: type[Any], build: Build, error: type[BaseException], fragments: tuple[str, ...]
) -> None:
    with pytest.raises(error) as info:
        build(cls)
    assert type(info.value) is error
    for fragment in fragments:
        assert fragment in str(info.value)


def test_config_errors_are_value_errors_naming_the_setting() -> None:
    with pytest.raises(ValueError) as info:
        Admin(bootstrap_controllers=",,,")
    assert isinstance(info.value, ConfigError) and info.value.names == ("bootstrap.controllers",)


def test_properties_file_errors_name_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "missing.properties"
    with pytest.raises(ConfigError, match=f"cannot read the properties file {missing}"):
        Admin.from_properties(missing)
    folder = tmp_path / "folder.properties"
    folder.mkdir()
    with pytest.raises(ConfigError, match=f"cannot read the properties file {folder}"):
        load_properties(folder)
    malformed = tmp_path / "malformed.properties"
    malformed.write_bytes(b"bootstrap.controllers=h1:9093\nclient.id=\\u12\n")
    with pytest.raises(ConfigError, match=f"cannot parse the properties file {malformed}.*uxxxx"):
        AsyncAdmin.from_properties(malformed)
    bad_bootstrap = tmp_path / "bad.properties"
    bad_bootstrap.write_text("bootstrap.controllers=,,,\n")
    with pytest.raises(ConfigError, match="bootstrap.controllers lists no address"):
        Admin.from_properties(bad_bootstrap)
    with pytest.raises(TypeError, match="path must be the path of a .properties file"):
        Admin.from_properties(3)  # type: ignore[arg-type]


def test_properties_files_are_read_as_kafka_reads_them(tmp_path: Path) -> None:
    """ISO-8859-1 bytes (what java.util.Properties.load(InputStream) decodes) and \\uXXXX escapes."""
    path = tmp_path / "admin.properties"
    path.write_bytes(b"bootstrap.controllers=h1:9093\nclient.id=caf\xe9-\\u00e9\\u0041 \xff\n")
    assert load_properties(path)["client.id"] == "caf\u00e9-\u00e9A \u00ff"
    with Admin.from_properties(path) as admin:
        assert admin.config.client_id == "caf\u00e9-\u00e9A \u00ff"


# ------------------------------------------------------------------ operations

Case = tuple[str, str, tuple[Any, ...], dict[str, Any], type[BaseException], tuple[str, ...]]


def _op(name: str, *args: Any, **kwargs: Any) -> tuple[str, tuple[Any, ...], dict[str, Any]]:
    return name, args, kwargs


def _add(**changes: Any) -> tuple[str, tuple[Any, ...], dict[str, Any]]:
    call: dict[str, Any] = {"voter_id": 4, "voter_directory_id": DIRECTORY, "endpoints": ENDPOINTS, **changes}
    return "add_raft_voter", (), call


def _remove(**changes: Any) -> tuple[str, tuple[Any, ...], dict[str, Any]]:
    return "remove_raft_voter", (), {"voter_id": 3, "voter_directory_id": DIRECTORY, **changes}


OPERATIONS: list[tuple[str, tuple[str, tuple[Any, ...], dict[str, Any]], type[BaseException], tuple[str, ...]]] = [
    # every operation's timeout
    ("quorum-timeout-text", _op("describe_metadata_quorum", timeout="5"), TypeError, ("timeout", TIMEOUT)),
    ("quorum-timeout-bool", _op("describe_metadata_quorum", timeout=True), TypeError, ("timeout", TIMEOUT)),
    ("quorum-timeout-false", _op("describe_metadata_quorum", timeout=False), TypeError, ("timeout",)),
    ("quorum-timeout-zero", _op("describe_metadata_quorum", timeout=0), ValueError, ("timeout", "above 0")),
    ("quorum-timeout-negative", _op("describe_metadata_quorum", timeout=-1), ValueError, ("timeout",)),
    ("quorum-timeout-nan", _op("describe_metadata_quorum", timeout=math.nan), ValueError, ("timeout", "nan")),
    ("quorum-timeout-inf", _op("describe_metadata_quorum", timeout=math.inf), ValueError, ("timeout", "inf")),
    ("quorum-timeout-huge", _op("describe_metadata_quorum", timeout=10**400), ValueError, ("timeout", "at most")),
    ("quorum-timeout-list", _op("describe_metadata_quorum", timeout=[5]), TypeError, ("timeout",)),
    ("cluster-timeout-text", _op("describe_cluster", timeout="5"), TypeError, ("timeout", TIMEOUT)),
    ("cluster-timeout-nan", _op("describe_cluster", timeout=math.nan), ValueError, ("timeout",)),
    ("cluster-timeout-minus-inf", _op("describe_cluster", timeout=-math.inf), ValueError, ("timeout",)),
    ("features-timeout-zero", _op("describe_features", timeout=0.0), ValueError, ("timeout",)),
    ("add-timeout-text", _add(timeout="5"), TypeError, ("timeout",)),
    ("add-timeout-nan", _add(timeout=math.nan), ValueError, ("timeout",)),
    ("remove-timeout-bool", _remove(timeout=True), TypeError, ("timeout",)),
    ("remove-timeout-negative", _remove(timeout=-0.5), ValueError, ("timeout",)),
    ("update-timeout-text", _op("update_features", {"group.version": 1}, timeout="5"), TypeError, ("timeout",)),
    ("update-timeout-inf", _op("update_features", {"group.version": 1}, timeout=math.inf), ValueError,
     ("timeout",)),
    # describe_features(node_id)
    ("features-node-text", _op("describe_features", node_id="1"), TypeError, ("node_id", NODE_ID)),
    ("features-node-negative", _op("describe_features", node_id=-1), ValueError, ("node_id", NODE_ID)),
    ("features-node-bool", _op("describe_features", node_id=True), TypeError, ("node_id", "bool")),
    ("features-node-float", _op("describe_features", node_id=1.0), TypeError, ("node_id",)),
    ("features-node-too-big", _op("describe_features", node_id=2**31), ValueError, ("node_id", NODE_ID)),
    # add_raft_voter(voter_id, voter_directory_id, endpoints, ack_when_committed, cluster_id)
    ("add-id-text", _add(voter_id="2"), TypeError, ("voter_id", NODE_ID, "'2'")),
    ("add-id-negative", _add(voter_id=-1), ValueError, ("voter_id", NODE_ID)),
    ("add-id-bool", _add(voter_id=True), TypeError, ("voter_id", "bool")),
    ("add-id-float", _add(voter_id=2.0), TypeError, ("voter_id",)),
    ("add-id-none", _add(voter_id=None), TypeError, ("voter_id",)),
    ("add-id-too-big", _add(voter_id=2**31), ValueError, ("voter_id",)),
    ("add-directory-int", _add(voter_directory_id=123), TypeError, ("voter_directory_id", "22 characters")),
    ("add-directory-none", _add(voter_directory_id=None), TypeError, ("voter_directory_id",)),
    ("add-directory-short", _add(voter_directory_id="abc"), ValueError, ("voter_directory_id", "'abc'")),
    ("add-directory-not-base64", _add(voter_directory_id="!" * 22), ValueError, ("voter_directory_id",)),
    ("add-directory-bytes", _add(voter_directory_id=bytes(16)), TypeError, ("voter_directory_id",)),
    ("add-directory-python-uuid", _add(voter_directory_id=uuid.uuid4()), TypeError, ("voter_directory_id", "Uuid")),
    ("add-endpoints-text", _add(endpoints="CONTROLLER://h:9093"), TypeError, ("endpoints", "(host, port)")),
    ("add-endpoints-one-endpoint", _add(endpoints=Endpoint(listener="C", host="h", port=1)), TypeError,
     ("endpoints", "Endpoint")),
    ("add-endpoints-one-endpoint-fields", _add(endpoints={"listener": "C", "host": "h", "port": 1}), TypeError,
     ("endpoints", "put it in a list")),
    ("add-endpoints-none", _add(endpoints=None), TypeError, ("endpoints",)),
    ("add-endpoints-int", _add(endpoints=5), TypeError, ("endpoints",)),
    ("add-endpoints-empty-mapping", _add(endpoints={}), ValueError, ("endpoints", "at least one listener")),
    ("add-endpoints-empty-list", _add(endpoints=[]), ValueError, ("endpoints", "at least one listener")),
    ("add-endpoints-address-text", _add(endpoints={"CONTROLLER": "h:9093"}), TypeError,
     ("endpoints['CONTROLLER']", "(host, port)")),
    ("add-endpoints-host-only", _add(endpoints={"CONTROLLER": ("h",)}), TypeError, ("endpoints['CONTROLLER']",)),
    ("add-endpoints-triple", _add(endpoints={"CONTROLLER": ("h", 1, 2)}), TypeError, ("endpoints['CONTROLLER']",)),
    ("add-endpoints-lower-case", _add(endpoints={"controller": ("h", 1)}), ValueError,
     ("endpoints['controller'] listener", "upper-case")),
    ("add-endpoints-empty-name", _add(endpoints={"": ("h", 1)}), ValueError, ("endpoints[''] listener",)),
    ("add-endpoints-name-with-space", _add(endpoints={"CON TROLLER": ("h", 1)}), ValueError, ("listener",)),
    ("add-endpoints-name-int", _add(endpoints={1: ("h", 1)}), TypeError, ("endpoints[1] listener",)),
    ("add-endpoints-port-zero", _add(endpoints={"CONTROLLER": ("h", 0)}), ValueError,
     ("endpoints['CONTROLLER'] port", "1 to 65535")),
    ("add-endpoints-port-too-big", _add(endpoints={"CONTROLLER": ("h", 65536)}), ValueError, ("port",)),
    ("add-endpoints-port-negative", _add(endpoints={"CONTROLLER": ("h", -1)}), ValueError, ("port",)),
    ("add-endpoints-port-text", _add(endpoints={"CONTROLLER": ("h", "9093")}), TypeError, ("port", "str")),
    ("add-endpoints-port-bool", _add(endpoints={"CONTROLLER": ("h", True)}), TypeError, ("port", "bool")),
    ("add-endpoints-host-empty-label", _add(endpoints={"CONTROLLER": ("12..0.0.1", 1)}), ValueError,
     ("endpoints['CONTROLLER'] host", "empty label")),
    ("add-endpoints-host-empty", _add(endpoints={"CONTROLLER": ("", 1)}), ValueError, ("host", "empty")),
    ("add-endpoints-host-space", _add(endpoints={"CONTROLLER": ("my host", 1)}), ValueError, ("host",)),
    ("add-endpoints-host-none", _add(endpoints={"CONTROLLER": (None, 1)}), TypeError, ("host",)),
    ("add-endpoints-duplicate-dicts", _add(endpoints=[{"listener": "A", "host": "h", "port": 1},
                                                      {"listener": "A", "host": "g", "port": 2}]), ValueError,
     ("endpoints", "'A' more than once")),
    ("add-endpoints-duplicate-models", _add(endpoints=[Endpoint(listener="A", host="h", port=1)] * 2), ValueError,
     ("endpoints", "more than once")),
    ("add-endpoints-dict-missing-port", _add(endpoints=[{"listener": "A", "host": "h"}]), TypeError,
     ("endpoints[0]", "listener, host and port")),
    ("add-endpoints-dict-extra-key", _add(endpoints=[{"listener": "A", "host": "h", "port": 1, "x": 2}]),
     TypeError, ("endpoints[0]",)),
    ("add-endpoints-tuples", _add(endpoints=[("A", "h", 1)]), TypeError, ("endpoints[0]",)),
    ("add-endpoints-second-bad", _add(endpoints=[Endpoint(listener="A", host="h", port=1),
                                                 {"listener": "B", "host": "h", "port": 0}]), ValueError,
     ("endpoints[1] port",)),
    ("add-ack-text", _add(ack_when_committed="yes"), TypeError, ("ack_when_committed", "True or False")),
    ("add-ack-int", _add(ack_when_committed=1), TypeError, ("ack_when_committed",)),
    ("add-cluster-id-int", _add(cluster_id=123), TypeError, ("cluster_id", "int")),
    ("add-cluster-id-empty", _add(cluster_id=""), ValueError, ("cluster_id",)),
    ("add-cluster-id-bytes", _add(cluster_id=b"abc"), TypeError, ("cluster_id",)),
    # remove_raft_voter(voter_id, voter_directory_id, cluster_id)
    ("remove-id-text", _remove(voter_id="3"), TypeError, ("voter_id", NODE_ID)),
    ("remove-id-negative", _remove(voter_id=-3), ValueError, ("voter_id",)),
    ("remove-id-bool", _remove(voter_id=False), TypeError, ("voter_id",)),
    ("remove-directory-short", _remove(voter_directory_id="xyz"), ValueError, ("voter_directory_id",)),
    ("remove-directory-int", _remove(voter_directory_id=5), TypeError, ("voter_directory_id",)),
    ("remove-cluster-id-int", _remove(cluster_id=7), TypeError, ("cluster_id",)),
    ("remove-cluster-id-padded", _remove(cluster_id=" abc "), ValueError, ("cluster_id",)),
    # update_features(updates, validate_only)
    ("update-name-alone", _op("update_features", "group.version"), TypeError, ("updates", "mapping")),
    ("update-list", _op("update_features", ["group.version"]), TypeError, ("updates",)),
    ("update-none", _op("update_features", None), TypeError, ("updates",)),
    ("update-empty", _op("update_features", {}), ValueError, ("updates", "at least one feature")),
    ("update-name-int", _op("update_features", {1: 1}), TypeError, ("updates", "feature names")),
    ("update-name-empty", _op("update_features", {"": 1}), ValueError, ("updates", "feature names")),
    ("update-name-blank", _op("update_features", {"  ": 1}), ValueError, ("updates",)),
    ("update-level-text", _op("update_features", {"group.version": "1"}), TypeError,
     ("updates['group.version']", "FeatureUpdate")),
    ("update-level-negative", _op("update_features", {"group.version": -1}), ValueError,
     ("updates['group.version'] level", "0 to 32767")),
    ("update-level-bool", _op("update_features", {"group.version": True}), TypeError, ("updates['group.version']",)),
    ("update-level-zero", _op("update_features", {"group.version": 0}), ValueError,
     ("updates['group.version']", "SAFE_DOWNGRADE")),
    ("update-level-float", _op("update_features", {"group.version": 1.0}), TypeError, ("updates['group.version']",)),
    ("update-level-too-big", _op("update_features", {"group.version": 32768}), ValueError, ("level", "32767")),
    ("update-level-none", _op("update_features", {"group.version": None}), TypeError, ("updates['group.version']",)),
    ("update-validate-only-text", _op("update_features", {"group.version": 1}, validate_only="no"), TypeError,
     ("validate_only", "True or False")),
    ("update-validate-only-none", _op("update_features", {"group.version": 1}, validate_only=None), TypeError,
     ("validate_only",)),
]


@pytest.mark.parametrize("kind", ["Admin", "AsyncAdmin"])
@pytest.mark.parametrize(("call", "error", "fragments"), [case[1:] for case in OPERATIONS],
                         ids=[case[0] for case in OPERATIONS])
def test_wrong_operation_arguments_are_refused_at_once_before_anything_is_sent(
    kind: str,
    call: tuple[str, tuple[Any, ...], dict[str, Any]],
    error: type[BaseException],
    fragments: tuple[str, ...],
) -> None:
    net = FakeNetwork(3, leader=1)
    method, args, kwargs = call
    started = net.now
    with pytest.raises(error) as info:
        if kind == "Admin":
            with Admin(bootstrap_controllers=net.controllers(), transport=net) as admin:
                getattr(admin, method)(*args, **kwargs)
        else:

            async def main() -> None:
                async with AsyncAdmin(bootstrap_controllers=net.controllers(), transport=AsyncFakeNetwork(net)) as a:
                    await getattr(a, method)(*args, **kwargs)

            asyncio.run(main())
    assert type(info.value) is error
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message
    assert "kafka_admin_kraft" not in message and "validation error" not in message
    assert net.requests == [] and net.now == started


# ------------------------------------------------------------------ accepted forms


@pytest.mark.parametrize(
    "endpoints",
    [
        {"CONTROLLER": ("127.0.0.1", 9093), "SSL": ["ctl4.example.com", 9094]},
        [Endpoint(listener="CONTROLLER", host="127.0.0.1", port=9093),
         Endpoint(listener="SSL", host="ctl4.example.com", port=9094)],
        [{"listener": "CONTROLLER", "host": "127.0.0.1", "port": 9093},
         {"listener": "SSL", "host": "ctl4.example.com", "port": 9094}],
        (e for e in [Endpoint(listener="CONTROLLER", host="127.0.0.1", port=9093),
                     {"listener": "SSL", "host": "ctl4.example.com", "port": 9094}]),
    ],
    ids=["mapping", "endpoints", "dicts", "generator"],
)
def test_add_raft_voter_accepts_each_endpoints_form(endpoints: Any) -> None:
    net = FakeNetwork(3, leader=1)
    with Admin(bootstrap_controllers=net.controllers(), transport=net) as admin:
        admin.add_raft_voter(4, DIRECTORY, endpoints, timeout=5)
    body = net.sent("AddRaftVoter")[0][2]
    assert [(x.name, x.host, x.port) for x in body.listeners] == [
        ("CONTROLLER", "127.0.0.1", 9093), ("SSL", "ctl4.example.com", 9094)]
    assert (body.voter_id, str(body.voter_directory_id)) == (4, DIRECTORY)


def test_accepted_forms_of_the_other_arguments_reach_the_wire() -> None:
    net = FakeNetwork(3, leader=1)
    with Admin(bootstrap_controllers=net.controllers().split(","), transport=net) as admin:
        admin.remove_raft_voter(0, Uuid.from_string(DIRECTORY), cluster_id="abc", timeout=1)
        admin.describe_metadata_quorum(timeout=2.5)
        admin.describe_cluster(timeout=1)
        admin.describe_features(node_id=2, timeout=None)
        results = admin.update_features(
            {"group.version": 1, "kraft.version": FeatureUpdate(level=0, upgrade_type=2)}, validate_only=False)
    assert all(result.ok for result in results.values())
    remove = net.sent("RemoveRaftVoter")[0][2]
    assert (remove.voter_id, str(remove.voter_directory_id), remove.cluster_id) == (0, DIRECTORY, "abc")
    update = net.sent("UpdateFeatures")[0][2]
    assert [(u.feature, u.max_version_level, u.upgrade_type) for u in update.feature_updates] == [
        ("group.version", 1, 1), ("kraft.version", 0, 2)]
    assert net.sent("ApiVersions")[-1][0] == 2
    config = AsyncAdmin.from_config({"bootstrap.controllers": ("h1:1", "[::1]:2"), "retries": 3}).config
    assert config.bootstrap == (("h1", 1), ("::1", 2)) and config.retries == 3
