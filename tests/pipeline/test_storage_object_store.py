"""Log directories on an object store: a real S3-compatible server (moto) on 127.0.0.1 with request
signing checked, holding a copy of the scenario's directories. Planning, the data source and
``kafka-metadata-audit`` give over ``s3://`` what they give over the local copy (paths aside);
splits are read in byte ranges; wrong credentials, a missing bucket and an unreachable endpoint are
clear errors; ``file://`` URIs go the same way; ``gs://`` and ``hdfs://`` reach their file systems."""

from __future__ import annotations

import json
import logging
import os
import pickle
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from console_scripts import console_script

from kafka_admin_kraft.pipeline.planning import FileSplit, plan
from kafka_admin_kraft.pipeline.storage import (
    OPTION_NAMES,
    StorageError,
    StorageOptions,
    open_input,
    storage_options,
)
from kafka_admin_kraft.pipeline.walk import READ_WINDOW
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.records import SegmentWriter, metadata_batches
from kafka_admin_kraft.records.metadata import ApiMessageAndVersion
from pipeline.conftest import Audit, Damaged
from pipeline.row_oracle import columnar_rows
from pipeline.scenario import Truth

pytest.importorskip("pyarrow.fs")
pytest.importorskip("moto")

REPO = Path(__file__).resolve().parents[2]
BUCKET = "kraft-audit"
REGION = "us-east-1"
SPLIT_BYTES = 512
ERROR_KIND = -2
"""Every row ends with error_kind and error."""
TABLES = (
    "voter_sets",
    "leader_epochs",
    "feature_changes",
    "duplicate_voter_ids",
    "voters_without_directory_id",
    "replicas",
    "clusters",
    "divergence",
    "errors",
)


@dataclass(frozen=True)
class Served:
    """One request the server answered."""

    method: str
    path: str
    range: str | None
    body_bytes: int


class _Counting:
    """WSGI middleware that records every request and how many body bytes went back."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.log: list[Served] = []
        self.lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> list[bytes]:
        result = self.app(environ, start_response)
        try:
            body = [bytes(chunk) for chunk in result]
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()
        with self.lock:
            self.log.append(
                Served(
                    environ["REQUEST_METHOD"],
                    environ.get("PATH_INFO", ""),
                    environ.get("HTTP_RANGE"),
                    sum(len(chunk) for chunk in body),
                )
            )
        return body


@dataclass
class S3Server:
    endpoint: str
    access_key: str
    secret_key: str
    counter: _Counting

    def options(self) -> dict[str, str]:
        """The data source options that reach this server (as the README shows them)."""
        return {
            "s3.endpoint": self.endpoint,
            "s3.region": REGION,
            "s3.accessKey": self.access_key,
            "s3.secretKey": self.secret_key,
        }

    def storage(self) -> StorageOptions:
        return storage_options(self.options())

    def environment(self, **changes: str) -> dict[str, str]:
        """A process environment with this server's credentials in the standard variables and no
        other AWS setting (nor any instance-metadata lookup) leaking in."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update(
            AWS_ACCESS_KEY_ID=self.access_key,
            AWS_SECRET_ACCESS_KEY=self.secret_key,
            AWS_EC2_METADATA_DISABLED="true",
        )
        env.update(changes)
        return env

    def requests_for(self, key: str) -> list[Served]:
        with self.counter.lock:
            return [r for r in self.counter.log if r.path == f"/{BUCKET}/{key}"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    """moto's S3 on a free port of 127.0.0.1; once set up, requests must be signed with the key of
    an IAM user allowed s3:*."""
    import boto3
    import requests
    from moto.moto_server.threaded_moto_server import MotoRequestHandler
    from moto.server import DomainDispatcherApplication, create_backend_app
    from werkzeug.serving import make_server

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one line per request otherwise
    counter = _Counting(DomainDispatcherApplication(create_backend_app))
    server = make_server("127.0.0.1", 0, counter, threaded=True, request_handler=MotoRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    setup = {
        "endpoint_url": endpoint,
        "region_name": REGION,
        "aws_access_key_id": "setup",
        "aws_secret_access_key": "setup",
    }
    try:
        boto3.client("s3", **setup).create_bucket(Bucket=BUCKET)
        iam = boto3.client("iam", **setup)
        iam.create_user(UserName="auditor")
        iam.put_user_policy(
            UserName="auditor",
            PolicyName="read-backups",
            PolicyDocument=json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}],
                }
            ),
        )
        key = iam.create_access_key(UserName="auditor")["AccessKey"]
        requests.post(f"{endpoint}/moto-api/reset-auth", data=b"0", timeout=10).raise_for_status()
        yield S3Server(endpoint, key["AccessKeyId"], key["SecretAccessKey"], counter)
        requests.post(f"{endpoint}/moto-api/reset-auth", data=b"inf", timeout=10)
    finally:
        server.shutdown()
        thread.join()


