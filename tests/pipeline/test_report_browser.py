"""The HTML report of the audit of the scenario's real quorum, opened in a real headless Chromium: the
page logs nothing on the browser's console, the timeline is an SVG laid out on the first screen with
its epoch bars inside it, and the bars' titles carry every epoch and leader the driver saw."""

from __future__ import annotations

import functools
import html
import json
import re
import struct
import subprocess
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from external_tools import external_tool

from pipeline.conftest import Audit

VIEW = (1200, 900)
CONSOLE = re.compile(r":CONSOLE[:(]\d+\)?\] (.*)")
"""How Chromium logs a console message on stderr (``--enable-logging=stderr``)."""
PROBE = """<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>
<pre id="probe">the report did not load</pre>
<iframe id="report" src="report.html" width="%(width)d" height="%(height)d"></iframe>
<script>
document.getElementById("report").addEventListener("load", function () {
  var page = this.contentDocument, out = {svgs: page.querySelectorAll("svg").length};
  var svg = page.querySelector("svg");
  if (svg) {
    var box = svg.getBoundingClientRect(), style = page.defaultView.getComputedStyle(svg);
    out.svg = {width: box.width, height: box.height, top: box.top, namespace: svg.namespaceURI,
               display: style.display, visibility: style.visibility};
    out.bars = Array.from(svg.querySelectorAll("rect > title")).map(function (title) {
      var bar = title.parentNode.getBoundingClientRect();
      return {title: title.textContent, width: bar.width, height: bar.height,
              inside: bar.left >= box.left && bar.right <= box.right + 0.5 && bar.top >= box.top
                      && bar.bottom <= box.bottom};
    });
    out.titles = Array.from(svg.querySelectorAll("title")).map(function (t) { return t.textContent; });
  }
  document.getElementById("probe").textContent = JSON.stringify(out);
});
</script></body></html>
"""
"""A page beside the report that opens it in a frame (same origin, served over HTTP) and writes what
the browser laid out into its own DOM, which ``--dump-dom`` prints."""


def chromium(*args: str, profile: Path) -> subprocess.CompletedProcess[str]:
    binary = external_tool("chromium", "chromium-browser", package="chromium")
    return subprocess.run(
        [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--enable-logging=stderr", "--v=0", f"--user-data-dir={profile}", *args],
        capture_output=True, text=True, timeout=120, check=False)


def console_messages(stderr: str) -> list[str]:
    return [match.group(1) for match in CONSOLE.finditer(stderr)]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A directory served over HTTP on 127.0.0.1, and its URL."""
    root = tmp_path / "site"
    root.mkdir()
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_console_messages_of_a_page_are_seen(tmp_path: Path) -> None:
    """The check below would pass on nothing if Chromium's console never reached stderr."""
    page = tmp_path / "bad.html"
    page.write_text('<!DOCTYPE html><html><body><script>console.error("boom"); missing();</script>'
                    "</body></html>")
    result = chromium("--dump-dom", page.as_uri(), profile=tmp_path / "profile")
    assert result.returncode == 0, result.stderr[-2000:]
    messages = console_messages(result.stderr)
    assert '"boom", source: ' + page.as_uri() + " (1)" in messages
    assert any("Uncaught ReferenceError: missing is not defined" in m for m in messages)


def test_the_html_report_renders_in_a_browser_with_its_timeline(audit: Audit, tmp_path: Path,
                                                                 served: tuple[Path, str]) -> None:
    from kafka_admin_kraft.pipeline.report import write_report

    root, url = served
    report = write_report(audit.result, root, "html")
    loaded = chromium("--dump-dom", report.as_uri(), profile=tmp_path / "profile")
    assert loaded.returncode == 0, loaded.stderr[-2000:]
    assert console_messages(loaded.stderr) == []
    assert "<h1>KRaft metadata audit</h1>" in loaded.stdout

    (root / "probe.html").write_text(PROBE % {"width": VIEW[0], "height": VIEW[1]})
    probed = chromium("--dump-dom", f"{url}/probe.html", profile=tmp_path / "profile")
    assert probed.returncode == 0, probed.stderr[-2000:]
    assert console_messages(probed.stderr) == []
    found = re.search(r'<pre id="probe">(.*?)</pre>', probed.stdout, re.S)
    assert found is not None, probed.stdout[-2000:]
    seen = json.loads(html.unescape(found.group(1)))
    assert seen["svgs"] == 1
    svg = seen["svg"]
    assert svg["namespace"] == "http://www.w3.org/2000/svg"
    assert svg["display"] != "none" and svg["visibility"] == "visible"
    assert svg["width"] > 500 and svg["height"] > 100 and 0 <= svg["top"] < VIEW[1] - svg["height"]
    bars = seen["bars"]
    assert bars and all(bar["inside"] and bar["width"] >= 2 and bar["height"] > 0 for bar in bars)
    for epoch, leader in audit.truth.leaders:
        assert any(bar["title"].startswith(f"epoch {epoch} leader {leader} ") for bar in bars), (
            epoch, leader)
    assert sum("(truncated)" in title and "{1,2,3,4}" in title for title in seen["titles"]) == 1

    shot = tmp_path / "report.png"
    taken = chromium(f"--screenshot={shot}", f"--window-size={VIEW[0]},{VIEW[1]}", report.as_uri(),
                     profile=tmp_path / "profile")
    assert taken.returncode == 0, taken.stderr[-2000:]
    header = shot.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", header[16:24]) == VIEW
