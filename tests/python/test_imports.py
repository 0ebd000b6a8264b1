"""The package's import structure: layers in one direction, no cycles, frameworks where they belong.

python/exla is laid out in layers; a module imports only from its own layer
or a lower one (:data:`LAYERS`), and no two modules import each other.
Imports inside functions count too: a lazy import hides a cycle or an upward
edge from Python but not from a reader (it is how ``explain`` and
``function`` once depended on each other). The one exception is the entry
points of the top layer, which hand work to a frontend: they import the
frontends inside functions only, since each frontend imports its framework
(TensorFlow, jax) at its top and ``import exla`` must load neither.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path
from typing import Iterator, NamedTuple

import pytest

import exla

from tests import _import_graph as import_graph

PACKAGE = Path(exla.__file__).resolve().parent

# Lowest first. A module is in the layer of its longest matching prefix ("exla"
# is the facade alone); a new module must be placed here.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    # What every layer may use: settings, values, errors, the C++ core's one caller, records.
    ("base", ("exla._exla", "exla.errors", "exla._values", "exla._flag_syntax", "exla._setting", "exla.options",
              "exla._entry_settings", "exla._fault_injection", "exla._core", "exla._hlo_signature",
              "exla._splitter_result", "exla._collectives", "exla.report", "exla.memory_cap")),
    # The one owner of each private API of XLA's Python distributions.
    ("bridge", ("exla.bridge",)),
    # Features shared by the frontends: models, the memory limit, the pipeline, explain's report.
    ("shared", ("exla.predict", "exla._timeline", "exla._plot", "exla.memory_limit",
                "exla.optimize", "exla.explanation")),
    # One package per framework; neither imports the other.
    ("frontend", ("exla.tensorflow", "exla.jax")),
    # Entry points: the facade, the dispatchers to a frontend, the command line, the demo.
    ("entry", ("exla", "exla.__main__", "exla.explain", "exla._autoload", "exla.cli", "exla.demo")),
]
FRONTENDS = ("exla.tensorflow", "exla.jax")
EXTENSION = "exla._exla"  # the C++ core, a compiled module


class Import(NamedTuple):
    target: str  # an exla module (a package's __init__ included), or a third-party module
    deferred: bool  # inside a function, or only for type checkers
    line: int
    typing_only: bool = False  # under `if TYPE_CHECKING:`: never runs


def _modules() -> dict[str, Path]:
    return import_graph.modules(PACKAGE)


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _layer(name: str) -> int:
    matches = [(len(prefix), index) for index, (_, prefixes) in enumerate(LAYERS)
               for prefix in prefixes if (_within(name, prefix) if prefix != "exla" else name == "exla")]
    assert matches, f"{name} is in no layer of LAYERS: place it there"
    return max(matches)[1]


def _frontend(name: str) -> str | None:
    return next((f for f in FRONTENDS if _within(name, f)), None)


def _import_nodes(tree: ast.AST) -> Iterator[tuple[ast.AST, bool, bool]]:
    """Every import statement, whether it is deferred, and whether only for type checkers."""
    def walk(node: ast.AST, deferred: bool, typing: bool) -> Iterator[tuple[ast.AST, bool, bool]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child, deferred, typing
            elif isinstance(child, ast.If) and ast.unparse(child.test) == "TYPE_CHECKING":
                for statement in child.body:
                    yield from walk(ast.Module(body=[statement], type_ignores=[]), True, True)
                for statement in child.orelse:
                    yield from walk(ast.Module(body=[statement], type_ignores=[]), deferred, typing)
            else:
                function = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                yield from walk(child, deferred or function, typing)
    yield from walk(tree, False, False)


def _import_list(name: str, path: Path, modules: dict[str, Path]) -> list[Import]:
    """What ``name`` imports anywhere in its source: exla modules by the module (or package)
    named, other modules by their full name."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    known = {*modules, EXTENSION}
    found = []
    for node, deferred, typing in _import_nodes(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1]
                                + ([base] if base else []))
            # `from exla import _core` names a module; `from exla import Report` a re-export.
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                       for alias in node.names]
        for target in targets:
            if _within(target, "exla"):
                while target not in known:
                    target = target.rpartition(".")[0]
            if target != name:
                found.append(Import(target, deferred, node.lineno, typing))
    return found


def _all_imports() -> dict[str, list[Import]]:
    modules = _modules()
    return {name: _import_list(name, path, modules) for name, path in modules.items()}


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """exla modules that ``name`` imports anywhere in its source."""
    return {i.target for i in _import_list(name, path, modules) if _within(i.target, "exla")}


