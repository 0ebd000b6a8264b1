"""``exla.explain`` for JAX functions (:func:`exla.jit`, ``jax.jit`` or plain Python)."""

from __future__ import annotations

import time
from typing import Any, Callable, Mapping, Sequence

from exla.memory_limit import planner

__all__ = ["is_jax_function", "explain_jax"]


def is_jax_function(fn: Any) -> bool:
    """An :func:`exla.jit` or ``jax.jit`` function (checked without importing jax)."""
    from exla.jax.exla_jit import is_exla_jit

    return is_exla_jit(fn) or type(fn).__module__.split(".")[0] in ("jax", "jaxlib")


def explain_jax(fn: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any],
                settings: Mapping[str, Any]) -> Any:
    """What exla does to the program of ``fn(*args, **kwargs)``; see :func:`exla.explain`.

    ``settings`` (keywords of :func:`exla.explain`) override ``fn``'s own.
    """
    import jax

    from exla.jax import compile_hook
    from exla.explanation import explain_text
    from exla.options import explicit_settings

    explicit = explicit_settings(settings, where="explain")
    options = compile_hook.resolve({**getattr(fn, "exla_settings", {}), **explicit})
    if not hasattr(fn, "lower"):
        fn = jax.jit(fn)

    start = time.perf_counter()
    lowered = fn.lower(*args, **kwargs)
    from exla.bridge import jax as jax_bridge
    from exla.bridge import xla as bridge

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
    import jax
    import jax.extend.backend

    from exla.bridge import xla as bridge

    if jax.default_backend() == "cpu":
        return planner.cpu()
    backend = jax.extend.backend.get_backend()
    return planner.Planner(backend.platform, f"{backend.platform}:1",
                            lambda text: bridge.planned_memory(text, devices=1, client=backend))
