"""``kafka-metadata-audit``: audit KRaft metadata logs on Spark and write Parquet tables and a report.

    kafka-metadata-audit --output audit/ /var/lib/kafka/ctl-1 /var/lib/kafka/ctl-2 /backups/
    kafka-metadata-audit --master spark://host:7077 --conf spark.executor.cores=2 --output hdfs://... PATHS
    kafka-metadata-audit --s3-endpoint http://127.0.0.1:9000 --output audit/ s3://backups/kafka/

PATHS may be URIs (``s3://``, ``gs://``, ``hdfs://``, ``file://``), read through pyarrow's file
systems (:mod:`kafka_admin_kraft.pipeline.storage`). Credentials come from the standard environment
only (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_PROFILE``,
``GOOGLE_APPLICATION_CREDENTIALS``, ...): a secret on a command line is visible to every user of the
machine. ``--s3-endpoint`` and ``--s3-region`` set ``AWS_ENDPOINT_URL_S3`` and ``AWS_REGION`` for
this process and its local workers, and ``spark.executorEnv`` for executors elsewhere. Every URI
path is looked up before Spark starts, so a wrong credential, bucket or endpoint is reported at
once.

``--image-diffs`` also writes, next to the report, each cluster's first-to-last image diff
(``diffs/<cluster>.txt`` and ``.json``, as ``kafka-metadata-diff`` prints them) and links them from
the report's clusters section with the number of changes per area. Both images come from the
directory the audit chose as the cluster's reference log: the first is the oldest image that
directory can rebuild (at the start of its log when the log starts at offset 0, else at its oldest
snapshot), the last is at the end of its log. A cluster whose images cannot be loaded gets a note in
the report instead. It is an option because it replays every reference log in this process after
the audit, which on a large fleet takes about as long as the audit itself.

PySpark is imported only when the command runs, so ``--help`` stays fast.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

import click

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from kafka_admin_kraft.pipeline.audit import AuditResult
    from kafka_admin_kraft.pipeline.report import ImageDiffLink
    from kafka_admin_kraft.pipeline.storage import StorageOptions


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--output",
    "-o",
    required=True,
    help="Directory (or Hadoop URI) for the Parquet tables; the report goes there too when local.",
)
@click.option(
    "--report-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Where to write the report (default: the output directory).",
)
@click.option(
    "--format",
    "report_format",
    type=click.Choice(["md", "html"]),
    default="md",
    show_default=True,
    help="Report format.",
)
@click.option(
    "--master",
    default=None,
    help="Spark master URL; default: the standard Spark configuration, else local[*].",
)
@click.option("--conf", "confs", multiple=True, metavar="KEY=VALUE", help="A Spark setting (repeatable).")
@click.option(
    "--py-files",
    "py_files",
    multiple=True,
    metavar="FILE",
    help="A wheel, .zip, .egg or .py for the workers' Python path, e.g. this package's wheel (repeatable).",
)
@click.option(
    "--archives",
    multiple=True,
    metavar="FILE[#DIR]",
    help="An archive unpacked in each executor's directory, e.g. a packed environment (repeatable).",
)
@click.option(
    "--s3-endpoint",
    metavar="URL",
    default=None,
    help="Endpoint of an S3-compatible store for s3:// paths, e.g. http://127.0.0.1:9000 "
    "(default: AWS_ENDPOINT_URL_S3, else AWS).",
)
@click.option(
    "--s3-region", metavar="REGION", default=None, help="Region of s3:// buckets (default: AWS_REGION)."
)
@click.option(
    "--split-bytes",
    type=click.IntRange(min=1),
    default=64 * 1024 * 1024,
    show_default=True,
    help="Files larger than this are read as several splits.",
)
@click.option("--write-records", is_flag=True, help="Also write every record as the 'records' table.")
@click.option(
    "--image-diffs",
    is_flag=True,
    help="Also write each cluster's first-to-last image diff next to the report (diffs/) and link it.",
)
def main(
    paths: tuple[str, ...],
    output: str,
    report_dir: str | None,
    report_format: str,
    master: str | None,
    confs: tuple[str, ...],
    py_files: tuple[str, ...],
    archives: tuple[str, ...],
    s3_endpoint: str | None,
    s3_region: str | None,
    split_bytes: int,
    write_records: bool,
    image_diffs: bool,
) -> None:
    """Audit the __cluster_metadata logs, snapshots and bootstrap files under PATHS."""
    from kafka_admin_kraft.pipeline.audit import run_audit
    from kafka_admin_kraft.pipeline.report import write_report
    from kafka_admin_kraft.pipeline.schema import DIVERGENCE, ERRORS
    from kafka_admin_kraft.pipeline.session import SparkSetupError, spark_session
    from kafka_admin_kraft.pipeline.storage import StorageError, is_uri, local_path

    settings: dict[str, str] = {}
    for item in confs:
        key, sep, value = item.partition("=")
        if not sep:
            raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="--conf")
        settings[key.strip()] = value.strip()
    for path in paths:
        if not is_uri(path) and not Path(path).exists():
            raise click.BadParameter(f"{path}: no such file or directory", param_hint="PATHS")
    _export_s3_settings(settings, s3_endpoint, s3_region)
    _look_up_uris(paths)
    _check_logs_found(paths)
    local = local_path(output)
    report_target = report_dir or local
    if report_target is None:
        raise click.BadParameter(
            "the output is not a local directory: give --report-dir", param_hint="--output"
        )
    for option, directory in (("--output", local), ("--report-dir", report_dir)):
        if directory is not None:
            _check_writable(option, directory)
    started = time.monotonic()
    try:
        spark = spark_session(master, conf=settings, py_files=py_files, archives=archives)
    except SparkSetupError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(2)
    try:
        if local is None:
            _check_hadoop_output(spark, output)
        result = run_audit(
            spark,
            list(paths),
            local if local is not None else output,
            split_bytes=split_bytes,
            write_records=write_records,
        )
    except (StorageError, FileNotFoundError) as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        spark.stop()
    elapsed = time.monotonic() - started
    links = _write_image_diffs(result, Path(report_target)) if image_diffs else None
    diffs_elapsed = time.monotonic() - started - elapsed
    report = write_report(result, report_target, report_format, links)
    tables = ", ".join(sorted([*result.tables, DIVERGENCE.name, ERRORS.name]))
    click.echo(
        f"Audited {result.batch_count} batches in {elapsed:.1f}s: "
        f"{result.divergence_count} diverging batches, {result.error_count} errors."
    )
    click.echo(f"Tables ({tables}) in {output}")
    click.echo(f"Report: {report}")
    if links is not None:
        click.echo(f"Image diffs of {len(links)} cluster(s) in {diffs_elapsed:.1f}s: "
                   f"{Path(report_target) / DIFFS_DIR}")


def _export_s3_settings(settings: dict[str, str], endpoint: str | None, region: str | None) -> None:
    """The audit's readers take S3 settings from the standard variables: set them for this process
    (and so for the local workers Spark starts) and, through ``spark.executorEnv``, for executors
    on other machines. Neither is a secret."""
    for name, value in (("AWS_ENDPOINT_URL_S3", endpoint), ("AWS_REGION", region)):
        if value:
            os.environ[name] = value
            settings.setdefault(f"spark.executorEnv.{name}", value)


def _check_writable(option: str, directory: str) -> None:
    """Spark writes the tables only after its start-up and the whole audit: a directory that cannot be
    made or written in is an error now."""
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as exc:
        raise click.ClickException(
            f"{option} {directory}: cannot create the directory: {exc.strerror or exc}"
        ) from None
    if not os.access(directory, os.W_OK | os.X_OK):
        raise click.ClickException(f"{option} {directory}: this user may not write in it")


LOOKUP_GCS_RETRY_S = 1.0
"""How long the look-ups before Spark retry a GCS request (Google's client would retry an
unreachable network for the minute of the data source's default)."""


def _lookup_options() -> StorageOptions:
    from kafka_admin_kraft.pipeline.storage import StorageOptions

    return StorageOptions(gcs_retry_seconds=LOOKUP_GCS_RETRY_S)


def _look_up_uris(paths: Sequence[str]) -> None:
    """Reach every URI path before Spark starts: a wrong credential, bucket or endpoint is an error
    now, not after the JVM has started."""
    from kafka_admin_kraft.pipeline.storage import StorageError, StorageView, is_uri, normalize

    view = StorageView(_lookup_options())
    for path in paths:
        if not is_uri(path):
            continue
        try:
            found = view.kind(normalize(path))
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="PATHS") from None
        except StorageError as exc:
            raise click.ClickException(str(exc)) from None
        if found is None:
            raise click.BadParameter(f"{path}: no such file or directory", param_hint="PATHS")


