"""UpdateFeatures (API 57), versions 0-2, as an active controller of the node's Kafka line answers it.

- v0: Feature, MaxVersionLevel and AllowDowngrade per feature; the response has a top-level
  ErrorCode/ErrorMessage and Results, one per feature. KRaft's controller does not read
  AllowDowngrade: a v0 request carries UpgradeType's default, UPGRADE, for every feature.
- v1: UpgradeType per feature (1 UPGRADE, 2 SAFE_DOWNGRADE, 3 UNSAFE_DOWNGRADE) and ValidateOnly.
- v2: the response drops Results; the top-level error covers every feature.

Only the active controller answers (others: NOT_CONTROLLER with empty Results). The rules are
Kafka's ``FeatureControlManager.updateFeatures``: every feature is checked in request
order and the first failure rejects the whole request with INVALID_UPDATE_VERSION, nothing written;
the top-level message is ``The update failed for all features since the following feature had an
error: <reason>`` and, at v0/v1, each feature's result carries the same code and message. On success
the top-level message is null and each v0/v1 result says ``"NONE"`` (as Kafka's ``ApiError.NONE``
prints). Per feature:

1. an unknown upgrade type: ``The controller does not support the given upgrade type.``;
2. a negative level: ``A feature version cannot be less than 0.``;
3. a level outside a supported range (Kafka's ``FeatureControlManager.reasonNotSupported``): this
   controller's (``Local controller <id> only supports versions <a>-<b>``, or ``... does not support
   this feature.`` for a feature it does not know, whose range is 0-0), then each registered broker's
   (``Broker <id> ...``) and, from metadata.version 3.7-IV0 on, each other registered controller's
   (``Controller <id> ...``), as their registrations in the committed metadata say: no level is
   finalized that a node of an older line, running or stopped mid-upgrade, does not know, until
   UnregisterBroker or UnregisterController removes its registration (``handlers.unregister``);
4. the direction: a lower level with UPGRADE, or a higher one with a downgrade type;
5. metadata.version: an unknown level, or a downgrade across a level that changed the metadata
   format (refused, whether safe or unsafe); a downgrade crossing none is allowed;
6. kraft.version: only UPGRADE (0 -> 1, a static quorum becoming dynamic: KRaftVersionRecord and
   VotersRecord in one control batch, written by the consensus core); any other change is refused;
7. the other features: their dependencies (``Feature.validateVersion``) against the finalized levels
   with the request's updates applied, then a FeatureLevelRecord (level 0 removes the feature).

Reasons 1-4 and 6-7 are written ``Invalid update version <level> for feature <name>. <reason>``.
ValidateOnly runs every check and writes nothing. Otherwise the FeatureLevelRecords go into one batch
(atomic, as Kafka's ``ControllerResult.atomicOf``) and the runtime answers once that batch, and the
kraft.version upgrade, are committed. Kafka also refuses a change while a voter named in
``controller.quorum.voters`` has not registered; that is not modelled. With an authorizer it needs ALTER on
the cluster (``handlers.authorization``).

The supported ranges and metadata.version tables are the node's line's (``ServerView.line``), and
so are three rules that changed after Kafka 3.9 (``kafka_admin_kraft.features.KafkaLine``):

- 3.9 decides each feature alone: a refused feature gets its own error and message in Results (no
  "update failed for all features" prefix, a null message on success), the top-level error is NONE,
  and the records of the features that passed are written together. 4.0 made it all or nothing.
- 3.9 checks no dependencies (step 7 writes the record at once); 4.0 added ``Feature.validateVersion``.
- Before 4.1 kraft.version has no rule of its own (step 6 is skipped): an update writes a
  FeatureLevelRecord for it like any feature, which changes nothing, since kraft.version lives in the
  control records (KAFKA-18979; the consensus core reports the control records' level). 4.1 added
  the upgrade (KAFKA-16538).

A broker forwards UpdateFeatures to the active controller; when none can be reached it answers
NOT_CONTROLLER, which clients retry.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final, TypeAlias

from kafka_admin_kraft import features
from kafka_admin_kraft.features import NEWEST, KafkaLine
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.api_keys import ApiKey
from kafka_admin_kraft.protocol.error_codes import ErrorCode
from kafka_admin_kraft.protocol.message import Struct

from ..raft.api import VoterSet
from ..raft.core import KRaftUpgradeError, NotLeaderError
from . import registry
from .registry import Answer, Call, ControllerRole
from .view import ServerView

log = logging.getLogger("kafka.controller.QuorumController")

UNKNOWN: Final = 0
UPGRADE: Final = 1
SAFE_DOWNGRADE: Final = 2
UNSAFE_DOWNGRADE: Final = 3

FAILED_PREFIX: Final = "The update failed for all features since the following feature had an error: "

Request = messages.UpdateFeaturesRequest
Response = messages.UpdateFeaturesResponse


class FeatureUpdateError(Exception):
    """A feature update refused with ``code`` (INVALID_UPDATE_VERSION) and Kafka's ``message``."""

    def __init__(self, message: str, code: int = ErrorCode.INVALID_UPDATE_VERSION) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Outcome:
    """What to do with a request: answer ``response`` at once, or first append ``records`` and/or
    upgrade kraft.version and answer ``response`` once that is committed."""

    response: Response
    records: tuple[Struct, ...] = ()
    upgrade_kraft_version: bool = False
    changes: Mapping[str, int] = field(default_factory=dict)
    """The levels this request finalizes (kraft.version included), for the runtime's view of
    appended but not yet committed changes."""

    @property
    def needs_commit(self) -> bool:
        return bool(self.records) or self.upgrade_kraft_version


