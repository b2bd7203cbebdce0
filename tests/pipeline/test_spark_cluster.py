"""The audit on a Spark standalone cluster, a master and two one-core workers on 127.0.0.1 started
from the PySpark installation, writes the same Parquet tables and report as a ``local[*]`` run over
the same logs, with executors on both workers. Each test follows one way the README's "Running the
audit on a Spark cluster" gives the workers this package, with workers whose Python cannot import it:

* ``kafka-metadata-audit --py-files`` with a wheel built by ``python -m build --wheel``, workers
  running a Python that has only pyarrow, numpy and crc32c;
* ``spark-submit`` running the tool's module, with a virtual environment packed by venv-pack
  shipped with ``--archives`` and its Python as the workers'.
"""

from __future__ import annotations

import importlib.metadata
import json
import shutil
import signal
import subprocess
import sys
import time
import venv
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from console_scripts import console_script

from pipeline.conftest import Damaged
from pipeline.scenario import Truth
from pipeline.spark_standalone import (
    HOST,
    StandaloneCluster,
    clean_environment,
    signal_group,
    standalone_cluster,
)

ROOT = Path(__file__).resolve().parents[2]
NOT_SHIPPED = {".git", ".venv", "venv", "build", "dist", "__pycache__", ".pytest_cache", ".mypy_cache",
               ".ruff_cache", ".hypothesis", "spark-warehouse", "metastore_db"}
WORKER_DEPENDENCIES = ("pyarrow", "numpy", "crc32c")
"""What the README says workers need besides Python and Spark when the package itself is shipped."""
JAVA_OPTIONS = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1"
SETTINGS = {
    "spark.sql.shuffle.partitions": "2",
    "spark.ui.enabled": "false",
    "spark.driver.host": HOST,
    "spark.driver.bindAddress": HOST,
    "spark.driver.extraJavaOptions": JAVA_OPTIONS,
    "spark.executor.extraJavaOptions": JAVA_OPTIONS,
    "spark.executor.memory": "512m",
    # One executor on each worker, both registered before the first job is scheduled.
    "spark.cores.max": "2",
    "spark.scheduler.minRegisteredResourcesRatio": "1.0",
    "spark.scheduler.maxRegisteredResourcesWaitingTime": "60s",
    "spark.locality.wait": "0",
}
"""Every run, local or not, with the same settings: only the master differs."""
PYTHON_TASK = "Starting Python task execution"
"""What Spark's Python runners log on an executor for each task they hand to Python."""
RUN_TIMEOUT = 300.0
AUDIT_OPTIONS = ("--write-records", "--split-bytes", str(16 * 1024))
"""Every run's options: the logs here hold a few hundred KB, which the default split size reads in
one Spark task; small splits give every executor reads of its own, the Python tasks looked for."""


def _conf_options() -> list[str]:
    return [option for key, value in SETTINGS.items() for option in ("--conf", f"{key}={value}")]


