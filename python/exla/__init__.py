"""exla: memory-safe XLA programs.

exla rewrites XLA HLO programs so that no intermediate tensor exceeds a size
limit: it replaces wasteful expressions, reorders matrix chains and splits
oversized computations into loops over slices, computing the same numbers.

>>> import exla
>>> exla.parse_size("100MiB")
104857600

The public API is what this module exports (``exla.__all__``); modules whose
names start with ``_`` are private. :mod:`exla.memory_cap` (running a command
under a hard memory limit) and :mod:`exla.options` (flags and settings) are
public modules of their own.

Importing exla loads neither TensorFlow nor jax; they are imported when first
needed.
"""

from exla.errors import ExlaError as ExlaError
from exla.errors import MemoryLimitError as MemoryLimitError
from exla.explain import Explanation as Explanation
from exla.explain import explain as explain
from exla.jax import jit as jit
from exla.optimize import optimize_hlo as optimize_hlo
from exla.options import Options as Options
from exla.options import parse_size as parse_size
from exla.predict import predict_peak as predict_peak
from exla.predict import predict_time as predict_time
from exla.report import Report as Report
from exla.tensorflow import ExlaFunction as ExlaFunction
from exla.tensorflow import ProgramInfo as ProgramInfo
from exla.tensorflow import function as function

__version__ = "0.1.0"

__all__ = ["function", "jit", "explain", "optimize_hlo", "parse_size", "Options", "Report", "ExlaError",
           "MemoryLimitError", "ExlaFunction", "Explanation", "ProgramInfo", "__version__",
           "predict_peak", "predict_time"]
