"""The audit report: Markdown or HTML, with a timeline of leaders and voter sets drawn as SVG.

The SVG is written by hand (no plotting library): one band per cluster, leader epochs as bars
along wall-clock time labelled with epoch and leader, and every VotersRecord as a marker below
them - filled when committed, hollow when uncommitted, crossed out in red when truncated. The
Markdown report links ``timeline.svg``; the HTML report embeds it. Tables are laid out by
``tabulate`` (imported when a report is rendered). Every cell is one line with its control
characters escaped (:func:`~kafka_admin_kraft.pipeline.text.one_line`), since values come from
files that may be damaged.

Below the clusters' table, the report can link each cluster's first-to-last image diff. The report
reads no images (the image layer sits above the pipeline): the tool writes the diffs and hands in
what to show of each as plain data, an :class:`ImageDiffLink`.
"""

from __future__ import annotations

import html
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Final

from kafka_admin_kraft.pipeline.audit import AuditResult
from kafka_admin_kraft.pipeline.text import one_line, printable

Row = dict[str, Any]
PALETTE: Final = ("#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#ff9da7", "#9c755f")
WIDTH: Final = 960
BAND: Final = 110
MARGIN: Final = 150
LABEL_CHAR_WIDTH: Final = 7.0
"""About the width of one character of a label at the default font size, in pixels."""


@dataclass(frozen=True)
class ImageDiffLink:
    """What the report shows of one cluster's first-to-last image diff: links (relative to the report)
    to its text and JSON files, where each image stands and the changes per area; or, when there is
    no diff, a note saying why."""

    text_href: str = ""
    json_href: str = ""
    first: str = ""
    """Where the first image stands, e.g. ``offset 99 (the oldest snapshot)``."""
    last: str = ""
    areas: tuple[tuple[str, int], ...] = ()
    """(area title, number of changes) of every area that changed, in the diff's order."""
    warnings: int = 0
    """Notes of loading the images (a torn tail, an open transaction), listed in the diff's files."""
    note: str = ""
    """Why there is no diff (set instead of the links)."""

    def summary(self) -> str:
        """One line: the images compared and the changes per area, or the note."""
        if self.note:
            return f"no image diff: {self.note}"
        count = sum(n for _, n in self.areas)
        changes = f"{count} change{'' if count == 1 else 's'}"
        if self.areas:
            changes += " (" + ", ".join(f"{title} {n}" for title, n in self.areas) + ")"
        if self.warnings:
            changes += f"; {self.warnings} warning{'' if self.warnings == 1 else 's'} loading the images"
        return f"{self.first} to {self.last}: {changes}"


IMAGE_DIFFS_TITLE: Final = "First and last images"
IMAGE_DIFFS_TEXT: Final = (
    "The difference between each cluster's first image, the oldest its reference log directory can "
    "rebuild (at the start of the log when the log starts at offset 0, else at its oldest snapshot), and "
    "its last, at the end of that log (uncommitted records included)."
)


def _time(ms: int | None) -> str:
    if ms is None:
        return ""
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + "Z"


def _ids(values: Sequence[int] | None) -> str:
    return "" if values is None else "{" + ",".join(str(v) for v in values) + "}"


