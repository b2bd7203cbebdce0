"""Formatting KRaft log directories the way ``kafka-storage format`` does, and inspecting them as
``kafka-storage info`` does.

:func:`plan_format` makes every check of Kafka 4.4's storage tool and formatter, in Kafka's order,
with Kafka's messages and Kafka 4.4's feature tables (:data:`FORMATTER_LINE`), and reads the
directories, without writing anything; :meth:`FormatPlan.write` then writes every directory, or,
when the disk refuses one, none. Splitting the two keeps a refused format from touching the disk.

Every formatted directory gets ``meta.properties``: version 1, cluster id, node id and a fresh
directory id; the metadata directory of a node named among the initial controllers gets the directory
id given there. The bootstrap metadata (metadata.version, the other features above level 0 by name,
then the ``--add-scram`` credentials as UserScramCredentialRecord) goes where the Kafka line of the
metadata.version written expects it (the writers live in :mod:`kafka_admin_kraft.storage.bootstrap`):

* from 4.4-IV0 on (the default), Kafka 4.4's layout (KIP-1170; apache/kafka PR #20707, PR #22418): on a
  controller only, and only in its metadata directory, the zero checkpoint
  ``__cluster_metadata-0/00000000000000000000-0000000000.checkpoint`` holds KRaft's control records
  (kraft.version, the initial voters) and then the bootstrap records; no ``bootstrap.checkpoint``
  anywhere, and a broker gets meta.properties alone. No Kafka before 4.4 starts such a directory
  (PR #22429).
* below it, the layout of Kafka 4.3 and older, which every line from 3.9 on (4.4 too) starts:
  ``bootstrap.checkpoint`` in every directory, and for a dynamic quorum with known initial controllers
  the zero checkpoint with KRaft's control records alone. Kafka 4.4's own tool writes its new layout
  whatever the release version; choosing the layout by it is this module's addition, so that a
  directory formatted for an older line can be started by that line.

Besides Kafka's options this module parses the voter syntax of the dynamic-quorum proposal,
``<id>[-<directory id>]@<host>:<port>``, which has the effect of ``--initial-controllers`` once
every voter has a directory id.
"""
from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import hmac
import os
import secrets
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

from kafka_admin_kraft import features as ft
from kafka_admin_kraft.java_text import parse_java_int
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.exceptions import KafkaAdminError
from kafka_admin_kraft.protocol.primitives import (
    Uuid,
    write_compact_bytes,
    write_compact_string,
    write_uvarint,
)
from kafka_admin_kraft.records.builder import MAX_BATCH_SIZE
from kafka_admin_kraft.records.metadata import ApiMessageAndVersion, MetadataRecord, RawMetadataRecord
from kafka_admin_kraft.storage.bootstrap import (
    InitialController,
    bootstrap_batch_size,
    bootstrap_records,
    write_bootstrap_checkpoint,
    write_bootstrap_snapshot,
    write_zero_checkpoint,
)
from kafka_admin_kraft.storage.errors import StorageFormatError
from kafka_admin_kraft.storage.meta_properties import (
    META_PROPERTIES_FILE,
    MetaProperties,
    read_meta_properties,
    write_meta_properties,
)

__all__ = [
    "DirectoryKind",
    "DirectoryReport",
    "DynamicVoterError",
    "FormatOptions",
    "FormatPlan",
    "FormatTarget",
    "FormatterError",
    "NodeStorageConfig",
    "ScramCredential",
    "inspect_directories",
    "parse_controller_quorum_voters",
    "parse_initial_controllers",
    "parse_scram_credential",
    "plan_format",
]

SCRAM_MINIMUM_METADATA_VERSION: Final = 11
"""3.5-IV2: the first metadata.version with SCRAM credentials in the metadata log."""
USER_SCRAM_CREDENTIAL_RECORD: Final = 11
"""Api key of UserScramCredentialRecord (written at version 0)."""
SCRAM_MECHANISMS: Final = {"SCRAM-SHA-256": (1, "sha256"), "SCRAM-SHA-512": (2, "sha512")}
"""Mechanism name -> (type id stored in the record, hashlib name)."""
SCRAM_ITERATIONS: Final = (4096, 16384)
"""Default (and minimum) and maximum iteration count Kafka accepts for both mechanisms."""
FORMAT_COMMAND_SOURCE: Final = "format command"
FORMATTER_LINE: Final = ft.NEWEST
"""The Kafka line whose feature tables ``kafka-storage format`` uses: Kafka 4.4's, so without
--release-version it writes 4.4-IV2 (33) with share.version 2."""
ZERO_CHECKPOINT_LAYOUT_METADATA_VERSION: Final = 31
"""4.4-IV0, the first metadata.version of Kafka 4.4: from it on the bootstrap records go into the zero
checkpoint as Kafka 4.4 writes them (KIP-1170); below it into ``bootstrap.checkpoint`` (Kafka 4.3 and
older), so that the line the release names can start the directory."""

