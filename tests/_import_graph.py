"""The import graph of a Python package, read from its source, and its cycles.

Imports inside functions count too: a lazy import hides a cycle from Python
but not from a reader. Used by the import tests of the exla package
(tests/python/test_imports.py) and of experiments/
(tests/experiments/test_imports.py).
"""

from __future__ import annotations

import ast
from pathlib import Path

__all__ = ["modules", "imported_names", "imports", "graph", "cycles"]


def modules(package: Path) -> dict[str, Path]:
    """Every module of the package in folder ``package``, by dotted name."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imported_names(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """Every dotted name ``name`` imports anywhere in its source, relative ones resolved.

    ``from p import x`` gives ``p.x`` where that is a module of ``known``, else ``p``.
    """
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1]
                                + ([base] if base else []))
            found.update(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                         for alias in node.names)
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of ``known`` that ``name`` imports (package __init__s excluded)."""
    found = set()
    for target in imported_names(name, path, known):
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != name and known[target].name != "__init__.py":
            found.add(target)
    return found


def graph(package: Path) -> dict[str, set[str]]:
    """Each module of the package with the package's modules it imports."""
    known = modules(package)
    return {name: imports(name, path, known) for name, path in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[str]:
    """The import cycles of a graph, each as ``a -> b -> a``."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    found = []

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for target in sorted(edges[name]):
            if state.get(target) == 1:
                found.append(" -> ".join(path[path.index(target):] + [target]))
            elif target not in state:
                visit(target, path + [target])
        state[name] = 2

    for name in sorted(edges):
        if name not in state:
            visit(name, [name])
    return found
