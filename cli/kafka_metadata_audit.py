"""``kafka-metadata-audit``: audit KRaft metadata logs on Spark and write Parquet tables and a report.

    kafka-metadata-audit --output audit/ /var/lib/kafka/ctl-1 /var/lib/kafka/ctl-2 /backups/
    kafka-metadata-audit --master spark://host:7077 --conf spark.executor.cores=2 --output hdfs://... PATHS

PySpark is imported only when the command runs, so ``--help`` stays fast.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click


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
    "--split-bytes",
    type=int,
    default=64 * 1024 * 1024,
    show_default=True,
    help="Files larger than this are read as several splits.",
)
@click.option("--write-records", is_flag=True, help="Also write every record as the 'records' table.")
def main(
    paths: tuple[str, ...],
    output: str,
    report_dir: str | None,
    report_format: str,
    master: str | None,
    confs: tuple[str, ...],
    split_bytes: int,
    write_records: bool,
) -> None:
    """Audit the __cluster_metadata logs, snapshots and bootstrap files under PATHS."""
    from kafka_admin_kraft.pipeline.audit import local_path, run_audit
    from kafka_admin_kraft.pipeline.report import write_report
    from kafka_admin_kraft.pipeline.session import JavaNotFoundError, spark_session

    settings: dict[str, str] = {}
    for item in confs:
        key, sep, value = item.partition("=")
        if not sep:
            raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="--conf")
        settings[key.strip()] = value.strip()
    for path in paths:
        if not Path(path).exists():
            raise click.BadParameter(f"{path}: no such file or directory", param_hint="PATHS")
    local = local_path(output)
    report_target = report_dir or local
    if report_target is None:
        raise click.BadParameter(
            "the output is not a local directory: give --report-dir", param_hint="--output"
        )
    started = time.monotonic()
    try:
        spark = spark_session(master, conf=settings)
    except JavaNotFoundError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(2)
    try:
        result = run_audit(
            spark,
            list(paths),
            local if local is not None else output,
            split_bytes=split_bytes,
            write_records=write_records,
        )
    finally:
        spark.stop()
    report = write_report(result, report_target, report_format)
    tables = ", ".join(sorted([*result.tables, "divergence", "errors"]))
    click.echo(
        f"Audited {result.batch_count} batches in {time.monotonic() - started:.1f}s: "
        f"{result.divergence_count} diverging batches, {result.error_count} errors."
    )
    click.echo(f"Tables ({tables}) in {output}")
    click.echo(f"Report: {report}")


if __name__ == "__main__":
    main(prog_name="kafka-metadata-audit")