def requested_updates(request: Request) -> dict[str, tuple[int, int]]:
    """Feature -> (level, upgrade type), in request order (a repeated feature: the last entry wins)."""
    updates: dict[str, tuple[int, int]] = {}
    for update in request.feature_updates:
        updates[update.feature] = (update.max_version_level, update.upgrade_type)
    return updates


def response(api_version: int, names: list[str], code: int, message: str | None) -> Response:
    """The response at ``api_version``: v0/v1 carry one result per feature with the same error."""
    results = []
    if api_version < 2:
        result_message: str | None = "NONE" if code == ErrorCode.NONE else message
        results = [Response.UpdatableFeatureResult(feature=name, error_code=code,
                                                   error_message=result_message) for name in names]
    return Response(throttle_time_ms=0, error_code=code, error_message=message, results=results)


def wrong_controller_message(leader_id: int, node_id: int) -> str:
    """The message of the NotControllerException a non-active controller of Kafka throws
    (``ControllerExceptions.newWrongControllerException``)."""
    if leader_id >= 0 and leader_id != node_id:
        return f"The active controller appears to be node {leader_id}."
    return "No controller appears to be active."


def not_controller(leader_id: int, node_id: int) -> Response:
    """A non-active controller's answer (QuorumController's NotControllerException, empty Results)."""
    return Response(throttle_time_ms=0, error_code=ErrorCode.NOT_CONTROLLER,
                    error_message=wrong_controller_message(leader_id, node_id), results=[])


def failed(api_version: int, names: list[str], error: FeatureUpdateError) -> Response:
    return response(api_version, names, error.code, FAILED_PREFIX + error.message)


def current_levels(view: ServerView) -> dict[str, int]:
    """Finalized levels as the controller sees them, metadata.version and kraft.version included."""
    levels = dict(view.finalized_features)
    if view.metadata_version is not None:
        levels[features.METADATA_VERSION] = view.metadata_version
    levels.setdefault(features.KRAFT_VERSION, 0)
    return levels


def _range_text(low: int, high: int) -> str:
    """A supported range as Kafka's ``VersionRange`` prints it: ``7-33``, or ``1`` for one level."""
    return str(low) if low == high else f"{low}-{high}"


def _not_supported(what: str, level: int, supported: tuple[int, int]) -> str | None:
    """Kafka's ``QuorumFeatures.reasonNotSupported``: None when ``level`` is in the range."""
    low, high = supported
    if low <= level <= high:
        return None
    return (f"{what} does not support this feature." if high == 0
            else f"{what} only supports versions {_range_text(low, high)}")


_RegisteredFeature: TypeAlias = (messages.RegisterControllerRecord.ControllerFeature
                                 | messages.RegisterBrokerRecord.BrokerFeature)


def _ranges(registered: Iterable[_RegisteredFeature]) -> dict[str, tuple[int, int]]:
    return {f.name: (f.min_supported_version, f.max_supported_version) for f in registered}


