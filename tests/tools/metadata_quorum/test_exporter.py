"""`kafka-metadata-quorum exporter`'s refusals: a bad --listen address, a port already in use, a bad
--web-config-file. What /metrics serves: test_metrics; the web configuration: test_web_config and
test_web_server."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from console_scripts import console_script

from kafka_admin_kraft_cli.metadata_quorum import main


@pytest.mark.parametrize("listen", ["nonsense", "127.0.0.1:70000", "127.0.0.1:", "127.0.0.1:-1"])
def test_a_bad_listen_address_is_a_parse_error(listen: str) -> None:
    args = ["--bootstrap-controller", "127.0.0.1:1", "exporter", "--listen", listen]
    result = CliRunner().invoke(main, args, prog_name="kafka-metadata-quorum")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (f"kafka-metadata-quorum exporter: error: Invalid value for "
                                              f"'--listen': expected HOST:PORT, got '{listen}'")


def test_a_port_in_use_is_a_terse_error() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run(
            [console_script("kafka-metadata-quorum"), "--bootstrap-controller", "127.0.0.1:1", "exporter",
             "--listen", f"127.0.0.1:{port}"], capture_output=True, text=True, timeout=30)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == f"Cannot listen on 127.0.0.1:{port}: Address already in use\n"


def test_a_bad_web_config_file_is_one_line_before_anything_listens(tmp_path: Path) -> None:
    web = tmp_path / "web.yml"
    web.write_text("basic_auth_users:\n  prometheus: plain-text-password\n")
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    result = subprocess.run(
        [console_script("kafka-metadata-quorum"), "--bootstrap-controller", "127.0.0.1:1", "exporter",
         "--listen", f"127.0.0.1:{port}", "--web-config-file", str(web)], capture_output=True, text=True,
        timeout=30)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (f"web config file {web}: basic_auth_users 'prometheus': not a bcrypt hash (make "
                             "one with: htpasswd -nBC 10 \"\" | tr -d ':\\n')\n")
    missing = subprocess.run(
        [console_script("kafka-metadata-quorum"), "--bootstrap-controller", "127.0.0.1:1", "exporter",
         "--web-config-file", str(tmp_path / "none.yml")], capture_output=True, text=True, timeout=30)
    assert (missing.returncode, missing.stderr) == (
        1, f"cannot read the web config file {tmp_path / 'none.yml'}: No such file or directory\n")