def _upload(server: S3Server, local: Path, key_prefix: str) -> None:
    """One object per file and no directory markers, as ``aws s3 cp --recursive`` leaves a copy."""
    import boto3

    client = boto3.client(
        "s3",
        endpoint_url=server.endpoint,
        region_name=REGION,
        aws_access_key_id=server.access_key,
        aws_secret_access_key=server.secret_key,
    )
    for path in sorted(p for p in local.rglob("*") if p.is_file()):
        key = f"{key_prefix}/{path.relative_to(local)}"
        client.put_object(Bucket=BUCKET, Key=key, Body=path.read_bytes())


@dataclass
class Fleet:
    """The same log directories on disk and in the bucket."""

    local: list[str]
    remote: list[str]
    prefixes: list[tuple[str, str]] = field(default_factory=list)
    """(local root, URI) pairs, to map a local path to its copy."""

    def to_remote(self, text: Any) -> Any:
        if isinstance(text, str):
            for local, remote in self.prefixes:
                text = text.replace(local, remote)
            return text
        if isinstance(text, list):
            return [self.to_remote(item) for item in text]
        return text


def _broken_node_files(scenario: Truth, root: Path) -> Path:
    """A copy of a log directory without meta.properties and with a quorum-state that is not JSON."""
    copy = root / "broken" / "metadata"
    shutil.copytree(scenario.log_dirs[1], copy)
    (copy / "meta.properties").unlink()
    (copy / "__cluster_metadata-0" / "quorum-state").write_bytes(b"\x00\x13garbage{{")
    return copy


@pytest.fixture(scope="module")
def fleet(s3: S3Server, scenario: Truth, damaged: Damaged, tmp_path_factory: pytest.TempPathFactory) -> Fleet:
    broken = _broken_node_files(scenario, tmp_path_factory.mktemp("broken"))
    roots = [
        (scenario.root / "cluster", "fleet/cluster"),
        (scenario.root / "captured", "fleet/captured"),
        (damaged.log_dir, "fleet/damaged/metadata"),
        (broken, "fleet/broken/metadata"),
    ]
    for local, key in roots:
        _upload(s3, local, key)
    prefixes = [(str(local), f"s3://{BUCKET}/{key}") for local, key in roots]
    captured = f"s3://{BUCKET}/fleet/captured/{scenario.captured_dir.name}"
    return Fleet(
        [str(scenario.root / "cluster"), str(scenario.captured_dir), str(damaged.log_dir), str(broken)],
        [prefixes[0][1], captured, prefixes[2][1], prefixes[3][1]],
        prefixes,
    )


def _mapped(split: FileSplit, fleet: Fleet) -> FileSplit:
    return replace(
        split,
        path=fleet.to_remote(split.path),
        log_dir=fleet.to_remote(split.log_dir),
        error=fleet.to_remote(split.error),
    )


def _order(split: FileSplit) -> tuple[str, int]:
    return split.path, split.start


