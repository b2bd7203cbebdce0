"""Which Python the workers run; files to ship that are not there, a missing Java runtime (with what
to install), an output that cannot be written and a master Spark does not know: refused before Spark
starts, in one line, as are PATHS that hold no metadata log. A configuration Spark's JVM refuses ends
in one line too."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from console_scripts import console_script

from kafka_admin_kraft.pipeline.session import (
    STREAM_BUFFER_BYTES,
    UNCHECKED_ARROW,
    JavaNotFoundError,
    find_java,
    uncheck_arrow,
    worker_python,
)
from pipeline.conftest import Damaged


def test_python_workers_stream_through_a_buffer_larger_than_sparks_default(spark: Any) -> None:
    assert spark.sparkContext.getConf().get("spark.buffer.size") == str(STREAM_BUFFER_BYTES) != "65536"


def test_sparks_jvm_reads_arrow_vectors_without_bounds_checks(spark: Any) -> None:
    assert spark._jvm.org.apache.arrow.memory.BoundsChecking.BOUNDS_CHECKING_ENABLED is False


def test_arrow_checks_stay_as_the_environment_or_the_configuration_gives_them() -> None:
    settings: dict[str, str] = {}
    environ: dict[str, str] = {}
    uncheck_arrow(settings, environ)
    assert environ == {UNCHECKED_ARROW: "true"}
    assert settings == {f"spark.executorEnv.{UNCHECKED_ARROW}": "true"}
    settings, environ = {}, {UNCHECKED_ARROW: "false"}
    uncheck_arrow(settings, environ)
    assert environ == {UNCHECKED_ARROW: "false"}
    assert settings == {f"spark.executorEnv.{UNCHECKED_ARROW}": "false"}
    settings, environ = {f"spark.executorEnv.{UNCHECKED_ARROW}": "false"}, {}
    uncheck_arrow(settings, environ)
    assert settings == {f"spark.executorEnv.{UNCHECKED_ARROW}": "false"}


def test_worker_python_is_the_setting_then_the_variable_then_this_interpreter() -> None:
    setting = {"spark.pyspark.python": "/opt/py/bin/python3"}
    variable = {"PYSPARK_PYTHON": "./environment/bin/python"}
    assert worker_python(setting, variable) == "/opt/py/bin/python3"
    assert worker_python({}, variable) == "./environment/bin/python"
    assert worker_python({}, {}) == sys.executable


@pytest.mark.parametrize(
    ("option", "value"),
    [("--py-files", "dist/missing-0.1.0-py3-none-any.whl"), ("--archives", "missing-env.tar.gz#environment"),
     ("--archives", "file:///nowhere/env.tar.gz")],
)
def test_a_missing_file_to_ship_is_an_error_before_spark_starts(
    damaged: Damaged, tmp_path: Path, option: str, value: str
) -> None:
    try:
        find_java()
    except JavaNotFoundError as exc:
        pytest.skip(str(exc))
    logs = damaged.log_dir
    result = subprocess.run(
        [console_script("kafka-metadata-audit"), option, value, "-o", str(tmp_path / "out"), str(logs)],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )
    assert result.returncode == 2, result.stderr
    assert f"Error: {value}: no such file to ship to the workers" in result.stderr
    assert "Traceback" not in result.stderr


def test_missing_java_is_reported_with_what_to_install(damaged: Damaged, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    os.symlink(sys.executable, bin_dir / "python")
    if shutil.which("java", path=str(bin_dir)):
        pytest.skip("java next to python")
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "PYSPARK_PYTHON")}
    env["PATH"] = str(bin_dir)
    logs = damaged.log_dir
    result = subprocess.run(
        [sys.executable, "-m", "kafka_admin_kraft_cli.kafka_metadata_audit", "-o", str(tmp_path / "out"),
         str(logs)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert result.returncode == 2, result.stderr
    assert "openjdk-17-jre-headless" in result.stderr and "JAVA_HOME" in result.stderr


def _audit(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([console_script("kafka-metadata-audit"), *args], capture_output=True, text=True,
                          timeout=120, cwd=cwd, env=env)


@pytest.mark.parametrize(("args", "message"), [
    (["-o", "/dev/null/audit"], "--output /dev/null/audit: cannot create the directory: Not a directory"),
    (["-o", "out", "--report-dir", "/dev/null/report"],
     "--report-dir /dev/null/report: cannot create the directory: Not a directory"),
])
def test_an_output_that_cannot_be_written_is_refused_before_spark_starts(
        damaged: Damaged, tmp_path: Path, args: list[str], message: str) -> None:
    result = _audit(*args, str(damaged.log_dir), cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (1, "", f"Error: {message}\n")


@pytest.mark.parametrize("value", ["0", "-1", "64MiB"])
def test_a_split_size_below_one_byte_or_not_a_number_is_refused_before_spark_starts(
        damaged: Damaged, tmp_path: Path, value: str) -> None:
    result = _audit("--split-bytes", value, "-o", "out", str(damaged.log_dir), cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert "Invalid value for '--split-bytes'" in result.stderr and value in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "out").exists()


def test_a_master_spark_does_not_know_is_one_line_naming_it(damaged: Damaged, tmp_path: Path) -> None:
    result = _audit("--master", "bogus://x", "-o", "out", str(damaged.log_dir), cwd=tmp_path)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == ("Error: master 'bogus://x' is not one Spark knows: give yarn, "
                             "spark://HOST:PORT, k8s://https://HOST:PORT, local, local[N] or local[*]\n")
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_a_spark_configuration_its_jvm_refuses_ends_in_one_line_not_a_traceback(
        damaged: Damaged, tmp_path: Path) -> None:
    """A bad master in Spark's own configuration: the JVM says why and exits; the tool says so once."""
    try:
        find_java()
    except JavaNotFoundError as exc:
        pytest.skip(str(exc))
    env = {**os.environ, "PYSPARK_SUBMIT_ARGS": "--master bogus://x pyspark-shell"}
    result = _audit("-o", "out", str(damaged.log_dir), cwd=tmp_path, env=env)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert "Master must either be yarn or start with spark, k8s, or local" in result.stderr
    assert result.stderr.splitlines()[-1] == (
        "Error: Spark's JVM exited while starting (with the master of the Spark configuration); its reason "
        "is printed above: check the master, the --conf settings, spark-defaults.conf and "
        "PYSPARK_SUBMIT_ARGS")


