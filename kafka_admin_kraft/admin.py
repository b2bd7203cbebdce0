"""``Admin`` and ``AsyncAdmin``: inspect and change a KRaft quorum, like Kafka's Java Admin client.

::

    from kafka_admin_kraft import Admin, FeatureUpdate

    with Admin(bootstrap_controllers="ctl1:9093,ctl2:9093") as admin:
        quorum = admin.describe_metadata_quorum()
        print(quorum.leader_id, [v.replica_id for v in quorum.voters])

Both clients run the same sans-I/O operations (``kafka_admin_kraft.client.operations``); ``Admin``
drives them with blocking sockets, ``AsyncAdmin`` on asyncio. Options are Kafka client properties,
given as keywords with underscores (``request_timeout_ms=5000``), as a dict (``from_config``) or as
a ``.properties`` file (``from_properties``). Timeouts of operations are in seconds and default to
``default.api.timeout.ms``. Each operation (and with it pydantic and the result models) is imported
on its first call, so that creating a client costs no more than a tool's start-up can spare.

Arguments are checked when a call is made, by the same code for both clients
(``kafka_admin_kraft.client.arguments``, and ``kafka_admin_kraft.values`` for ids): a wrong type
raises ``TypeError``, a wrong value ``ValueError`` (``ConfigError`` for client properties), each
naming the argument and the accepted forms, before anything is sent.

An ``Admin`` serialises its operations (a lock); an ``AsyncAdmin`` runs one operation at a time too
(an ``asyncio.Lock``), since both share one connection per node.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from kafka_admin_kraft import values
from kafka_admin_kraft.client import arguments as check
from kafka_admin_kraft.client.config import (
    ClientConfig,
    load_properties,
    options_to_properties,
)
from kafka_admin_kraft.client.core import AdminCore, Op
from kafka_admin_kraft.client.transport import (
    AsyncTransport,
    SocketTransport,
    StreamTransport,
    SyncTransport,
    run_async,
    run_sync,
)
from kafka_admin_kraft.config.security import OAUTHBEARER_MODULE
from kafka_admin_kraft.errors import KafkaClientError

if TYPE_CHECKING:
    import asyncio

    from kafka_admin_kraft.acl import AclBinding, AclBindingFilter, AclCreateResult, AclDeleteResult
    from kafka_admin_kraft.health import Finding, HealthThresholds, QuorumHealth
    from kafka_admin_kraft.models import (
        ClusterDescription,
        Endpoint,
        FeatureMetadata,
        FeatureUpdate,
        FeatureUpdateResult,
        NodeApiVersions,
        QuorumInfo,
    )
    from kafka_admin_kraft.protocol.primitives import Uuid
    from kafka_admin_kraft.voters import DesiredVoter, Progress, ReconcileResult

__all__ = ["Admin", "AsyncAdmin"]

T = TypeVar("T")
Bootstrap = str | Sequence[str] | None
Endpoints = Mapping[str, tuple[str, int]] | Iterable["Endpoint | Mapping[str, Any]"]
"""``{"CONTROLLER": ("ctl4", 9093)}``, or Endpoints, or mappings with listener, host and port."""


def _config(
    bootstrap_servers: Bootstrap,
    bootstrap_controllers: Bootstrap,
    options: Mapping[str, Any],
    token_provider: Callable[[], str] | None = None,
) -> ClientConfig:
    props = options_to_properties(options)
    given = {"bootstrap_servers": bootstrap_servers, "bootstrap_controllers": bootstrap_controllers}
    for name, value in given.items():
        text = check.bootstrap(value, name)
        if text is not None:
            props[name.replace("_", ".")] = text
    if token_provider is not None:
        if not callable(token_provider):
            raise TypeError(f"oauth_token_provider must be a callable returning the token, not "
                            f"{type(token_provider).__name__}")
        if str(props.get("security.protocol", "")).strip().upper().startswith("SASL_"):
            props.setdefault("sasl.mechanism", "OAUTHBEARER")
            props.setdefault("sasl.jaas.config", f"{OAUTHBEARER_MODULE} required;")
    return ClientConfig.from_properties(props, token_provider=token_provider)


def _checked(config: ClientConfig) -> ClientConfig:
    """The configuration, once the OAUTHBEARER settings (which only the OAuth code knows how to read, so
    loaded only for them) are found usable."""
    if config.sasl is not None and config.sasl.mechanism == "OAUTHBEARER":
        from kafka_admin_kraft.client.oauth import check_settings

        check_settings(config.sasl)
    return config


# The operations with their arguments checked, for both clients.


def _describe_metadata_quorum(core: AdminCore, timeout: float | None) -> Op[QuorumInfo]:
    from kafka_admin_kraft.client.operations.describe_metadata_quorum import describe_metadata_quorum

    return describe_metadata_quorum(core, check.timeout(timeout))


def _describe_cluster(
    core: AdminCore, include_fenced_brokers: bool, timeout: float | None
) -> Op[ClusterDescription]:
    from kafka_admin_kraft.client.operations.describe_cluster import describe_cluster

    if check.flag(include_fenced_brokers, "include_fenced_brokers") and core.config.bootstrap_controllers:
        raise ValueError(
            "include_fenced_brokers lists brokers, which only bootstrap_servers reach (controllers are "
            "never fenced): connect with bootstrap_servers, or leave include_fenced_brokers False"
        )
    return describe_cluster(core, check.timeout(timeout), include_fenced_brokers=include_fenced_brokers)


def _describe_features(core: AdminCore, node_id: int | None, timeout: float | None) -> Op[FeatureMetadata]:
    from kafka_admin_kraft.client.operations.describe_features import describe_features

    return describe_features(core, check.timeout(timeout), values.optional_node_id(node_id, "node_id"))


def _api_versions(core: AdminCore, node_id: int, timeout: float | None) -> Op[NodeApiVersions]:
    from kafka_admin_kraft.client.operations.api_versions import api_versions

    return api_versions(core, values.node_id(node_id, "node_id"), check.timeout(timeout))


def _add_raft_voter(
    core: AdminCore,
    voter_id: int,
    voter_directory_id: str | Uuid,
    endpoints: Endpoints,
    ack_when_committed: bool,
    cluster_id: str | None,
    timeout: float | None,
) -> Op[None]:
    from kafka_admin_kraft.client.operations.raft_voters import add_raft_voter

    return add_raft_voter(
        core,
        values.node_id(voter_id, "voter_id"),
        values.directory_id(voter_directory_id, "voter_directory_id"),
        check.endpoints(endpoints),
        ack_when_committed=check.flag(ack_when_committed, "ack_when_committed"),
        cluster_id=values.cluster_id(cluster_id),
        timeout=check.timeout(timeout),
    )


def _remove_raft_voter(
    core: AdminCore,
    voter_id: int,
    voter_directory_id: str | Uuid,
    cluster_id: str | None,
    timeout: float | None,
) -> Op[None]:
    from kafka_admin_kraft.client.operations.raft_voters import remove_raft_voter

    return remove_raft_voter(
        core,
        values.node_id(voter_id, "voter_id"),
        values.directory_id(voter_directory_id, "voter_directory_id"),
        cluster_id=values.cluster_id(cluster_id),
        timeout=check.timeout(timeout),
    )


def _unregister_broker(core: AdminCore, broker_id: int, timeout: float | None) -> Op[None]:
    from kafka_admin_kraft.client.operations.unregister import unregister_broker

    return unregister_broker(core, values.node_id(broker_id, "broker_id"), check.timeout(timeout))


def _unregister_controller(core: AdminCore, controller_id: int, timeout: float | None) -> Op[None]:
    from kafka_admin_kraft.client.operations.unregister import unregister_controller

    return unregister_controller(core, values.node_id(controller_id, "controller_id"), check.timeout(timeout))


def _update_features(
    core: AdminCore, updates: Mapping[str, FeatureUpdate | int], validate_only: bool, timeout: float | None
) -> Op[dict[str, FeatureUpdateResult]]:
    from kafka_admin_kraft.client.operations.update_features import update_features

    return update_features(
        core,
        check.feature_updates(updates),
        validate_only=check.flag(validate_only, "validate_only"),
        timeout=check.timeout(timeout),
    )


def _check_quorum(
    core: AdminCore,
    thresholds: HealthThresholds | None,
    probe: bool,
    previous: QuorumHealth | None,
    connect: str | None,
    timeout: float | None,
) -> Op[QuorumHealth]:
    from kafka_admin_kraft.client.operations.check_quorum import check_quorum
    from kafka_admin_kraft.health import QuorumHealth

    if previous is not None and not isinstance(previous, QuorumHealth):
        raise TypeError(f"previous must be a QuorumHealth, not {type(previous).__name__}")
    if connect is not None and not isinstance(connect, str):
        raise TypeError(f"connect must be a str, not {type(connect).__name__}")
    return check_quorum(
        core,
        _thresholds(thresholds),
        probe=check.flag(probe, "probe"),
        previous=previous,
        connect=connect,
        timeout=check.timeout(timeout),
    )


def _explain_feature_refusal(
    core: AdminCore,
    message: str,
    thresholds: HealthThresholds | None,
    connect: str | None,
    timeout: float | None,
) -> Op[Finding | None]:
    from kafka_admin_kraft.client.operations.explain_refusal import explain_refusal

    if not isinstance(message, str):
        raise TypeError(f"message must be a str, not {type(message).__name__}")
    if connect is not None and not isinstance(connect, str):
        raise TypeError(f"connect must be a str, not {type(connect).__name__}")
    return explain_refusal(
        core, message, _thresholds(thresholds), connect=connect, timeout=check.timeout(timeout)
    )


def _thresholds(thresholds: HealthThresholds | None) -> HealthThresholds:
    from kafka_admin_kraft.health import HealthThresholds

    if thresholds is not None and not isinstance(thresholds, HealthThresholds):
        raise TypeError(f"thresholds must be a HealthThresholds, not {type(thresholds).__name__}")
    return thresholds or HealthThresholds()


def _progress(progress: Callable[[Progress], None] | None) -> Callable[[Progress], None] | None:
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be callable, not {type(progress).__name__}")
    return progress


def _desired(desired: Iterable[int | DesiredVoter]) -> list[DesiredVoter]:
    from kafka_admin_kraft.voters import DesiredVoter

    if isinstance(desired, (str, bytes)) or not isinstance(desired, Iterable):
        raise TypeError("desired must be an iterable of node ids or DesiredVoter")
    voters = []
    for item in desired:
        if isinstance(item, DesiredVoter):
            directory = item.directory_id
            if directory is not None:
                directory = values.directory_id(directory, "directory_id")
            voters.append(DesiredVoter(values.node_id(item.node_id, "node_id"), directory,
                                       tuple(check.endpoints(item.endpoints)) if item.endpoints else ()))
        else:
            voters.append(DesiredVoter(values.node_id(item, "desired voter")))
    return voters


def _auto_join(auto_join: Mapping[int, bool] | None) -> dict[int, bool]:
    if auto_join is None:
        return {}
    if not isinstance(auto_join, Mapping):
        raise TypeError(f"auto_join must be a mapping of node id to bool, not {type(auto_join).__name__}")
    return {
        values.node_id(node_id, "auto_join node id"): check.flag(on, f"auto_join[{node_id}]")
        for node_id, on in auto_join.items()
    }


def _step_timeout(core: AdminCore, timeout: float | None) -> float:
    checked = check.timeout(timeout)
    return core.config.default_api_timeout if checked is None else checked


def _reconcile_voters(
    core: AdminCore,
    desired: Iterable[int | DesiredVoter],
    dry_run: bool,
    thresholds: HealthThresholds | None,
    progress: Callable[[Progress], None] | None,
    timeout: float | None,
    auto_join: Mapping[int, bool] | None,
    keep_registrations: bool,
) -> Op[ReconcileResult]:
    from kafka_admin_kraft.client.operations.reconcile_voters import reconcile_voters

    return reconcile_voters(
        core,
        _desired(desired),
        thresholds=_thresholds(thresholds),
        dry_run=check.flag(dry_run, "dry_run"),
        step_timeout=_step_timeout(core, timeout),
        progress=_progress(progress),
        auto_join=_auto_join(auto_join),
        keep_registrations=check.flag(keep_registrations, "keep_registrations"),
    )


def _replace_controller(
    core: AdminCore,
    node_id: int,
    directory_id: str | Uuid,
    endpoints: Endpoints | None,
    dry_run: bool,
    thresholds: HealthThresholds | None,
    progress: Callable[[Progress], None] | None,
    timeout: float | None,
    auto_join: bool | None,
    keep_registrations: bool,
) -> Op[ReconcileResult]:
    from kafka_admin_kraft.client.operations.reconcile_voters import replace_controller

    return replace_controller(
        core,
        values.node_id(node_id, "node_id"),
        values.directory_id(directory_id, "directory_id"),
        tuple(check.endpoints(endpoints)) if endpoints is not None else (),
        thresholds=_thresholds(thresholds),
        dry_run=check.flag(dry_run, "dry_run"),
        step_timeout=_step_timeout(core, timeout),
        progress=_progress(progress),
        auto_join=None if auto_join is None else check.flag(auto_join, "auto_join"),
        keep_registrations=check.flag(keep_registrations, "keep_registrations"),
    )


def _create_acls(
    core: AdminCore, bindings: Iterable[AclBinding], timeout: float | None
) -> Op[list[AclCreateResult]]:
    from kafka_admin_kraft import acl
    from kafka_admin_kraft.client.operations.acls import create_acls

    return create_acls(core, acl.bindings(bindings), check.timeout(timeout))


def _describe_acls(
    core: AdminCore, selector: AclBindingFilter | None, timeout: float | None
) -> Op[list[AclBinding]]:
    from kafka_admin_kraft import acl
    from kafka_admin_kraft.client.operations.acls import describe_acls

    if selector is not None and not isinstance(selector, acl.AclBindingFilter):
        raise TypeError(f"filter must be an AclBindingFilter or None, got {values.shown(selector)}")
    return describe_acls(core, selector or acl.ANY_BINDING, check.timeout(timeout))


def _delete_acls(
    core: AdminCore, filters: Iterable[AclBindingFilter], timeout: float | None
) -> Op[list[AclDeleteResult]]:
    from kafka_admin_kraft import acl
    from kafka_admin_kraft.client.operations.acls import delete_acls

    return delete_acls(core, acl.filters(filters), check.timeout(timeout))


class _Base:
    _config: ClientConfig
    _core: AdminCore
    _closed: bool

    @property
    def config(self) -> ClientConfig:
        """The validated settings."""
        return self._config

    def _check_open(self) -> None:
        if self._closed:
            raise KafkaClientError("this admin client is closed")


class Admin(_Base):
    """A blocking admin client for a KRaft cluster.

    Give exactly one of ``bootstrap_servers`` (brokers, which forward to the active controller) and
    ``bootstrap_controllers`` (controllers: requests go straight to the active one), each as
    ``"host:port,host:port"`` or a list. Other options are Kafka client properties with underscores
    for dots (``client_id``, ``request_timeout_ms``, ``default_api_timeout_ms``, ``retry_backoff_ms``,
    ``retry_backoff_max_ms``, ``security_protocol``, ``ssl_truststore_location``, ``sasl_mechanism``,
    ``sasl_jaas_config``, ...). ``transport`` replaces the socket layer (tests).

    ``oauth_token_provider`` is a callable returning an OAuth access token (the JWT text) for
    ``sasl_mechanism="OAUTHBEARER"`` (which it sets by default, with ``security_protocol`` still to
    choose): it is called, in a worker thread under asyncio, whenever the client needs a token and the
    last one has reached its refresh time (``sasl_login_refresh_*``), in place of Kafka's login callback
    handler.
    """

    def __init__(
        self,
        bootstrap_servers: Bootstrap = None,
        bootstrap_controllers: Bootstrap = None,
        *,
        transport: SyncTransport | None = None,
        oauth_token_provider: Callable[[], str] | None = None,
        **options: Any,
    ) -> None:
        config = _config(bootstrap_servers, bootstrap_controllers, options, oauth_token_provider)
        self._setup(config, transport)

    def _setup(self, config: ClientConfig, transport: SyncTransport | None) -> None:
        self._config = _checked(config)
        if transport is None:
            transport = SocketTransport(config.ssl_context() if config.uses_tls else None)
        self._transport = transport
        self._core = AdminCore(config, transport.clock)
        self._lock = threading.Lock()
        self._closed = False

    @classmethod
    def from_config(cls, config: Mapping[str, Any], *, transport: SyncTransport | None = None) -> Admin:
        """From Kafka client properties with dotted names: ``{"bootstrap.controllers": "h:9093"}``."""
        admin = cls.__new__(cls)
        admin._setup(ClientConfig.from_properties(config), transport)
        return admin

    @classmethod
    def from_properties(
        cls, path: str | os.PathLike[str], *, transport: SyncTransport | None = None
    ) -> Admin:
        """From a Kafka client ``.properties`` file (what ``--command-config`` takes), read as Kafka
        reads it (ISO-8859-1, ``\\uXXXX`` escapes)."""
        return cls.from_config(load_properties(path), transport=transport)

    def _run(self, operation: Generator[Any, Any, T]) -> T:
        with self._lock:
            self._check_open()
            return run_sync(operation, self._transport)

    def run(self, operation: Callable[[AdminCore], Op[T]]) -> T:
        """Run a sans-I/O operation of ``kafka_admin_kraft.client.operations`` on this client's
        connections, as the methods do once they have checked their arguments (which this leaves to the
        caller). The tools read through it the plain answers of ``describe_quorum_answer`` and the like
        (``kafka_admin_kraft.client.answers``), which they print without importing pydantic."""
        return self._run(operation(self._core))

    def describe_metadata_quorum(self, *, timeout: float | None = None) -> QuorumInfo:
        """The quorum as its leader reports it: leader, epoch, high watermark, voters, committed
        voters (DescribeQuorum v3 servers only, else None), observers and voters' endpoints.

        ``timeout`` (every operation has it): seconds, above 0; None for ``default.api.timeout.ms``."""
        return self._run(_describe_metadata_quorum(self._core, timeout))

    def describe_cluster(
        self, *, include_fenced_brokers: bool = False, timeout: float | None = None
    ) -> ClusterDescription:
        """Cluster id, controller and nodes: the registered controllers (bootstrap controllers) or the
        live brokers (bootstrap servers). ``include_fenced_brokers`` lists the fenced brokers too, with
        ``is_fenced`` set (brokers of Kafka 4.0 or newer; bootstrap servers only)."""
        return self._run(_describe_cluster(self._core, include_fenced_brokers, timeout))

    def describe_features(
        self, *, node_id: int | None = None, timeout: float | None = None
    ) -> FeatureMetadata:
        """Finalized feature levels, their epoch and the levels the node supports: the active
        controller's (or a broker's), or those of the node ``node_id``."""
        return self._run(_describe_features(self._core, node_id, timeout))

    def api_versions(self, node_id: int, *, timeout: float | None = None) -> NodeApiVersions:
        """The API version ranges the node ``node_id`` advertises (a controller with bootstrap
        controllers, a broker with bootstrap servers), as ``kafka-cluster api-versions`` lists them."""
        return self._run(_api_versions(self._core, node_id, timeout))

    def add_raft_voter(
        self,
        voter_id: int,
        voter_directory_id: str | Uuid,
        endpoints: Endpoints,
        *,
        ack_when_committed: bool = True,
        cluster_id: str | None = None,
        timeout: float | None = None,
    ) -> None:
        """Add a controller (already running and caught up as an observer) to the voter set.

        ``endpoints``: its listeners, as ``{"CONTROLLER": ("ctl4", 9093)}`` (listener name to host and
        port), or a list of :class:`Endpoint` or of ``{"listener": ..., "host": ..., "port": ...}``.
        Returns once the leader acknowledged (by default, when the new voter set is committed);
        raises the server's error otherwise (DuplicateVoterError, RequestTimedOutError, ...)."""
        self._run(
            _add_raft_voter(
                self._core, voter_id, voter_directory_id, endpoints, ack_when_committed, cluster_id, timeout
            )
        )

    def remove_raft_voter(
        self,
        voter_id: int,
        voter_directory_id: str | Uuid,
        *,
        cluster_id: str | None = None,
        timeout: float | None = None,
    ) -> None:
        """Remove the voter with this id and directory id from the voter set."""
        self._run(_remove_raft_voter(self._core, voter_id, voter_directory_id, cluster_id, timeout))

    def unregister_broker(self, broker_id: int, *, timeout: float | None = None) -> None:
        """Remove the registration of a broker that is gone for good (UnregisterBroker, KIP-631), so
        that its supported feature levels no longer hold back upgrades. Raises
        ``BrokerIdNotRegisteredError`` when there is none."""
        self._run(_unregister_broker(self._core, broker_id, timeout))

    def unregister_controller(self, controller_id: int, *, timeout: float | None = None) -> None:
        """Remove the registration of a controller that is gone for good (UnregisterController,
        KIP-1312: Kafka 4.4 at metadata.version 4.4-IV2 or later). The controller must be stopped and
        no longer a voter (``remove_raft_voter``), or it is refused. Raises
        ``ControllerIdNotRegisteredError`` when there is no registration, ``UnsupportedVersionError``
        below 4.4-IV2 and ``UnsupportedOperationError`` on a node older than Kafka 4.4; each error's
        text ends with what to do."""
        self._run(_unregister_controller(self._core, controller_id, timeout))

    def update_features(
        self,
        updates: Mapping[str, FeatureUpdate | int],
        *,
        validate_only: bool = False,
        timeout: float | None = None,
    ) -> dict[str, FeatureUpdateResult]:
        """Change finalized feature levels (an int means ``FeatureUpdate(level=n)``, an upgrade).

        Returns one result per feature (check ``.ok`` / ``.exception()``); a request-wide error is
        raised instead, as the same error applies to every feature."""
        return self._run(_update_features(self._core, updates, validate_only, timeout))

    def check_quorum(
        self,
        *,
        thresholds: HealthThresholds | None = None,
        probe: bool = True,
        previous: QuorumHealth | None = None,
        connect: str | None = None,
        timeout: float | None = None,
    ) -> QuorumHealth:
        """Is the quorum healthy, and if not, what is wrong and what fixes it?

        Reads DescribeQuorum, DescribeCluster and (``probe``) each node's ApiVersions, asks the active
        controller to validate the metadata.version upgrade every node that answered supports, if any
        (UpdateFeatures with validateOnly: nothing is written), and returns the status (OK, WARNING,
        CRITICAL, UNKNOWN), the fault tolerance and the findings, most severe first
        (``kafka_admin_kraft.health`` lists the codes). A quorum that cannot be reached
        is a result with status UNKNOWN, not an exception. ``previous``: the last result of a loop
        that checks repeatedly, so that how long a voter change has been pending, and a broker
        fenced, carries over.
        ``connect``: the tools' connection options printed in fix commands (default: this client's
        bootstrap setting)."""
        return self._run(_check_quorum(self._core, thresholds, probe, previous, connect, timeout))

    def explain_feature_refusal(
        self,
        message: str,
        *,
        thresholds: HealthThresholds | None = None,
        connect: str | None = None,
        timeout: float | None = None,
    ) -> Finding | None:
        """Who holds back a feature level the active controller refused, and what clears it.

        ``message`` is the refusal (``KafkaApiError.message``, or a ``FeatureUpdateResult``'s
        ``error_message``), which names the first registered node that does not support the level.
        Reads the quorum, the registrations and the finalized levels to tell a voter or a running node
        (upgrade it) from a registration left behind (unregister it, or below metadata.version 4.4-IV2
        start a newer controller under its id) or a fenced broker, and returns a
        ``FEATURE_UPGRADE_BLOCKED`` finding with the command where one exists; None when the message
        names no node. ``connect``: the tools' connection options printed in the command."""
        return self._run(_explain_feature_refusal(self._core, message, thresholds, connect, timeout))

    def reconcile_voters(
        self,
        desired: Iterable[int | DesiredVoter],
        *,
        dry_run: bool = False,
        thresholds: HealthThresholds | None = None,
        progress: Callable[[Progress], None] | None = None,
        timeout: float | None = None,
        auto_join: Mapping[int, bool] | None = None,
        keep_registrations: bool = False,
    ) -> ReconcileResult:
        """Change the voter set to ``desired`` (node ids, or ``DesiredVoter`` with a directory id and
        endpoints), one committed change at a time, in the order ``kafka_admin_kraft.voters`` plans.

        Idempotent: interrupted and called again, it finishes what is left; on a quorum already as
        desired it changes nothing (``result.changed`` is False). ``dry_run`` only plans.
        ``progress`` is called with each ``Progress`` (plan, waiting, step, committed, watching).
        ``timeout`` bounds each step, waits included (default ``default.api.timeout.ms``).
        ``auto_join``: ``controller.quorum.auto.join.enable`` as each controller's configuration sets
        it, by node id, where known: removing a running controller that has it on is refused, since it
        would add itself back (Kafka 4.2+); a controller removed while running whose setting is not
        known to be off is watched for a few seconds once the plan is done. Raises
        ``VoterChangeRefusedError`` when the plan would stop the quorum (or not stick),
        ``VoterChangeTimeoutError`` when a precondition does not hold in time and ``VoterChangeError``
        when a step keeps failing or a removed controller rejoins; each lists the steps already
        committed (``.completed``). Once the voters are as desired, the controllers removed for good
        that are stopped, and those left registered earlier, are unregistered from metadata.version
        4.4-IV2 on (``result.unregistered``; the plan lists them and notes the registrations that stay,
        ``kafka_admin_kraft.voters`` rule 7), unless ``keep_registrations``."""
        return self._run(
            _reconcile_voters(
                self._core, desired, dry_run, thresholds, progress, timeout, auto_join, keep_registrations
            )
        )

    def replace_controller(
        self,
        node_id: int,
        directory_id: str | Uuid,
        *,
        endpoints: Endpoints | None = None,
        dry_run: bool = False,
        thresholds: HealthThresholds | None = None,
        progress: Callable[[Progress], None] | None = None,
        timeout: float | None = None,
        auto_join: bool | None = None,
        keep_registrations: bool = False,
    ) -> ReconcileResult:
        """Swap in a controller's new disk: wait until the new incarnation (same ``node_id``, new
        ``directory_id``) fetches as an observer and is caught up, remove the old directory id, add the
        new one, each change committed. ``endpoints`` as for ``add_raft_voter`` (default: its registered
        endpoint). ``auto_join``: the new controller's ``controller.quorum.auto.join.enable``, if known;
        a controller with it on makes the swap itself, and the run sends only what it has not made yet.
        Errors and ``timeout`` as :meth:`reconcile_voters`."""
        return self._run(
            _replace_controller(
                self._core,
                node_id,
                directory_id,
                endpoints,
                dry_run,
                thresholds,
                progress,
                timeout,
                auto_join,
                keep_registrations,
            )
        )

    def create_acls(
        self, bindings: Iterable[AclBinding], *, timeout: float | None = None
    ) -> list[AclCreateResult]:
        """Add ACL bindings (``kafka_admin_kraft.acl.AclBinding``); one result per binding, in order (check
        ``.ok`` / ``.exception()``). A binding that exists already succeeds. A refusal of the whole
        request (the principal may not ALTER the cluster, no authorizer) is raised."""
        return self._run(_create_acls(self._core, bindings, timeout))

    def describe_acls(
        self, filter: AclBindingFilter | None = None, *, timeout: float | None = None
    ) -> list[AclBinding]:
        """The ACL bindings that match ``filter`` (default: all); needs DESCRIBE on the cluster."""
        return self._run(_describe_acls(self._core, filter, timeout))

    def delete_acls(
        self, filters: Iterable[AclBindingFilter], *, timeout: float | None = None
    ) -> list[AclDeleteResult]:
        """Remove every ACL binding a filter matches; one result per filter, with the bindings it removed
        (``.deleted``). A refusal of the whole request is raised."""
        return self._run(_delete_acls(self._core, filters, timeout))

    def close(self) -> None:
        """Close every connection; the client cannot be used afterwards."""
        with self._lock:
            if not self._closed:
                self._closed = True
                run_sync(self._core.close(), self._transport)

    def __enter__(self) -> Admin:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncAdmin(_Base):
    """The asyncio twin of :class:`Admin`: same arguments, same operations, ``await``-ed.

    Use ``async with AsyncAdmin(...) as admin:`` or ``await admin.close()``.
    """

    def __init__(
        self,
        bootstrap_servers: Bootstrap = None,
        bootstrap_controllers: Bootstrap = None,
        *,
        transport: AsyncTransport | None = None,
        oauth_token_provider: Callable[[], str] | None = None,
        **options: Any,
    ) -> None:
        config = _config(bootstrap_servers, bootstrap_controllers, options, oauth_token_provider)
        self._setup(config, transport)

    def _setup(self, config: ClientConfig, transport: AsyncTransport | None) -> None:
        self._config = _checked(config)
        if transport is None:
            transport = StreamTransport(config.ssl_context() if config.uses_tls else None)
        self._transport = transport
        self._core = AdminCore(config, transport.clock)
        self._lock: asyncio.Lock | None = None
        self._closed = False

    @classmethod
    def from_config(cls, config: Mapping[str, Any], *, transport: AsyncTransport | None = None) -> AsyncAdmin:
        """From Kafka client properties with dotted names."""
        admin = cls.__new__(cls)
        admin._setup(ClientConfig.from_properties(config), transport)
        return admin

    @classmethod
    def from_properties(
        cls, path: str | os.PathLike[str], *, transport: AsyncTransport | None = None
    ) -> AsyncAdmin:
        """From a Kafka client ``.properties`` file."""
        return cls.from_config(load_properties(path), transport=transport)

    async def _run(self, operation: Generator[Any, Any, T]) -> T:
        if self._lock is None:
            import asyncio

            self._lock = asyncio.Lock()
        async with self._lock:
            self._check_open()
            return await run_async(operation, self._transport)

    async def run(self, operation: Callable[[AdminCore], Op[T]]) -> T:
        """See :meth:`Admin.run`."""
        return await self._run(operation(self._core))

    async def describe_metadata_quorum(self, *, timeout: float | None = None) -> QuorumInfo:
        """See :meth:`Admin.describe_metadata_quorum`."""
        return await self._run(_describe_metadata_quorum(self._core, timeout))

    async def describe_cluster(
        self, *, include_fenced_brokers: bool = False, timeout: float | None = None
    ) -> ClusterDescription:
        """See :meth:`Admin.describe_cluster`."""
        return await self._run(_describe_cluster(self._core, include_fenced_brokers, timeout))

    async def describe_features(
        self, *, node_id: int | None = None, timeout: float | None = None
    ) -> FeatureMetadata:
        """See :meth:`Admin.describe_features`."""
        return await self._run(_describe_features(self._core, node_id, timeout))

    async def api_versions(self, node_id: int, *, timeout: float | None = None) -> NodeApiVersions:
        """See :meth:`Admin.api_versions`."""
        return await self._run(_api_versions(self._core, node_id, timeout))

    async def add_raft_voter(
        self,
        voter_id: int,
        voter_directory_id: str | Uuid,
        endpoints: Endpoints,
        *,
        ack_when_committed: bool = True,
        cluster_id: str | None = None,
        timeout: float | None = None,
    ) -> None:
        """See :meth:`Admin.add_raft_voter`."""
        await self._run(
            _add_raft_voter(
                self._core, voter_id, voter_directory_id, endpoints, ack_when_committed, cluster_id, timeout
            )
        )

    async def remove_raft_voter(
        self,
        voter_id: int,
        voter_directory_id: str | Uuid,
        *,
        cluster_id: str | None = None,
        timeout: float | None = None,
    ) -> None:
        """See :meth:`Admin.remove_raft_voter`."""
        await self._run(_remove_raft_voter(self._core, voter_id, voter_directory_id, cluster_id, timeout))

    async def unregister_broker(self, broker_id: int, *, timeout: float | None = None) -> None:
        """See :meth:`Admin.unregister_broker`."""
        await self._run(_unregister_broker(self._core, broker_id, timeout))

    async def unregister_controller(self, controller_id: int, *, timeout: float | None = None) -> None:
        """See :meth:`Admin.unregister_controller`."""
        await self._run(_unregister_controller(self._core, controller_id, timeout))

    async def update_features(
        self,
        updates: Mapping[str, FeatureUpdate | int],
        *,
        validate_only: bool = False,
        timeout: float | None = None,
    ) -> dict[str, FeatureUpdateResult]:
        """See :meth:`Admin.update_features`."""
        return await self._run(_update_features(self._core, updates, validate_only, timeout))

    async def check_quorum(
        self,
        *,
        thresholds: HealthThresholds | None = None,
        probe: bool = True,
        previous: QuorumHealth | None = None,
        connect: str | None = None,
        timeout: float | None = None,
    ) -> QuorumHealth:
        """See :meth:`Admin.check_quorum`."""
        return await self._run(_check_quorum(self._core, thresholds, probe, previous, connect, timeout))

    async def explain_feature_refusal(
        self,
        message: str,
        *,
        thresholds: HealthThresholds | None = None,
        connect: str | None = None,
        timeout: float | None = None,
    ) -> Finding | None:
        """See :meth:`Admin.explain_feature_refusal`."""
        return await self._run(_explain_feature_refusal(self._core, message, thresholds, connect, timeout))

    async def reconcile_voters(
        self,
        desired: Iterable[int | DesiredVoter],
        *,
        dry_run: bool = False,
        thresholds: HealthThresholds | None = None,
        progress: Callable[[Progress], None] | None = None,
        timeout: float | None = None,
        auto_join: Mapping[int, bool] | None = None,
        keep_registrations: bool = False,
    ) -> ReconcileResult:
        """See :meth:`Admin.reconcile_voters`."""
        return await self._run(
            _reconcile_voters(
                self._core, desired, dry_run, thresholds, progress, timeout, auto_join, keep_registrations
            )
        )

    async def replace_controller(
        self,
        node_id: int,
        directory_id: str | Uuid,
        *,
        endpoints: Endpoints | None = None,
        dry_run: bool = False,
        thresholds: HealthThresholds | None = None,
        progress: Callable[[Progress], None] | None = None,
        timeout: float | None = None,
        auto_join: bool | None = None,
        keep_registrations: bool = False,
    ) -> ReconcileResult:
        """See :meth:`Admin.replace_controller`."""
        return await self._run(
            _replace_controller(
                self._core,
                node_id,
                directory_id,
                endpoints,
                dry_run,
                thresholds,
                progress,
                timeout,
                auto_join,
                keep_registrations,
            )
        )

    async def create_acls(
        self, bindings: Iterable[AclBinding], *, timeout: float | None = None
    ) -> list[AclCreateResult]:
        """See :meth:`Admin.create_acls`."""
        return await self._run(_create_acls(self._core, bindings, timeout))

    async def describe_acls(
        self, filter: AclBindingFilter | None = None, *, timeout: float | None = None
    ) -> list[AclBinding]:
        """See :meth:`Admin.describe_acls`."""
        return await self._run(_describe_acls(self._core, filter, timeout))

    async def delete_acls(
        self, filters: Iterable[AclBindingFilter], *, timeout: float | None = None
    ) -> list[AclDeleteResult]:
        """See :meth:`Admin.delete_acls`."""
        return await self._run(_delete_acls(self._core, filters, timeout))

    async def close(self) -> None:
        """Close every connection."""
        if not self._closed:
            self._closed = True
            await run_async(self._core.close(), self._transport)

    async def __aenter__(self) -> AsyncAdmin:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