DirectoryKind = Literal["data directory", "metadata directory", "dynamic metadata voter directory",
                        "dynamic metadata directory"]


class FormatterError(KafkaAdminError):
    """A refusal that Kafka's storage tool reports as a bare message (exit code 1)."""


class DynamicVoterError(ValueError):
    """A malformed voter list; Kafka lets this one escape as an exception rather than a terse error."""


# --------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class NodeStorageConfig:
    """What the formatter needs from the node's server properties."""

    node_id: int
    process_roles: tuple[str, ...]
    log_dirs: tuple[str, ...]
    """``log.dirs`` (or ``log.dir``) entries; the metadata directory is added to them."""
    metadata_log_dir: str
    controller_listener_names: tuple[str, ...]
    controller_endpoint: tuple[str, int] | None
    """Host and port of the node's first advertised controller listener (host "" = every interface)."""
    quorum_voters_configured: bool
    """``controller.quorum.voters`` is set: a static quorum."""
    unstable_feature_versions: bool = False

    @property
    def is_controller(self) -> bool:
        return "controller" in self.process_roles

    @property
    def directories(self) -> list[str]:
        """The sorted, de-duplicated log directories plus the metadata directory."""
        return sorted({*self.log_dirs, self.metadata_log_dir})


@dataclass(frozen=True)
class FormatOptions:
    """The options of ``kafka-storage format``, as typed on the command line."""

    cluster_id: str | None
    release_version: str | None = None
    features: Sequence[str] = ()
    """``name=level`` strings."""
    add_scram: Sequence[str] = ()
    """``<mechanism>=[name=...,password=...]`` strings."""
    ignore_formatted: bool = False
    standalone: bool = False
    initial_controllers: str | None = None
    no_initial_controllers: bool = False
    controller_quorum_voters: str | None = None
    """The proposal's ``<id>[-<directory id>]@<host>:<port>`` list (not an option of Kafka's tool)."""


# --------------------------------------------------------------------------- voter lists


def _parse_host_port(rest: str, *, directory_follows: bool) -> tuple[str, int, str]:
    """``<host>:<port>`` (host may be ``[ipv6]``), then ``:<directory id>`` when ``directory_follows``.

    Returns host, port and what follows the port's colon (empty when no directory id follows)."""
    if not rest:
        raise DynamicVoterError("No hostname found after node id.")
    if rest.startswith("["):
        end = rest.find("]")
        if end < 0:
            raise DynamicVoterError("Hostname began with left bracket, but no right bracket was found.")
        host, rest = rest[1:end], rest[end + 1:]
    else:
        end = rest.find(":")
        if end < 0:
            raise DynamicVoterError("No colon following hostname could be found.")
        host, rest = rest[:end], rest[end:]
    if not rest.startswith(":"):
        raise DynamicVoterError("Port section must start with a colon.")
    rest = rest[1:]
    tail = ""
    if directory_follows:
        end = rest.find(":")
        if end < 0:
            raise DynamicVoterError("No colon following port could be found.")
        rest, tail = rest[:end], rest[end + 1:]
    try:
        port = parse_java_int(rest)
    except ValueError:
        raise DynamicVoterError("Failed to parse port in dynamic voter string.") from None
    if not 0 <= port <= 65535:
        raise DynamicVoterError(f"Invalid port {port} in dynamic voter string.")
    return host, port, tail


def _split_at_sign(text: str) -> tuple[str, str]:
    at = text.find("@")
    if at < 0:
        raise DynamicVoterError("No @ found in dynamic voter string.")
    if at == 0:
        raise DynamicVoterError("Invalid @ at beginning of dynamic voter string.")
    return text[:at], text[at + 1:]


def _node_id(text: str) -> int:
    try:
        node_id = parse_java_int(text)
    except ValueError:
        raise DynamicVoterError("Failed to parse node id in dynamic voter string.") from None
    if node_id < 0:
        raise DynamicVoterError(f"Invalid negative node id {node_id} in dynamic voter string.")
    return node_id


def _parse_initial_controller(text: str) -> InitialController:
    """One ``<node id>@<host>:<port>:<directory id>`` entry, checked in Kafka's order."""
    id_text, rest = _split_at_sign(text.strip())
    node_id = _node_id(id_text)
    host, port, directory = _parse_host_port(rest, directory_follows=True)
    try:
        directory_id = Uuid.from_string(directory)
    except ValueError:
        raise DynamicVoterError("Failed to parse directory ID in dynamic voter string.") from None
    return InitialController(node_id, host, port, _usable(directory_id, node_id))


