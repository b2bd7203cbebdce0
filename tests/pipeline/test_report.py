"""Report tables: every cell on one line, control characters escaped, Markdown pipes escaped, HTML escaped."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from kafka_admin_kraft.pipeline.audit import AuditResult
from kafka_admin_kraft.pipeline.report import render_html, render_markdown

ERROR = {
    "error_kind": "corrupt",
    "cluster_id": "a|b\x00",
    "node_id": 3,
    "file": "/logs/x\ny",
    "batch_position": 7,
    "error": "bad\r\nbyte \x1b[31m<b>",
}
SHOWN = ["corrupt", "a|b\\x00", "3", "/logs/x y", "7", "bad byte \\x1b[31m<b>"]


def _result() -> AuditResult:
    return AuditResult(errors=[ERROR], error_count=1, paths=["/logs\x07"])


def test_markdown_cells_are_one_line_with_pipes_and_control_characters_escaped() -> None:
    markdown = render_markdown(_result())
    assert not re.search("[\x00-\x09\x0b-\x1f\x7f]", markdown)
    assert "read from /logs\\x07." in markdown
    table = markdown.split("## Errors (1)\n\n", 1)[1].strip().splitlines()
    assert len(table) == 3 and re.fullmatch(r"\|(-+\|)+", table[1])
    cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", table[2])[1:-1]]
    assert [cell.replace("\\|", "|") for cell in cells] == SHOWN


def test_html_cells_are_escaped() -> None:
    page = render_html(_result())
    assert not re.search("[\x00-\x09\x0b-\x1f\x7f]", page)
    table = ET.fromstring(page.split("<h2>Errors (1)</h2>\n", 1)[1].split("</table>", 1)[0] + "</table>")
    assert [(th.text or "").strip() for th in table.iter("th")] == list(ERROR)
    assert [(td.text or "").strip() for td in table.iter("td")] == SHOWN
