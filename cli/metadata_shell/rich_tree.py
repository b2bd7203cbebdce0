"""``tree`` drawn with rich on a terminal: the same nodes and leaf text as Kafka's, with guide lines.
Loaded only when the output is a terminal, so rich is never imported otherwise."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.tree import Tree

from kafka_admin_kraft.image.nodes import Node
from kafka_admin_kraft.image.text import java_sorted

from .commands import State, visit


def _add(tree: Tree, node: Node) -> None:
    for name in java_sorted(node.child_names()):
        child = node.child(name)
        if child is None:
            continue
        if child.is_directory:
            _add(tree.add(f"[bold]{escape(name)}[/bold]"), child)
        else:
            tree.add(f"[bold]{escape(name)}[/bold]: {escape(child.text())}")


def print_trees(state: State, targets: list[str], console: Console | None = None) -> None:
    """Every node the targets reach, as a rich tree headed by its absolute path."""
    console = console or Console()
    for target in targets:
        for match in visit(state, target):
            if match.node.is_directory:
                tree = Tree(f"[bold blue]{escape(match.absolute_path)}[/bold blue]")
                _add(tree, match.node)
                console.print(tree)
            else:
                console.print(escape(match.node.text()), soft_wrap=True)
