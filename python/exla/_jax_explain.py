"""``exla.explain`` for JAX functions (:func:`exla.jit`, ``jax.jit`` or plain Python)."""

from __future__ import annotations

import dataclasses
import logging
import time
from typing import Any, Callable, Sequence

__all__ = ["is_jax_function", "explain_jax"]

_log = logging.getLogger("exla")


def is_jax_function(fn: Any) -> bool:
    """An :func:`exla.jit` or ``jax.jit`` function (checked without importing jax)."""
    from exla.jit import is_exla_jit

    return is_exla_jit(fn) or type(fn).__module__.split(".")[0] in ("jax", "jaxlib")


def explain_jax(fn: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any], *,
                threshold: int | str | None, split_size: int | str | None,
                passes: Sequence[str] | None, memory_limit: int | str | None = None) -> Any:
    """What exla does to the program of ``fn(*args, **kwargs)``; see :func:`exla.explain`."""
    import jax

    from exla import _jax_compile
    from exla.explain import Explanation
    from exla.optimize import optimize_hlo
    from exla.report import Report

    settings = dict(getattr(fn, "exla_settings", {}))
    settings.update({k: v for k, v in (("threshold", threshold), ("split_size", split_size),
                                        ("passes", passes), ("memory_limit", memory_limit))
                     if v is not None})
    options = _jax_compile.resolve(settings)
    if not hasattr(fn, "lower"):
        fn = jax.jit(fn)
    name = getattr(fn, "__name__", "function")

    start = time.perf_counter()
    lowered = fn.lower(*args, **kwargs)
    from exla.bridge import jax as jax_bridge

    text = jax_bridge.lowered_hlo_text(lowered)
    lowered_at = time.perf_counter()

    def optimize(planned_memory: bool) -> tuple[str, Report]:
        return optimize_hlo(text, threshold=options.threshold, split_size=options.split_size,
                            memory_limit=options.memory_limit, passes=options.passes,
                            dump_dir=options.dump_dir, planned_memory=planned_memory)

    planned_error = None
    try:
        after, report = optimize(True)
    except (ValueError, RuntimeError) as exc:
        planned_error = str(exc)
        _log.warning("exla.explain(%s): XLA's planned memory is unavailable: %s", name, exc)
        after, report = optimize(False)
    rewritten = report.rewrote_program
    conversion = 0.0
    if rewritten:
        from exla.bridge import xla as bridge

        t0 = time.perf_counter()
        bridge.text_to_stablehlo(after)
        conversion = time.perf_counter() - t0
    explanation = Explanation(**{f.name: getattr(report, f.name) for f in dataclasses.fields(Report)})
    explanation.function = name
    explanation.platform = jax.default_backend().upper()
    explanation.inputs = [(tuple(a.shape), str(a.dtype)) for a in jax.tree.leaves(lowered.in_avals)]
    explanation.rewritten = rewritten
    explanation.hlo_before = text
    explanation.hlo_after = after if rewritten else text
    explanation.lowering_seconds = lowered_at - start
    explanation.conversion_seconds = conversion
    explanation.exla_seconds = explanation.lowering_seconds + report.seconds + conversion
    explanation.planned_memory_error = planned_error
    return explanation