def _usable(directory_id: Uuid, node_id: int) -> Uuid:
    """Refuse a reserved directory id now: a Kafka node refuses to start with one in meta.properties
    (``MetaPropertiesEnsemble.verify``)."""
    if directory_id.is_reserved():
        raise DynamicVoterError(f"Invalid reserved directory ID {directory_id} of node {node_id} in dynamic "
                                "voter string: the zero id and the ids below 100 are reserved by Kafka.")
    return directory_id


def _unique(controllers: list[InitialController]) -> list[InitialController]:
    if not controllers:
        raise DynamicVoterError("No voters given.")
    seen: set[int] = set()
    for controller in controllers:
        if controller.node_id in seen:
            raise DynamicVoterError(f"Node id {controller.node_id} was specified more than once.")
        seen.add(controller.node_id)
    return controllers


def _entries(text: str) -> list[str]:
    return [entry.strip() for entry in text.strip().split(",") if entry.strip()]


def parse_initial_controllers(text: str) -> list[InitialController]:
    """``--initial-controllers``: comma-separated ``<id>@<host>:<port>:<directory id>`` entries;
    blanks are trimmed and empty entries skipped. Raises :class:`DynamicVoterError` with Kafka's text."""
    return _unique([_parse_initial_controller(entry) for entry in _entries(text)])


def parse_controller_quorum_voters(text: str, node_id: int) -> list[InitialController]:
    """The proposal's ``<id>[-<directory id>]@<host>:<port>`` list as initial controllers.

    Only this node (``node_id``) may leave out its directory id; it then gets a new one. Another voter
    without one cannot be bootstrapped consistently (every controller must write the same voter set),
    so that is refused.
    """
    controllers: list[InitialController] = []
    for entry in _entries(text):
        head, rest = _split_at_sign(entry)
        dash = head.find("-", 1)
        id_text, directory = (head, "") if dash < 0 else (head[:dash], head[dash + 1:])
        voter_id = _node_id(id_text)
        host, port, _ = _parse_host_port(rest, directory_follows=False)
        if dash >= 0:
            try:
                parsed = Uuid.from_string(directory)
            except ValueError:
                raise DynamicVoterError(f"Failed to parse directory ID {directory!r} of voter {voter_id} in "
                                        "--controller-quorum-voters.") from None
            directory_id = _usable(parsed, voter_id)
        elif voter_id == node_id:
            directory_id = Uuid.random()
        else:
            raise DynamicVoterError(
                f"Voter {voter_id} in --controller-quorum-voters has no directory id. Every voter other than "
                f"this node ({node_id}) needs one, written <id>-<directory-id>@<host>:<port>: take it from "
                "directory.id in the meta.properties of that controller's metadata directory.")
        controllers.append(InitialController(voter_id, host, port, directory_id))
    return _unique(controllers)


# --------------------------------------------------------------------------- SCRAM credentials


@dataclass(frozen=True)
class ScramCredential:
    """One ``--add-scram`` credential, as stored in a UserScramCredentialRecord."""

    mechanism: str
    name: str
    salt: bytes
    iterations: int
    stored_key: bytes
    server_key: bytes

    @property
    def mechanism_type(self) -> int:
        return SCRAM_MECHANISMS[self.mechanism][0]

    def record(self) -> RawMetadataRecord:
        """UserScramCredentialRecord v0 (flexible): Name, Mechanism int8, Salt, StoredKey, ServerKey,
        Iterations int32, no tagged fields."""
        body = bytearray()
        write_compact_string(body, self.name)
        body += self.mechanism_type.to_bytes(1, "big", signed=True)
        write_compact_bytes(body, self.salt)
        write_compact_bytes(body, self.stored_key)
        write_compact_bytes(body, self.server_key)
        body += self.iterations.to_bytes(4, "big", signed=True)
        write_uvarint(body, 0)
        return RawMetadataRecord(USER_SCRAM_CREDENTIAL_RECORD, 0, bytes(body))

    def java_string(self) -> str:
        """The record as Kafka's generated ``toString`` shows it (bytes as signed decimal lists)."""
        def signed(data: bytes) -> str:
            return "[" + ", ".join(str(b - 256 if b > 127 else b) for b in data) + "]"
        return (f"UserScramCredentialRecord(name='{self.name}', mechanism={self.mechanism_type}, "
                f"salt={signed(self.salt)}, storedKey={signed(self.stored_key)}, "
                f"serverKey={signed(self.server_key)}, iterations={self.iterations})")


