"""Starting Spark for the audit: Java check, Python of the workers, master selection.

PySpark drives a JVM, so a Java runtime (17 or newer for Spark 4) must be installed; without one
:func:`find_java` raises :class:`JavaNotFoundError` saying what to install instead of PySpark's
gateway error. Workers run ``PYSPARK_PYTHON``; unless it is set, it is set to this interpreter so
that they import this package. The master comes from the argument, else from the standard Spark
configuration (``spark-submit --master``, ``spark-defaults.conf``, ``PYSPARK_SUBMIT_ARGS``), else
``local[*]``.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER: Final = "local[*]"
JAVA_HELP: Final = (
    "Spark needs a Java runtime, version 17 or newer, and none was found (JAVA_HOME is {java_home}; "
    "no 'java' on PATH). Install one, for example:\n"
    "  Debian/Ubuntu:  apt-get install openjdk-17-jre-headless\n"
    "  Fedora/RHEL:    dnf install java-17-openjdk-headless\n"
    "  macOS:          brew install openjdk@17\n"
    "or point JAVA_HOME at an existing installation."
)


class JavaNotFoundError(RuntimeError):
    """No Java runtime for Spark."""


def find_java(environ: Mapping[str, str] | None = None) -> str:
    """The ``java`` executable Spark will run: ``$JAVA_HOME/bin/java``, else ``java`` on PATH."""
    env = os.environ if environ is None else environ
    java_home = env.get("JAVA_HOME")
    if java_home:
        candidate = Path(java_home) / "bin" / "java"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which("java", path=env.get("PATH", ""))
    if found:
        return found
    raise JavaNotFoundError(JAVA_HELP.format(java_home=repr(java_home) if java_home else "not set"))


def _python_for_workers() -> None:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)


def spark_session(
    master: str | None = None,
    *,
    app_name: str = "kafka-metadata-audit",
    conf: Mapping[str, str] | None = None,
) -> SparkSession:
    """A SparkSession with the ``kraft-metadata`` data source registered."""
    find_java()
    _python_for_workers()
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    from kafka_admin_kraft.pipeline.source import register

    settings = dict(conf or {})
    builder = SparkSession.builder.appName(app_name)
    for key, value in settings.items():
        builder = builder.config(key, value)
    if master:
        builder = builder.master(master)
    elif "spark.master" not in settings:
        # Launch the gateway to see what spark-submit and spark-defaults.conf configured.
        SparkContext._ensure_initialized(conf=SparkConf(loadDefaults=False).setAll(list(settings.items())))
        if not SparkConf().contains("spark.master"):
            builder = builder.master(DEFAULT_MASTER)
    builder = builder.config(
        "spark.ui.showConsoleProgress", settings.get("spark.ui.showConsoleProgress", "false")
    )
    spark = builder.getOrCreate()
    register(spark)
    return spark
