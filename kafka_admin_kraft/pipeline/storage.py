"""Where the pipeline reads files from: local paths, and URIs read through pyarrow's file systems.

A path with a scheme is read through pyarrow (imported only then; it comes with the ``spark``
extra): ``s3://bucket/prefix`` (also ``s3a://``), ``gs://bucket/prefix`` (also ``gcs://``),
``hdfs://namenode:8020/dir`` (also ``viewfs://``; ``hdfs:///dir`` uses ``fs.defaultFS``) and
``file:///dir``. Any other path is a local path and is read with ``os.pread``, as fast as before.
Files are read in byte ranges (:func:`open_input`: ``open_input_file`` and ``read_at``, one ranged
GET per read on an object store); only ``meta.properties``, ``quorum-state`` and ``.index`` files
are read whole.

Credentials and endpoints come from :class:`StorageOptions` (the data source's options, see
:data:`OPTION_NAMES`) and, for what those leave unset, from the standard environment of the
process that reads: ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``,
``AWS_PROFILE``, ``AWS_REGION`` / ``AWS_DEFAULT_REGION``, ``AWS_ENDPOINT_URL_S3`` /
``AWS_ENDPOINT_URL`` for S3; ``GOOGLE_APPLICATION_CREDENTIALS`` for GCS; ``HADOOP_HOME``,
``CLASSPATH``, ``HADOOP_CONF_DIR``, ``HADOOP_USER_NAME`` and the Kerberos ticket cache for HDFS
(pyarrow loads ``libhdfs``, which runs the Hadoop client in a JVM).

An object store has no directories, only keys under prefixes: :class:`StorageView` lists a walked
prefix once, recursively, and answers every later question about it (is it there, file or
directory, its size) from that listing, so discovery costs a few list requests rather than one
request per file. Failures are :class:`StorageError` naming the path and, for the usual causes,
what to check; credentials appear in no message and no ``repr``.
"""

from __future__ import annotations

import errno
import functools
import math
import os
import posixpath
import re
import stat
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import pyarrow.fs

FILE: Final = "file"
DIRECTORY: Final = "directory"

_URI: Final = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://([^/?#]*)([^?#]*)$")
_BUCKET_SCHEMES: Final = frozenset({"s3", "s3a", "gs", "gcs"})
_S3_SCHEMES: Final = frozenset({"s3", "s3a"})
_GCS_SCHEMES: Final = frozenset({"gs", "gcs"})
_HDFS_SCHEMES: Final = frozenset({"hdfs", "viewfs"})
SCHEMES: Final = ("s3", "s3a", "gs", "gcs", "hdfs", "viewfs", "file")
"""The schemes a path may have; any path without ``scheme://`` is local."""

OPTION_NAMES: Final[dict[str, str]] = {
    "s3.endpoint": "s3_endpoint",
    "s3.region": "s3_region",
    "s3.accessKey": "s3_access_key",
    "s3.secretKey": "s3_secret_key",
    "s3.sessionToken": "s3_session_token",
    "s3.anonymous": "s3_anonymous",
    "gcs.endpoint": "gcs_endpoint",
    "gcs.anonymous": "gcs_anonymous",
    "gcs.retryTimeLimit": "gcs_retry_seconds",
    "hdfs.user": "hdfs_user",
    "hdfs.kerberosTicket": "hdfs_kerberos_ticket",
}
"""Data source option -> :class:`StorageOptions` field. Spark hands options over lower-cased, so
they are matched without regard to case."""
_OPTION_PREFIXES: Final = ("s3.", "gcs.", "hdfs.")

_HINTS: Final = (
    (
        ("ACCESS_DENIED", "SIGNATURE_DOES_NOT_MATCH", "INVALID_ACCESS_KEY_ID", "EXPIRED_TOKEN", "FORBIDDEN"),
        "the credentials were refused: check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN "
        "/ AWS_PROFILE (or the s3.accessKey / s3.secretKey options) and the bucket's policy",
    ),
    (("NO_SUCH_BUCKET",), "the bucket does not exist at this endpoint"),
    (
        ("NETWORK_CONNECTION", "Could not connect", "UNAVAILABLE", "Connection refused"),
        "the endpoint cannot be reached: check s3.endpoint / AWS_ENDPOINT_URL_S3 (or gcs.endpoint) and the "
        "network",
    ),
    (
        ("libhdfs", "libjvm"),
        "HDFS is read through libhdfs and a JVM: set JAVA_HOME, HADOOP_HOME (or ARROW_LIBHDFS_DIR) and "
        "CLASSPATH=$(hadoop classpath --glob)",
    ),
)


