"""The package's import structure: every module imports alone, and no two modules import each other.

Imports inside functions count too: a lazy import hides a cycle from Python
but not from a reader, and it is how ``explain`` and ``function`` once
depended on each other.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import exla
from tests import _import_graph as import_graph

PACKAGE = Path(exla.__file__).resolve().parent


def _modules() -> dict[str, Path]:
    return import_graph.modules(PACKAGE)


def test_no_import_cycles():
    cycles = import_graph.cycles(import_graph.graph(PACKAGE))
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_explain_and_function_are_independent_of_each_other():
    modules = _modules()
    assert "exla.explain" not in import_graph.imports("exla.function", modules["exla.function"],
                                                       modules)


# The one module that is a TensorFlow script itself (the demo's program,
# run as ``python -m exla._demo_program``); every other module imports
# without TensorFlow installed (the JAX-only test environment checks it).
TENSORFLOW_SCRIPTS = {"exla._demo_program"}


def test_every_module_imports_in_a_fresh_interpreter(subprocess_env):
    from tests._frameworks import has

    names = [n for n in _modules() if not n.endswith("__main__")
             and (has("tensorflow") or n not in TENSORFLOW_SCRIPTS)]
    code = "import importlib, sys\nfor name in sys.argv[1:]:\n    importlib.import_module(name)\n"
    done = subprocess.run([sys.executable, "-c", code, *names], env=subprocess_env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.mark.parametrize("name", sorted(set(exla.__all__) - {"__version__"}))
def test_public_names_are_documented_with_an_example(name):
    obj = getattr(exla, name)
    assert obj.__doc__ and ">>>" in obj.__doc__, f"exla.{name} has no runnable example"