NO_LOG = ("give log directories (holding meta.properties and __cluster_metadata-0), a __cluster_metadata-0 "
          "directory, or directories that hold them")


@pytest.mark.parametrize("content", ["nothing", "symbolic link loops", "an unformatted directory"])
def test_paths_that_hold_no_metadata_log_are_refused_before_spark_starts(tmp_path: Path,
                                                                         content: str) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    if content == "symbolic link loops":
        (logs / "a").symlink_to(logs / "b")
        (logs / "b").symlink_to(logs / "a")
        (logs / "c").symlink_to(logs)
    elif content == "an unformatted directory":
        (logs / "broker" / "topic-0").mkdir(parents=True)
        (logs / "broker" / "topic-0" / "00000000000000000000.log").write_bytes(b"")
    result = _audit("-o", "out", "logs", cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (
        1, "", f"Error: no KRaft metadata log under logs: {NO_LOG}\n")


def test_a_path_without_a_metadata_log_beside_others_is_named_and_left_out(
        damaged: Damaged, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from kafka_admin_kraft_cli.kafka_metadata_audit import _check_logs_found

    (tmp_path / "empty").mkdir()
    _check_logs_found([str(damaged.log_dir), str(tmp_path / "empty")])
    warning = f"Warning: no KRaft metadata log under {tmp_path / 'empty'}; it is left out\n"
    assert capsys.readouterr().err == warning
