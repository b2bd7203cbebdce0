"""Helpers for the kafka-storage tests: node configs, running the tool, reading back what it wrote."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from kafka_admin_kraft.config.properties import parse_properties
from kafka_admin_kraft.protocol.primitives import (
    read_compact_bytes,
    read_compact_string,
    read_uvarint,
)
from kafka_admin_kraft.records import decode_control_batch, decode_metadata_batch, read_snapshot

CLUSTER_ID = "XcZZOzUqS4yHOjhMQB6JLQ"


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str


def run_tool(*args: str) -> Result:
    """kafka-storage in this process (the installed script is exercised separately)."""
    from kafka_admin_kraft_cli.kafka_storage import main

    result = CliRunner().invoke(main, list(args), prog_name="kafka-storage")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Result(result.exit_code, result.stdout, result.stderr)


def write_config(path: Path, **props: str) -> Path:
    """A properties file; keyword names use ``_`` for ``.``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{key.replace('_', '.')}={value}\n" for key, value in props.items()))
    return path


def controller_props(root: Path, node_id: int, port: int, **extra: str) -> dict[str, str]:
    """A controller of a dynamic quorum (no controller.quorum.voters) with one metadata directory."""
    props = {
        "process_roles": "controller",
        "node_id": str(node_id),
        "listeners": f"CONTROLLER://127.0.0.1:{port}",
        "controller_listener_names": "CONTROLLER",
        "controller_quorum_bootstrap_servers": f"127.0.0.1:{port}",
        "log_dirs": str(root / f"meta-{node_id}"),
    }
    props.update(extra)
    return props


def tree(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` and the bytes of every file (None for directories)."""
    found: dict[str, bytes | None] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:
            found[os.path.relpath(os.path.join(dirpath, name), root)] = None
        for name in filenames:
            path = os.path.join(dirpath, name)
            found[os.path.relpath(path, root)] = Path(path).read_bytes()
    return found


def meta_properties_lines(directory: Path) -> list[str]:
    return (directory / "meta.properties").read_text().splitlines()


def meta_properties(directory: Path) -> dict[str, str]:
    return parse_properties((directory / "meta.properties").read_text())


@dataclass(frozen=True)
class BatchSummary:
    """The header fields of a batch that KRaft fixes, and its records decoded."""

    base_offset: int
    epoch: int
    control: bool
    offsets: list[int]
    producer: tuple[int, int, int]
    compression: int
    values: list[Any]


def read_batches(path: Path) -> list[BatchSummary]:
    """A snapshot-format file decoded with the project's readers; control records by value, metadata
    records as (api key, version, message or raw body)."""
    summaries = []
    for batch in read_snapshot(path, check_structure=False):
        if batch.is_control:
            values: list[Any] = [record.value for record in decode_control_batch(batch)]
        else:
            values = [(record.api_key, record.version,
                       getattr(record, "message", None) or getattr(record, "body", None))
                      for record in decode_metadata_batch(batch)]
        summaries.append(BatchSummary(
            base_offset=batch.base_offset, epoch=batch.partition_leader_epoch, control=batch.is_control,
            offsets=[record.offset for record in batch.records],
            producer=(batch.producer_id, batch.producer_epoch, batch.base_sequence),
            compression=batch.attributes & 0x07, values=values))
    return summaries


def bootstrap_values(metadata_dir: Path) -> list[tuple[int, int, Any]]:
    """(key, version, message) of each bootstrap record, from whichever file the format wrote them to:
    the zero checkpoint's data batch (Kafka 4.4's layout, KIP-1170) or bootstrap.checkpoint's."""
    zero = metadata_dir / "__cluster_metadata-0" / "00000000000000000000-0000000000.checkpoint"
    if (metadata_dir / "bootstrap.checkpoint").exists():
        assert not zero.exists() or len(read_batches(zero)) == 2  # Kafka 4.3's: control records alone
        return read_batches(metadata_dir / "bootstrap.checkpoint")[1].values
    batches = read_batches(zero)
    assert [batch.control for batch in batches] == [True, False, True]
    return batches[1].values


def decode_scram_record(body: bytes) -> dict[str, Any]:
    """UserScramCredentialRecord v0 read field by field (compact string, int8, three compact byte
    arrays, int32, empty tagged fields); anything left over fails."""
    name, pos = read_compact_string(body, 0)
    mechanism = int.from_bytes(body[pos:pos + 1], "big", signed=True)
    salt, pos = read_compact_bytes(body, pos + 1)
    stored_key, pos = read_compact_bytes(body, pos)
    server_key, pos = read_compact_bytes(body, pos)
    iterations = int.from_bytes(body[pos:pos + 4], "big", signed=True)
    tags, pos = read_uvarint(body, pos + 4)
    assert tags == 0 and pos == len(body)
    return {"name": name, "mechanism": mechanism, "salt": salt, "stored_key": stored_key,
            "server_key": server_key, "iterations": iterations}
