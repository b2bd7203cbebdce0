"""Starting Spark for the audit: Java check, Python of the workers, code shipped to them, master.

PySpark drives a JVM, so a Java runtime (17 or newer for Spark 4) must be installed; without one
:func:`find_java` raises :class:`JavaNotFoundError` saying what to install instead of PySpark's
gateway error.

Python workers run ``spark.pyspark.python`` when it is given, else ``PYSPARK_PYTHON``, else this
interpreter (right for ``local[*]`` and for clusters whose nodes have it at the same path). The
``kraft-metadata`` data source plans its splits in a Python worker of the driver, so that Python is
started on the driver's machine too. Workers without this package get it shipped: ``py_files``
(what ``spark-submit --py-files`` ships; a pure-Python wheel is accepted too) or ``archives``
(``spark.archives``: a packed environment unpacked in each executor's working directory).

The master comes from the argument, else from the standard Spark configuration (``spark-submit
--master``, ``spark-defaults.conf``, ``PYSPARK_SUBMIT_ARGS``), else ``local[*]``.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER: Final = "local[*]"
STREAM_BUFFER_BYTES: Final = 1 << 20
"""``spark.buffer.size`` unless the configuration gives one: the buffer of the streams between an
executor and its Python workers (Spark's default 64 KiB). The ``kraft-metadata`` source sends a few
hundred bytes of Arrow a row, which a 64 KiB buffer cuts into a system call or two per column and
batch on both sides; with 1 MiB a fresh session's first read of a fleet was about 4% faster in the
median of five pairs (BENCHMARKS.md)."""
UNCHECKED_ARROW: Final = "ARROW_ENABLE_UNSAFE_MEMORY_ACCESS"
"""The variable by which Arrow Java (``BoundsChecking``) drops the bounds and reference-count check
of every buffer access; ``true`` for Spark's JVMs unless the environment or the settings given to
:func:`spark_session` (``spark.executorEnv.*``) give it. Spark turns a Python data source's Arrow
batches into rows value by value, each after a null check that reads the validity buffer through
such an access, so the check costs once per column of every row (the gain: BENCHMARKS.md, "Arrow read
without bounds checks"). The buffers are those Arrow's own stream reader loaded from Spark's own
Python worker. The system property
``arrow.enable_unsafe_memory_access=false`` (in ``spark.driver.extraJavaOptions``) takes precedence
and keeps the checks."""
JAVA_HELP: Final = (
    "Spark needs a Java runtime, version 17 or newer, and none was found (JAVA_HOME is {java_home}; "
    "no 'java' on PATH). Install one, for example:\n"
    "  Debian/Ubuntu:  apt-get install openjdk-17-jre-headless\n"
    "  Fedora/RHEL:    dnf install java-17-openjdk-headless\n"
    "  macOS:          brew install openjdk@17\n"
    "or point JAVA_HOME at an existing installation."
)


class SparkSetupError(RuntimeError):
    """Spark cannot be started as asked; the message says what to change."""


class JavaNotFoundError(SparkSetupError):
    """No Java runtime for Spark."""


MASTER_PREFIXES: Final = ("spark", "k8s", "local")
"""What a master URL other than ``yarn`` starts with: Spark 4's ``SparkSubmitArguments`` refuses any
other, and its JVM exits before PySpark's gateway starts."""


def check_master(master: str) -> None:
    """Refuse a master URL Spark refuses, before its JVM starts (and prints a Java stack trace)."""
    if master != "yarn" and not master.startswith(MASTER_PREFIXES):
        raise SparkSetupError(
            f"master {master!r} is not one Spark knows: give yarn, spark://HOST:PORT, "
            "k8s://https://HOST:PORT, local, local[N] or local[*]"
        )


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


def worker_python(settings: Mapping[str, str], environ: Mapping[str, str]) -> str:
    """The Python that Python workers run: ``spark.pyspark.python``, else ``PYSPARK_PYTHON``, else
    this interpreter. PySpark started from a plain interpreter reads only the variable; Spark
    documents the setting as taking precedence, as ``spark-submit`` makes it."""
    return settings.get("spark.pyspark.python") or environ.get("PYSPARK_PYTHON") or sys.executable


def uncheck_arrow(settings: dict[str, str], environ: MutableMapping[str, str]) -> None:
    """Give :data:`UNCHECKED_ARROW` to the driver's JVM (started with ``environ``) and to executors
    elsewhere (``settings``), ``true`` unless ``environ`` gives it."""
    environ.setdefault(UNCHECKED_ARROW, "true")
    settings.setdefault(f"spark.executorEnv.{UNCHECKED_ARROW}", environ[UNCHECKED_ARROW])


def _local_file(entry: str) -> Path | None:
    """The file on this machine that a shipped entry names (``#alias`` dropped); None for a URI
    Spark fetches elsewhere (``hdfs:``, ``https:``, ...) or ``local:`` (already on every node)."""
    parts = urlsplit(entry)
    if parts.scheme == "file":
        return Path(parts.path)
    if parts.scheme == "":
        return Path(entry.split("#", 1)[0])
    return None


def _check_shipped(py_files: Sequence[str], archives: Sequence[str]) -> None:
    for entry in (*py_files, *archives):
        path = _local_file(entry)
        if path is not None and not path.is_file():
            raise SparkSetupError(f"{entry}: no such file to ship to the workers")


def _importable(py_file: str) -> str:
    """``py_file``, or for a local wheel a copy named ``.zip``: a pure-Python wheel imports as it is
    from ``sys.path``, but PySpark puts only ``.zip``, ``.egg`` and ``.jar`` files there
    (``SparkContext.PACKAGE_EXTENSIONS``)."""
    path = _local_file(py_file)
    if path is None or path.suffix.lower() != ".whl":
        return py_file
    directory = tempfile.mkdtemp(prefix="kraft-audit-py-files-")
    atexit.register(shutil.rmtree, directory, True)  # Spark serves the copy until the session stops
    copy = Path(directory) / f"{path.stem}.zip"
    shutil.copyfile(path, copy)
    return str(copy)


@contextmanager
def _gateway_exit_explained(master: str | None) -> Iterator[None]:
    """PySpark's JAVA_GATEWAY_EXITED as one line: Spark's JVM refused its settings (master URL,
    spark-defaults.conf, PYSPARK_SUBMIT_ARGS) and printed why above."""
    from pyspark.errors import PySparkRuntimeError

    try:
        yield
    except PySparkRuntimeError as exc:
        if exc.getCondition() != "JAVA_GATEWAY_EXITED":
            raise
        where = f"master {master!r}" if master else "the master of the Spark configuration"
        raise SparkSetupError(
            f"Spark's JVM exited while starting (with {where}); its reason is printed above: check the "
            "master, the --conf settings, spark-defaults.conf and PYSPARK_SUBMIT_ARGS"
        ) from None


def spark_session(
    master: str | None = None,
    *,
    app_name: str = "kafka-metadata-audit",
    conf: Mapping[str, str] | None = None,
    py_files: Sequence[str] = (),
    archives: Sequence[str] = (),
) -> SparkSession:
    """A SparkSession with the ``kraft-metadata`` data source registered, ``py_files`` on the
    Python path of every worker and ``archives`` unpacked beside every executor."""
    find_java()
    _check_shipped(py_files, archives)
    settings = dict(conf or {})
    for given in (master, settings.get("spark.master")):
        if given:
            check_master(given)
    if archives:
        settings["spark.archives"] = ",".join(filter(None, [settings.get("spark.archives"), *archives]))
    os.environ["PYSPARK_PYTHON"] = worker_python(settings, os.environ)
    uncheck_arrow(settings, os.environ)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    from kafka_admin_kraft.pipeline.source import register

    builder = SparkSession.builder.appName(app_name)
    for key, value in settings.items():
        builder = builder.config(key, value)
    with _gateway_exit_explained(master or settings.get("spark.master")):
        if master:
            builder = builder.master(master)
        elif "spark.master" not in settings:
            # Launch the gateway to see what spark-submit and spark-defaults.conf configured.
            SparkContext._ensure_initialized(conf=SparkConf(loadDefaults=False).setAll(list(settings.items())))
            if not SparkConf().contains("spark.master"):
                builder = builder.master(DEFAULT_MASTER)
        builder = builder.config(
            "spark.ui.showConsoleProgress", settings.get("spark.ui.showConsoleProgress", "false")
        ).config("spark.buffer.size", settings.get("spark.buffer.size", str(STREAM_BUFFER_BYTES)))
        spark = builder.getOrCreate()
    for py_file in py_files:
        # before register(): the data source's Python function carries the includes known then
        spark.sparkContext.addPyFile(_importable(py_file))
    register(spark)
    return spark