def _check_logs_found(paths: Sequence[str]) -> None:
    """Say which PATHS hold no metadata log (no segment, snapshot or bootstrap.checkpoint of a
    ``__cluster_metadata-0`` log directory); when none does, there is nothing to audit: an error,
    before Spark starts."""
    from kafka_admin_kraft.pipeline.planning import discover
    from kafka_admin_kraft.pipeline.storage import StorageError

    empty = []
    for path in paths:
        try:
            found = discover([path], _lookup_options())
        except (StorageError, FileNotFoundError) as exc:
            raise click.ClickException(str(exc)) from None
        if not any(files for _, files in found):
            empty.append(path)
    if len(empty) == len(paths):
        raise click.ClickException(
            f"no KRaft metadata log under {', '.join(empty)}: give log directories (holding meta.properties "
            "and __cluster_metadata-0), a __cluster_metadata-0 directory, or directories that hold them"
        )
    for path in empty:
        click.echo(f"Warning: no KRaft metadata log under {path}; it is left out", err=True)


DIFFS_DIR: Final = "diffs"
_PLAIN_ID: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""A cluster id used as a file name as it is: Kafka's ids (22 characters of URL-safe base64) are."""


def diff_file_names(clusters: Sequence[str]) -> dict[str, str]:
    """The file name stem of each cluster's diff. A plain id is its own stem; any other (a path
    separator, a dot, a space, an empty or very long id) is reduced to its safe characters, cut to 40,
    and followed by a dot and a hash of the whole id, so that no two clusters share a stem, not even
    on a file system that ignores case, and none leaves the diffs directory."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    for cluster in sorted(clusters):
        stem = cluster if _PLAIN_ID.fullmatch(cluster) else ""
        if not stem or stem.lower() in taken:
            digest = hashlib.sha256(cluster.encode("utf-8", "backslashreplace")).hexdigest()[:12]
            stem = f"{re.sub(r'[^A-Za-z0-9_-]', '_', cluster)[:40] or 'no-cluster-id'}.{digest}"
        taken.add(stem.lower())
        names[cluster] = stem
    return names


def _first_offset(log_dir: str) -> int:
    """The offset of the oldest image ``log_dir`` can rebuild, from the files the audit's discovery
    lists: the last offset of its oldest snapshot, or -1 (the start of the log, before any record)
    when the log starts at offset 0 or no snapshot is left (then only a log from offset 0 loads)."""
    from kafka_admin_kraft.pipeline.planning import discover
    from kafka_admin_kraft.pipeline.storage import base_name
    from kafka_admin_kraft.records.log_dir import METADATA_PARTITION_DIR
    from kafka_admin_kraft.records.segment import parse_log_file_name
    from kafka_admin_kraft.records.snapshot import parse_snapshot_file_name

    partition = os.path.join(log_dir, METADATA_PARTITION_DIR)  # not the whole log directory of a broker
    names = [base_name(path) for _, files in discover([partition if os.path.isdir(partition) else log_dir])
             for path in files]
    snapshot_ends = sorted(s.end_offset for n in names if (s := parse_snapshot_file_name(n)) is not None)
    log_start = min((b for n in names if (b := parse_log_file_name(n)) is not None), default=None)
    return -1 if log_start == 0 or not snapshot_ends else snapshot_ends[0] - 1


def _image_diff(log_dir: str | None, directory: Path, stem: str) -> ImageDiffLink:
    """Load the first and last images of ``log_dir``, write their diff as ``<stem>.txt`` and
    ``<stem>.json`` under ``directory``: what the report shows of it, or why there is none."""
    from kafka_admin_kraft.image import ImageError, diff_images, load_images
    from kafka_admin_kraft.pipeline.report import ImageDiffLink
    from kafka_admin_kraft.pipeline.storage import local_path

    if log_dir is None:
        return ImageDiffLink(note="the audit found no reference log (no log segment was read)")
    local = local_path(log_dir)
    if local is None:
        return ImageDiffLink(note=f"{log_dir} is not on a local file system, and images are read from local "
                                  "directories only (copy it here and run kafka-metadata-diff)")
    try:
        first_offset = _first_offset(local)
        first, last = load_images(local, [first_offset, None])
    except (ImageError, OSError) as exc:
        return ImageDiffLink(note=str(exc))
    difference = diff_images(first, last)
    text = difference.text() or (f"{local}: the image at offset {first.provenance.offset} and the image at "
                                 f"offset {last.provenance.offset} are equal\n")
    warnings = [*first.warnings, *last.warnings]
    text += "".join(f"warning: {warning}\n" for warning in warnings)
    (directory / f"{stem}.txt").write_text(text, encoding="utf-8")
    document = json.dumps(difference.to_json(), indent=2) + "\n"
    (directory / f"{stem}.json").write_text(document, encoding="utf-8")
    where = "the oldest snapshot" if first_offset >= 0 else "the start of the log"
    return ImageDiffLink(
        text_href=f"{DIFFS_DIR}/{stem}.txt",
        json_href=f"{DIFFS_DIR}/{stem}.json",
        first=f"offset {first_offset} ({where})",
        last=f"offset {last.provenance.offset} (the end of the log)",
        areas=tuple((title, len(changes)) for _, title, changes in difference.by_area()),
        warnings=len(warnings),
    )


def _write_image_diffs(result: AuditResult, report_dir: Path) -> dict[str, ImageDiffLink]:
    """Each cluster's first-to-last image diff, from the reference log the audit chose, written under
    ``report_dir/diffs``; by cluster id, what the report shows of it."""
    directory = report_dir / DIFFS_DIR
    try:
        directory.mkdir(exist_ok=True)
    except OSError as exc:
        raise click.ClickException(
            f"{directory}: cannot create the directory: {exc.strerror or exc}"
        ) from None
    clusters = {row["cluster_id"]: row["reference_log_dir"] for row in result.tables.get("clusters", [])}
    stems = diff_file_names(list(clusters))
    try:
        return {cluster: _image_diff(log_dir, directory, stems[cluster])
                for cluster, log_dir in clusters.items()}
    except OSError as exc:
        raise click.ClickException(f"cannot write in {directory}: {exc.strerror or exc}") from None


def _check_hadoop_output(spark: SparkSession, output: str) -> None:
    """Spark writes the tables through Hadoop's file systems: say so before the audit when Spark's
    class path has none for the output's scheme (s3a:// needs the hadoop-aws module, which PySpark
    does not ship)."""
    from py4j.protocol import Py4JJavaError  # type: ignore[import-untyped]

    scheme = output.partition("://")[0]
    context = spark.sparkContext
    jvm = context._jvm
    assert jvm is not None  # a running session has its gateway
    try:
        jvm.org.apache.hadoop.fs.FileSystem.getFileSystemClass(scheme, context._jsc.hadoopConfiguration())
    except Py4JJavaError:
        raise click.ClickException(
            f"Spark cannot write {output}: Hadoop has no file system for {scheme}:// on Spark's class "
            "path (S3 needs the hadoop-aws module and its AWS SDK, e.g. --conf "
            "spark.jars.packages=org.apache.hadoop:hadoop-aws:<the Hadoop version of Spark>, and an s3a:// "
            "URI). Write the tables to a local directory instead, or add the module."
        ) from None


if __name__ == "__main__":
    main(prog_name="kafka-metadata-audit")
