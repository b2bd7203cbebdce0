"""The audit's tables against their declarations in ``pipeline.schema``: those built on the driver
(``pipeline.tables``) and those written as Parquet, and the README describing each."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from kafka_admin_kraft.pipeline.schema import DIVERGENCE, ERRORS, OUTPUT_TABLES, RECORDS
from kafka_admin_kraft.pipeline.tables import DRIVER_TABLES
from pipeline.conftest import Audit

README = Path(__file__).resolve().parents[2] / "README.md"


def test_every_written_table_has_its_declared_columns_and_types(spark: Any, audit: Audit) -> None:
    for table in OUTPUT_TABLES:
        if table is RECORDS:
            continue  # written only when asked; the data source's own schema
        written = spark.read.parquet(os.fspath(audit.output / table.name)).schema
        assert [(f.name, f.dataType.simpleString()) for f in written.fields] == [
            (c.name, c.ddl) for c in table.columns
        ], table.name


def test_rows_on_the_driver_have_the_declared_columns(audit: Audit) -> None:
    result = audit.result
    assert list(result.tables) == [table.name for table, _ in DRIVER_TABLES]
    for table, _ in DRIVER_TABLES:
        assert result.tables[table.name], table.name
        for row in result.tables[table.name]:
            assert set(row) == set(table.column_names), table.name
    assert result.divergence and all(list(row) == list(DIVERGENCE.column_names) for row in result.divergence)
    assert result.errors and all(list(row) == list(ERRORS.column_names) for row in result.errors)


def test_the_readme_describes_every_table() -> None:
    if not README.is_file():
        pytest.skip("README.md is not beside the tests")
    section = README.read_text(encoding="utf-8").split("Tables written (Parquet)", 1)[1].split("\n\n", 2)[1]
    listed = set(re.findall(r"`([a-z_]+)`", section))
    assert {table.name for table in OUTPUT_TABLES if table is not RECORDS} <= listed
    assert "--write-records" in section
