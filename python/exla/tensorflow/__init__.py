"""exla's TensorFlow frontend: :func:`exla.function` and everything only TensorFlow needs.

* :mod:`~exla.tensorflow.exla_function` — ``exla.function`` and
  :class:`ExlaFunction`, the dispatcher that runs a rewritten program or the
  original;
* :mod:`~exla.tensorflow.lowering` and :mod:`~exla.tensorflow.tracing` —
  tracing a function for a call and lining its tensors up with the HLO;
* :mod:`~exla.tensorflow.program` — one signature's program: HLO from
  TensorFlow, exla's pipeline, the ``XlaCallModule`` call
  (:mod:`~exla.tensorflow.program_cache` keeps one per signature,
  :class:`ProgramInfo` is its public view);
* :mod:`~exla.tensorflow.gradients` and :mod:`~exla.tensorflow.runtime_shapes`
  — the VJP of a rewritten program, and calls whose shapes are only known
  at run time;
* :mod:`~exla.tensorflow.explain` — :func:`exla.explain` for TensorFlow functions;
* :mod:`~exla.tensorflow.fallback` — what a function does when exla fails;
* :mod:`~exla.tensorflow.patch` — the zero-code path: every
  ``tf.function(jit_compile=True)`` through exla.

Every module here imports TensorFlow at its top, so :mod:`exla` loads this
package on first use of one of its names (``import exla`` loads no
framework). Importing it checks first that TensorFlow and jaxlib are
installed, in versions exla supports, with an error that names what is not.
"""

from exla.bridge.tensorflow_call import check_tensorflow

check_tensorflow()

from exla.tensorflow.exla_function import ExlaFunction as ExlaFunction  # noqa: E402
from exla.tensorflow.exla_function import function as function  # noqa: E402
from exla.tensorflow.program_info import ProgramInfo as ProgramInfo  # noqa: E402

__all__ = ["function", "ExlaFunction", "ProgramInfo"]
