"""Report tables: every cell on one line, control characters escaped, Markdown pipes escaped, HTML escaped;
the image diffs handed in, listed under the clusters with their links or a note."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from kafka_admin_kraft.pipeline.audit import AuditResult
from kafka_admin_kraft.pipeline.report import ImageDiffLink, render_html, render_markdown

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


def _diffs_result() -> AuditResult:
    clusters = [{"cluster_id": cluster, "reference_log_dir": "/logs"} for cluster in ("b<i>\x07", "a", "")]
    return AuditResult(tables={"clusters": clusters})


DIFFS = {
    "a": ImageDiffLink(text_href="diffs/a.txt", json_href="diffs/a.json",
                       first="offset -1 (the start of the log)", last="offset 40 (the end of the log)",
                       areas=(("features", 1), ("topics and partitions", 12))),
    "b<i>\x07": ImageDiffLink(note="cannot read /logs/x\n<y>"),
    "": ImageDiffLink(text_href="diffs/e.txt", json_href="diffs/e.json",
                      first="offset 9 (the oldest snapshot)", last="offset 9 (the end of the log)",
                      warnings=1),
}
A_SUMMARY = ("offset -1 (the start of the log) to offset 40 (the end of the log): 13 changes (features 1, "
             "topics and partitions 12)")
E_SUMMARY = ("offset 9 (the oldest snapshot) to offset 9 (the end of the log): 0 changes; 1 warning loading "
             "the images")


def test_the_image_diffs_are_listed_under_the_clusters_in_their_order_with_links_or_a_note() -> None:
    page = render_html(_diffs_result(), DIFFS)
    section = page.split("<h2>Clusters and their reference logs</h2>", 1)[1].split("<h2>", 1)[0]
    items = ET.fromstring(section[section.index("<ul>"):section.index("</ul>") + 5])
    assert [ET.tostring(li, encoding="unicode").strip() for li in items] == [
        "<li><b>b&lt;i&gt;\\x07</b>: no image diff: cannot read /logs/x &lt;y&gt;</li>",
        f'<li><b>a</b> (<a href="diffs/a.txt">text</a>, <a href="diffs/a.json">JSON</a>): {A_SUMMARY}</li>',
        f'<li><b>(no id)</b> (<a href="diffs/e.txt">text</a>, <a href="diffs/e.json">JSON</a>): '
        f"{E_SUMMARY}</li>",
    ]
    markdown = render_markdown(_diffs_result(), image_diffs=DIFFS)
    lines = markdown.split("### First and last images\n", 1)[1].split("\n## ", 1)[0].strip().splitlines()
    assert lines[2:] == [
        "- `b<i>\\x07`: no image diff: cannot read /logs/x <y>",
        f"- `a` ([text](<diffs/a.txt>), [JSON](<diffs/a.json>)): {A_SUMMARY}",
        f"- `(no id)` ([text](<diffs/e.txt>), [JSON](<diffs/e.json>)): {E_SUMMARY}",
    ]


def test_without_image_diffs_the_report_has_no_such_section() -> None:
    assert "First and last images" not in render_html(_diffs_result())
    assert "First and last images" not in render_markdown(_diffs_result())