def test_planning_over_s3_gives_the_splits_of_the_local_copy(s3: S3Server, fleet: Fleet) -> None:
    local = plan(fleet.local, split_bytes=SPLIT_BYTES)
    remote = plan(fleet.remote, split_bytes=SPLIT_BYTES, options=s3.storage())
    assert sorted((_mapped(s, fleet) for s in local.splits), key=_order) == sorted(remote.splits, key=_order)
    mapped_dirs = [
        replace(
            d,
            path=fleet.to_remote(d.path),
            partition_dir=fleet.to_remote(d.partition_dir),
            problems=tuple(replace(p, path=fleet.to_remote(p.path), error=fleet.to_remote(p.error))
                           for p in d.problems),
        )
        for d in local.log_dirs
    ]
    assert sorted(mapped_dirs, key=lambda d: d.path) == sorted(remote.log_dirs, key=lambda d: d.path)
    kinds = {(s.kind, s.error_kind) for s in remote.splits}
    assert {("segment", None), ("snapshot", None), ("bootstrap", None)} <= kinds
    assert {
        ("meta.properties", "missing_meta_properties"),
        ("quorum-state", "unreadable_quorum_state"),
    } <= kinds
    assert any(s.start > 0 for s in remote.splits if s.kind == "segment")
    assert any(s.start > 0 for s in remote.splits if s.kind == "snapshot")


def _rows(splits: list[FileSplit], options: StorageOptions) -> list[tuple[Any, ...]]:
    return [row for split in sorted(splits, key=_order) for row in columnar_rows(split, options=options)]


def _mapped_row(row: tuple[Any, ...], fleet: Fleet) -> tuple[Any, ...]:
    """The row as read from the copy: local paths (log_dir, file, and inside error) become URIs."""
    return tuple(fleet.to_remote(value) for value in row)


def test_split_reader_over_s3_gives_the_rows_of_the_local_copy(s3: S3Server, fleet: Fleet) -> None:
    local = sorted(plan(fleet.local, split_bytes=SPLIT_BYTES).splits, key=lambda s: _order(_mapped(s, fleet)))
    expected = [_mapped_row(row, fleet) for split in local for row in columnar_rows(split)]
    remote = plan(fleet.remote, split_bytes=SPLIT_BYTES, options=s3.storage()).splits
    assert _rows(remote, s3.storage()) == expected
    assert sum(1 for row in expected if row[ERROR_KIND] is None) > 200


def _table(frame: Any) -> list[tuple[Any, ...]]:
    return sorted((tuple(row) for row in frame.collect()), key=repr)


def test_data_source_over_s3_gives_the_rows_of_the_local_copy(spark: Any, s3: S3Server, fleet: Fleet) -> None:
    local = spark.read.format("kraft-metadata").option("splitBytes", str(SPLIT_BYTES)).load(fleet.local)
    remote = (
        spark.read.format("kraft-metadata")
        .options(**s3.options())
        .option("splitBytes", str(SPLIT_BYTES))
        .load(fleet.remote)
    )
    expected = sorted((_mapped_row(row, fleet) for row in _table(local)), key=repr)
    # Both are cut into more tasks than inputs. The counts may differ by one: small splits are
    # packed in planning order, which sorts local paths and S3 keys of the same files differently.
    assert remote.rdd.getNumPartitions() > len(fleet.remote)
    assert local.rdd.getNumPartitions() > len(fleet.local)
    assert _table(remote) == expected


def _parquet_rows(directory: Path, fleet: Fleet | None) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    rows = pq.read_table(directory).to_pylist()
    if fleet is not None:
        rows = [{k: fleet.to_remote(v) for k, v in row.items()} for row in rows]
    return sorted(rows, key=repr)


