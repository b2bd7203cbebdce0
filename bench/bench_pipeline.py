"""Records per second through the ``kraft-metadata`` data source and the whole audit, on a generated
fleet, on 1 and 2 CPUs, next to a single-process loop over the same files.

    python bench/bench_pipeline.py --clusters 20 --controllers 3 --mb-per-log 8

The data source is timed reading every column but ``record_json`` (``json=false``) and reading
every column, each as one aggregation over all rows. ``--spark-only`` skips the single-process
loop, whose reader API is this version's, so that the Spark figures of an older installation can
be taken with the same script.

"N cores" is ``local[N]`` in a process of its own whose threads (the driver, Spark's JVM and its
Python workers) may run on N CPUs only (``sched_setaffinity``; where that is missing, on all of
them, which the output says): ``local[1]`` alone keeps a JVM thread and a Python worker busy side by
side, so without the limit it uses more than one CPU. Each query runs ``--runs`` times in its
session; the first run pays for warming the JVM (JIT compilation of Spark's planner, of Janino and
of the generated code), which a long job over a large fleet does once. Both JVMs run the G1
collector: on one CPU the JVM would otherwise pick the serial one, whose cheaper write barriers
no multi-core executor gets, and the figures would compare collectors as much as core counts.

Splits are the audit's own size (``--split-mb``, 64 MiB) unless told otherwise. A Spark task of a
Python data source costs 65 to 80 ms on one CPU whatever it reads, and the audit reads its cached
rows in as many tasks again in each later stage, so smaller splits over the default fleet's 8 MiB
logs mostly time Spark's scheduling. The data source is told the session's parallelism, as the audit
tells it, so that its partitions come in a multiple of the cores.

The fleet is written with the project's record writers: per cluster one metadata log (leader
changes with their VotersRecords every few thousand batches, feature upgrades, topic and partition
records, no-ops) rolled into segments of ``--segment-mb``, copied to every controller's directory
with its own meta.properties and bootstrap.checkpoint.
Prints one line per figure, with how many of the machine's CPUs were busy meanwhile (from
``/proc/stat``) and the CPU seconds the measuring process and its descendants (Spark's JVM and
Python workers) took, which other work on a shared machine moves far less than the time (from
``/proc/<pid>/stat``; both Linux only). Spark start-up, a Python worker on every core included, is not
timed.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import TypeVar

from kafka_admin_kraft.features import DEFAULT_FEATURE_LEVELS
from kafka_admin_kraft.pipeline.planning import DEFAULT_SPLIT_BYTES, plan
from kafka_admin_kraft.protocol import messages
from kafka_admin_kraft.protocol.primitives import Uuid
from kafka_admin_kraft.records import SegmentWriter, control_batch, metadata_batches
from kafka_admin_kraft.records.metadata import ApiMessageAndVersion
from kafka_admin_kraft.storage import (
    MetaProperties,
    bootstrap_records,
    write_bootstrap_checkpoint,
    write_meta_properties,
)


def _voters(ids: list[int], dirs: dict[int, Uuid]) -> messages.VotersRecord:
    V = messages.VotersRecord
    return V(
        voters=[
            V.Voter(
                voter_id=i,
                voter_directory_id=dirs[i],
                endpoints=[V.Endpoint(name="CONTROLLER", host=f"ctl{i}", port=9093)],
                k_raft_version_feature=V.KRaftVersionFeature(
                    min_supported_version=0, max_supported_version=1
                ),
            )
            for i in ids
        ]
    )


def write_cluster(root: Path, index: int, controllers: int, log_bytes: int, segment_bytes: int) -> int:
    """One cluster's directories; returns the records written to the leader's log."""
    cluster_id = str(Uuid.random())
    ids = list(range(1, controllers + 1))
    dirs = {i: Uuid.random() for i in ids}
    first = root / f"cluster-{index:02d}" / "ctl-1" / "metadata"
    partition = first / "__cluster_metadata-0"
    partition.mkdir(parents=True)
    records = 0
    offset = 0
    epoch = 0
    now = 1_700_000_000_000 + index * 10_000_000
    L = messages.LeaderChangeMessage
    written = 0
    base = 0
    writer = SegmentWriter(partition, base)
    level = 21
    while written < log_bytes:
        if offset == 0 or (offset // 5000) != ((offset - 1) // 5000):
            epoch += 1
            leader = ids[epoch % len(ids)]
            batch = control_batch(
                offset,
                epoch,
                now,
                [
                    L(
                        leader_id=leader,
                        voters=[L.Voter(voter_id=i) for i in ids],
                        granting_voters=[L.Voter(voter_id=i) for i in ids[:2]],
                    ),
                    _voters(ids, dirs),
                ],
            )
            batches = [batch]
        elif offset % 997 == 0 and level < 29:
            level += 1
            batches = metadata_batches(
                offset,
                epoch,
                now,
                [
                    ApiMessageAndVersion(
                        messages.FeatureLevelRecord(name="metadata.version", feature_level=level), 0
                    )
                ],
            )
        elif offset % 3 == 0:
            batches = metadata_batches(offset, epoch, now, [ApiMessageAndVersion(messages.NoOpRecord(), 0)])
        else:
            topic_id = Uuid.random()
            values = [ApiMessageAndVersion(messages.TopicRecord(name=f"t-{offset}", topic_id=topic_id), 0)]
            values += [
                ApiMessageAndVersion(
                    messages.PartitionRecord(
                        partition_id=p,
                        topic_id=topic_id,
                        replicas=[1, 2, 3],
                        isr=[1, 2, 3],
                        leader=1 + p % 3,
                        leader_epoch=0,
                        partition_epoch=0,
                    ),
                    0,
                )
                for p in range(6)
            ]
            batches = metadata_batches(offset, epoch, now, values)
        for batch in batches:
            if writer.size >= segment_bytes:
                writer.close()
                writer = SegmentWriter(partition, batch.base_offset)
            before = writer.size
            writer.append(batch)
            written += writer.size - before
            records += len(batch.records)
            offset = batch.next_offset
        now += 7
    writer.close()
    for i in ids:
        target = root / f"cluster-{index:02d}" / f"ctl-{i}" / "metadata"
        if i != 1:
            shutil.copytree(first, target)
        write_meta_properties(
            target, MetaProperties(version=1, cluster_id=cluster_id, node_id=i, directory_id=dirs[i])
        )
        write_bootstrap_checkpoint(target, bootstrap_records(21, DEFAULT_FEATURE_LEVELS))
    return records


def generate(root: Path, clusters: int, controllers: int, mb_per_log: float, segment_mb: float) -> None:
    for index in range(clusters):
        write_cluster(root, index, controllers, int(mb_per_log * 2**20), int(segment_mb * 2**20))


def fleet_bytes(root: Path) -> int:
    return sum(f.stat().st_size for f in root.rglob("*") if f.is_file())


def single_process(root: Path, split_bytes: int, columns: frozenset[str]) -> tuple[int, float]:
    """Rows and seconds of reading every split in this process, as a Spark executor would."""
    from kafka_admin_kraft.pipeline.columnar import Projection, read_arrow

    splits = plan([str(root)], split_bytes=split_bytes).splits
    projection = Projection(columns)
    started = time.perf_counter()
    count = 0
    for split in splits:
        for batch in read_arrow(split, projection):
            count += batch.num_rows
    return count, time.perf_counter() - started


def busy_cores() -> tuple[int, int] | None:
    """(busy, total) CPU time of the whole machine so far, in ticks; None where /proc/stat is absent."""
    try:
        with open("/proc/stat") as stat:
            ticks = [int(field) for field in stat.readline().split()[1:]]
    except OSError:
        return None
    idle = ticks[3] + ticks[4]  # idle and iowait
    return sum(ticks) - idle, sum(ticks)


def busy_between(before: tuple[int, int] | None, after: tuple[int, int] | None) -> float | None:
    """Cores kept busy between two readings of :func:`busy_cores`."""
    if before is None or after is None or after[1] == before[1]:
        return None
    return (os.cpu_count() or 1) * (after[0] - before[0]) / (after[1] - before[1])


def tree_cpu_seconds() -> float | None:
    """CPU seconds used so far by this process and its descendants (Spark's JVM, its Python workers
    and the workers they forked and reaped), from ``/proc``; None where ``/proc`` is absent."""
    parents: dict[int, int] = {}
    used: dict[int, int] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        parents[int(entry)] = int(fields[1])
        used[int(entry)] = sum(int(ticks) for ticks in fields[11:15])  # utime, stime, cutime, cstime
    mine = {os.getpid()}
    grown = True
    while grown:
        more = {pid for pid, parent in parents.items() if parent in mine} - mine
        grown = bool(more)
        mine |= more
    return sum(used[pid] for pid in mine if pid in used) / os.sysconf("SC_CLK_TCK")


Figure = tuple[str, int, float, float | None, float | None]
"""(what, rows, seconds, cores busy meanwhile, CPU seconds of this process and its descendants)."""
T = TypeVar("T")


def timed(work: Callable[[], T]) -> tuple[T, float, float | None, float | None]:
    """What ``work`` returns, its seconds, the cores busy meanwhile and the CPU seconds it took this
    process and its descendants."""
    ticks, cpu, started = busy_cores(), tree_cpu_seconds(), time.perf_counter()
    result = work()
    seconds = time.perf_counter() - started
    after = tree_cpu_seconds()
    used = None if cpu is None or after is None else after - cpu
    return result, seconds, busy_between(ticks, busy_cores()), used


QUERIES = ("plain", "json", "audit")
"""The queries: the data source without JSON, with JSON, the whole audit."""


def spark_figures(
    root: Path, cores: int, split_bytes: int, output: Path, runs: int, queries: frozenset[str],
    conf: dict[str, str],
) -> Iterator[Figure]:
    """The data source without and with JSON and the whole audit (those of ``queries``), each ``runs``
    times, in a session with ``conf`` added to its configuration."""
    from pyspark.sql import functions as F

    from kafka_admin_kraft.pipeline.audit import run_audit
    from kafka_admin_kraft.pipeline.session import spark_session

    spark = spark_session(
        f"local[{cores}]",
        conf={
            "spark.ui.enabled": "false",
            "spark.sql.shuffle.partitions": str(4 * cores),
            "spark.driver.memory": "3g",
            "spark.driver.extraJavaOptions": "-XX:+UseG1GC",  # on one CPU the JVM would pick the serial GC
            **conf,
        },
    )
    spark.sparkContext.setLogLevel("ERROR")
    try:
        reader = (
            spark.read.format("kraft-metadata")
            .option("splitBytes", str(split_bytes))
            .option("parallelism", str(spark.sparkContext.defaultParallelism))
        )
        # Start a Python worker on every core: a limit runs one task first unless told otherwise.
        spark.conf.set("spark.sql.limit.initialNumPartitions", str(cores))
        reader.option("json", "false").load(str(root)).limit(1).collect()
        spark.conf.unset("spark.sql.limit.initialNumPartitions")
        rows = 0
        for query_name, what, json_option, measure in (
            ("plain", "data source without JSON", "false", F.sum("offset")),
            ("json", "data source with JSON", "true", F.sum(F.length("record_json"))),
        ):
            # a new DataFrame each time: Spark keeps a DataFrame's result
            for _ in range(runs if query_name in queries else 0):
                query = reader.option("json", json_option).load(str(root)).agg(F.count(F.lit(1)), measure)
                result, seconds, busy, cpu = timed(query.collect)
                rows = int(result[0][0])
                yield what, rows, seconds, busy, cpu
        if "audit" in queries and not rows:  # the records of the fleet, for the audit's rate
            rows = reader.option("json", "false").option("columns", "offset").load(str(root)).count()
        for run in range(runs if "audit" in queries else 0):
            target = str(output / f"audit-{cores}-{run}")
            audit = partial(run_audit, spark, [str(root)], target, split_bytes=split_bytes)
            _, seconds, busy, cpu = timed(audit)
            yield "whole audit", rows, seconds, busy, cpu
    finally:
        spark.stop()


def confine(cores: int) -> bool:
    """Let this process and its children run on ``cores`` CPUs only; False where that is not possible."""
    if not hasattr(os, "sched_setaffinity"):
        return False
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < cores:
        sys.exit(f"{cores} cores asked for, {len(allowed)} available")
    os.sched_setaffinity(0, allowed[:cores])
    return True


def measure_cores(root: Path, cores: int, split_bytes: int, runs: int, queries: frozenset[str],
                  conf: dict[str, str]) -> None:
    """The Spark figures on ``cores`` CPUs (this process is the child :func:`main` starts for them)."""
    confined = confine(cores)
    cpus = f"{cores} CPU{'s' if cores > 1 else ''}" if confined else "every CPU: no sched_setaffinity"
    seen: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="kraft-audit-") as out:
        figures = spark_figures(root, cores, split_bytes, Path(out), runs, queries, conf)
        for what, rows, seconds, busy, cpu in figures:
            seen[what] = seen.get(what, 0) + 1
            meanwhile = "" if busy is None else f", {busy:.2f} CPUs busy"
            used = "" if not cpu else f"; {cpu:.1f} CPU-s = {rows / cpu:,.0f} records per CPU-s"
            print(
                f"{what}, local[{cores}] on {cpus}, run {seen[what]}: {rows} records in {seconds:.1f}s = "
                f"{rows / seconds:,.0f} records/s ({rows / seconds / cores:,.0f} per core{meanwhile}){used}",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=20)
    parser.add_argument("--controllers", type=int, default=3)
    parser.add_argument("--mb-per-log", type=float, default=8.0)
    parser.add_argument("--segment-mb", type=float, default=16.0)
    parser.add_argument(
        "--split-mb", type=float, default=DEFAULT_SPLIT_BYTES / 2**20, help="default: the audit's own"
    )
    parser.add_argument("--cores", default="1,2")
    parser.add_argument("--dir", default=None, help="reuse or keep the fleet here")
    parser.add_argument("--runs", type=int, default=2, help="runs of each query in its session")
    parser.add_argument("--spark-only", action="store_true", help="skip the single-process loop")
    parser.add_argument(
        "--queries", default=",".join(QUERIES), help=f"which of {', '.join(QUERIES)} to time (default: all)"
    )
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="a Spark setting for the sessions (repeatable), e.g. spark.buffer.size=65536")
    parser.add_argument("--measure-cores", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if any("=" not in setting for setting in args.conf):
        parser.error("--conf: give KEY=VALUE")
    conf = dict(setting.split("=", 1) for setting in args.conf)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    split_bytes = int(args.split_mb * 2**20)
    queries = frozenset(name.strip() for name in args.queries.split(",") if name.strip())
    if not queries <= set(QUERIES):
        parser.error(f"--queries: the queries are {', '.join(QUERIES)}")
    if args.measure_cores is not None:
        measure_cores(Path(args.dir), args.measure_cores, split_bytes, args.runs, queries, conf)
        return
    keep = args.dir is not None
    root = Path(args.dir) if keep else Path(tempfile.mkdtemp(prefix="kraft-fleet-"))
    try:
        if not (root / "cluster-00").exists():
            started = time.perf_counter()
            generate(root, args.clusters, args.controllers, args.mb_per_log, args.segment_mb)
            print(
                f"fleet: {args.clusters} clusters x {args.controllers} controllers, "
                f"{fleet_bytes(root) / 2**20:.0f} MiB written in {time.perf_counter() - started:.1f}s"
            )
        else:
            print(f"fleet: reusing {root} ({fleet_bytes(root) / 2**20:.0f} MiB)")
        splits = plan([str(root)], split_bytes=split_bytes).splits
        print(f"splits: {len(splits)} (split size {args.split_mb:g} MiB); the driver runs "
              f"{os.path.realpath(sys.executable)} (Python {platform.python_version()}), the Python workers "
              f"{os.path.realpath(os.environ['PYSPARK_PYTHON'])}")
        if not args.spark_only:
            from kafka_admin_kraft.pipeline.audit import AUDIT_COLUMNS
            from kafka_admin_kraft.pipeline.schema import COLUMN_NAMES

            every = frozenset(COLUMN_NAMES)
            for query_name, what, columns in (
                ("plain", "without JSON", every - {"record_json"}),
                ("json", "with JSON", every),
                ("audit", "audit's columns", frozenset(AUDIT_COLUMNS)),
            ):
                if query_name not in queries:
                    continue
                count, seconds = single_process(root, split_bytes, columns)
                print(
                    f"single process, read_arrow {what}: {count} rows in {seconds:.1f}s = "
                    f"{count / seconds:,.0f} rows/s"
                )
        for cores in args.cores.split(","):
            child = [sys.executable, __file__, "--dir", str(root), "--split-mb", str(args.split_mb)]
            child += ["--runs", str(args.runs), "--queries", args.queries, "--measure-cores", cores]
            child += [f"--conf={setting}" for setting in args.conf]
            subprocess.run(child, check=True)
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
