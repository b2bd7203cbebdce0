"""The audit's tables against their declarations in ``pipeline.schema``, and the audit's ways of
bringing rows back: the errors beyond what it collects, and how many Spark jobs it runs."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from kafka_admin_kraft.pipeline import audit as audit_module
from kafka_admin_kraft.pipeline.audit import DRIVER_TABLES, run_audit
from kafka_admin_kraft.pipeline.schema import DIVERGENCE, ERRORS, OUTPUT_TABLES, RECORDS
from pipeline.conftest import Audit, Damaged

README = Path(__file__).resolve().parents[2] / "README.md"
MOST_JOBS = 26
"""Spark jobs of an audit of the damaged directory: 22 with PySpark 4.3, whose adaptive execution
runs every shuffle, broadcast and cached result as a job of its own. More means that a step that
needs one collect came back as several jobs (each costs 0.1 s to 1 s however small)."""


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


def test_errors_beyond_those_collected_are_counted_and_the_tables_unchanged(
    spark: Any, damaged: Damaged, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tracker = spark.sparkContext.statusTracker()
    before = set(tracker.getJobIdsForGroup(None))
    whole = run_audit(spark, [str(damaged.log_dir)], os.fspath(tmp_path / "whole"))
    jobs = len(set(tracker.getJobIdsForGroup(None)) - before)
    assert jobs <= MOST_JOBS
    assert whole.error_count == len(whole.errors) == 2

    monkeypatch.setattr(audit_module, "ERRORS_COLLECTED", 1)
    capped = run_audit(spark, [str(damaged.log_dir)], os.fspath(tmp_path / "capped"))
    assert capped.error_count == 2 and capped.errors == whole.errors[:1]
    for name, rows in whole.tables.items():
        if name != "replicas":
            assert capped.tables[name] == rows, name
    replica = next(r for r in capped.tables["replicas"] if r["log_dir"] == str(damaged.log_dir))
    assert replica["errors"] == 1  # a directory's errors are counted among those collected