def timeline_svg(result: AuditResult) -> str:
    """The picture of leaders and voter sets over time, one band per cluster."""
    epochs = defaultdict(list)
    for row in result.tables.get("leader_epochs", []):
        if row["start_timestamp"] is not None:
            epochs[row["cluster_id"]].append(row)
    voters = defaultdict(list)
    for row in result.tables.get("voter_sets", []):
        if row["timestamp"] is not None:
            voters[row["cluster_id"]].append(row)
    clusters = sorted(set(epochs) | set(voters))
    height = 40 + BAND * max(1, len(clusters))
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="11">',
        '<rect width="100%" height="100%" fill="white"/>',
        '<text x="10" y="18" font-size="13" font-weight="bold">Leaders (bars: epoch/leader) and '
        "voter sets (markers: filled committed, hollow uncommitted, red cross truncated)</text>",
    ]
    if not clusters:
        out.append('<text x="10" y="50">no leader changes or voter sets found</text></svg>')
        return "\n".join(out)
    for index, cluster in enumerate(clusters):
        top = 30 + index * BAND
        stamps = [r["start_timestamp"] for r in epochs[cluster]] + [
            r["end_timestamp"] for r in epochs[cluster] if r["end_timestamp"] is not None
        ]
        stamps += [r["timestamp"] for r in voters[cluster]]
        low, high = min(stamps), max(stamps)
        span = max(1, high - low)
        plot = WIDTH - MARGIN - 20

        def x(ms: int, low: int = low, span: int = span, plot: int = plot) -> float:
            return MARGIN + plot * (ms - low) / span

        out.append(
            f'<text x="10" y="{top + 22}" font-weight="bold">'
            f'{html.escape(printable(cluster[:22]) or "(no id)")}</text>'
        )
        out.append(f'<text x="10" y="{top + 38}">leaders</text>')
        out.append(f'<text x="10" y="{top + 78}">voter sets</text>')
        for row in sorted(epochs[cluster], key=lambda r: r["leader_epoch"]):
            start = x(row["start_timestamp"])
            end = x(row["end_timestamp"] if row["end_timestamp"] is not None else high)
            color = PALETTE[(row["leader_id"] or 0) % len(PALETTE)]
            dashed = ' stroke="#c00" stroke-dasharray="4 2"' if row["status"] == "truncated" else ""
            title = html.escape(
                f"epoch {row['leader_epoch']} leader {row['leader_id']} from {_time(row['start_timestamp'])}"
                f" ({row['duration_ms']} ms, {row['status']})"
            )
            out.append(
                f'<rect x="{start:.1f}" y="{top + 26}" width="{max(2.0, end - start):.1f}" height="18" '
                f'fill="{color}" fill-opacity="0.8"{dashed}><title>{title}</title></rect>'
            )
            out.append(
                f'<text x="{start + 3:.1f}" y="{top + 39}" fill="white">e{row["leader_epoch"]}'
                f" L{row['leader_id']}</text>"
            )
        label_ends = [0.0, 0.0]  # right end of the last label on each of two rows above the markers
        for row in voters[cluster]:
            cx = x(row["timestamp"])
            cy = top + 74
            label = html.escape(_ids(row["voter_ids"]))
            # a label that would overlap the previous one goes one row higher
            label_row = 0 if cx - 10 >= label_ends[0] else 1
            label_ends[label_row] = cx - 10 + LABEL_CHAR_WIDTH * len(label)
            title = html.escape(
                f"offset {row['offset']} epoch {row['leader_epoch']}: {_ids(row['voter_ids'])} "
                f"({row['status']})"
            )
            if row["status"] == "truncated":
                out.append(
                    f'<g stroke="#c00" stroke-width="2"><line x1="{cx - 5:.1f}" y1="{cy - 5}" '
                    f'x2="{cx + 5:.1f}" y2="{cy + 5}"/><line x1="{cx - 5:.1f}" y1="{cy + 5}" '
                    f'x2="{cx + 5:.1f}" y2="{cy - 5}"/><title>{title}</title></g>'
                )
                out.append(f'<text x="{cx - 10:.1f}" y="{cy + 20}" fill="#c00">{label}</text>')
            else:
                fill = "#333" if row["status"] == "committed" else "white"
                out.append(
                    f'<circle cx="{cx:.1f}" cy="{cy}" r="5" fill="{fill}" stroke="#333">'
                    f"<title>{title}</title></circle>"
                )
                out.append(f'<text x="{cx - 10:.1f}" y="{cy - 9 - 12 * label_row}">{label}</text>')
        out.append(f'<text x="{MARGIN}" y="{top + BAND - 8}" fill="#666">{_time(low)}</text>')
        out.append(
            f'<text x="{WIDTH - 20}" y="{top + BAND - 8}" fill="#666" text-anchor="end">{_time(high)}</text>'
        )
    out.append("</svg>")
    return "\n".join(out)