def _run(command: Sequence[str], env: Mapping[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``command`` in a process group of its own, ended whatever happens (the driver's JVM is a
    child of the Python process)."""
    process = subprocess.Popen(list(command), env=dict(env), cwd=cwd, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        out, err = process.communicate(timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        signal_group(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        raise AssertionError(f"{command[0]} did not finish in {RUN_TIMEOUT:.0f}s\n{err[-4000:]}") from None
    finally:
        signal_group(process.pid, signal.SIGKILL)
    return subprocess.CompletedProcess(list(command), process.returncode, out, err)


def _driver_environment(**extra: str) -> dict[str, str]:
    return {**clean_environment(), "SPARK_LOCAL_IP": HOST, **extra}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneCluster]:
    pytest.importorskip("pyspark")
    from kafka_admin_kraft.pipeline.session import JavaNotFoundError, find_java

    try:
        find_java()
    except JavaNotFoundError as exc:
        pytest.skip(str(exc))
    with standalone_cluster(tmp_path_factory.mktemp("standalone")) as started:
        yield started


@pytest.fixture(scope="module")
def inputs(scenario: Truth, damaged: Damaged) -> list[str]:
    """The reference quorum's logs, the copy taken before a truncation, and a damaged directory."""
    return [str(scenario.root / "cluster"), str(scenario.captured_dir), str(damaged.log_dir)]


@pytest.fixture(scope="module")
def local_output(
    cluster: StandaloneCluster, inputs: list[str], tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """The ``local[*]`` run every cluster run is compared with (the workers register meanwhile)."""
    work = tmp_path_factory.mktemp("local-run")
    output = work / "audit"
    result = _run([console_script("kafka-metadata-audit"), "--master", "local[*]", *_conf_options(),
                   *AUDIT_OPTIONS, "-o", str(output), *inputs], _driver_environment(), work)
    assert result.returncode == 0, result.stderr[-4000:]
    cluster.wait_for_workers()
    return output


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``python -m build --wheel`` in a copy of the checkout (the build writes into the tree)."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    shutil.copytree(ROOT, source, ignore=lambda _, names: {
        name for name in names if name in NOT_SHIPPED or name.endswith(".egg-info")})
    built = subprocess.run([sys.executable, "-m", "build", "--wheel"], cwd=source, capture_output=True,
                           text=True, timeout=300)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (found,) = (source / "dist").glob("kafka_admin_kraft-*-py3-none-any.whl")
    return found


def _environment_with(target: Path, distributions: Sequence[str]) -> Path:
    """A virtual environment of the base interpreter holding ``distributions`` as this one has them
    installed (linked: nothing is downloaded) and nothing else; its ``bin/python``."""
    venv.EnvBuilder(with_pip=False, symlinks=True).create(target)
    python = target / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               capture_output=True, text=True, check=True).stdout.strip())
    for name in distributions:
        distribution = importlib.metadata.distribution(name)
        installed = Path(str(distribution.locate_file("")))
        for top in sorted({file.parts[0] for file in distribution.files or [] if file.parts[0] != ".."}):
            (site / top).symlink_to(installed / top)
    return python


def _imports(python: Path, module: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(python), "-c", f"import {module}"], capture_output=True, text=True,
                          cwd=cwd, env=clean_environment(), timeout=60)


