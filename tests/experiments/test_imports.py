"""experiments/'s import structure: no cycles, dependencies one way, nothing from tests/.

Layers, lowest first: the package's paths (experiments/__init__.py) and the
table of commands (which names modules, imports none); the corpus and the
harness; the workloads, tools and fuzzers; the report (RESULTS.md, which
reads what they wrote); the sweeps' command line; the launcher. A module
imports only from its own part or from a lower layer, and imports inside
functions count (tests/_import_graph.py). The tests import experiments,
never the other way round: no module of experiments/ imports tests, runs a
module of tests (``-m tests...``) or puts a folder of tests on ``sys.path``.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from experiments import REPO_ROOT
from tests import _import_graph as import_graph

PACKAGE = REPO_ROOT / "experiments"

LAYERS = {
    "experiments": 0, "experiments.commands": 0,
    "experiments.corpus": 1, "experiments.harness": 1,
    "experiments.workloads": 2, "experiments.tools": 2, "experiments.fuzzing": 2,
    "experiments.report": 3,
    "experiments.sweep_command": 4,
    "experiments.launcher": 5,
    "experiments.__main__": 6,
}
"""Each part of experiments/ and its layer; a part imports from lower layers only."""


def _part(module: str) -> str:
    return max((p for p in LAYERS if module == p or module.startswith(p + ".")), key=len)


def test_every_module_is_in_a_layer():
    assert all(_part(name) for name in import_graph.modules(PACKAGE))
    assert set(LAYERS) <= set(import_graph.modules(PACKAGE)), "a layer names nothing"


def test_no_import_cycles():
    cycles = import_graph.cycles(import_graph.graph(PACKAGE))
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_imports_point_down():
    upward = [f"{name} -> {target}" for name, targets in import_graph.graph(PACKAGE).items()
              for target in sorted(targets)
              if _part(target) != _part(name) and LAYERS[_part(target)] >= LAYERS[_part(name)]]
    assert not upward, "imports of a part at the same or a higher layer:\n" + "\n".join(upward)


def _reaches_into_tests(tree: ast.AST, source: str) -> list[str]:
    """The imports, module names and sys.path changes of a module that name tests."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""] if not node.level else []
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names = [node.value] if node.value.startswith("tests.") else []
        elif isinstance(node, ast.Call) and ast.unparse(node.func).startswith("sys.path."):
            names = ["tests"] if "tests" in ast.get_source_segment(source, node) else []
        else:
            continue
        found += [f"line {node.lineno}: {ast.get_source_segment(source, node)}"
                  for name in names if name == "tests" or name.startswith("tests.")]
    return found


def test_nothing_reaches_into_tests():
    found = []
    for name, path in import_graph.modules(PACKAGE).items():
        source = path.read_text()
        found += [f"{name}, {hit}" for hit in _reaches_into_tests(ast.parse(source), source)]
    assert not found, "experiments/ reaches into tests/:\n" + "\n".join(found)


def test_the_check_finds_an_import_from_tests():
    source = "def f():\n    import sys\n    sys.path.insert(0, 'tests')\n    from tests import x\n"
    assert len(_reaches_into_tests(ast.parse(source), source)) == 2


@pytest.mark.slow
def test_every_module_imports_without_tests():
    import exla

    names = [n for n in import_graph.modules(PACKAGE) if not n.endswith("__main__")]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH=os.pathsep.join(
        [str(REPO_ROOT), str(Path(exla.__file__).resolve().parents[1])]))
    code = ("import importlib, sys\nfor name in sys.argv[1:]:\n    importlib.import_module(name)\n"
            "print(sorted(m for m in sys.modules if m == 'tests' or m.startswith('tests.')))\n")
    done = subprocess.run([sys.executable, "-c", code, *names], env=env, cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"
