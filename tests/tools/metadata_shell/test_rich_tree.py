"""``tree`` on a terminal: rich's tree of the same names and leaf text."""

from __future__ import annotations

from rich.console import Console

from kafka_admin_kraft.image.model import MetadataImage
from kafka_admin_kraft.image.nodes import root_node
from kafka_admin_kraft_cli.metadata_shell.commands import State
from kafka_admin_kraft_cli.metadata_shell.rich_tree import print_trees


def test_rich_tree_holds_kafkas_names_and_text() -> None:
    console = Console(record=True, width=100, color_system=None)
    print_trees(
        State(root_node(MetadataImage(), lambda: "v")), ["/image/features", "/local/version"], console
    )
    assert console.export_text() == ("/image/features\n└── metadataVersion: Optional.empty\nv\n")
