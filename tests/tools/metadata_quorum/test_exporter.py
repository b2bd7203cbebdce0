"""`kafka-metadata-quorum exporter`'s refusals: a bad --listen address, and a port already in use. What
/metrics serves: test_metrics."""

from __future__ import annotations

import socket
import subprocess

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
