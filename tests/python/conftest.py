"""Shared fixtures of exla's Python tests.

The tests run against the source tree (``python/``) unless exla is installed.
Tests that need the C++ extension use the ``extension`` fixture: it skips them
when ``exla._exla`` is not built, unless ``EXLA_REQUIRE_EXTENSION`` is set (CI),
in which case a missing extension fails them, so nothing is skipped silently.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import pytest

from tests._extension import extension_required

REPO = Path(__file__).resolve().parents[2]
PYTHON_DIR = REPO / "python"

try:
    importlib.import_module("exla")
except ImportError:
    sys.path.insert(0, str(PYTHON_DIR))

# The kernel matrix-vector product exp(X Xᵀ) v: one n x n f32 intermediate.
KMV_TEMPLATE = """HloModule kmv_{n}, entry_computation_layout={{(f32[{n},8]{{1,0}}, f32[{n},1]{{1,0}})->f32[{n},1]{{1,0}}}}

ENTRY kmv_{n} {{
  x = f32[{n},8]{{1,0}} parameter(0)
  v = f32[{n},1]{{1,0}} parameter(1)
  k = f32[{n},{n}]{{1,0}} dot(x, x), lhs_contracting_dims={{1}}, rhs_contracting_dims={{1}}
  e = f32[{n},{n}]{{1,0}} exponential(k)
  ROOT kv = f32[{n},1]{{1,0}} dot(e, v), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
}}
"""


@pytest.fixture(scope="session")
def kmv_hlo():
    """``kmv_hlo(n)``: HLO text of exp(X Xᵀ) v with X: f32[n, 8], v: f32[n, 1]."""
    return lambda n: KMV_TEMPLATE.format(n=n)


def exla_import_path() -> str:
    """The directory this process imports exla from, for a child that must run the same exla.

    Not ``python/`` of the checkout: where exla is installed (CI), the
    checkout has no extension built in place, and a child importing it fails.
    """
    import exla

    return str(Path(exla.__file__).resolve().parents[1])


@pytest.fixture(scope="session")
def extension():
    """The C++ extension ``exla._exla`` (skip or fail when it is not built)."""
    try:
        return importlib.import_module("exla._exla")
    except ImportError as e:
        if extension_required():
            pytest.fail(f"EXLA_REQUIRE_EXTENSION is set but exla._exla cannot be imported: {e}")
        pytest.skip(f"exla._exla is not built ({e})")


@pytest.fixture(scope="session")
def subprocess_env() -> dict:
    """Environment for ``python -m exla`` subprocesses, running the same exla."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [exla_import_path(), env.get("PYTHONPATH")]))
    env.pop("XLA_FLAGS", None)
    env.pop("EXLA_FLAGS", None)
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    return env
