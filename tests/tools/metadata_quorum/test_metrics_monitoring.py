"""monitoring/: the Prometheus rules and the Grafana dashboard are well formed, every metric their
queries name is one the exporter serves (the names come from the exporter's own registry, not a list),
and promtool accepts the rules and passes their unit tests (prometheus-rules.test.yml)."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from external_tools import external_tool
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from kafka_admin_kraft.health import FindingCode
from kafka_admin_kraft_cli.metadata_quorum.metrics import QuorumCache, exporter_registry
from tools.metadata_quorum.test_metrics import rich_health

MONITORING = Path(__file__).resolve().parents[3] / "monitoring"
RULES = MONITORING / "prometheus-rules.yml"
RULE_TESTS = MONITORING / "prometheus-rules.test.yml"
DASHBOARD = MONITORING / "grafana-dashboard.json"
SEVERITIES = {"critical", "warning", "info"}
SCRAPE_SERIES = {"up"}
"""What Prometheus itself records for every scrape target (the exporter-down alert uses it)."""
KEYWORDS = {"and", "or", "unless", "bool", "by", "without", "on", "ignoring", "group_left", "group_right",
            "offset", "inf", "nan"}
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
_LABEL_LIST = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
_IDENTIFIER = re.compile(r"(?<![\w.:])[a-zA-Z_:][\w:]*")


def metric_names(expr: str) -> set[str]:
    """Names in a PromQL expression that are metrics: not functions or aggregations (followed by a
    parenthesis), keywords, label names (in braces or label lists), strings, durations or numbers."""
    text = _STRING.sub('""', expr)
    text = re.sub(r"\{[^}]*\}", " ", text)
    text = re.sub(r"\[[^\]]*\]", " ", text)
    text = _LABEL_LIST.sub(" ", text)
    text = re.sub(r"\boffset\s+-?\w+", " ", text)
    names = set()
    for match in _IDENTIFIER.finditer(text):
        if text[match.end():].lstrip().startswith("(") or match.group().lower() in KEYWORDS:
            continue
        names.add(match.group())
    return names


def test_metric_names_are_told_from_functions_labels_and_keywords() -> None:
    expr = ('sum by (code, severity) (rate(a_total{job="x", b=~"$i"}[5m] offset 1h)) > on(instance) '
            'group_left(node_id) b_metric * 1e3 or absent(c_metric) unless d:recorded and bool 2')
    assert metric_names(expr) == {"a_total", "b_metric", "c_metric", "d:recorded"}
    assert metric_names('label_replace(up, "dst", "$1", "src", "(.*)")') == {"up"}


@pytest.fixture(scope="module")
def served() -> set[str]:
    """Every sample name /metrics serves for a check result that gives each metric a value."""
    health = rich_health()
    registry = exporter_registry(QuorumCache(lambda *_: health, min_interval=0, scrape_timeout=5))
    names = {sample.name for family in text_string_to_metric_families(generate_latest(registry).decode())
             for sample in family.samples}
    assert "kraft_quorum_leader_epoch" in names and "kraft_quorum_replica_lag_offsets" in names
    return names


def unknown_names(expr: str, served: set[str]) -> set[str]:
    found = metric_names(expr)
    assert found, f"no metric in {expr!r}"
    return found - served - SCRAPE_SERIES


def load_rules() -> list[dict[str, Any]]:
    document = yaml.safe_load(RULES.read_text())
    assert set(document) == {"groups"}
    rules = []
    for group in document["groups"]:
        assert isinstance(group["name"], str) and group["rules"]
        rules += group["rules"]
    return rules


def test_every_rule_is_a_complete_alert() -> None:
    rules = load_rules()
    names = [rule["alert"] for rule in rules]
    assert len(names) == len(set(names)) and len(names) >= 8
    for rule in rules:
        assert set(rule) <= {"alert", "expr", "for", "labels", "annotations"}, rule["alert"]
        assert isinstance(rule["expr"], str) and rule["expr"].strip()
        assert re.fullmatch(r"\d+[smh]", rule.get("for", "0m")), rule["alert"]
        assert rule["labels"]["severity"] in SEVERITIES, rule["alert"]
        assert rule["annotations"]["summary"].strip() and rule["annotations"]["description"].strip()


def test_the_rules_cover_the_main_failures() -> None:
    exprs = " ".join(rule["expr"] for rule in load_rules())
    for needed in ("kraft_quorum_up == 0", "kraft_quorum_status == 2", "kraft_quorum_fault_tolerance == 0",
                   "changes(kraft_quorum_leader_epoch[15m])", "kraft_quorum_voter_change_pending_seconds",
                   "kraft_quorum_replica_seconds_since_caught_up", 'code="NO_LEADER"'):
        assert needed in exprs


def test_every_finding_code_the_rules_match_on_is_a_finding_code() -> None:
    """A renamed code would leave its alert matching nothing: each code a rule names (``code="..."``,
    or an alternative of ``code=~"A|B"``) must be one that checks report."""
    matched = [code for rule in load_rules()
               for values in re.findall(r'\bcode\s*(?:=~|!~|!=|=)\s*"([^"]*)"', rule["expr"])
               for code in values.split("|")]
    assert {"NO_LEADER", "REPLACED_DISK_OBSERVER"} <= set(matched)
    assert set(matched) <= {code.value for code in FindingCode}


def test_every_metric_the_rules_name_is_served(served: set[str]) -> None:
    for rule in load_rules():
        assert not unknown_names(rule["expr"], served), rule["alert"]


def test_promtool_accepts_the_rules_and_their_unit_tests_pass() -> None:
    """``promtool check rules``, then ``promtool test rules`` on ``prometheus-rules.test.yml``: every
    alert quiet before its ``for:``, firing after it, resolved after recovery."""
    promtool = external_tool("promtool", package="prometheus")
    for command in (["check", "rules", str(RULES)], ["test", "rules", str(RULE_TESTS)]):
        result = subprocess.run([promtool, *command], capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stdout + result.stderr


def test_every_alert_has_unit_tests_that_fire_it_and_resolve_it() -> None:
    document = yaml.safe_load(RULE_TESTS.read_text())
    assert document["rule_files"] == [RULES.name]
    cases: dict[str, list[bool]] = {}
    for group in document["tests"]:
        for case in group["alert_rule_test"]:
            cases.setdefault(case["alertname"], []).append(bool(case["exp_alerts"]))
    assert set(cases) == {rule["alert"] for rule in load_rules()}
    for name, firing in cases.items():
        assert firing == [False, True, False], name  # quiet, firing, resolved


def panels(items: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for panel in items:
        yield panel
        yield from panels(panel.get("panels", []))


def test_the_dashboard_is_importable() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["schemaVersion"] >= 36 and dashboard["title"] and dashboard["uid"]
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    assert variables["DS_PROMETHEUS"]["type"] == "datasource"
    assert variables["DS_PROMETHEUS"]["query"] == "prometheus"
    ids = [panel["id"] for panel in panels(dashboard["panels"])]
    assert len(ids) == len(set(ids))
    for panel in panels(dashboard["panels"]):
        place = panel["gridPos"]
        assert set(place) == {"x", "y", "w", "h"} and place["x"] + place["w"] <= 24
        if panel["type"] == "row":
            continue
        assert panel["datasource"]["uid"] == "${DS_PROMETHEUS}", panel["title"]
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            assert target["expr"].strip() and target["refId"], panel["title"]


def test_every_metric_the_dashboard_queries_is_served(served: set[str]) -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    for panel in panels(dashboard["panels"]):
        for target in panel.get("targets", []):
            assert not unknown_names(target["expr"], served), panel["title"]
    for variable in dashboard["templating"]["list"]:
        if variable["type"] == "query":
            query = re.fullmatch(r"label_values\((.+),\s*\w+\)", variable["query"]["query"])
            assert query is not None and not unknown_names(query.group(1), served), variable["name"]