def test_audit_tool_over_s3_writes_the_tables_of_the_local_audit(
    s3: S3Server, fleet: Fleet, audit: Audit, tmp_path: Path
) -> None:
    output = tmp_path / "audit"
    result = subprocess.run(
        [
            console_script("kafka-metadata-audit"),
            "--s3-endpoint",
            s3.endpoint,
            "--s3-region",
            REGION,
            "--master",
            "local[2]",
            "--conf",
            "spark.sql.shuffle.partitions=2",
            "-o",
            str(output),
            *fleet.remote[:3],
        ],
        env=s3.environment(),
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert s3.secret_key not in result.stdout + result.stderr
    for table in TABLES:
        assert _parquet_rows(output / table, None) == _parquet_rows(audit.output / table, fleet), table
    assert (output / "report.md").is_file()


def _big_segment(directory: Path) -> Path:
    """A 10 MiB segment of 64 KiB batches, with its offset index."""
    directory.mkdir(parents=True)
    offset = 0
    with SegmentWriter(directory, 0) as writer:
        for index in range(160):
            records = [
                ApiMessageAndVersion(messages.TopicRecord(name=f"t{index}-{n}-" + "x" * 1000), 0)
                for n in range(64)
            ]
            for batch in metadata_batches(offset, 1, 1_700_000_000_000 + index, records):
                writer.append(batch)
                offset = batch.next_offset
        return writer.files.log


def _ranges(served: list[Served]) -> list[tuple[int, int]]:
    """[first, last] byte of every ranged GET."""
    found = []
    for request in served:
        match = re.fullmatch(r"bytes=(\d+)-(\d+)", request.range or "")
        assert request.method == "GET" and match is not None, request
        found.append((int(match.group(1)), int(match.group(2))))
    return found


def test_splits_are_read_in_byte_ranges(s3: S3Server, tmp_path: Path) -> None:
    log = _big_segment(tmp_path / "big" / "__cluster_metadata-0")
    size = log.stat().st_size
    _upload(s3, tmp_path / "big", "big")
    key = f"big/__cluster_metadata-0/{log.name}"
    split_bytes = 2 << 20
    before = len(s3.requests_for(key))
    found = plan([f"s3://{BUCKET}/big"], split_bytes=split_bytes, options=s3.storage()).splits
    splits = [s for s in found if s.kind == "segment"]
    planning = [r for r in s3.requests_for(key)[before:] if r.method == "GET"]
    assert len(splits) == 6 and sum(r.body_bytes for r in planning) < size // 4  # cut points from the index
    _ranges(planning)
    for split in (splits[0], splits[2]):
        before = len(s3.requests_for(key))
        rows = columnar_rows(split, options=s3.storage())
        gets = [r for r in s3.requests_for(key)[before:] if r.method == "GET"]
        assert rows and all(row[ERROR_KIND] is None for row in rows)
        for first, last in _ranges(gets):
            assert split.start <= first and last < split.end + READ_WINDOW
        assert sum(r.body_bytes for r in gets) < size // 2


def test_random_input_reads_ranges_and_stops_at_the_end(s3: S3Server, tmp_path: Path) -> None:
    data = bytes(range(256)) * 40
    (tmp_path / "blob").mkdir()
    (tmp_path / "blob" / "file").write_bytes(data)
    _upload(s3, tmp_path / "blob", "blob")
    for path, options in (
        (str(tmp_path / "blob" / "file"), StorageOptions()),
        ((tmp_path / "blob" / "file").as_uri(), StorageOptions()),
        (f"s3://{BUCKET}/blob/file", s3.storage()),
    ):
        with open_input(path, options) as source:
            assert source.size == len(data)
            assert source.read_at(1000, 300) == data[1000:1300]
            assert source.read_at(len(data) - 5, 100) == data[-5:]
            assert source.read_at(len(data), 10) == b""


def _run_tool(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [console_script("kafka-metadata-audit"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


def test_tool_errors_for_credentials_bucket_and_endpoint(s3: S3Server, fleet: Fleet, tmp_path: Path) -> None:
    output = ["-o", str(tmp_path / "out")]
    wrong_secret = "not-the-secret-" + "z" * 24
    refused = _run_tool(
        ["--s3-endpoint", s3.endpoint, "--s3-region", REGION, *output, fleet.remote[0]],
        s3.environment(AWS_SECRET_ACCESS_KEY=wrong_secret),
        tmp_path,
    )
    missing = _run_tool(
        ["--s3-endpoint", s3.endpoint, "--s3-region", REGION, *output, "s3://no-such-bucket/fleet"],
        s3.environment(),
        tmp_path,
    )
    closed = f"http://127.0.0.1:{_free_port()}"
    unreachable = _run_tool(
        ["--s3-endpoint", closed, "--s3-region", REGION, *output, fleet.remote[0]], s3.environment(), tmp_path
    )
    for result in (refused, missing, unreachable):
        assert result.returncode != 0 and "Traceback" not in result.stderr, result.stderr
        assert s3.secret_key not in result.stderr and wrong_secret not in result.stderr
    assert f"Error: {fleet.remote[0]}: " in refused.stderr and "credentials were refused" in refused.stderr
    assert "s3://no-such-bucket/fleet: no such file or directory" in missing.stderr
    assert "endpoint cannot be reached" in unreachable.stderr and closed.split("//")[1] in unreachable.stderr
    assert not (tmp_path / "out").exists()


def test_a_gcs_path_without_network_or_credentials_is_one_error_line_at_once(tmp_path: Path) -> None:
    """No credentials (an empty home, no metadata server) and nothing listening: the look-up before
    Spark gives up after a short retry, not the minute Google's client would take."""
    closed = f"127.0.0.1:{_free_port()}"
    google = ("GOOGLE_", "GCE_", "CLOUD")
    env = {key: value for key, value in os.environ.items() if not key.startswith(google)}
    env.update(HOME=str(tmp_path), GCE_METADATA_ROOT=closed, GCE_METADATA_HOST=closed,
               CLOUD_STORAGE_EMULATOR_ENDPOINT=f"http://{closed}")
    started = time.monotonic()
    result = _run_tool(["-o", str(tmp_path / "out"), "gs://kraft-backups/fleet"], env, tmp_path)
    assert time.monotonic() - started < 20
    assert result.returncode == 1 and result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith("Error: gs://kraft-backups/fleet: ") and len(line) < 400, line
    assert not (tmp_path / "out").exists()


def test_output_on_a_file_system_spark_lacks_is_refused_before_the_audit(
    s3: S3Server, fleet: Fleet, tmp_path: Path
) -> None:
    result = _run_tool(
        ["--s3-endpoint", s3.endpoint, "--s3-region", REGION, "--master", "local[1]",
         "-o", f"s3a://{BUCKET}/audit", "--report-dir", str(tmp_path / "report"), fleet.remote[2]],
        s3.environment(),
        tmp_path,
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr[-3000:]
    assert f"Spark cannot write s3a://{BUCKET}/audit: Hadoop has no file system for s3a://" in result.stderr
    assert "hadoop-aws" in result.stderr


def test_wrong_credentials_in_options_are_a_clear_error(s3: S3Server, fleet: Fleet) -> None:
    wrong = storage_options({**s3.options(), "s3.secretKey": "wrong-secret-value"})
    with pytest.raises(StorageError, match="credentials were refused") as refused:
        plan(fleet.remote[:1], options=wrong)
    message = str(refused.value)
    assert message.startswith(f"{fleet.remote[0]}: ") and "wrong-secret-value" not in message


def test_file_uris_go_through_pyarrow_and_read_the_same(scenario: Truth) -> None:
    root = scenario.root / "cluster"
    uri = root.as_uri()
    fleet = Fleet([str(root)], [uri], [(str(root), uri)])
    local = plan([str(root)], split_bytes=SPLIT_BYTES).splits
    remote = plan([uri], split_bytes=SPLIT_BYTES).splits
    assert sorted(remote, key=_order) == sorted((_mapped(s, fleet) for s in local), key=_order)
    assert all(s.path.startswith("file:///") for s in remote)
    assert _rows(remote, StorageOptions()) == [
        _mapped_row(row, fleet) for row in _rows(local, StorageOptions())
    ]


def test_gcs_and_hdfs_paths_reach_their_file_systems() -> None:
    closed = _free_port()
    gcs = storage_options(
        {"gcs.endpoint": f"http://127.0.0.1:{closed}", "gcs.anonymous": "true", "gcs.retryTimeLimit": "1"}
    )
    with pytest.raises(StorageError, match=r"^gs://backups/fleet: .*endpoint cannot be reached"):
        plan(["gs://backups/fleet"], options=gcs)
    hdfs = storage_options({"hdfs.user": "kafka", "hdfs.kerberosTicket": "/tmp/krb5cc_kafka"})
    with pytest.raises(StorageError, match=rf"^hdfs://127\.0\.0\.1:{closed}: ") as failed:
        plan([f"hdfs://127.0.0.1:{closed}/fleet"], options=hdfs)
    assert "\n" not in str(failed.value)
    with pytest.raises(ValueError, match="unsupported scheme 'ftp'"):
        plan(["ftp://host/fleet"])


def test_uri_without_pyarrow_says_what_to_install() -> None:
    code = (
        "import sys; sys.modules['pyarrow'] = None\n"
        "from kafka_admin_kraft.pipeline.storage import NO_OPTIONS, StorageError, open_input\n"
        "try:\n    open_input('s3://backups/fleet/00000000000000000000.log', NO_OPTIONS)\n"
        "except StorageError as exc:\n    print(exc)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == (
        "s3://backups: reading s3:// paths needs pyarrow (pip install 'kafka-admin-kraft[spark]')"
    ), result.stderr


def test_storage_options_from_data_source_options() -> None:
    options = storage_options(
        {"path": "s3://b/p", "splitbytes": "1024", "s3.endpoint": "http://127.0.0.1:9000",
         "s3.accesskey": "AKIDEXAMPLE", "S3.SECRETKEY": "secret-value", "s3.anonymous": "false"}
    )
    assert options == StorageOptions(
        s3_endpoint="http://127.0.0.1:9000", s3_access_key="AKIDEXAMPLE", s3_secret_key="secret-value"
    )
    assert "secret-value" not in repr(options) and "AKIDEXAMPLE" not in repr(options)
    assert pickle.loads(pickle.dumps(options)) == options
    assert set(OPTION_NAMES.values()) == set(StorageOptions.__dataclass_fields__)
    bad: list[tuple[dict[str, str], str]] = [
        ({"s3.endpiont": "x"}, "unknown storage option 's3.endpiont'"),
        ({"gcs.anonymous": "yes"}, "gcs.anonymous: expected true or false"),
        ({"gcs.retryTimeLimit": "0"}, "gcs.retryTimeLimit: expected a number of seconds above 0"),
        ({"gcs.retryTimeLimit": "inf"}, "gcs.retryTimeLimit: expected a number of seconds above 0"),
        ({"s3.accessKey": "a"}, "s3.accessKey and s3.secretKey go together"),
        ({"s3.accessKey": "a", "s3.secretKey": "b", "s3.anonymous": "true"}, "excludes"),
    ]
    for given, message in bad:
        with pytest.raises(ValueError, match=re.escape(message)):
            storage_options(given)


def _readme_section() -> str:
    text = (REPO / "README.md").read_text()
    start = text.index("### Logs on S3, GCS and HDFS")
    return text[start : text.index("\n## ", start)]


def test_readme_names_only_real_options(s3: S3Server) -> None:
    section = _readme_section()
    named = set(re.findall(r'\.option\("([a-zA-Z0-9.]+)"', section))
    assert named and named <= set(OPTION_NAMES) | {"splitBytes"}
    assert set(s3.options()) <= named
    assert set(re.findall(r"^\| `([a-zA-Z0-9.]+)` \|", section, re.MULTILINE)) == set(OPTION_NAMES)
    flags = set(re.findall(r"(--s3-[a-z-]+)", section))
    help_text = subprocess.run(
        [console_script("kafka-metadata-audit"), "--help"], capture_output=True, text=True, timeout=60
    ).stdout
    assert flags == {"--s3-endpoint", "--s3-region"} and all(flag in help_text for flag in flags)