@dataclass(frozen=True)
class Registered:
    """What the registered brokers and controllers support, by node id and feature (Kafka's
    ``ClusterFeatureSupportDescriber``), from their registrations in the committed metadata."""

    brokers: Mapping[int, Mapping[str, tuple[int, int]]] = field(default_factory=dict)
    controllers: Mapping[int, Mapping[str, tuple[int, int]]] = field(default_factory=dict)

    @classmethod
    def of(cls, brokers: Iterable[messages.RegisterBrokerRecord],
           controllers: Iterable[messages.RegisterControllerRecord]) -> Registered:
        return cls({r.broker_id: _ranges(r.features) for r in brokers},
                   {r.controller_id: _ranges(r.features) for r in controllers})

    def not_supported(self, name: str, level: int, node_id: int, metadata_version: int) -> str | None:
        """The first registered node, brokers first, whose range for ``name`` lacks ``level`` (a feature
        it does not list counts as 0-0); the controllers only from metadata.version 3.7-IV0, when
        they started to register, and never this one, which checked its own range already."""
        nodes = [(f"Broker {i}", ranges) for i, ranges in sorted(self.brokers.items())]
        if metadata_version >= features.CONTROLLER_REGISTRATION_VERSION:
            nodes += [(f"Controller {i}", ranges) for i, ranges in sorted(self.controllers.items())
                      if i != node_id]
        return next((reason for what, ranges in nodes
                     if (reason := _not_supported(what, level, ranges.get(name, (0, 0)))) is not None), None)


NOBODY: Final = Registered()
"""No registered node besides this controller."""


def _invalid(name: str, level: int, reason: str) -> FeatureUpdateError:
    return FeatureUpdateError(f"Invalid update version {level} for feature {name}. {reason}")


def check_update(name: str, level: int, upgrade_type: int, levels: Mapping[str, int],
                 proposed: Mapping[str, int], node_id: int, voters: VoterSet | None, *,
                 unstable: bool = False, line: KafkaLine = NEWEST, registered: Registered = NOBODY) -> None:
    """Kafka's ``FeatureControlManager.updateFeature`` checks for one feature, as ``line`` makes them;
    raises FeatureUpdateError with Kafka's message. ``voters``: the voter set whose supported
    kraft.version ranges a kraft.version upgrade must fit, None to leave that check to the consensus
    core; ``registered``: the other nodes' supported ranges."""
    if upgrade_type not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
        raise _invalid(name, level, "The controller does not support the given upgrade type.")
    current = levels.get(name, 0)
    if level < 0:
        raise _invalid(name, level, "A feature version cannot be less than 0.")
    local = line.supported_range(name, unstable=unstable)
    reason = (_not_supported(f"Local controller {node_id}", level, local)
              or registered.not_supported(name, level, node_id, levels.get(features.METADATA_VERSION, 0)))
    if reason is not None:
        raise _invalid(name, level, reason)
    if level < current and upgrade_type == UPGRADE:
        raise _invalid(name, level, "Can't downgrade the version of this feature without setting the upgrade "
                                    "type to either safe or unsafe downgrade.")
    if level > current and upgrade_type != UPGRADE:
        raise _invalid(name, level, "Can't downgrade to a newer version.")
    if name == features.METADATA_VERSION:
        _check_metadata_version(current, level, upgrade_type, line)
    elif name == features.KRAFT_VERSION and line.update_upgrades_kraft_version:
        if upgrade_type != UPGRADE:
            raise _invalid(name, level, "Can't downgrade the version of this feature.")
        if level > current and voters is not None:
            _check_voters_support(level, voters)
    elif line.update_checks_dependencies:
        dependency = line.dependency_error(name, level, proposed)
        if dependency is not None:
            raise _invalid(name, level, dependency)


def _check_metadata_version(current: int, level: int, upgrade_type: int, line: KafkaLine) -> None:
    if not line.is_known_metadata_version(level):
        raise FeatureUpdateError(
            f"Invalid metadata.version {level}. Valid versions are from {line.minimum_metadata_version} "
            f"to {line.latest_metadata_version(unstable=True)}.")
    if level < current and line.metadata_changed(current, level):
        text = f"Unsupported metadata.version downgrade from {current} to {level}. "
        if upgrade_type == UNSAFE_DOWNGRADE:
            text += "Unsafe metadata downgrade is not supported in this version."
        else:
            text += ("Refusing to perform the requested downgrade because it might delete metadata "
                     "information.")
        raise FeatureUpdateError(text)


def _check_voters_support(level: int, voters: VoterSet) -> None:
    """Every voter must support the new kraft.version (KafkaRaftClient's upgrade check)."""
    unsupported = sorted(voter_id for voter_id, voter in voters.voters.items()
                         if not voter.min_kraft_version <= level <= voter.max_kraft_version)
    if unsupported:
        raise _invalid(features.KRAFT_VERSION, level,
                       f"The voter set {sorted(voters.voters)} doesn't support the version "
                       f"(voters {unsupported} do not).")


