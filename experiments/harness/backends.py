"""How the experiments reach TensorFlow's XLA and exla (child side).

The ONE place that decides how a function goes through exla (:func:`exla_path`):

* ``flags``: the unchanged script, with ``XLA_FLAGS=--xla_tensor_size_threshold=...``
  and exla's autoload hook (``exla._autoload``, installed as a ``.pth`` by
  ``pip install .``); the function is the plain ``tf.function(jit_compile=True)``.
* ``function``: ``exla.function(fn, threshold=..., split_size=...)``.
* ``adapter``: trace the HLO, ``exla.optimize_hlo``, ``call_hlo`` (no gradients,
  no captured variables).

``EXLA_EXPERIMENT_PATH`` forces one; the default picks the first available.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any, Callable, Sequence

__all__ = ["exla_path", "flags_env", "jit", "exla_compile", "planned_temp_mb"]


def exla_path() -> str:
    """``flags``, ``function`` or ``adapter``: how this machine's exla is used."""
    forced = os.environ.get("EXLA_EXPERIMENT_PATH")
    if forced:
        return forced
    if importlib.util.find_spec("exla._autoload") is not None:
        return "flags"
    if importlib.util.find_spec("exla.function") is not None:
        return "function"
    return "adapter"


def flags_env(threshold: str | None, split_size: str | None,
              fast_math: bool = False) -> dict[str, str]:
    """Environment for a child running exla (XLA_FLAGS in the ``flags`` path)."""
    path = exla_path()
    env = {"EXLA_EXPERIMENT_PATH": path}
    if path == "flags" and threshold:
        flags = [os.environ.get("XLA_FLAGS", ""), f"--xla_tensor_size_threshold={threshold}"]
        if split_size:
            flags.append(f"--xla_tensor_split_size={split_size}")
        if fast_math:
            flags.append("--exla_fast_math")
        env["XLA_FLAGS"] = " ".join(f for f in flags if f)
    return env


def jit(fn: Callable[..., Any]) -> Any:
    """Plain TensorFlow: ``tf.function(fn, jit_compile=True)``."""
    import tensorflow as tf

    return tf.function(fn, jit_compile=True)


def exla_compile(fn: Callable[..., Any], threshold: str, split_size: str | None,
                 fast_math: bool = False) -> Any:
    """``fn`` compiled through exla, by :func:`exla_path`'s route."""
    path = exla_path()
    if path == "flags":
        return jit(fn)  # the unchanged script; XLA_FLAGS is set for this process
    if path == "function":
        from exla.function import function

        return function(fn, threshold=threshold, split_size=split_size, strict=True,
                        fast_math=fast_math)
    return _Adapter(jit(fn), threshold, split_size, fast_math)


class _Adapter:
    """Trace HLO -> ``exla.optimize_hlo`` -> ``call_hlo``, cached per input shapes."""

    def __init__(self, tf_fn: Any, threshold: str, split_size: str | None,
                 fast_math: bool = False) -> None:
        self.tf_fn, self.threshold, self.split_size = tf_fn, threshold, split_size
        self.fast_math = fast_math
        self._texts: dict[tuple, str] = {}

    def __call__(self, *args: Any) -> Any:
        import exla
        from exla.bridge.tensorflow_call import call_hlo

        key = tuple((tuple(a.shape), str(a.dtype)) for a in args)
        if key not in self._texts:
            hlo = self.tf_fn.experimental_get_compiler_ir(*args)(stage="hlo_serialized")
            self._texts[key], _ = exla.optimize_hlo(hlo, threshold=self.threshold,
                                                    split_size=self.split_size,
                                                    fast_math=self.fast_math)
        out = call_hlo(self._texts[key], list(args))
        return out[0] if len(out) == 1 else out


def planned_temp_mb(tf_fn: Any, args: Sequence[Any], threshold: str | None,
                    split_size: str | None, fast_math: bool = False) -> tuple[float, float | None]:
    """XLA's planned temporary memory (MiB) of ``tf_fn`` as it is and after exla."""
    import exla

    hlo = tf_fn.experimental_get_compiler_ir(*args)(stage="hlo_serialized")
    if threshold is None:
        from exla.bridge import xla

        return xla.planned_memory(xla.proto_to_text(hlo)).temp_bytes / 2**20, None
    _, report = exla.optimize_hlo(hlo, threshold=threshold, split_size=split_size,
                                  planned_memory=True, fast_math=fast_math)
    return (report.planned_temp_bytes_before / 2**20, report.planned_temp_bytes_after / 2**20)
