"""Runs an HLO module with TensorFlow's own XLA: the one owner of ``XlaCallModule``.

Both ways exla runs a program in TensorFlow go through here: :func:`call_hlo`
(a module and its arguments, for tools, tests and experiments) and
:func:`xla_call_module` (the op inside the graph ``exla.function`` traces), with
one rule for the platform, :func:`current_platform`.

The module is converted to a StableHLO portable artifact (:mod:`exla.bridge.xla`)
and executed by TensorFlow's ``XlaCallModule`` op inside a
``tf.function(jit_compile=True)``, so it runs on whatever device TensorFlow uses,
compiled by the XLA that TensorFlow ships. This is how exla executes rewritten
programs, and how the tests compare them with the originals.

TensorFlow is imported on first use: this module imports without it (as in
the JAX-only environment), and :func:`check_tensorflow` names what is missing.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import hashlib
import logging
import threading
from typing import Any, Sequence

import numpy as np

from exla._hlo_signature import ArrayShape, HloSignature, read_signature
from exla.bridge import tensorflow as tf_private
from exla.bridge import versions, xla
from exla.options import strip_xla_flags

__all__ = ["call_hlo", "current_platform", "tf_dtype", "xla_call_module", "XLA_CALL_MODULE_VERSION",
           "check_tensorflow"]

_log = logging.getLogger("exla")

# XlaCallModule op version: 9 is the version TensorFlow 2.21's own jax2tf
# writes, and the one exla's tests run every rewritten program with.
XLA_CALL_MODULE_VERSION = 9

# XLA primitive type -> TensorFlow dtype name.
_DTYPES = {
    "pred": "bool",
    "s8": "int8",
    "s16": "int16",
    "s32": "int32",
    "s64": "int64",
    "u8": "uint8",
    "u16": "uint16",
    "u32": "uint32",
    "u64": "uint64",
    "f16": "float16",
    "bf16": "bfloat16",
    "f32": "float32",
    "f64": "float64",
    "c64": "complex64",
    "c128": "complex128",
    "f8e4m3fn": "float8_e4m3fn",
    "f8e5m2": "float8_e5m2",
}


@functools.lru_cache(maxsize=1)
def check_tensorflow() -> str:
    """Imports TensorFlow and jaxlib and checks both are versions exla supports; returns TF's.

    exla's TensorFlow path uses both: TensorFlow runs the rewritten program,
    jaxlib converts it (:mod:`exla.bridge.xla`).

    Raises:
      ImportError: either is missing, or outside the supported range
        (:class:`exla.bridge.versions.UnsupportedVersionError`, naming it),
        or TensorFlow lacks a private piece exla uses (:mod:`exla.bridge.tensorflow`).
    """
    try:
        import tensorflow as tf  # on first use (module doc), and so for every import below
    except ImportError as e:
        raise ImportError("exla's TensorFlow support needs TensorFlow (pip install "
                          f"'exla[tensorflow]'); importing it failed: {e}") from e
    versions.check("tensorflow", tf.__version__)
    tf_private.check_private_api()
    xla._xla()
    return tf.__version__


def tf_dtype(shape: ArrayShape) -> Any:
    """The TensorFlow dtype of an array of an HLO signature.

    Raises:
      NotImplementedError: an element type TensorFlow has no dtype for.
    """
    import tensorflow as tf

    if shape.element_type not in _DTYPES:
        raise NotImplementedError(
            f"element type {shape.element_type!r} has no TensorFlow equivalent")
    return tf.as_dtype(_DTYPES[shape.element_type])


# -- where the program runs ---------------------------------------------------

@functools.lru_cache(maxsize=1)
def _gpu_platform() -> str | None:
    import tensorflow as tf

    if not tf.config.list_logical_devices("GPU"):
        return None
    return "ROCM" if tf.test.is_built_with_rocm() else "CUDA"


def _requested_device() -> str:
    """The device scope in effect where the call is being made ('' if none)."""
    import tensorflow as tf

    if tf.executing_eagerly():
        return tf_private.eager_device_name()
    try:
        # A graph's device scope is only visible on the ops created in it.
        with tf.name_scope("exla_device_probe"):
            return tf.no_op().device or ""
    except Exception:  # pragma: no cover - defensive: the probe is best effort
        return ""


def _platform_for_device(device: str, gpu_platform: str | None) -> str:
    """``XlaCallModule`` platform for a TensorFlow device string.

    >>> _platform_for_device("/job:localhost/replica:0/task:0/device:CPU:0", "CUDA")
    'CPU'
    >>> _platform_for_device("", "CUDA"), _platform_for_device("", None), _platform_for_device("/GPU:0", "ROCM")
    ('CUDA', 'CPU', 'ROCM')
    """
    upper = device.upper()
    if "TPU" in upper:
        return "TPU"
    if "CPU" in upper or gpu_platform is None:
        return "CPU"
    return gpu_platform


def current_platform() -> str:
    """The ``XlaCallModule`` platform TensorFlow will run an XLA cluster on from here.

    TensorFlow places an XLA cluster on a GPU when one is visible and no
    ``tf.device`` scope asks for the CPU, so exla follows the same rule, in
    eager code and while tracing a graph alike; it never assumes the CPU.
    """
    return _platform_for_device(_requested_device(), _gpu_platform())


# -- the call -------------------------------------------------------------------

def xla_call_module(artifact: bytes, args: Sequence[Any], signature: HloSignature,
                    platform: str) -> list:
    """Adds an ``XlaCallModule`` op running ``artifact`` to the graph being traced.

    The one place exla calls the op. It only runs compiled, so it must be
    called while tracing a ``tf.function(jit_compile=True)``.

    Args:
      artifact: StableHLO portable artifact (:mod:`exla.bridge.xla`).
      args: one tensor per entry parameter.
      signature: the module's entry signature (result shapes and dtypes).
      platform: from :func:`current_platform`.

    Returns:
      One tensor per leaf of the entry computation's result.
    """
    from tensorflow.compiler.tf2xla.ops import gen_xla_ops

    return list(gen_xla_ops.xla_call_module(
        args=list(args),
        version=XLA_CALL_MODULE_VERSION,
        module=artifact,
        Sout=[list(r.dims) for r in signature.results],
        Tout=[tf_dtype(r) for r in signature.results],
        platforms=[platform],
        dim_args_spec=[],
        function_list=[],
        has_token_input_output=False,
        disabled_checks=[],
    ))


@dataclasses.dataclass
class _Compiled:
    function: Any  # the tf.function
    signature: HloSignature


_CACHE_SIZE = 64
_cache: "collections.OrderedDict[tuple[str, str], _Compiled]" = collections.OrderedDict()
_cache_lock = threading.Lock()


def _make_function(text: str, platform: str) -> _Compiled:
    import tensorflow as tf

    # TensorFlow aborts on exla's flags in XLA_FLAGS when it first compiles.
    strip_xla_flags()
    signature = read_signature(text)
    artifact = xla.text_to_portable_artifact(text)

    @tf.function(jit_compile=True, autograph=False)
    def run(*args):
        return xla_call_module(artifact, args, signature, platform)

    return _Compiled(run, signature)


def _compiled(text: str, platform: str) -> _Compiled:
    key = (hashlib.sha256(text.encode()).hexdigest(), platform)
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    compiled = _make_function(text, platform)
    with _cache_lock:
        _cache[key] = compiled
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return compiled


def _check_arguments(args: list, signature: HloSignature) -> None:
    if len(args) != len(signature.parameters):
        raise ValueError(
            f"the module takes {len(signature.parameters)} arguments, got {len(args)}")
    for i, (arg, parameter) in enumerate(zip(args, signature.parameters)):
        if arg.dtype != tf_dtype(parameter) or tuple(arg.shape) != parameter.dims:
            raise ValueError(
                f"argument {i} is {arg.dtype.name}{list(arg.shape)} but the module's parameter "
                f"{i} is {parameter.element_type}{list(parameter.dims)}")


def call_hlo(text: str, args: Sequence[Any], platform: str | None = None) -> list:
    """Runs an HLO module with TensorFlow's XLA and returns its results.

    Args:
      text: HLO text of the module.
      args: one value per entry parameter (tensors, numpy arrays or anything
        ``tf.convert_to_tensor`` takes), with the parameters' dtypes and shapes.
      platform: ``XlaCallModule``'s platform name, ``"CPU"``, ``"CUDA"``,
        ``"ROCM"`` or ``"TPU"``. Defaults to the device TensorFlow places ops
        an XLA cluster on from here (:func:`current_platform`).

    Returns:
      One ``tf.Tensor`` per leaf of the entry computation's result, in order;
      a single array result gives a list of one tensor.

    Raises:
      ValueError: XLA rejects the module, or the arguments do not match the
        module's parameters.

    The compiled ``tf.function`` is cached per (module text, platform).
    """
    import tensorflow as tf

    if platform is None:
        platform = current_platform()
    compiled = _compiled(text, platform)
    tensors = []
    for arg, parameter in zip(args, compiled.signature.parameters):
        # Python numbers and lists take the parameter's dtype; arrays and
        # tensors keep theirs, so that a wrong precision is an error, not a
        # silent conversion.
        if isinstance(arg, (int, float, bool, complex, list, tuple)) and not isinstance(arg, np.generic):
            arg = tf.convert_to_tensor(arg, dtype=tf_dtype(parameter))
        tensors.append(tf.convert_to_tensor(arg))
    tensors.extend(tf.convert_to_tensor(a) for a in args[len(tensors):])
    _check_arguments(tensors, compiled.signature)
    results = compiled.function(*tensors)
    return list(results)
