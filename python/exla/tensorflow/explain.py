"""``exla.explain`` for TensorFlow functions (:func:`exla.function`, ``tf.function`` or plain Python)."""

from __future__ import annotations

import time
from typing import Any

import tensorflow as tf

from exla.bridge import xla as bridge
from exla.explanation import Explanation, explain_text
from exla.options import Options
from exla.tensorflow.program import extract_hlo, start_runtime

__all__ = ["explain_function"]


def explain_function(exla_fn: Any, options: Options, args: tuple, kwargs: dict) -> Explanation:
    """Lowers ``exla_fn`` (an :class:`exla.tensorflow.ExlaFunction`) for the call and runs the passes."""
    start = time.perf_counter()
    concrete, flat_specs, platform = exla_fn.lower(args, kwargs)
    with tf.init_scope():
        text = extract_hlo(concrete, flat_specs, platform)
    return explain_text(
        getattr(exla_fn.python_function, "__name__", "function"), text, options,
        platform=platform, inputs=[(tuple(s.shape.as_list()), s.dtype.name) for s in flat_specs],
        lowering_seconds=time.perf_counter() - start,
        convert=bridge.text_to_portable_artifact, framework="tensorflow",
        start_runtime=start_runtime)