class StorageError(OSError):
    """A file system could not be reached, or refused or failed a request."""


@dataclass(frozen=True, slots=True)
class StorageOptions:
    """How to reach the file systems of URI paths; None or False leaves a setting to the environment.

    Picklable, so that it travels with the data source to the executors. Secrets stay out of
    ``repr``."""

    s3_endpoint: str | None = None
    """``http://host:port`` of an S3-compatible store (MinIO, Ceph, ...); default: AWS_ENDPOINT_URL_S3,
    AWS_ENDPOINT_URL, else AWS."""
    s3_region: str | None = None
    """Default: AWS_REGION, AWS_DEFAULT_REGION, else the profile's region."""
    s3_access_key: str | None = field(default=None, repr=False)
    s3_secret_key: str | None = field(default=None, repr=False)
    s3_session_token: str | None = field(default=None, repr=False)
    s3_anonymous: bool = False
    """Unsigned requests, for public buckets."""
    gcs_endpoint: str | None = None
    """``http://host:port`` of a GCS emulator; default: Google's."""
    gcs_anonymous: bool = False
    gcs_retry_seconds: float = 60.0
    """How long one request is retried. Google's client retries for 15 minutes, which turns an
    unreachable endpoint into a 15-minute wait."""
    hdfs_user: str | None = None
    hdfs_kerberos_ticket: str | None = None
    """Path of the Kerberos ticket cache."""


NO_OPTIONS: Final = StorageOptions()
"""Everything from the environment."""


def _boolean(key: str, value: str) -> bool:
    text = value.strip().lower()
    if text not in ("true", "false"):
        raise ValueError(f"option {key}: expected true or false, got {value!r}")
    return text == "true"


