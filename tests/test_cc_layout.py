"""The layout of the C++ core: no include cycle, and each file where its BUILD says.

Bazel rejects a cycle between targets when it builds; this test finds one
from the include lines without Bazel (the Makefile and setup.py, which
compile every .cc under cc/, would not notice), and checks that every
source under cc/ belongs to a target of its folder's BUILD, so that the
per-part targets cannot fall behind the tree.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CC = REPO / "cc"
_INCLUDE = re.compile(r'^#include "([^"]+)"', re.M)


_LIBRARY = re.compile(r"cc_library\((.*?)\n\)", re.S)


def _files(block: str, key: str, directory: Path) -> list[Path]:
    """The files a target's ``srcs`` or ``hdrs`` name (a list, or a glob of one pattern)."""
    match = re.search(key + r' = (glob\(\["([^"]+)"\]\)|\[(.*?)\]|"([^"]+)")', block, re.S)
    if match is None:
        return []
    if match.group(2):
        return sorted(directory.glob(match.group(2)))
    names = re.findall(r'"([^"]+)"', match.group(3) or f'"{match.group(4)}"')
    return [directory / name for name in names]


def _targets() -> dict[Path, str]:
    """Every source and header under cc/ with the Bazel target that owns it."""
    owner: dict[Path, str] = {}
    for build in sorted(CC.rglob("BUILD")):
        package = str(build.parent.relative_to(REPO))
        for block in _LIBRARY.findall(build.read_text()):
            name = re.search(r'name = "([^"]+)"', block).group(1)
            for key in ("srcs", "hdrs"):
                for path in _files(block, key, build.parent):
                    owner[path] = f"//{package}:{name}"
    return owner


def _include_graph() -> dict[str, set[str]]:
    """Target -> the targets whose headers its files include."""
    owner = _targets()
    graph: dict[str, set[str]] = {}
    for path, target in owner.items():
        edges = graph.setdefault(target, set())
        for included in _INCLUDE.findall(path.read_text()):
            other = owner.get(CC / included)
            if other is not None and other != target:
                edges.add(other)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of units, or None (iterative depth-first search)."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    for root in graph:
        if state.get(root):
            continue
        path, stack = [root], [iter(sorted(graph[root]))]
        state[root] = 1
        while stack:
            child = next(stack[-1], None)
            if child is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(child) == 1:
                return path[path.index(child):] + [child]
            elif not state.get(child):
                state[child] = 1
                path.append(child)
                stack.append(iter(sorted(graph.get(child, ()))))
    return None


def test_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_no_include_cycle_between_targets():
    graph = _include_graph()
    assert len(graph) >= 15, sorted(graph)  # every part was read
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))


def test_every_source_is_in_a_bazel_target():
    owner = _targets()
    for path in sorted(CC.rglob("*")):
        if path.suffix in (".h", ".cc") and "bindings" not in path.parts:
            assert path in owner, f"{path.relative_to(REPO)} is in no target of a BUILD file"


def test_the_splitter_has_a_package_of_its_own():
    splitter = CC / "passes" / "tensor_splitter"
    assert (splitter / "BUILD").is_file()
    assert not list((CC / "passes").glob("split_*")), "splitter parts outside its folder"
