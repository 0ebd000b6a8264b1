"""``exla.explain`` for JAX functions (:func:`exla.jit`, ``jax.jit`` or plain Python)."""

from __future__ import annotations

import time
from typing import Any, Callable, Mapping, Sequence

import jax
import jax.extend.backend

from exla.bridge import jax as jax_bridge
from exla.bridge import xla as bridge
from exla.explanation import Explanation, explain_text
from exla.jax import compile_hook
from exla.memory_limit import planner
from exla.options import explicit_settings

__all__ = ["explain_jax"]


def explain_jax(fn: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any],
                settings: Mapping[str, Any]) -> Explanation:
    """What exla does to the program of ``fn(*args, **kwargs)``; see :func:`exla.explain`.

    ``settings`` (keywords of :func:`exla.explain`) override ``fn``'s own.
    """
    explicit = explicit_settings(settings, where="explain")
    options = compile_hook.resolve({**getattr(fn, "exla_settings", {}), **explicit})
    if not hasattr(fn, "lower"):
        fn = jax.jit(fn)

    start = time.perf_counter()
    lowered = fn.lower(*args, **kwargs)
    text = jax_bridge.lowered_hlo_text(lowered)
    with planner.planning_on(_default_backend_planner()):
        return explain_text(
            getattr(fn, "__name__", "function"), text, options,
            platform=jax.default_backend().upper(),
            inputs=[(tuple(a.shape), str(a.dtype)) for a in jax.tree.leaves(lowered.in_avals)],
            lowering_seconds=time.perf_counter() - start, convert=bridge.text_to_stablehlo,
            framework="jax")


def _default_backend_planner() -> planner.Planner:
    """XLA's figures from jax's default backend: the one the program would run on."""
    if jax.default_backend() == "cpu":
        return planner.cpu()
    backend = jax.extend.backend.get_backend()
    return planner.Planner(backend.platform, f"{backend.platform}:1",
                           lambda text: bridge.planned_memory(text, devices=1, client=backend))