def _seconds(key: str, value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        raise ValueError(f"option {key}: expected a number of seconds above 0, got {value!r}")
    return seconds


_PARSERS: Final[dict[str, Callable[[str, str], Any]]] = {
    "s3_anonymous": _boolean,
    "gcs_anonymous": _boolean,
    "gcs_retry_seconds": _seconds,
}


def storage_options(options: Mapping[str, str]) -> StorageOptions:
    """The storage settings among data source options; other options are ignored, a misspelt
    storage option (``s3.``, ``gcs.``, ``hdfs.`` prefix) is an error."""
    fields_by_key = {name.lower(): (name, attribute) for name, attribute in OPTION_NAMES.items()}
    values: dict[str, Any] = {}
    for key, value in options.items():
        found = fields_by_key.get(key.lower())
        if found is None:
            if key.lower().startswith(_OPTION_PREFIXES):
                raise ValueError(
                    f"unknown storage option {key!r}; storage options are: {', '.join(OPTION_NAMES)}"
                )
            continue
        name, attribute = found
        parse = _PARSERS.get(attribute)
        values[attribute] = value if parse is None else parse(name, value)
    result = StorageOptions(**values)
    if (result.s3_access_key is None) != (result.s3_secret_key is None):
        raise ValueError("options s3.accessKey and s3.secretKey go together: give both or neither")
    if result.s3_anonymous and result.s3_access_key is not None:
        raise ValueError("option s3.anonymous excludes s3.accessKey / s3.secretKey")
    return result


# ---------------------------------------------------------------------------------------------------
# Paths: local paths keep pathlib's forms; URIs are handled as text, "/"-separated.


@dataclass(frozen=True, slots=True)
class _Location:
    """A URI split into its file system and the path pyarrow names inside it."""

    scheme: str
    authority: str
    key: str
    """``bucket/prefix`` on an object store, ``/dir`` on HDFS and local file systems."""

    @property
    def root(self) -> str:
        """What goes in front of a key to make a URI."""
        return f"{self.scheme}://" if self.scheme in _BUCKET_SCHEMES else f"{self.scheme}://{self.authority}"

    def uri(self, key: str) -> str:
        return self.root + key


def is_uri(path: str) -> bool:
    """A path with a scheme (``scheme://...``), read through pyarrow."""
    return _URI.match(path) is not None


def _location(uri: str) -> _Location:
    match = _URI.match(uri)
    if match is None:
        raise ValueError(f"{uri}: not a URI (scheme://...)")
    scheme, authority, path = match.group(1).lower(), match.group(2), match.group(3)
    if scheme not in SCHEMES:
        raise ValueError(f"{uri}: unsupported scheme {scheme!r}; supported: {', '.join(SCHEMES)}")
    if scheme in _BUCKET_SCHEMES:
        if not authority:
            raise ValueError(f"{uri}: no bucket")
        key = (authority + path).rstrip("/")
    else:
        if scheme == FILE and authority not in ("", "localhost"):
            raise ValueError(f"{uri}: a file:// URI names a path on this machine (file:///path)")
        key = path.rstrip("/") or "/"
    return _Location(scheme, authority, key)


def normalize(path: str) -> str:
    """The form a path is reported in: pathlib's for local paths, no trailing slash for URIs."""
    if not is_uri(path):
        return str(Path(path))
    location = _location(path)
    return location.uri(location.key)


def join(path: str, name: str) -> str:
    return posixpath.join(path, name) if is_uri(path) else str(Path(path) / name)


def parent(path: str) -> str:
    """The directory holding ``path``; a bucket or file system root is its own parent."""
    if not is_uri(path):
        return str(Path(path).parent)
    location = _location(path)
    if location.scheme in _BUCKET_SCHEMES and "/" not in location.key:
        return path
    return location.uri(posixpath.dirname(location.key))


def base_name(path: str) -> str:
    return posixpath.basename(_location(path).key) if is_uri(path) else Path(path).name


def identity(path: str) -> str:
    """What tells two spellings of one file apart from two files: the resolved local path, the URI."""
    return path if is_uri(path) else str(Path(path).resolve())


def local_path(output: str) -> str | None:
    """The local directory of ``output`` (a path or ``file:`` URI), None for other file systems."""
    if output.startswith("file://"):
        return output[len("file://") :]
    if output.startswith("file:"):
        return output[len("file:") :]
    if "://" in output:
        return None
    return os.path.abspath(output)


# ---------------------------------------------------------------------------------------------------
# File systems


def _endpoint(url: str) -> tuple[str, str]:
    """(scheme, host[:port]) of an endpoint URL; https unless the URL says http."""
    for scheme in ("http", "https"):
        if url.lower().startswith(scheme + "://"):
            return scheme, url[len(scheme) + 3 :].rstrip("/")
    return "https", url.rstrip("/")


def _first_env(*names: str) -> str | None:
    return next((os.environ[name] for name in names if os.environ.get(name)), None)


_GOOGLE_STATUS: Final = re.compile(r"google::cloud::Status\((\w+): (.*?)(?: error_info=.*)?\)?$")
_GOOGLE_CAUSE: Final = "The underlying error message was: "


def _reason(text: str) -> str:
    """The first line of a library's message; of Google's one-line ``google::cloud::Status(CODE:
    ... error_info={...})``, the code and the innermost cause."""
    first = text.splitlines()[0]
    status = _GOOGLE_STATUS.match(first)
    if status is None:
        return first
    code, message = status.groups()
    return f"{code}: {message.rpartition(_GOOGLE_CAUSE)[2]}"


def _error(what: str, exc: BaseException) -> StorageError:
    """A StorageError naming ``what`` with the first line of the library's message (which names the
    bucket and key, never a credential) and a hint for the usual causes."""
    text = str(exc).strip()
    reason = _reason(text) if text else type(exc).__name__
    hint = next((advice for needles, advice in _HINTS if any(n in text for n in needles)), None)
    return StorageError(f"{what}: {reason}" + (f" ({hint})" if hint else ""))


@functools.lru_cache(maxsize=32)
def _filesystem(scheme: str, authority: str, options: StorageOptions) -> pyarrow.fs.FileSystem:
    """One file system per (scheme, authority, options) and process: clients are reused by every
    split a worker reads."""
    what = f"{scheme}://{authority}"
    try:
        from pyarrow import fs
    except ImportError as exc:
        raise StorageError(
            f"{what}: reading {scheme}:// paths needs pyarrow (pip install 'kafka-admin-kraft[spark]')"
        ) from exc
    try:
        if scheme in _S3_SCHEMES:
            return _s3(fs, options)
        if scheme in _GCS_SCHEMES:
            gcs: dict[str, Any] = {
                "anonymous": options.gcs_anonymous,
                "retry_time_limit": timedelta(seconds=options.gcs_retry_seconds),
            }
            if options.gcs_endpoint:
                gcs["scheme"], gcs["endpoint_override"] = _endpoint(options.gcs_endpoint)
            return fs.GcsFileSystem(**gcs)
        if scheme in _HDFS_SCHEMES:
            host, _, port = authority.rpartition(":") if ":" in authority else (authority, "", "0")
            return fs.HadoopFileSystem(
                f"{scheme}://{host}" if host else "default",
                int(port or 0),
                user=options.hdfs_user,
                kerb_ticket=options.hdfs_kerberos_ticket,
            )
        return fs.LocalFileSystem()
    except (OSError, ValueError) as exc:
        raise _error(what, exc) from None


def _s3(fs: Any, options: StorageOptions) -> pyarrow.fs.FileSystem:
    settings: dict[str, Any] = {
        "region": options.s3_region or _first_env("AWS_REGION", "AWS_DEFAULT_REGION"),
        "anonymous": options.s3_anonymous,
    }
    if options.s3_access_key is not None:
        settings.update(
            access_key=options.s3_access_key,
            secret_key=options.s3_secret_key,
            session_token=options.s3_session_token,
        )
    endpoint = options.s3_endpoint or _first_env("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")
    if endpoint:
        settings["scheme"], settings["endpoint_override"] = _endpoint(endpoint)
    return fs.S3FileSystem(**settings)


def _arrow(uri: str, options: StorageOptions) -> tuple[pyarrow.fs.FileSystem, _Location]:
    location = _location(uri)
    return _filesystem(location.scheme, location.authority, options), location


# ---------------------------------------------------------------------------------------------------
# Byte-range reads


def _read_fully(read: Callable[[int, int], bytes], position: int, count: int) -> bytes:
    """``count`` bytes from ``position``, fewer only at the end of the file, whatever short reads
    the file system makes (network file systems, FUSE, reads above 2 GiB)."""
    data = read(position, count)
    if len(data) >= count or not data:
        return data
    parts = [data]
    done = len(data)
    while done < count:
        more = read(position + done, count - done)
        if not more:
            break
        parts.append(more)
        done += len(more)
    return b"".join(parts)


class RandomInput(ABC):
    """A file opened for positional reads; ``size`` is its length when opened."""

    size: int

    @abstractmethod
    def read_at(self, position: int, count: int) -> bytes:
        """``count`` bytes from ``position``; fewer only when the file ends first."""

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> RandomInput:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()


class _LocalInput(RandomInput):
    def __init__(self, path: str) -> None:
        # Non-blocking: opening a named pipe would otherwise wait for a writer; it is refused below.
        self._fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            status = os.fstat(self._fd)
            if stat.S_ISDIR(status.st_mode):
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
            if not stat.S_ISREG(status.st_mode):
                raise OSError(errno.EINVAL, "not a regular file", path)
            self.size = status.st_size
        except OSError:
            os.close(self._fd)
            raise

    def _pread(self, position: int, count: int) -> bytes:
        return os.pread(self._fd, count, position)

    def read_at(self, position: int, count: int) -> bytes:
        return _read_fully(self._pread, position, count)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


class _ArrowInput(RandomInput):
    def __init__(self, stream: Any, uri: str) -> None:
        self._stream = stream
        self._uri = uri
        self.size = int(stream.size())

    def _read(self, position: int, count: int) -> bytes:
        try:
            return bytes(self._stream.read_at(count, position))
        except OSError as exc:
            raise _error(f"{self._uri} at position {position}", exc) from None

    def read_at(self, position: int, count: int) -> bytes:
        return _read_fully(self._read, position, count)

    def close(self) -> None:
        self._stream.close()


def open_input(path: str, options: StorageOptions) -> RandomInput:
    """``path`` opened for byte-range reads: ``os.pread`` on a local path; ``read_at`` on pyarrow's
    file for a URI (one ranged GET per read on an object store, never the whole object)."""
    if not is_uri(path):
        return _LocalInput(path)
    filesystem, location = _arrow(path, options)
    try:
        stream = filesystem.open_input_file(location.key)
        return _ArrowInput(stream, path)
    except OSError as exc:
        raise _error(path, exc) from None


# ---------------------------------------------------------------------------------------------------
# Listing and small whole files, for planning


@dataclass(slots=True)
class _Listed:
    dirs: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)


