"""exla: memory-safe XLA programs.

exla rewrites XLA HLO programs so that no intermediate tensor exceeds a size
limit: it replaces wasteful expressions, reorders matrix chains and splits
oversized computations into loops over slices, computing the same numbers.

>>> import exla
>>> exla.parse_size("100MiB")
104857600

Importing exla loads neither TensorFlow nor jax; they are imported when first
needed.
"""

from exla.explain import explain
from exla.function import function
from exla.jit import jit  # JAX
from exla.optimize import optimize_hlo
from exla.options import Options, parse_size
from exla.report import Report

__version__ = "0.1.0"

__all__ = ["function", "jit", "explain", "optimize_hlo", "parse_size", "Options", "Report", "__version__"]
