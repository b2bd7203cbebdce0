"""The voters a command is asked for: entries of ``--voters`` and ``--add``, and ``--controller-config``
files.

Voter entries: ``id``, ``id@directory-id``, or ``id@host:port:directory-id`` (Kafka's
``--initial-controllers`` syntax; the endpoint is named after ``--controller-listener``, by default the
first listener of the voters' endpoints). ``--controller-config FILE`` describes a new controller by its
properties file instead (node id, directory id, endpoints, as ``add-controller`` reads them); without
either, the executor takes the endpoint of a registered controller. A ``--controller-config`` may also
describe a voter that the command removes: the planner then knows whether it would add itself back
(``controller.quorum.auto.join.enable``, ``kafka_admin_kraft.voters`` rule 6).

Nothing here imports the SDK at module level (the tool's start-up stays fast).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from .. import output
from ..admin_options import read_properties_file

if TYPE_CHECKING:
    from kafka_admin_kraft.protocol.primitives import Uuid
    from kafka_admin_kraft.voters import DesiredVoter

SYNTAX = "<id>, <id>@<directory-id> or <id>@<host>:<port>:<directory-id>"


class VoterSpecError(ValueError):
    """A voter entry or list that cannot be used; the message is the whole error line."""


class VoterEntry(NamedTuple):
    """One voter as given on the command line."""

    node_id: int
    directory_id: Uuid | None = None
    host: str | None = None
    port: int | None = None


def _node_id(text: str, entry: str, option: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) >= 2**31:
        raise VoterSpecError(
            f"Invalid {option} entry '{entry}': '{text}' is not a node id; expected {SYNTAX}"
        )
    return int(text)


def _directory_id(text: str, entry: str, option: str) -> Uuid:
    from kafka_admin_kraft.protocol.primitives import Uuid

    try:
        directory = Uuid.from_string(text)
    except ValueError:
        raise VoterSpecError(
            f"Invalid {option} entry '{entry}': '{text}' is not a directory id (22 base64 characters, "
            "directory.id in the controller's meta.properties)"
        ) from None
    if directory.is_reserved():
        raise VoterSpecError(f"Invalid {option} entry '{entry}': {text} is a reserved directory id")
    return directory


def parse_entry(text: str, option: str = "--voters") -> VoterEntry:
    """``id``, ``id@directory-id`` or ``id@host:port:directory-id`` (the endpoint form is parsed as
    ``kafka-storage format --initial-controllers`` parses it)."""
    entry = text.strip()
    head, at, rest = entry.partition("@")
    node_id = _node_id(head, entry, option)
    if not at:
        return VoterEntry(node_id)
    if ":" not in rest and not rest.startswith("["):
        return VoterEntry(node_id, _directory_id(rest, entry, option))
    from kafka_admin_kraft.storage import parse_initial_controllers

    try:
        (parsed,) = parse_initial_controllers(entry)
    except ValueError as exc:
        raise VoterSpecError(f"Invalid {option} entry '{entry}': {exc} Expected {SYNTAX}") from None
    return VoterEntry(node_id, parsed.directory_id, parsed.host, parsed.port)


def parse_entries(values: Iterable[str], option: str = "--voters") -> list[VoterEntry]:
    """The entries of a repeatable, comma-separated option; an id may appear once."""
    entries = [parse_entry(item, option) for value in values for item in value.split(",") if item.strip()]
    ids = [entry.node_id for entry in entries]
    twice = sorted({node_id for node_id in ids if ids.count(node_id) > 1})
    if twice:
        raise VoterSpecError(
            f"Invalid {option}: node id {', '.join(map(str, twice))} is given more than once"
        )
    return entries


def desired_voters(entries: Sequence[VoterEntry], listener: str | None) -> list[DesiredVoter]:
    """What the SDK takes; ``listener`` names the endpoints given (needed only when one is)."""
    from kafka_admin_kraft.models import Endpoint
    from kafka_admin_kraft.voters import DesiredVoter

    voters = []
    for entry in entries:
        endpoints: tuple[Endpoint, ...] = ()
        if entry.host is not None and entry.port is not None:
            if listener is None:
                raise VoterSpecError(
                    "The voters' listener name is not known (the quorum lists no endpoints): give "
                    "--controller-listener"
                )
            try:
                endpoints = (Endpoint(listener=listener, host=entry.host, port=entry.port),)
            except ValueError as exc:
                raise VoterSpecError(f"Invalid endpoint of voter {entry.node_id}: {exc}") from None
        voters.append(DesiredVoter(entry.node_id, entry.directory_id, endpoints))
    return voters


class ConfiguredController(NamedTuple):
    """A controller described by its ``--controller-config`` file."""

    voter: DesiredVoter
    """Its node id, directory id and endpoints, read as ``add-controller`` reads them."""
    auto_join: bool
    """Its ``controller.quorum.auto.join.enable``."""


def configured_voters(paths: Sequence[str]) -> dict[int, ConfiguredController]:
    """The controllers described by ``--controller-config`` files, by node id."""
    from kafka_admin_kraft.voters import DesiredVoter

    from .controller_identity import auto_join_enabled, controller_identity

    found: dict[int, ConfiguredController] = {}
    for path in paths:
        properties = read_properties_file(path)
        identity = controller_identity(properties)
        if identity.node_id in found:
            output.fail(f"Controller {identity.node_id} is described by more than one --controller-config")
        voter = DesiredVoter(identity.node_id, identity.directory_id, identity.endpoints)
        found[identity.node_id] = ConfiguredController(voter, auto_join_enabled(properties))
    return found


def with_configured(
    desired: Sequence[DesiredVoter],
    configured: Mapping[int, ConfiguredController],
    option: str,
    voters: Collection[int] = (),
) -> list[DesiredVoter]:
    """``desired`` with each configured controller's directory id and endpoints; a controller given
    both ways, or configured but neither asked for nor among the current ``voters`` (one the command
    removes), is an error."""
    ids = {wanted.node_id for wanted in desired}
    stray = sorted(set(configured) - ids - set(voters))
    if stray:
        raise VoterSpecError(
            f"--controller-config describes controller {', '.join(map(str, stray))}, which {option} "
            "does not name and which is not a voter"
        )
    merged = []
    for wanted in desired:
        config = configured.get(wanted.node_id)
        if config is not None and (wanted.directory_id is not None or wanted.endpoints):
            raise VoterSpecError(
                f"Controller {wanted.node_id} is given both in {option} and by --controller-config"
            )
        merged.append(config.voter if config is not None else wanted)
    return merged