SECTIONS: Final = (
    (
        "clusters",
        "Clusters and their reference logs",
        (
            "cluster_id",
            "reference_node_id",
            "leader_id",
            "highest_epoch",
            "committed_end",
            "reference_log_dir",
        ),
    ),
    (
        "replicas",
        "Replicas",
        (
            "cluster_id",
            "node_id",
            "log_dir",
            "log_start",
            "log_end",
            "last_epoch",
            "quorum_leader_id",
            "quorum_leader_epoch",
            "is_reference",
            "agrees",
            "first_divergent_offset",
            "torn_tail",
            "errors",
        ),
    ),
    (
        "leader_epochs",
        "Leader epochs",
        (
            "cluster_id",
            "leader_epoch",
            "leader_id",
            "offset",
            "start_timestamp",
            "duration_ms",
            "voter_ids",
            "granting_voter_ids",
            "status",
        ),
    ),
    (
        "voter_sets",
        "Voter-set history",
        (
            "cluster_id",
            "offset",
            "leader_epoch",
            "timestamp",
            "voter_ids",
            "added_ids",
            "removed_ids",
            "status",
            "held_by",
            "source",
        ),
    ),
    (
        "feature_changes",
        "Feature level changes",
        (
            "cluster_id",
            "feature",
            "previous_level",
            "level",
            "offset",
            "leader_epoch",
            "timestamp",
            "status",
            "source",
        ),
    ),
    (
        "duplicate_voter_ids",
        "Duplicate voter ids",
        ("cluster_id", "file", "offset", "voter_id", "occurrences", "directory_ids", "status"),
    ),
    (
        "voters_without_directory_id",
        "Voters without a directory id",
        ("cluster_id", "file", "offset", "voter_id", "status"),
    ),
)


def _cell(name: str, value: object) -> str:
    if value is None:
        return ""
    if name.endswith("timestamp") and isinstance(value, int):
        return _time(value)
    if isinstance(value, list):
        return _ids(value) if all(isinstance(v, int) for v in value) else ", ".join(str(v) for v in value)
    return str(value)


DIVERGENCE_COLUMNS: Final = ("cluster_id", "node_id", "log_dir", "base_offset", "leader_epoch",
                              "reference_epoch", "committed_end")
ERROR_COLUMNS: Final = ("error_kind", "cluster_id", "node_id", "file", "batch_position", "error")
MAX_ERROR_ROWS: Final = 500


def _section(
    title: str, columns: Sequence[str], rows: Sequence[Mapping[str, Any]]
) -> tuple[str, Sequence[str], list[list[str]]]:
    return title, columns, [[one_line(_cell(c, row.get(c))) for c in columns] for row in rows]


def _tables(result: AuditResult) -> list[tuple[str, tuple[str, Sequence[str], list[list[str]]]]]:
    """(key, section) of every table: the :data:`SECTIONS`, the divergence and the errors."""
    sections = [(key, _section(title, columns, result.tables.get(key, [])))
                for key, title, columns in SECTIONS]
    sections.append(("divergence", _section(f"Replicas diverging below the committed offset "
                                            f"({result.divergence_count} batches)", DIVERGENCE_COLUMNS,
                                            result.divergence)))
    sections.append(("errors", _section(f"Errors ({result.error_count})", ERROR_COLUMNS,
                                        result.errors[:MAX_ERROR_ROWS])))
    return sections


def _diffs_in_order(result: AuditResult,
                    image_diffs: Mapping[str, ImageDiffLink]) -> list[tuple[str, ImageDiffLink]]:
    """(cluster name as shown, its diff) in the clusters' table order."""
    clusters = [row["cluster_id"] for row in result.tables.get("clusters", [])]
    clusters += sorted(set(image_diffs) - set(clusters))
    return [(one_line(cluster) or "(no id)", image_diffs[cluster]) for cluster in clusters
            if cluster in image_diffs]


def _image_diffs_markdown(result: AuditResult, image_diffs: Mapping[str, ImageDiffLink]) -> list[str]:
    lines = [f"### {IMAGE_DIFFS_TITLE}", "", IMAGE_DIFFS_TEXT, ""]
    for cluster, link in _diffs_in_order(result, image_diffs):
        files = f" ([text](<{link.text_href}>), [JSON](<{link.json_href}>))" if not link.note else ""
        name = cluster.replace("`", "'")
        lines.append(f"- `{name}`{files}: {one_line(link.summary())}")
    return [*lines, ""]


def _image_diffs_html(result: AuditResult, image_diffs: Mapping[str, ImageDiffLink]) -> list[str]:
    parts = [f"<h3>{IMAGE_DIFFS_TITLE}</h3>", f"<p>{html.escape(IMAGE_DIFFS_TEXT)}</p>", "<ul>"]
    for cluster, link in _diffs_in_order(result, image_diffs):
        files = ""
        if not link.note:
            files = (f' (<a href="{html.escape(link.text_href)}">text</a>, '
                     f'<a href="{html.escape(link.json_href)}">JSON</a>)')
        summary = html.escape(one_line(link.summary()))
        parts.append(f"<li><b>{html.escape(cluster)}</b>{files}: {summary}</li>")
    return [*parts, "</ul>"]