def _random_salt() -> bytes:
    """Like Kafka's default salt: a 130-bit random number written in base 36, as ASCII."""
    number = secrets.randbits(130)
    digits = ""
    while True:
        number, digit = divmod(number, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[digit] + digits
        if number == 0:
            return digits.encode("ascii")


def _scram_pairs(text: str, body: str) -> dict[str, str]:
    """``key=value`` pairs separated by commas; a value may be double-quoted (and hold commas)."""
    pairs: dict[str, str] = {}
    index = 0
    while index < len(body):
        equals = body.find("=", index)
        if equals < 0:
            raise FormatterError(f"Invalid --add-scram value {text}: expected key=value pairs "
                                 "separated by commas.")
        key = body[index:equals].strip()
        index = equals + 1
        if body[index:index + 1] == '"':
            close = body.find('"', index + 1)
            if close < 0:
                raise FormatterError(f"Invalid --add-scram value {text}: unterminated quote.")
            value, index = body[index + 1:close], close + 1
            if index < len(body) and body[index] != ",":
                raise FormatterError(f"Invalid --add-scram value {text}: a comma must follow a quoted value.")
        else:
            comma = body.find(",", index)
            comma = len(body) if comma < 0 else comma
            value, index = body[index:comma], comma
        index += 1
        if key in pairs:
            raise FormatterError(f"Invalid --add-scram value {text}: {key} given more than once.")
        pairs[key] = value
    return pairs


def _base64(text: str, key: str, argument: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise FormatterError(f"Invalid --add-scram value {argument}: {key} is not base64.") from None


def parse_scram_credential(text: str) -> ScramCredential:
    """``<mechanism>=[name=<user>,password=<secret>]``, optionally with ``iterations=<n>`` and
    ``salt=<base64>``, or ``salt=<base64>,saltedpassword=<base64>`` instead of the password.

    The salted password is PBKDF2 (RFC 5802 ``Hi``) of the UTF-8 password; the stored and server
    keys derive from it as RFC 5802 says. Without a salt a random one is made, 4096 iterations by
    default (4096-16384 accepted).
    """
    mechanism, equals, rest = text.partition("=")
    mechanism = mechanism.strip()
    if mechanism not in SCRAM_MECHANISMS:
        raise FormatterError(f"Invalid --add-scram value {text}: unknown SCRAM mechanism {mechanism!r}; "
                             f"use one of {', '.join(SCRAM_MECHANISMS)}.")
    rest = rest.strip()
    if not equals or not rest.startswith("[") or not rest.endswith("]"):
        raise FormatterError(f"Invalid --add-scram value {text}: expected "
                             f"{mechanism}=[name=...,password=...].")
    pairs = _scram_pairs(text, rest[1:-1])
    unknown = sorted(set(pairs) - {"name", "password", "salt", "saltedpassword", "iterations"})
    if unknown:
        raise FormatterError(f"Invalid --add-scram value {text}: unknown key {unknown[0]}.")
    name = pairs.get("name")
    if not name:
        raise FormatterError(f"Invalid --add-scram value {text}: name is required.")
    if ("password" in pairs) == ("saltedpassword" in pairs):
        raise FormatterError(f"Invalid --add-scram value {text}: give either password or saltedpassword.")
    iterations = SCRAM_ITERATIONS[0]
    if "iterations" in pairs:
        try:
            iterations = parse_java_int(pairs["iterations"].strip())
        except ValueError:  # not a number, or beyond an int: either way outside the range
            iterations = -1
        if not SCRAM_ITERATIONS[0] <= iterations <= SCRAM_ITERATIONS[1]:
            raise FormatterError(f"Invalid --add-scram value {text}: iterations must be a whole number from "
                                 f"{SCRAM_ITERATIONS[0]} to {SCRAM_ITERATIONS[1]}.")
    hash_name = SCRAM_MECHANISMS[mechanism][1]
    if "saltedpassword" in pairs:
        if "salt" not in pairs:
            raise FormatterError(f"Invalid --add-scram value {text}: saltedpassword needs the salt it was "
                                 "made with.")
        salt = _base64(pairs["salt"], "salt", text)
        salted = _base64(pairs["saltedpassword"], "saltedpassword", text)
    else:
        salt = _base64(pairs["salt"], "salt", text) if "salt" in pairs else _random_salt()
        salted = hashlib.pbkdf2_hmac(hash_name, pairs["password"].encode("utf-8"), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", hash_name).digest()
    return ScramCredential(
        mechanism=mechanism, name=name, salt=salt, iterations=iterations,
        stored_key=hashlib.new(hash_name, client_key).digest(),
        server_key=hmac.new(salted, b"Server Key", hash_name).digest())


# --------------------------------------------------------------------------- feature arguments


def _parse_feature(text: str) -> tuple[str, int]:
    """``name=level`` as Kafka's tools parse it (level a Java short)."""
    name, equals, level_text = text.partition("=")
    if not equals:
        raise FormatterError(f"Can't parse feature=level string {text}: equals sign not found.")
    try:
        level = parse_java_int(level_text.strip(), bits=16)
    except ValueError:
        raise FormatterError(f"Can't parse feature=level string {text}: unable to parse {level_text.strip()} "
                             "as a short.") from None
    return name.strip(), level


def _parse_features(texts: Sequence[str]) -> dict[str, int]:
    levels: dict[str, int] = {}
    for text in texts:
        name, level = _parse_feature(text)
        if name in levels:
            raise FormatterError(f"Feature {name} was specified more than once.")
        levels[name] = level
    return levels


# --------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class FormatTarget:
    """A directory to format: how Kafka names it in its output, and the directory id it gets."""

    path: str
    kind: DirectoryKind
    directory_id: Uuid


def _feature_record_string(record: MetadataRecord) -> str:
    """Kafka's ``toString`` of a FeatureLevelRecord in its ApiMessageAndVersion frame."""
    message = record.message if isinstance(record, ApiMessageAndVersion) else None
    if not isinstance(message, messages.FeatureLevelRecord):
        raise TypeError(f"not a FeatureLevelRecord: {record!r}")
    return (f"ApiMessageAndVersion(FeatureLevelRecord(name='{message.name}', "
            f"featureLevel={message.feature_level}) at version 0)")


@dataclass(frozen=True)
class FormatPlan:
    """Everything a format will write, checked and decided; nothing is on disk yet."""

    cluster_id: str
    node_id: int
    metadata_log_dir: str
    metadata_version: int
    feature_levels: dict[str, int]
    """Every production feature besides metadata.version, kraft.version included, in Kafka's order."""
    scram_credentials: tuple[ScramCredential, ...]
    initial_controllers: tuple[InitialController, ...] | None
    controller_listener_name: str
    is_controller: bool
    """The node has the controller role: only a controller gets Kafka 4.4's zero checkpoint."""
    targets: tuple[FormatTarget, ...]
    """The directories to format, sorted."""
    already_formatted: tuple[str, ...]
    """Directories left alone because they are formatted (``ignore_formatted``)."""
    unreadable: tuple[str, ...]
    """Directories whose meta.properties could not be read; Kafka ignores them."""
    timestamp_ms: int = field(default_factory=lambda: time.time_ns() // 1_000_000)

    @property
    def feature_records(self) -> list[MetadataRecord]:
        return bootstrap_records(self.metadata_version, self.feature_levels)

    @property
    def records(self) -> list[MetadataRecord]:
        """The bootstrap records: features, then the SCRAM credentials."""
        return bootstrap_records(self.metadata_version, self.feature_levels,
                                 [credential.record() for credential in self.scram_credentials])

    @property
    def zero_checkpoint_layout(self) -> bool:
        """Kafka 4.4's layout (the bootstrap records in the zero checkpoint), else Kafka 4.3's."""
        return self.metadata_version >= ZERO_CHECKPOINT_LAYOUT_METADATA_VERSION

    def bootstrap_metadata_string(self) -> str:
        """What Kafka prints after ``Bootstrap metadata: ``."""
        parts = [_feature_record_string(record) for record in self.feature_records]
        parts += [f"ApiMessageAndVersion({credential.java_string()} at version 0)"
                  for credential in self.scram_credentials]
        return (f"BootstrapMetadata(records=[{', '.join(parts)}], "
                f"metadataVersionLevel={self.metadata_version}, source={FORMAT_COMMAND_SOURCE})")

    def write(self) -> dict[str, list[Path]]:
        """Format every target directory, or leave the disk as it was; returns the files written per
        directory.

        Every directory (with its missing parents) is made before any file is written, and a failure
        part way (an interrupt too) removes all this call created, so that a failed format never
        leaves some log directories formatted and others not. Within a directory meta.properties
        comes last. Raises :class:`FormatterError` naming the directory and the operating system's
        reason, in the words of Kafka's ``Formatter`` for a directory it cannot write.
        """
        created: list[Path] = []
        before: dict[str, set[str]] = {}
        written: dict[str, list[Path]] = {}
        current, making = "", True
        try:
            for target in self.targets:
                current = target.path
                directory = Path(target.path)
                missing = _highest_missing(directory)
                if missing is not None:
                    created.append(missing)
                directory.mkdir(parents=True, exist_ok=True)
                before[target.path] = set(os.listdir(directory))
            making = False
            for target in self.targets:
                current = target.path
                written[target.path] = self._write_directory(target)
        except BaseException as exc:
            _remove_new_entries(before, created)
            # ValueError while making the directories: a path the OS cannot take (a NUL byte)
            if isinstance(exc, OSError) or (making and isinstance(exc, ValueError)):
                raise FormatterError(f"Error while writing meta.properties file {current}: "
                                     f"{_os_reason(exc, current)}") from None
            raise
        return written

    def _write_directory(self, target: FormatTarget) -> list[Path]:
        """Kafka's ``preWriteHandler`` for one directory, then its meta.properties."""
        directory = Path(target.path)
        written: list[Path] = []
        if self.zero_checkpoint_layout:
            # Formatter.writeBoostrapSnapshot, on controllers (StorageTool, PR #20707) and in metadata
            # directories (PR #22418) only
            if self.is_controller and target.kind != "data directory":
                written.append(write_zero_checkpoint(
                    directory, self.records, kraft_version=self.feature_levels[ft.KRAFT_VERSION],
                    controllers=self.initial_controllers or (), listener_name=self.controller_listener_name,
                    timestamp_ms=self.timestamp_ms))
        else:
            if target.kind in ("dynamic metadata voter directory", "dynamic metadata directory"):
                written.append(write_bootstrap_snapshot(directory, self.initial_controllers or (),
                                                        self.controller_listener_name,
                                                        timestamp_ms=self.timestamp_ms))
            written.append(write_bootstrap_checkpoint(directory, self.records,
                                                      timestamp_ms=self.timestamp_ms))
        written.append(write_meta_properties(directory, MetaProperties(
            version=1, cluster_id=self.cluster_id, node_id=self.node_id, directory_id=target.directory_id)))
        return written


def _highest_missing(directory: Path) -> Path | None:
    """The outermost of ``directory`` and its parents that does not exist: what making it creates."""
    missing = None
    for candidate in (directory, *directory.parents):
        if os.path.lexists(candidate):
            break
        missing = candidate
    return missing


def _remove_new_entries(before: Mapping[str, set[str]], created: Sequence[Path]) -> None:
    """Undo a failed :meth:`FormatPlan.write`: remove the entries that appeared in the directories that
    existed, then the directories it made. Best effort: what cannot be removed stays."""
    for directory, names in before.items():
        try:
            new = set(os.listdir(directory)) - names
        except OSError:
            continue
        for name in new:
            path = os.path.join(directory, name)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(path)
    for made in reversed(created):
        shutil.rmtree(made, ignore_errors=True)


def _os_reason(exc: OSError | ValueError, directory: str) -> str:
    """``Permission denied``, with the path when it is not the directory itself (a parent, a file)."""
    if not isinstance(exc, OSError) or not exc.strerror:
        return str(exc)
    if exc.filename is None or os.fspath(exc.filename) == directory:
        return exc.strerror
    return f"{exc.strerror}: {os.fspath(exc.filename)}"


def _metadata_version(config: NodeStorageConfig, options: FormatOptions, release: int | None,
                      requested: Mapping[str, int]) -> int:
    """Step b: from --release-version or --feature metadata.version, else the latest allowed."""
    line = FORMATTER_LINE
    from_feature = requested.get(ft.METADATA_VERSION)
    if from_feature is not None and options.release_version is not None:
        raise FormatterError("Use --release-version instead of --feature metadata.version=X to avoid "
                             "ambiguity.")
    level = release if release is not None else from_feature
    if level is None:
        return line.latest_metadata_version(unstable=config.unstable_feature_versions)
    if not line.is_known_metadata_version(level):
        raise FormatterError(f"Unknown metadata.version {level}")
    if level > line.latest_production_metadata_version and not config.unstable_feature_versions:
        raise FormatterError(f"metadata.version {line.release_string(level)} is not yet stable.")
    return level


def _feature_levels(metadata_version: int, requested: Mapping[str, int], dynamic: bool,
                    unstable: bool) -> dict[str, int]:
    """Step c: named levels, defaults for the rest, kraft.version from the quorum kind; all validated.
    An unknown name lists the supported ones sorted, as Kafka's formatter keeps them in a TreeMap."""
    line = FORMATTER_LINE
    for name in requested:
        if name != ft.METADATA_VERSION and line.feature(name) is None:
            raise FormatterError(f"Unsupported feature: {name}. Supported features are: "
                                 f"{', '.join(sorted(f.name for f in line.features))}")
    kraft = requested.get(ft.KRAFT_VERSION)
    if kraft == 0 and dynamic:
        raise FormatterError(
            "Cannot set kraft.version to 0 if controller.quorum.voters is empty and one of the flags "
            "--standalone, --initial-controllers, or --no-initial-controllers is used. For dynamic "
            "controllers support, try removing the --feature flag for kraft.version.")
    if kraft is not None and kraft >= 1 and not dynamic:
        raise FormatterError(
            f"Cannot set kraft.version to {kraft} unless controller.quorum.voters is empty and one of the "
            "flags --standalone, --initial-controllers, or --no-initial-controllers is used. For dynamic "
            "controllers support, try using one of --standalone, --initial-controllers, or "
            "--no-initial-controllers and removing controller.quorum.voters.")
    levels = line.default_levels(metadata_version)
    levels[ft.KRAFT_VERSION] = 1 if dynamic else 0
    levels.update((name, level) for name, level in requested.items() if name != ft.METADATA_VERSION)
    proposed = {ft.METADATA_VERSION: metadata_version, **levels}
    for name, level in sorted(levels.items()):  # Kafka checks them in name order (a TreeMap)
        # Feature.fromFeatureLevel: a level the line defines, above the production one only with unstable
        # versions enabled (every feature defines each level from 0 to its highest)
        low, high = line.supported_range(name, unstable=unstable)
        if not low <= level <= high:
            raise FormatterError(f"No feature:{name} with feature level {level}")
        problem = line.dependency_error(name, level, proposed)
        if problem is not None:
            raise FormatterError(problem)
    return levels


def _initial_controllers(config: NodeStorageConfig, options: FormatOptions) -> list[InitialController] | None:
    """Steps 6-8: the initial voters of a dynamic quorum, if this format names them."""
    named = [given for given in (options.standalone, options.initial_controllers is not None,
                                 options.controller_quorum_voters is not None) if given]
    if len(named) + options.no_initial_controllers > 1:
        raise FormatterError("Only one of --standalone, --initial-controllers, --controller-quorum-voters "
                             "and --no-initial-controllers may be given.")
    if config.quorum_voters_configured and named:
        raise FormatterError(
            "You cannot specify controller.quorum.voters and format the node with --initial-controllers or "
            "--standalone. If you want to use dynamic quorum, please remove controller.quorum.voters and "
            "specify controller.quorum.bootstrap.servers instead.")
    controllers: list[InitialController] | None = None
    if options.initial_controllers is not None:
        controllers = parse_initial_controllers(options.initial_controllers)
    elif options.controller_quorum_voters is not None:
        controllers = parse_controller_quorum_voters(options.controller_quorum_voters, config.node_id)
    elif options.standalone:
        if not config.is_controller or config.controller_endpoint is None:
            raise FormatterError("You can only use --standalone on a controller.")
        host, port = config.controller_endpoint
        controllers = [InitialController(config.node_id, host or "localhost", port, Uuid.random())]
    if (config.is_controller and not config.quorum_voters_configured and controllers is None
            and not options.no_initial_controllers):
        raise FormatterError(
            "Because controller.quorum.voters is not set on this controller, you must specify one of the "
            "following: --standalone, --initial-controllers, or --no-initial-controllers.")
    return controllers


def _new_directory_id(taken: set[Uuid]) -> Uuid:
    while True:
        candidate = Uuid.random()
        if candidate not in taken:
            taken.add(candidate)
            return candidate


def plan_format(config: NodeStorageConfig, options: FormatOptions) -> FormatPlan:
    """Check a format as Kafka 4.4 does and decide what each directory gets; writes nothing.

    Raises :class:`FormatterError` (Kafka's terse refusals, with its messages) or
    :class:`DynamicVoterError` (a malformed voter list).
    """
    if not config.process_roles:
        raise FormatterError("The kafka configuration file appears to be for a legacy cluster. Formatting is "
                             "only supported for clusters in KRaft mode.")
    release: int | None = None
    if options.release_version is not None:
        try:
            release = FORMATTER_LINE.metadata_version_from_string(options.release_version,
                                                      unstable=config.unstable_feature_versions)
        except ValueError as exc:
            raise FormatterError(str(exc)) from None
    requested = _parse_features(options.features)
    controllers = _initial_controllers(config, options)
    scram = tuple(parse_scram_credential(text) for text in options.add_scram)

    if not options.cluster_id:
        raise FormatterError("You must specify the cluster id.")
    metadata_version = _metadata_version(config, options, release, requested)
    levels = _feature_levels(metadata_version, requested, dynamic=not config.quorum_voters_configured,
                             unstable=config.unstable_feature_versions)
    if scram and metadata_version < SCRAM_MINIMUM_METADATA_VERSION:
        raise FormatterError("SCRAM is only supported in metadata.version 3.5-IV2 or later.")

    empty: list[str] = []
    formatted: dict[str, MetaProperties] = {}
    unreadable: list[str] = []
    for report in inspect_directories(config.directories):
        if report.error is not None or report.problem == "not a directory":
            unreadable.append(report.path)
        elif report.meta is not None:
            formatted[report.path] = report.meta
        else:
            empty.append(report.path)
    if formatted and not options.ignore_formatted:
        raise FormatterError(f"Log directory {next(iter(formatted))} is already formatted. Use "
                             "--ignore-formatted to ignore this directory and format the others.")
    if not empty and not formatted:
        raise FormatterError("No available log directories to format.")
    for directory, meta in formatted.items():
        if meta.cluster_id != options.cluster_id or meta.node_id != config.node_id:
            raise FormatterError(
                f"Log directory {directory} is already formatted for cluster {meta.cluster_id} and node "
                f"{meta.node_id}, not cluster {options.cluster_id} and node {config.node_id}; a node's "
                "directories must agree.")

    own = next((c for c in controllers or () if c.node_id == config.node_id), None)
    taken = {own.directory_id} if own is not None else set()
    targets = []
    for directory in empty:
        kind: DirectoryKind
        if directory != config.metadata_log_dir:
            kind = "data directory"
        elif controllers is None:
            kind = "metadata directory"
        else:
            kind = "dynamic metadata voter directory" if own is not None else "dynamic metadata directory"
        directory_id = (own.directory_id if own is not None and directory == config.metadata_log_dir
                        else _new_directory_id(taken))
        targets.append(FormatTarget(directory, kind, directory_id))
    plan = FormatPlan(
        cluster_id=options.cluster_id, node_id=config.node_id, metadata_log_dir=config.metadata_log_dir,
        metadata_version=metadata_version, feature_levels=levels, scram_credentials=scram,
        initial_controllers=tuple(controllers) if controllers is not None else None,
        controller_listener_name=config.controller_listener_names[0], is_controller=config.is_controller,
        targets=tuple(targets),
        already_formatted=tuple(formatted), unreadable=tuple(unreadable))
    _check_zero_checkpoint_fits(plan)
    return plan


def _check_zero_checkpoint_fits(plan: FormatPlan) -> None:
    """Kafka 4.4 appends the bootstrap records to the zero checkpoint in one call, which KRaft keeps in
    one batch of at most 8 MiB (``BatchAccumulator``; KIP-1170 states the limit): more fails Kafka's
    tool part way with RecordBatchTooLargeException. Refused here, before anything is written."""
    if not (plan.zero_checkpoint_layout and plan.is_controller
            and any(target.kind != "data directory" for target in plan.targets)):
        return
    size = bootstrap_batch_size(plan.records)
    if size > MAX_BATCH_SIZE:
        raise FormatterError(
            f"The total record(s) size of {size} exceeds the maximum allowed batch size of {MAX_BATCH_SIZE}: "
            "Kafka 4.4 keeps the bootstrap records in one batch of the zero checkpoint (KIP-1170). Give "
            f"fewer --add-scram credentials ({len(plan.scram_credentials)} given) and add the others with "
            "kafka-configs once the cluster runs.")


# --------------------------------------------------------------------------- inspecting (info)


@dataclass(frozen=True)
class DirectoryReport:
    """What one log directory holds: its meta.properties, or why there is none."""

    path: str
    meta: MetaProperties | None = None
    problem: Literal["does not exist", "not a directory", "not formatted"] | None = None
    error: str | None = None
    """Why meta.properties could not be loaded."""


def _inspect(directory: str) -> DirectoryReport:
    if not os.path.exists(directory):
        return DirectoryReport(directory, problem="does not exist")
    if not os.path.isdir(directory):
        return DirectoryReport(directory, problem="not a directory")
    path = os.path.join(directory, META_PROPERTIES_FILE)
    if not os.path.exists(path):
        return DirectoryReport(directory, problem="not formatted")
    try:
        return DirectoryReport(directory, meta=read_meta_properties(directory))
    except StorageFormatError as exc:
        return DirectoryReport(directory, error=exc.reason)
    except OSError as exc:
        return DirectoryReport(directory, error=exc.strerror or str(exc))


def inspect_directories(directories: Sequence[str]) -> list[DirectoryReport]:
    """One report per directory, in the order given (``info`` sorts them first)."""
    return [_inspect(directory) for directory in directories]
