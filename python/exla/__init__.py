"""exla: memory-safe XLA programs.

exla rewrites XLA HLO programs so that no intermediate tensor exceeds a size
limit: it replaces wasteful expressions, reorders matrix chains and splits
oversized computations into loops over slices, computing the same numbers.

>>> import exla
>>> exla.parse_size("100MiB")
104857600

The public API is what this module exports (``exla.__all__``). Public modules
of their own: :mod:`exla.options` (flags and settings), :mod:`exla.predict`
(exla's memory and cost models), :mod:`exla.memory_cap` (running a command
under a hard memory limit) and :mod:`exla.bridge` (exla's glue to XLA's Python
distributions). Everything else is exla's own: modules whose names start
with ``_``, and the packages by frontend and feature (:mod:`exla.tensorflow`,
:mod:`exla.jax`, :mod:`exla.memory_limit`, :mod:`exla.demo`).

Importing exla loads neither TensorFlow nor jax: the names of a frontend
(``function``, ``ExlaFunction`` and ``ProgramInfo`` of :mod:`exla.tensorflow`,
``jit`` of :mod:`exla.jax`) load it, and its framework, on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from exla.errors import ExlaError as ExlaError
from exla.errors import FrontendUnavailableError
from exla.errors import MemoryLimitError as MemoryLimitError
from exla.explain import Explanation as Explanation
from exla.explain import explain as explain
from exla.optimize import optimize_hlo as optimize_hlo
from exla.options import Options as Options
from exla.options import parse_size as parse_size
from exla.predict import predict_peak as predict_peak
from exla.predict import predict_time as predict_time
from exla.report import Report as Report

if TYPE_CHECKING:  # the frontends' names, loaded by __getattr__ at run time
    from exla.jax import jit as jit
    from exla.tensorflow import ExlaFunction as ExlaFunction
    from exla.tensorflow import ProgramInfo as ProgramInfo
    from exla.tensorflow import function as function

__version__ = "0.1.0"

__all__ = ["function", "jit", "explain", "optimize_hlo", "parse_size", "Options", "Report", "ExlaError",
           "MemoryLimitError", "ExlaFunction", "Explanation", "ProgramInfo", "__version__",
           "predict_peak", "predict_time"]

# Each frontend imports its framework at its top: its names are imported on
# first use (PEP 562), so that `import exla` loads neither TensorFlow nor jax.
_FRONTEND_NAMES = {"function": "exla.tensorflow", "ExlaFunction": "exla.tensorflow",
                   "ProgramInfo": "exla.tensorflow", "jit": "exla.jax"}


_EXTRAS = {"exla.tensorflow": "tensorflow", "exla.jax": "jax"}


def __getattr__(name: str) -> Any:
    if name not in _FRONTEND_NAMES:
        raise AttributeError(f"module 'exla' has no attribute {name!r}")
    frontend = _FRONTEND_NAMES[name]
    try:
        module = importlib.import_module(frontend)
    except ImportError as e:
        raise FrontendUnavailableError(
            f"exla.{name} needs {frontend}, which cannot be imported here ({e}); install it "
            f"with pip install 'exla[{_EXTRAS[frontend]}]'") from e
    value = getattr(module, name)
    globals()[name] = value  # from now on an ordinary attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_FRONTEND_NAMES))
