"""``version-mapping`` and ``feature-dependencies``: shared by kafka-storage and kafka-features.

Both tools print the same text for both subcommands (Kafka's exact lines), from the tables of the
Kafka line the tools follow (:data:`TOOL_LINE`, Kafka 4.4); they differ only in the texts of some
errors, so the functions here take the tool's name. Errors are raised as
:class:`FeatureTableError` carrying the message the tool prints (exit code 1). Every function has a
JSON counterpart with stable field names:

* version-mapping: ``{"release_version": "3.9", "metadata_version": {"level": 21, "release":
  "3.9-IV0"}, "features": {"kraft.version": 1, ...}}``, features in Kafka's order;
* feature-dependencies: ``{"features": [{"feature": ..., "level": ..., "release": ...,
  "dependencies": [{"feature": ..., "level": ..., "release": ...}]}]}``, where ``release`` appears only
  for metadata.version levels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from kafka_admin_kraft import features as ft

Tool = Literal["kafka-storage", "kafka-features"]

TOOL_LINE: Final = ft.NEWEST
"""The Kafka line whose tables the tools print and send: kafka-storage and kafka-features as Kafka 4.4
ships them."""


class FeatureTableError(ValueError):
    """A bad argument; the message is what Kafka's tool prints."""


@dataclass(frozen=True)
class _Level:
    feature: str
    level: int

    def text(self) -> str:
        if self.feature == ft.METADATA_VERSION:
            return f"{self.feature}={self.level} ({TOOL_LINE.release_string(self.level)})"
        return f"{self.feature}={self.level}"

    def json(self) -> dict[str, Any]:
        document: dict[str, Any] = {"feature": self.feature, "level": self.level}
        if self.feature == ft.METADATA_VERSION:
            document["release"] = TOOL_LINE.release_string(self.level)
        return document


def default_release_version() -> str:
    """What version-mapping shows without ``--release-version``: the latest production release."""
    return TOOL_LINE.release_string(TOOL_LINE.latest_production_metadata_version)


def _mapping(release: str | None, unstable: bool) -> tuple[str, dict[str, int]]:
    shown = default_release_version() if release is None else release
    try:
        return shown, TOOL_LINE.version_mapping(shown, unstable=unstable)
    except ValueError as exc:
        raise FeatureTableError(str(exc)) from None


def render_version_mapping(release: str | None, unstable: bool = True) -> str:
    """``metadata.version=<level> (<release as typed>)`` then one ``<feature>=<level>`` line per
    production feature. Both tools accept unstable releases here (the error lists up to 4.5-IV0)."""
    shown, mapping = _mapping(release, unstable)
    lines = [f"{ft.METADATA_VERSION}={mapping.pop(ft.METADATA_VERSION)} ({shown})"]
    lines += [f"{name}={level}" for name, level in mapping.items()]
    return "\n".join(lines) + "\n"


def version_mapping_json(release: str | None, unstable: bool = True) -> dict[str, Any]:
    shown, mapping = _mapping(release, unstable)
    level = mapping.pop(ft.METADATA_VERSION)
    return {"release_version": shown,
            "metadata_version": {"level": level, "release": TOOL_LINE.release_string(level)},
            "features": mapping}


def parse_feature_arguments(arguments: Sequence[str], tool: Tool) -> list[tuple[str, int]]:
    """``name=level`` arguments of feature-dependencies, with each tool's parse errors."""
    parsed: list[tuple[str, int]] = []
    for argument in arguments:
        name, equals, level_text = argument.partition("=")
        if tool == "kafka-storage":
            if not equals or not level_text or "=" in level_text:
                raise FeatureTableError(f"Invalid feature format: {argument}. Expected format: "
                                        "'feature=version' (e.g. 'group.version=1')")
            level = _short(level_text.strip())
            if level is None:
                raise FeatureTableError(f"Invalid version format: {level_text} for feature {name.strip()}")
        else:
            if not equals:
                raise FeatureTableError(f"Can't parse feature=level string {argument}: equals sign not "
                                        "found.")
            level = _short(level_text.strip())
            if level is None:
                raise FeatureTableError(f"Can't parse feature=level string {argument}: unable to parse "
                                        f"{level_text.strip()} as a short.")
        parsed.append((name.strip(), level))
    return parsed


def _short(text: str) -> int | None:
    """Java's ``Short.parseShort``: optional sign and ASCII digits, in range; None when it fails."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or not digits.isascii() or not digits.isdigit():
        return None
    value = int(text)
    return value if -32768 <= value <= 32767 else None


def _dependencies(levels: Sequence[tuple[str, int]], tool: Tool) -> list[tuple[_Level, list[_Level]]]:
    """Each requested level with its direct dependencies; the first bad argument raises."""
    result: list[tuple[_Level, list[_Level]]] = []
    for name, level in levels:
        if name == ft.METADATA_VERSION:
            if not TOOL_LINE.is_known_metadata_version(level):
                raise FeatureTableError(f"Unknown metadata.version {level}")
            result.append((_Level(name, level), []))
            continue
        feature = TOOL_LINE.feature(name)
        if feature is None:
            raise FeatureTableError(f"Unknown feature: {name}")
        entry = feature.level(level)
        if entry is None:
            raise FeatureTableError(f"Feature level {level} is not supported for feature {name}"
                                    if tool == "kafka-storage"
                                    else f"No feature:{name} with feature level {level}")
        dependencies = [_Level(dependency, minimum) for dependency, minimum in entry.dependencies.items()]
        result.append((_Level(name, level), dependencies))
    return result


def render_feature_dependencies(levels: Sequence[tuple[str, int]], tool: Tool) -> str:
    """Per level, in order: ``<level> has no dependencies.`` or ``<level> requires:`` and one line per
    dependency indented by four spaces. Every argument is checked before anything is printed."""
    lines: list[str] = []
    for requested, dependencies in _dependencies(levels, tool):
        if not dependencies:
            lines.append(f"{requested.text()} has no dependencies.")
        else:
            lines.append(f"{requested.text()} requires:")
            lines += [f"    {dependency.text()}" for dependency in dependencies]
    return "\n".join(lines) + "\n"


def feature_dependencies_json(levels: Sequence[tuple[str, int]], tool: Tool) -> dict[str, Any]:
    return {"features": [{**requested.json(), "dependencies": [item.json() for item in dependencies]}
                         for requested, dependencies in _dependencies(levels, tool)]}
