"""Read rate of the data source's split reader from local disk and from an S3-compatible server.

    python bench/bench_object_store.py --clusters 4 --controllers 3 --mb-per-log 8

One process, no Spark: planning and then ``read_arrow`` (``kafka_admin_kraft.pipeline.columnar``) over
every split of a fleet generated as ``bench_pipeline.py`` does, once from the local directory and
once from a copy in moto's S3 server on 127.0.0.1; and the byte-range reads alone (``open_input``
and ``read_at`` in the reader's 4 MiB windows, nothing decoded), which is what the store costs. The
server runs as a process of its own, so its work does not share this interpreter; it keeps objects
in memory and answers a ranged GET by slicing the whole object, so the S3 figures are a floor for a
real store on a fast network.
Prints one line per figure.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_pipeline import fleet_bytes, generate

from kafka_admin_kraft.pipeline.columnar import Projection, read_arrow
from kafka_admin_kraft.pipeline.planning import FileSplit, plan
from kafka_admin_kraft.pipeline.schema import COLUMN_NAMES
from kafka_admin_kraft.pipeline.storage import StorageOptions, open_input, storage_options
from kafka_admin_kraft.pipeline.walk import READ_WINDOW

BUCKET = "kraft-bench"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(port: int) -> subprocess.Popen[bytes]:
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise SystemExit("moto server did not start")


def upload(root: Path, endpoint: str) -> None:
    import boto3

    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    client.create_bucket(Bucket=BUCKET)
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        client.put_object(Bucket=BUCKET, Key=f"fleet/{path.relative_to(root)}", Body=path.read_bytes())


def read_all(splits: list[FileSplit], options: StorageOptions, with_json: bool) -> tuple[int, int, float]:
    """(records, split bytes, seconds) of reading every split once."""
    columns = frozenset(COLUMN_NAMES) - (set() if with_json else {"record_json"})
    projection = Projection(columns)
    started = time.perf_counter()
    records = 0
    for split in splits:
        for batch in read_arrow(split, projection, options):
            records += batch.num_rows
    return records, sum(s.end - s.start for s in splits), time.perf_counter() - started


def read_bytes(splits: list[FileSplit], options: StorageOptions) -> tuple[int, float]:
    """(bytes, seconds) of reading every split's byte range in the reader's windows."""
    started = time.perf_counter()
    total = 0
    for split in splits:
        with open_input(split.path, options) as source:
            for position in range(split.start, split.end, READ_WINDOW):
                total += len(source.read_at(position, min(READ_WINDOW, split.end - position)))
    return total, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=4)
    parser.add_argument("--controllers", type=int, default=3)
    parser.add_argument("--mb-per-log", type=float, default=8.0)
    parser.add_argument("--segment-mb", type=float, default=16.0)
    parser.add_argument("--split-mb", type=float, default=16.0)
    parser.add_argument("--no-json", action="store_true", help="leave record_json out, as json=false does")
    args = parser.parse_args()
    os.environ.update(
        AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench", AWS_EC2_METADATA_DISABLED="true"
    )
    root = Path(tempfile.mkdtemp(prefix="kraft-fleet-"))
    port = _free_port()
    server = start_server(port)
    endpoint = f"http://127.0.0.1:{port}"
    split_bytes = int(args.split_mb * 2**20)
    with_json = not args.no_json
    try:
        started = time.perf_counter()
        generate(root, args.clusters, args.controllers, args.mb_per_log, args.segment_mb)
        print(
            f"fleet: {args.clusters} clusters x {args.controllers} controllers, "
            f"{fleet_bytes(root) / 2**20:.0f} MiB written in {time.perf_counter() - started:.1f}s"
        )
        started = time.perf_counter()
        upload(root, endpoint)
        print(f"upload to moto S3 on 127.0.0.1: {time.perf_counter() - started:.1f}s")
        s3 = storage_options({"s3.endpoint": endpoint, "s3.region": "us-east-1"})
        sources = [("local disk", [str(root)], StorageOptions()), ("moto S3", [f"s3://{BUCKET}/fleet"], s3)]
        for name, paths, options in sources:
            started = time.perf_counter()
            splits = plan(paths, split_bytes=split_bytes, options=options).splits
            planned = time.perf_counter() - started
            raw, raw_seconds = read_bytes(splits, options)
            records, size, seconds = read_all(splits, options, with_json)
            print(f"planning, {name}: {len(splits)} splits in {planned:.2f}s")
            print(f"byte-range reads, {name}: {raw / 2**20:.0f} MiB in {raw_seconds:.2f}s = "
                  f"{raw / 2**20 / raw_seconds:,.0f} MB/s")
            print(
                f"read_arrow, {name} (JSON {'on' if with_json else 'off'}): {records} records, "
                f"{size / 2**20:.0f} MiB in {seconds:.1f}s = {size / 2**20 / seconds:.1f} MB/s, "
                f"{records / seconds:,.0f} records/s"
            )
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
