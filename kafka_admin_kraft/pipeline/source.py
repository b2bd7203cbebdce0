"""The ``kraft-metadata`` Spark data source (Spark's Python data source API, Spark 4.1+).

    register(spark)
    df = spark.read.format("kraft-metadata").load(["/var/lib/kafka", "/backups/ctl-2"])

Paths are log directories, directories containing them, ``__cluster_metadata-0`` directories or
single files. Planning (on the driver) discovers the files and cuts them into splits
(:mod:`~kafka_admin_kraft.pipeline.planning`); each split is one Spark partition, read on an
executor by :func:`~kafka_admin_kraft.pipeline.columnar.read_arrow` straight into Arrow record
batches.

What a query needs reaches the reader two ways:

* filters on ``record_type``, ``file_kind`` and ``cluster_id`` (``=`` and ``IN``) are pushed down:
  files of other kinds or clusters are not read at all, and records of other types are dropped
  before their value is decoded. Pushdown needs ``spark.sql.python.filterPushdown.enabled``, which
  :func:`register` turns on. Registered the plain way
  (``spark.dataSource.register(KRaftMetadataDataSource)``), the source works in any session: with
  pushdown when the session enables it, else Spark applies every filter itself;
* Spark does not tell a Python data source which columns a query reads, so the ``columns`` option
  does: a comma-separated list, the other columns come back null and cost nothing. ``json=false``
  leaves out ``record_json`` alone. A schema given to the reader (``.schema("offset bigint,
  record_type string")``: any of the source's columns, in any order, each with its own type) reads
  those columns only and hands Spark no others, so that Spark does not copy columns a query never
  reads (it copies every column of every row it gets from a Python data source).

``rows=batches`` keeps one row per batch (its first record; an empty batch's own row) and every
error row, and ``recordTypes`` (a comma-separated list) adds the records of those types: what a
batch-level job such as the audit reads, without the rest of the records reaching Spark. With the
default ``rows=all``, ``recordTypes`` keeps only those types, as a pushed-down filter does.

Other options: ``splitBytes`` (default 64 MiB), ``parallelism`` (default 1: how many tasks the
session runs at once, ``SparkContext.defaultParallelism``; the partitions come in a multiple of it,
see :func:`pack`), and for URI paths (``s3://``, ``gs://``, ``hdfs://``,
``file://``) the storage options of :data:`~kafka_admin_kraft.pipeline.storage.OPTION_NAMES`
(``s3.endpoint``, ``s3.region``, ``s3.accessKey``, ...).
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Final

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    EqualTo,
    Filter,
    In,
    InputPartition,
    IsNotNull,
)
from pyspark.sql.types import StructType

from kafka_admin_kraft.pipeline.columnar import Projection, read_arrow
from kafka_admin_kraft.pipeline.planning import DEFAULT_SPLIT_BYTES, FileSplit, plan
from kafka_admin_kraft.pipeline.schema import COLUMN_NAMES, COLUMNS, SCHEMA_DDL
from kafka_admin_kraft.pipeline.storage import storage_options

if TYPE_CHECKING:
    import pyarrow
    from pyspark.sql import SparkSession

FORMAT_NAME: Final = "kraft-metadata"
PUSHDOWN_CONF: Final = "spark.sql.python.filterPushdown.enabled"


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
    """A Spark partition: file splits read one after the other, about ``splitBytes`` in all."""

    def __init__(self, splits: Sequence[FileSplit]) -> None:
        super().__init__(tuple(splits))
        self.splits = tuple(splits)


def pack(splits: Sequence[FileSplit], split_bytes: int, parallelism: int = 1) -> list[list[FileSplit]]:
    """Splits grouped into partitions of at most ``split_bytes`` each (a larger split alone): as few
    as that bound allows, rounded up to a multiple of ``parallelism`` (the tasks Spark runs at once)
    while there are splits enough, and of sizes as even as file order allows.

    Small files (bootstrap checkpoints, short segments, node files) share a task: a Spark task costs
    about 0.1 s of scheduling whatever it reads. Even sizes in a multiple of ``parallelism`` keep
    every core busy to the end, where the greedy fill of every partition but the last left one core
    reading the last partition alone (Spark's file sources take the parallelism into account for the
    same reason: ``FilePartition.maxSplitBytes``). Partitions stay contiguous in file order, where a
    cluster's replicas are neighbours: the audit's aggregation of identical batches then merges most
    of a cluster's copies inside one task, before its shuffle (:func:`~kafka_admin_kraft.pipeline.
    audit.load_records`)."""
    sizes = [split.end - split.start for split in splits]
    count = len(sizes)
    if not count:
        return []
    edges = list(itertools.accumulate(sizes, initial=0))
    # reach[j]: the end of the longest partition from split j within the bound (one split at least);
    # need[j]: the fewest partitions that hold splits[j:], filling each greedily.
    reach = [0] * count
    end = 0
    for j in range(count):
        end = max(end, j + 1)
        while end < count and edges[end + 1] - edges[j] <= split_bytes:
            end += 1
        reach[j] = end
    need = [0] * (count + 1)
    for j in range(count - 1, -1, -1):
        need[j] = 1 + need[reach[j]]
    partitions = min(count, -(-need[0] // parallelism) * parallelism)
    groups: list[list[FileSplit]] = []
    j = lowest = 0
    for left in range(partitions, 0, -1):
        # the end nearest an even share of what is left, among those that keep the rest packable in
        # the partitions left, one split at least each
        lowest = max(lowest, j + 1)
        while need[lowest] > left - 1:
            lowest += 1
        highest = min(reach[j], count - (left - 1))
        share = edges[j] + (edges[count] - edges[j]) / left
        near = min(max(bisect.bisect_left(edges, share, lowest, highest + 1), lowest), highest)
        if near > lowest and share - edges[near - 1] <= edges[near] - share:
            near -= 1
        groups.append(list(splits[j:near]))
        j = near
    return groups


def option_columns(options: Any) -> frozenset[str]:
    """The ``columns`` option (default: every column), less ``record_json`` when ``json`` is false."""
    listed = options.get("columns")
    columns = frozenset(COLUMN_NAMES)
    if listed:
        columns = frozenset(name.strip() for name in str(listed).split(",") if name.strip())
    if str(options.get("json", "true")).lower() == "false":
        columns -= {"record_json"}
    return columns


def option_count(options: Any, name: str, default: int) -> int:
    """A whole-number option above 0 (``splitBytes``, ``parallelism``)."""
    text = str(options.get(name, default)).strip()
    count = int(text) if text.isascii() and text.isdigit() else 0
    if count < 1:
        raise ValueError(f"kraft-metadata: option {name} is a whole number above 0, not {text!r}")
    return count


def option_projection(options: Any) -> Projection:
    """The columns, ``rows`` (``all`` or ``batches``) and ``recordTypes`` options."""
    rows = str(options.get("rows", "all")).lower()
    if rows not in ("all", "batches"):
        raise ValueError(f"kraft-metadata: rows is 'all' or 'batches', not {rows!r}")
    listed = options.get("recordTypes")
    types = frozenset(name.strip() for name in str(listed).split(",") if name.strip()) if listed else None
    return Projection(option_columns(options), types, batch_rows=rows == "batches")


def schema_columns(schema: StructType) -> tuple[str, ...] | None:
    """The columns of a schema given to the reader, in its order; None for the source's own. Each must
    be a column of the source with the source's type."""
    names = tuple(schema.fieldNames())
    Projection(frozenset(names))  # refuses a name that is not a column
    types = {column.name: column.ddl for column in COLUMNS}
    for field in schema.fields:
        wanted = types[field.name]
        if field.dataType.simpleString() != wanted:
            raise ValueError(f"kraft-metadata: column {field.name} is {wanted}, not "
                             f"{field.dataType.simpleString()}")
    return None if names == COLUMN_NAMES else names


def _narrow(current: frozenset[Any] | None, values: Iterable[Any]) -> frozenset[Any]:
    """AND of two "column is one of" conditions (SQL: a null is none of them)."""
    wanted = frozenset(value for value in values if value is not None)
    return wanted if current is None else current & wanted


class _PushFilters:
    """The reader's ``pushFilters``, which Spark calls only in a session that enables Python filter
    pushdown. In any other session PySpark refuses a reader whose class implements pushFilters
    (DATA_SOURCE_PUSHDOWN_DISABLED, checked on ``pushFilters.__func__``), for fear that a filter is
    silently dropped; here none can be: without pushdown Spark applies every filter itself, and
    pushdown only spares reading. So this callable shows DataSourceReader's own function there."""

    def __init__(self, push: Callable[[list[Filter]], Iterator[Filter]]) -> None:
        self._push = push
        self.__func__ = DataSourceReader.pushFilters

    def __call__(self, filters: list[Filter]) -> Iterator[Filter]:
        return self._push(filters)


class KRaftMetadataReader(DataSourceReader):
    def __init__(self, options: Any, columns: tuple[str, ...] | None = None) -> None:
        self.paths = option_paths(options)
        self.split_bytes = option_count(options, "splitBytes", DEFAULT_SPLIT_BYTES)
        self.parallelism = option_count(options, "parallelism", 1)
        self.projection = option_projection(options)
        self.columns = columns
        """The columns of a schema given to the reader, the only ones handed to Spark; None: all."""
        if columns is not None:
            self.projection = dataclasses.replace(
                self.projection, columns=self.projection.columns.intersection(columns))
        self.file_kinds: frozenset[str] | None = None
        self.cluster_ids: frozenset[str] | None = None
        self.non_null: set[str] = set()
        self.storage = storage_options(options)
        vars(self)["pushFilters"] = _PushFilters(self._push_filters)

    def _push_filters(self, filters: list[Filter]) -> Iterator[Filter]:
        """Take ``=`` and ``IN`` on record_type, file_kind and cluster_id, and ``IS NOT NULL`` on the
        last two (Spark adds it to every comparison); Spark keeps the others."""
        for condition in filters:
            column = getattr(condition, "attribute", None)
            if isinstance(condition, IsNotNull) and column in (("file_kind",), ("cluster_id",)):
                self.non_null.add(column[0])
                continue
            if isinstance(condition, EqualTo):
                values: tuple[Any, ...] = (condition.value,)
            elif isinstance(condition, In):
                values = tuple(condition.value)
            else:
                yield condition
                continue
            if column == ("record_type",) and not self.projection.batch_rows:
                kept = _narrow(self.projection.record_types, values)
                self.projection = dataclasses.replace(self.projection, record_types=kept)
            elif column == ("file_kind",):
                self.file_kinds = _narrow(self.file_kinds, values)
            elif column == ("cluster_id",):
                self.cluster_ids = _narrow(self.cluster_ids, values)
            else:
                yield condition

    def partitions(self) -> Sequence[InputPartition]:
        splits = plan(self.paths, split_bytes=self.split_bytes, options=self.storage).splits
        wanted = [split for split in splits if self._may_hold_rows(split)]
        return [SplitPartition(group) for group in pack(wanted, self.split_bytes, self.parallelism)]

    def _may_hold_rows(self, split: FileSplit) -> bool:
        """Whether a split can have a row the pushed filters keep (all its rows share these columns)."""
        if self.file_kinds is not None and split.kind not in self.file_kinds:
            return False
        if self.cluster_ids is not None and split.cluster_id not in self.cluster_ids:
            return False
        if "cluster_id" in self.non_null and split.cluster_id is None:
            return False
        return split.error_kind is None or self.projection.with_errors

    def read(self, partition: InputPartition) -> Iterator[pyarrow.RecordBatch]:
        # With no partitions at all (nothing to read), PySpark still reads one, holding None.
        for split in partition.value or ():
            if self.columns is None:
                yield from read_arrow(split, self.projection, self.storage)
            else:
                for batch in read_arrow(split, self.projection, self.storage):
                    yield batch.select(self.columns)


class KRaftMetadataDataSource(DataSource):
    """``spark.read.format("kraft-metadata")``: one row per record of KRaft metadata log files."""

    @classmethod
    def name(cls) -> str:
        return FORMAT_NAME

    def schema(self) -> str:
        return SCHEMA_DDL

    def reader(self, schema: StructType) -> DataSourceReader:
        return KRaftMetadataReader(self.options, schema_columns(schema))


def register(spark: SparkSession) -> None:
    """Make ``spark.read.format("kraft-metadata")`` available in this session, with filter pushdown."""
    spark.conf.set(PUSHDOWN_CONF, "true")
    spark.dataSource.register(KRaftMetadataDataSource)