class StorageView:
    """What planning asks of the file systems: what a path is, the names in a directory, a walk,
    file sizes and small whole files. Local paths are asked live with ``os`` calls; for URIs the
    answers of a listing are kept for the life of the view (one planning run)."""

    def __init__(self, options: StorageOptions) -> None:
        self.options = options
        self._kinds: dict[str, tuple[str | None, int]] = {}
        """URI -> (FILE, DIRECTORY or None, size)."""
        self._listed: dict[str, _Listed] = {}
        """Directories whose entries are all known."""

    def _stat(self, uri: str) -> tuple[str | None, int]:
        known = self._kinds.get(uri)
        if known is not None:
            return known
        if parent(uri) in self._listed and parent(uri) != uri:
            return None, 0
        filesystem, location = _arrow(uri, self.options)
        try:
            info = filesystem.get_file_info(location.key)
        except OSError as exc:
            raise _error(uri, exc) from None
        found = self._remember(location, info)
        self._kinds[uri] = found
        return found

    def _remember(self, location: _Location, info: Any) -> tuple[str | None, int]:
        from pyarrow.fs import FileType

        if info.type == FileType.File:
            found: tuple[str | None, int] = (FILE, int(info.size))
        elif info.type == FileType.Directory:
            found = (DIRECTORY, 0)
        else:
            found = (None, 0)
        self._kinds[location.uri(info.path)] = found
        return found

    def _list(self, uri: str, *, recursive: bool) -> None:
        """List ``uri`` (and everything under it when ``recursive``) into the view."""
        from pyarrow.fs import FileSelector

        filesystem, location = _arrow(uri, self.options)
        try:
            infos = filesystem.get_file_info(FileSelector(location.key, recursive=recursive))
        except OSError as exc:
            raise _error(uri, exc) from None
        self._kinds[uri] = (DIRECTORY, 0)
        top = self._listed[uri] = _Listed()
        for info in infos:
            entry = location.uri(info.path)
            kind, _ = self._remember(location, info)
            if not recursive:
                (top.dirs if kind == DIRECTORY else top.files).append(base_name(entry))
            elif kind == DIRECTORY:
                self._known_directory(entry)
            else:
                self._known_directory(parent(entry)).files.append(base_name(entry))

    def _known_directory(self, directory: str) -> _Listed:
        """The entries of a directory inside a recursive listing, named in its parent once; listings
        name files before (or without) the prefixes that hold them."""
        listed = self._listed.get(directory)
        if listed is None:
            listed = self._listed[directory] = _Listed()
            self._kinds[directory] = (DIRECTORY, 0)
            self._known_directory(parent(directory)).dirs.append(base_name(directory))
        return listed

    def kind(self, path: str) -> str | None:
        """FILE, DIRECTORY, or None when nothing is there."""
        if not is_uri(path):
            return FILE if os.path.isfile(path) else DIRECTORY if os.path.isdir(path) else None
        return self._stat(path)[0]

    def exists(self, path: str) -> bool:
        """Something is at ``path``, whatever it is (a broken symbolic link too)."""
        return os.path.lexists(path) if not is_uri(path) else self.kind(path) is not None

    def not_readable(self, path: str) -> str | None:
        """What ``path`` is when it is no regular file this process can read (None when it is one):
        a directory, a named pipe (opening one waits for a writer, for ever), a socket, a device, a
        broken symbolic link or a loop of them, or a file it may not open."""
        if is_uri(path):
            kind = self.kind(path)
            return None if kind == FILE else "a directory" if kind == DIRECTORY else "gone"
        try:
            mode = os.stat(path).st_mode
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return "a loop of symbolic links"
            if os.path.islink(path):
                return "a symbolic link to nothing"
            return (exc.strerror or type(exc).__name__).lower()
        if stat.S_ISREG(mode):
            return None if os.access(path, os.R_OK) else "a file this user may not read"
        if stat.S_ISDIR(mode):
            return "a directory"
        if stat.S_ISFIFO(mode):
            return "a named pipe"
        if stat.S_ISSOCK(mode):
            return "a socket"
        return "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file"

    def size(self, path: str) -> int:
        if not is_uri(path):
            return os.stat(path).st_size
        kind, size = self._stat(path)
        if kind != FILE:
            raise StorageError(f"{path}: no such file")
        return size

    def names(self, directory: str) -> list[str]:
        """The names in ``directory``, files and subdirectories."""
        if not is_uri(directory):
            return os.listdir(directory)
        if directory not in self._listed:
            self._list(directory, recursive=False)
        listed = self._listed[directory]
        return [*listed.dirs, *listed.files]

    def walk(self, top: str) -> Iterator[tuple[str, list[str], list[str]]]:
        """``os.walk`` (top-down; prune by editing the directory list) over one recursive listing."""
        if not is_uri(top):
            yield from os.walk(top)
            return
        self._list(top, recursive=True)
        pending = [top]
        while pending:
            here = pending.pop()
            listed = self._listed[here]
            dirs = list(listed.dirs)
            yield here, dirs, list(listed.files)
            pending.extend(join(here, name) for name in reversed(dirs))

    def read_bytes(self, path: str) -> bytes:
        """A whole (small) file."""
        if not is_uri(path):
            return Path(path).read_bytes()
        filesystem, location = _arrow(path, self.options)
        try:
            with filesystem.open_input_stream(location.key) as stream:
                return bytes(stream.read())
        except OSError as exc:
            raise _error(path, exc) from None
