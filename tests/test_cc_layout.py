"""The layout of the C++ core (cc/README.md): layers, stages, no cycle, BUILD files.

- Layers include in one direction: a file includes headers of its own layer
  or of the layers below it (LAYERS, lowest first), never above.
- The model of XLA CPU (cc/model) answers through one public header: code
  outside cc/model includes model/xla_cpu_model.h and nothing else of it.
- Inside the model, stages follow XLA's compile (STAGES): a stage includes
  only itself and the stages before it.
- Bazel rejects a cycle between targets when it builds; this test finds one
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

# The layers of cc/, lowest first: a file may include its own layer's
# headers and those of the layers before it.
LAYERS = ("ir", "pass", "analysis", "model", "passes", "search", "api", "bindings")
# The model's stages, in the order XLA's CPU compiler runs them.
STAGES = ("simplify", "expand", "fusion", "buffers", "cost")
MODEL_HEADER = "model/xla_cpu_model.h"
# The one stage header the public header may include: the generated
# constants PredictTime takes.
PUBLIC_HEADER_INCLUDES = {"model/cost/cost_constants.h"}


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


def _includes() -> list[tuple[str, str]]:
    """(file, included header), both relative to cc/, for every quoted include under cc/."""
    edges = []
    for path in sorted(CC.rglob("*")):
        if path.suffix in (".h", ".cc"):
            for included in _INCLUDE.findall(path.read_text()):
                if (CC / included).is_file():
                    edges.append((str(path.relative_to(CC)), included))
    return edges


def _layer(path: str) -> int:
    return LAYERS.index(path.split("/")[0])


def _stage(path: str) -> int | None:
    """The stage of a file under cc/model/<stage>/, None for the public header."""
    parts = path.split("/")
    return STAGES.index(parts[1]) if len(parts) > 2 else None


def _violations(edges: list[tuple[str, str]]) -> list[str]:
    """Every include that breaks a rule of the module docstring, as `file -> header: why`."""
    found = []
    for source, header in edges:
        if _layer(header) > _layer(source):
            found.append(f"{source} -> {header}: {header.split('/')[0]} is a layer above")
        in_model = source.startswith("model/")
        if not in_model and header.startswith("model/") and header != MODEL_HEADER:
            found.append(f"{source} -> {header}: outside cc/model only {MODEL_HEADER} is public")
        if in_model and header.startswith("model/"):
            mine, theirs = _stage(source), _stage(header)
            if mine is None and header not in PUBLIC_HEADER_INCLUDES:
                found.append(f"{source} -> {header}: the public header declares, the stages define")
            elif mine is not None and theirs is not None and theirs > mine:
                found.append(f"{source} -> {header}: {STAGES[theirs]} comes after {STAGES[mine]}")
    return found


def test_rules_find_each_kind_of_violation():
    assert _violations([("passes/a.cc", "search/b.h")]) == ["passes/a.cc -> search/b.h: search is a layer above"]
    assert _violations([("search/a.cc", "model/buffers/b.h")])[0].endswith("only model/xla_cpu_model.h is public")
    assert _violations([("model/fusion/a.cc", "model/buffers/b.h")])[0].endswith("buffers comes after fusion")
    assert _violations([("model/xla_cpu_model.h", "model/buffers/b.h")])[0].endswith("the stages define")
    assert _violations([("model/buffers/a.cc", "model/fusion/b.h"), ("model/buffers/a.cc", "model/xla_cpu_model.h"),
                        ("passes/a.cc", "analysis/b.h"), ("search/a.cc", "model/xla_cpu_model.h")]) == []


def test_layers_include_downward_and_the_model_through_its_header():
    edges = _includes()
    assert len(edges) > 300, len(edges)  # every file was read
    folders = {path.split("/")[0] for edge in edges for path in edge}
    assert folders == set(LAYERS), folders  # a new folder needs a place among the layers
    assert {_stage(path) for _, path in edges if path.startswith("model/")} >= set(range(len(STAGES)))
    assert _violations(edges) == []


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