def test_no_import_cycles():
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    graph.setdefault(EXTENSION, set())  # the extension imports nothing of exla
    cycles = import_graph.cycles({name: targets & set(graph) for name, targets in graph.items()})
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_dependencies_point_down_the_layers():
    """A module imports its own layer or a lower one; only an entry point reaches up,
    to a frontend, and only inside a function."""
    upward = []
    for name, imports in _all_imports().items():
        for i in imports:
            if not _within(i.target, "exla") or _layer(i.target) <= _layer(name):
                continue
            if not (LAYERS[_layer(name)][0] == "entry" and _frontend(i.target) and i.deferred):
                upward.append(f"{name}:{i.line} imports {i.target}")
    assert not upward, "imports against the layers:\n" + "\n".join(upward)


def test_the_frontends_do_not_import_each_other():
    crossing = [f"{name}:{i.line} imports {i.target}" for name, imports in _all_imports().items()
                for i in imports if _frontend(name) and _frontend(i.target)
                and _frontend(i.target) != _frontend(name)]
    assert not crossing, "\n".join(crossing)


def test_an_entry_point_loads_a_frontend_only_when_used():
    eager = [f"{name}:{i.line} imports {i.target}" for name, imports in _all_imports().items()
             for i in imports if _frontend(i.target) and not _frontend(name) and not i.deferred]
    assert not eager, "imported when exla is:\n" + "\n".join(eager)


# Where each framework may be imported: (module level, anywhere). A module's
# own script for the demonstration is a plain program of its framework.
FRAMEWORKS = {
    "tensorflow": (("exla.tensorflow", "exla.demo.tensorflow_program"),
                   ("exla.tensorflow", "exla.bridge", "exla.demo")),
    "jax": (("exla.jax", "exla.demo.jax_program"), ("exla.jax", "exla.bridge", "exla.demo")),
    "jaxlib": ((), ("exla.bridge",)),
    "jax._src": ((), ("exla.bridge",)),  # JAX's private API: exla.bridge.jax and .xla own it
    "tensorflow.python": ((), ("exla.bridge.tensorflow",)),  # TensorFlow's private API
    "matplotlib": ((), ("exla._plot",)),
}


@pytest.mark.parametrize("framework", sorted(FRAMEWORKS))
def test_frameworks_are_imported_only_where_they_belong(framework):
    top_level, anywhere = FRAMEWORKS[framework]
    misplaced = []
    for name, imports in _all_imports().items():
        for i in imports:
            if i.typing_only or not _within(i.target, framework):
                continue
            allowed = anywhere if i.deferred else top_level
            if not any(_within(name, prefix) for prefix in allowed):
                where = "inside a function" if i.deferred else "at module level"
                misplaced.append(f"{name}:{i.line} imports {i.target} {where}")
    assert not misplaced, "\n".join(misplaced)


def test_explain_and_function_are_independent_of_each_other():
    imports = _all_imports()
    assert not {i.target for i in imports["exla.tensorflow.exla_function"]} & {"exla", "exla.explain"}
    assert "exla.explain" not in {i.target for i in imports["exla.jax.explain"]}


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


def test_a_frontend_without_its_framework_is_a_clear_import_error(subprocess_env):
    code = ("import sys\n"
            "sys.modules['tensorflow'] = None  # as if TensorFlow were not installed\n"
            "import exla\n"
            "assert not hasattr(exla, 'function')\n"
            "try:\n"
            "    exla.function\n"
            "except AttributeError as e:\n"
            "    print(e)\n"
            "try:\n"
            "    from exla import function\n"
            "except ImportError as e:\n"
            "    print('from-import:', type(e).__name__)\n")
    done = subprocess.run([sys.executable, "-c", code], env=subprocess_env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "exla.function needs exla.tensorflow" in done.stdout
    assert "pip install 'exla[tensorflow]'" in done.stdout
    assert "from-import: ImportError" in done.stdout


@pytest.mark.parametrize("name", sorted(set(exla.__all__) - {"__version__"}))
def test_public_names_are_documented_with_an_example(name):
    from tests._frameworks import require

    if name in TENSORFLOW_NAMES:
        require("tensorflow")  # the name loads exla.tensorflow, which needs it
    obj = getattr(exla, name)
    assert obj.__doc__ and ">>>" in obj.__doc__, f"exla.{name} has no runnable example"
