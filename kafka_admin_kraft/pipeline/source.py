"""The ``kraft-metadata`` Spark data source (Spark's Python data source API, Spark 4.0+).

    spark.dataSource.register(KRaftMetadataDataSource)
    df = spark.read.format("kraft-metadata").load(["/var/lib/kafka", "/backups/ctl-2"])

Paths are log directories, directories containing them, ``__cluster_metadata-0`` directories or
single files. Planning (on the driver) discovers the files and cuts them into splits
(:mod:`~kafka_admin_kraft.pipeline.planning`); each split is one Spark partition, read on an
executor by :func:`~kafka_admin_kraft.pipeline.rows.read_split` and handed to Spark as Arrow record
batches. Options: ``splitBytes`` (default 64 MiB), ``json`` (``false`` leaves ``record_json`` null,
for speed).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Final

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from kafka_admin_kraft.pipeline.planning import DEFAULT_SPLIT_BYTES, FileSplit, plan
from kafka_admin_kraft.pipeline.rows import read_split
from kafka_admin_kraft.pipeline.schema import COLUMNS, SCHEMA_DDL

if TYPE_CHECKING:
    import pyarrow
    from pyspark.sql import SparkSession

FORMAT_NAME: Final = "kraft-metadata"
ARROW_BATCH_ROWS: Final = 8192


def option_paths(options: Any) -> list[str]:
    """The ``load()`` paths: Spark passes one as ``path`` and several as a JSON list in ``paths``."""
    paths: list[str] = []
    if options.get("paths"):
        paths.extend(json.loads(options["paths"]))
    if options.get("path"):
        paths.append(options["path"])
    if not paths:
        raise ValueError("kraft-metadata: give load() one or more paths")
    return paths


class SplitPartition(InputPartition):
    """A Spark partition: one file split."""

    def __init__(self, split: FileSplit) -> None:
        super().__init__(split)
        self.split = split


def _arrow_schema() -> pyarrow.Schema:
    import pyarrow as pa

    types = {
        "string": pa.string(),
        "int": pa.int32(),
        "bigint": pa.int64(),
        "boolean": pa.bool_(),
        "array<int>": pa.list_(pa.int32()),
        "array<string>": pa.list_(pa.string()),
    }
    return pa.schema([pa.field(column.name, types[column.ddl]) for column in COLUMNS])


class KRaftMetadataReader(DataSourceReader):
    def __init__(self, options: Any) -> None:
        self.paths = option_paths(options)
        self.split_bytes = int(options.get("splitBytes", DEFAULT_SPLIT_BYTES))
        self.with_json = str(options.get("json", "true")).lower() != "false"

    def partitions(self) -> Sequence[InputPartition]:
        splits = plan(self.paths, split_bytes=self.split_bytes).splits
        return [SplitPartition(split) for split in splits]

    def read(self, partition: InputPartition) -> Iterator[pyarrow.RecordBatch]:
        import pyarrow as pa

        schema = _arrow_schema()
        width = len(COLUMNS)
        rows: list[tuple[Any, ...]] = []
        for row in read_split(partition.value, with_json=self.with_json):
            rows.append(row)
            if len(rows) >= ARROW_BATCH_ROWS:
                yield pa.RecordBatch.from_arrays(
                    [pa.array([r[i] for r in rows], schema.field(i).type) for i in range(width)],
                    schema=schema,
                )
                rows = []
        if rows:
            yield pa.RecordBatch.from_arrays(
                [pa.array([r[i] for r in rows], schema.field(i).type) for i in range(width)], schema=schema
            )


class KRaftMetadataDataSource(DataSource):
    """``spark.read.format("kraft-metadata")``: one row per record of KRaft metadata log files."""

    @classmethod
    def name(cls) -> str:
        return FORMAT_NAME

    def schema(self) -> str:
        return SCHEMA_DDL

    def reader(self, schema: StructType) -> DataSourceReader:
        return KRaftMetadataReader(self.options)


def register(spark: SparkSession) -> None:
    """Make ``spark.read.format("kraft-metadata")`` available in this session."""
    spark.dataSource.register(KRaftMetadataDataSource)