@pytest.fixture(scope="module")
def worker_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Python of workers that have the dependencies but not this package."""
    work = tmp_path_factory.mktemp("worker-python")
    python = _environment_with(work / "env", WORKER_DEPENDENCIES)
    assert _imports(python, ", ".join(WORKER_DEPENDENCIES), work).returncode == 0
    missing = _imports(python, "kafka_admin_kraft", work)
    assert missing.returncode != 0 and "No module named 'kafka_admin_kraft'" in missing.stderr, missing
    return python


def _tables(output: Path) -> dict[str, Any]:
    import pyarrow.parquet as pq

    tables: dict[str, Any] = {}
    for entry in sorted(output.iterdir()):
        if entry.is_dir():
            table = pq.read_table(entry)
            rows = sorted(table.to_pylist(), key=lambda row: json.dumps(row, sort_keys=True, default=str))
            tables[entry.name] = (table.schema, rows)
    return tables


def _assert_same_audit(local: Path, clustered: Path) -> None:
    assert sorted(p.name for p in clustered.iterdir()) == sorted(p.name for p in local.iterdir())
    for name in ("report.md", "timeline.svg"):
        assert (clustered / name).read_text() == (local / name).read_text(), name
    local_tables, cluster_tables = _tables(local), _tables(clustered)
    for name in ("records", "voter_sets", "errors", "divergence"):  # these logs give rows to each
        assert local_tables[name][1], f"{name}: the local run wrote no rows"
    for name, (schema, rows) in local_tables.items():
        cluster_schema, cluster_rows = cluster_tables[name]
        assert cluster_schema.equals(schema), name
        assert cluster_rows == rows, name


def _assert_ran_on_both_workers(cluster: StandaloneCluster, apps_before: set[str]) -> list[Path]:
    """The one application run since ``apps_before`` had an executor on each worker, and each ran
    Python tasks; the executors' working directories. The master and the workers learn that the
    application ended a moment after its driver exits, so their state is polled for a while."""
    deadline = time.monotonic() + 30
    while True:
        state = cluster.state()
        apps = [a for a in state["completedapps"] if a["id"] not in apps_before]
        hosting = [w for w in state["workers"] if apps and any(
            e["appid"] == apps[0]["id"] for e in cluster.worker_state(w)["finishedexecutors"])]
        if len(hosting) == 2 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert len(apps) == 1, f"applications finished since: {apps}\n{cluster.logs()}"
    (app,) = apps
    assert app["state"] == "FINISHED", app
    assert len(hosting) == 2, f"executors of {app['id']} ran on {len(hosting)} worker(s)\n{cluster.logs()}"
    directories = sorted(cluster.root.glob(f"worker-*/{app['id']}/*"))
    assert sorted({d.parent.parent.name for d in directories}) == ["worker-1", "worker-2"], directories
    for directory in directories:
        assert PYTHON_TASK in (directory / "stderr").read_text(), f"no Python task in {directory}"
    return directories


def _completed_apps(cluster: StandaloneCluster) -> set[str]:
    return {app["id"] for app in cluster.state()["completedapps"]}


def _check(result: subprocess.CompletedProcess[str], cluster: StandaloneCluster) -> None:
    assert result.returncode == 0, f"{result.stderr[-6000:]}\n{cluster.logs()}"
    assert "Audited " in result.stdout, result.stdout


def test_a_wheel_shipped_with_py_files(
    cluster: StandaloneCluster, local_output: Path, inputs: list[str], wheel: Path, worker_python: Path,
    tmp_path: Path,
) -> None:
    before = _completed_apps(cluster)
    output = tmp_path / "audit"
    result = _run([console_script("kafka-metadata-audit"), "--master", cluster.url, *_conf_options(),
                   "--py-files", str(wheel), *AUDIT_OPTIONS, "-o", str(output), *inputs],
                  _driver_environment(PYSPARK_PYTHON=str(worker_python)), tmp_path)
    _check(result, cluster)
    _assert_same_audit(local_output, output)
    for directory in _assert_ran_on_both_workers(cluster, before):
        assert (directory / f"{wheel.stem}.zip").is_file(), sorted(directory.iterdir())


def test_spark_submit_with_a_packed_environment(
    cluster: StandaloneCluster, local_output: Path, inputs: list[str], wheel: Path, tmp_path: Path,
) -> None:
    environment = tmp_path / "audit-env"
    python = _environment_with(environment, WORKER_DEPENDENCIES)
    installed = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
                                "--no-deps", "--no-index", str(wheel)], capture_output=True, text=True,
                               timeout=300)
    assert installed.returncode == 0, installed.stderr
    packed = subprocess.run([sys.executable, "-m", "venv_pack", "-p", str(environment), "-o",
                             str(tmp_path / "audit-env.tar.gz")], capture_output=True, text=True, timeout=300)
    assert packed.returncode == 0, packed.stdout + packed.stderr
    module = subprocess.run([sys.executable, "-c", "import kafka_admin_kraft_cli.kafka_metadata_audit as m; "
                             "print(m.__file__)"], capture_output=True, text=True, check=True, cwd=tmp_path)
    # the environment's Python on the workers, the one with the tool installed for the driver
    environ = _driver_environment(PYSPARK_PYTHON="./audit-env/bin/python",
                                  PYSPARK_DRIVER_PYTHON=sys.executable)
    before = _completed_apps(cluster)
    output = tmp_path / "audit"
    result = _run([console_script("spark-submit"), "--master", cluster.url, *_conf_options(),
                   "--archives", "audit-env.tar.gz#audit-env", module.stdout.strip(),
                   *AUDIT_OPTIONS, "-o", str(output), *inputs], environ, tmp_path)
    _check(result, cluster)
    _assert_same_audit(local_output, output)
    for directory in _assert_ran_on_both_workers(cluster, before):
        assert (directory / "audit-env" / "bin" / "python").exists(), sorted(directory.iterdir())