def _summary(result: AuditResult) -> list[str]:
    replicas = result.tables.get("replicas", [])
    clusters = result.tables.get("clusters", [])
    truncated = [r for r in result.tables.get("voter_sets", []) if r["status"] == "truncated"]
    return [
        f"{len(clusters)} cluster(s), {len(replicas)} log directories, {result.batch_count} batches read "
        f"from {one_line(', '.join(result.paths))}.",
        f"Replicas disagreeing with the reference log: "
        f"{sum(1 for r in replicas if not r['agrees'] and r['batches'])}; batches diverging below the "
        f"committed offset: {result.divergence_count}; voter sets appended then truncated: {len(truncated)}; "
        f"errors: {result.error_count}.",
    ]


def _table(columns: Sequence[str], rows: list[list[str]], fmt: str) -> str:
    """``fmt`` is tabulate's ``github`` (Markdown, with ``|`` in cells escaped) or ``html`` (escaped by
    tabulate). Cells are text as they are: no number parsing or reformatting."""
    from tabulate import tabulate

    if fmt == "github":
        rows = [[cell.replace("|", "\\|") for cell in row] for row in rows]
    return str(tabulate(rows, headers=list(columns), tablefmt=fmt, disable_numparse=True))


def render_markdown(result: AuditResult, svg_name: str = "timeline.svg",
                    image_diffs: Mapping[str, ImageDiffLink] | None = None) -> str:
    """``image_diffs``: by cluster id, what to show of its image diff (no section when None)."""
    lines = ["# KRaft metadata audit", ""]
    lines += [f"- {line}" for line in _summary(result)]
    lines += [
        "",
        "How a record's status is decided: see `kafka_admin_kraft.pipeline.rules` (committed, uncommitted,",
        "truncated = appended but not in the log of the highest epoch's leader).",
        "",
        "## Timeline",
        "",
        f"![leaders and voter sets]({svg_name})",
        "",
    ]
    for key, (title, columns, rows) in _tables(result):
        lines += [f"## {title}", ""]
        lines += [_table(columns, rows, "github"), ""] if rows else ["None.", ""]
        if key == "clusters" and image_diffs is not None:
            lines += _image_diffs_markdown(result, image_diffs)
    return "\n".join(lines)


def render_html(result: AuditResult, image_diffs: Mapping[str, ImageDiffLink] | None = None) -> str:
    """``image_diffs``: by cluster id, what to show of its image diff (no section when None)."""
    parts = [
        "<!DOCTYPE html>",
        '<html><head><meta charset="utf-8"><title>KRaft metadata audit</title>',
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:2em}"
        "td,th{border:1px solid #ccc;padding:2px 6px;font-size:12px;text-align:left}"
        "th{background:#eee}</style></head><body>",
        "<h1>KRaft metadata audit</h1>",
        "<ul>",
    ]
    parts += [f"<li>{html.escape(line)}</li>" for line in _summary(result)]
    parts += ["</ul>", "<h2>Timeline</h2>", timeline_svg(result)]
    for key, (title, columns, rows) in _tables(result):
        parts.append(f"<h2>{html.escape(title)}</h2>")
        parts.append(_table(columns, rows, "html") if rows else "<p>None.</p>")
        if key == "clusters" and image_diffs is not None:
            parts += _image_diffs_html(result, image_diffs)
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(result: AuditResult, directory: str | Path, fmt: str = "md",
                 image_diffs: Mapping[str, ImageDiffLink] | None = None) -> Path:
    """Write ``report.md`` (+ ``timeline.svg``) or ``report.html`` into ``directory``; return its path.
    ``image_diffs``: by cluster id, what to show of the diffs written beside the report."""
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    (target / "timeline.svg").write_text(timeline_svg(result), encoding="utf-8")
    if fmt == "html":
        path = target / "report.html"
        path.write_text(render_html(result, image_diffs), encoding="utf-8")
    elif fmt == "md":
        path = target / "report.md"
        path.write_text(render_markdown(result, image_diffs=image_diffs), encoding="utf-8")
    else:
        raise ValueError(f"report format {fmt!r}: use md or html")
    return path