def handle(request: Request, api_version: int, view: ServerView, *, active: bool,
           check_voters: bool = True, registered: Registered = NOBODY) -> Outcome:
    """Decide a request. ``active``: this node is the active controller; ``view.finalized_features``
    holds the levels to check against (the committed ones with this controller's uncommitted changes
    applied). ``check_voters`` False leaves the kraft.version voter check to the consensus core.
    ``registered``: what the registered brokers and controllers support."""
    updates = requested_updates(request)
    names = list(updates)
    if not active or view.metadata_version is None:
        return Outcome(not_controller(view.leader_id, view.node_id))
    line = view.line.features
    levels = current_levels(view)
    proposed = dict(levels)
    proposed.update({name: level for name, (level, _) in updates.items()})
    records: list[Struct] = []
    changes: dict[str, int] = {}
    errors: dict[str, FeatureUpdateError] = {}
    upgrade_kraft = False
    for name, (level, upgrade_type) in updates.items():
        try:
            check_update(name, level, upgrade_type, levels, proposed, view.node_id,
                         view.voters if check_voters else None, unstable=view.unstable_feature_versions,
                         line=line, registered=registered)
        except FeatureUpdateError as error:
            if line.update_is_all_or_nothing:
                return Outcome(failed(api_version, names, error))
            errors[name] = error
            continue
        if name == features.KRAFT_VERSION and line.update_upgrades_kraft_version:
            if level > levels.get(name, 0):
                upgrade_kraft = True
                changes[name] = level
            continue
        records.append(messages.FeatureLevelRecord(name=name, feature_level=level))
        changes[name] = level
    ok = (response(api_version, names, ErrorCode.NONE, None) if line.update_is_all_or_nothing
          else per_feature_response(names, errors))
    if request.validate_only:
        return Outcome(ok)
    return Outcome(ok, tuple(records), upgrade_kraft, changes)


def per_feature_response(names: list[str], errors: Mapping[str, FeatureUpdateError]) -> Response:
    """Kafka 3.9's answer (v0/v1): top-level NONE, each feature's own error and message, null for a
    feature that passed."""
    results = [Response.UpdatableFeatureResult(
        feature=name, error_code=errors[name].code if name in errors else ErrorCode.NONE,
        error_message=errors[name].message if name in errors else None) for name in names]
    return Response(throttle_time_ms=0, error_code=ErrorCode.NONE, error_message=None, results=results)


async def on_controller(node: ControllerRole, call: Call) -> Answer:
    """Decide with ``handle``; append what it asks (the kraft.version upgrade first, then the
    FeatureLevelRecords in one batch) and answer once all of it is committed and applied;
    NOT_CONTROLLER if leadership is lost first."""
    request, version = call.body, call.version
    assert isinstance(request, Request)
    view = node.view(call.listener)
    levels = dict(view.finalized_features)
    levels.update(node.uncommitted_levels())  # appended but not committed yet: the controller's own view
    view = dataclasses.replace(view, finalized_features=levels)
    registered = Registered.of(node.core.registered_brokers(), node.core.registered_controllers())
    outcome = handle(request, version, view, active=node.active, check_voters=False, registered=registered)
    if not outcome.needs_commit:
        return outcome.response, version
    names = list(requested_updates(request))

    def refused() -> Struct:
        return not_controller(node.core.leader_id, node.identity.node_id)

    now = node.now_ms()
    last = -1
    try:
        if outcome.upgrade_kraft_version:
            last = node.core.upgrade_kraft_version(now)
        if outcome.records:
            last = node.core.append(list(outcome.records), now)
    except KRaftUpgradeError as exc:
        return failed(version, names, FeatureUpdateError(
            f"Invalid update version 1 for feature {features.KRAFT_VERSION}. {exc}")), version
    except NotLeaderError:
        return refused(), version
    node.wake()
    if last < 0:
        return outcome.response, version
    log.info("[QuorumController id=%d] UpdateFeatures %s appended up to offset %d", node.identity.node_id,
             dict(outcome.changes), last)
    body = await node.when_committed(last, outcome.response, refused, dict(outcome.changes))
    return None if body is None else (body, version)


def unreachable(api_version: int, node_id: int, request: Struct | None = None) -> Response:
    """A broker's answer when no controller can be reached."""
    return not_controller(-1, node_id)


registry.register(ApiKey.UPDATE_FEATURES, controller=on_controller, forwarded=unreachable)

__all__ = ["NOBODY", "FeatureUpdateError", "Outcome", "Registered", "check_update", "failed", "handle",
           "not_controller", "response", "wrong_controller_message"]
