"""The package's import structure: every module imports alone, and no two modules import each other.

Imports inside functions count too: a lazy import hides a cycle from Python
but not from a reader, and it is how ``explain`` and ``function`` once
depended on each other.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import exla

PACKAGE = Path(exla.__file__).resolve().parent


def _modules() -> dict[str, Path]:
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """exla modules that ``name`` imports anywhere in its source (package __init__s excluded)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1]
                                + ([base] if base else []))
            # `from exla import _core` names a module; `from exla import Report` a re-export.
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                       for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name and modules[target].name != "__init__.py":
                found.add(target)
    return found


def test_no_import_cycles():
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles = []

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                cycles.append(" -> ".join(path[path.index(target):] + [target]))
            elif target not in state:
                visit(target, path + [target])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_explain_and_function_are_independent_of_each_other():
    modules = _modules()
    assert "exla.explain" not in _imports("exla.tensorflow.exla_function",
                                          modules["exla.tensorflow.exla_function"], modules)


# The TensorFlow frontend imports TensorFlow at its top, and the demo's
# program is a TensorFlow script (run as ``python -m
# exla.demo.tensorflow_program``); every other module imports without
# TensorFlow installed (the JAX-only test environment checks it).
TENSORFLOW_SCRIPTS = {"exla.demo.tensorflow_program"}
TENSORFLOW_NAMES = {"function", "ExlaFunction", "ProgramInfo"}  # exla's, from exla.tensorflow


def _needs_tensorflow(name: str) -> bool:
    return name.split(".")[:2] == ["exla", "tensorflow"] or name in TENSORFLOW_SCRIPTS


def test_every_module_imports_in_a_fresh_interpreter(subprocess_env):
    from tests._frameworks import has

    names = [n for n in _modules() if not n.endswith("__main__")
             and (has("tensorflow") or not _needs_tensorflow(n))]
    code = "import importlib, sys\nfor name in sys.argv[1:]:\n    importlib.import_module(name)\n"
    done = subprocess.run([sys.executable, "-c", code, *names], env=subprocess_env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.mark.parametrize("name,frontend,framework", [("jit", "exla.jax", "jax"),
                                                     ("function", "exla.tensorflow", "tensorflow")])
def test_a_frontend_and_its_framework_load_on_first_use(name, frontend, framework, subprocess_env):
    from tests._frameworks import require

    require(framework)
    code = ("import json, sys, exla\n"
            "loaded = lambda: sorted(m for m in ('tensorflow', 'jax', 'exla.tensorflow', 'exla.jax')\n"
            "                        if m in sys.modules)\n"
            f"before = loaded(); f = exla.{name}\n"
            "print(json.dumps([before, loaded(), f.__module__]))")
    done = subprocess.run([sys.executable, "-c", code], env=subprocess_env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    before, after, module = json.loads(done.stdout.splitlines()[-1])
    assert before == []  # `import exla` loads no framework and no frontend
    assert {frontend, framework} <= set(after) and module.startswith(frontend + ".")
    if framework == "jax":
        assert "tensorflow" not in after  # the JAX path never needs TensorFlow


@pytest.mark.parametrize("name", sorted(set(exla.__all__) - {"__version__"}))
def test_public_names_are_documented_with_an_example(name):
    from tests._frameworks import require

    if name in TENSORFLOW_NAMES:
        require("tensorflow")  # the name loads exla.tensorflow, which needs it
    obj = getattr(exla, name)
    assert obj.__doc__ and ">>>" in obj.__doc__, f"exla.{name} has no runnable example"
