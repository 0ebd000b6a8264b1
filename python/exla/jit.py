"""``exla.jit``: ``jax.jit`` with exla's passes between JAX and XLA.

>>> import jax, jax.numpy as jnp, numpy as np, exla
>>> @exla.jit(threshold="1MB")
... def kernel_matvec(x, v):
...     d = jnp.sum((x[:, None, :] - x[None, :, :]) ** 2, -1)   # 1000 x 1000 x 3
...     return jnp.exp(-0.5 * d) @ v
>>> x = np.random.rand(1000, 3).astype(np.float32); v = np.ones(1000, np.float32)
>>> bool(jnp.allclose(kernel_matvec(x, v), jax.jit(kernel_matvec.__wrapped__)(x, v), rtol=1e-5))
True
>>> report = exla.explain(kernel_matvec, x, v)
>>> report.rewritten, report.largest_tensor_bytes_after <= 1_000_000
(True, True)

How it works: ``exla.jit(f)`` *is* a ``jax.jit`` function (of a wrapper of
``f`` whose name carries exla's settings), so it has ``jax.jit``'s calling
convention, caches and methods (``.lower``, ``.trace``...). When JAX compiles
one of its programs, exla rewrites the module JAX hands to XLA; a program no
pass changes is compiled from JAX's own module, and a call costs exactly what
a ``jax.jit`` call costs.

Sharded programs (arrays placed with ``jax.sharding.NamedSharding``,
``in_shardings``/``out_shardings``, ``shard_map``) work the same way: exla
rewrites the program before XLA's SPMD partitioner cuts it between the
devices, and ``threshold``, ``split_size`` and ``memory_limit`` then bound
what *one device* holds.

Inside another trace (``jax.jit``, ``jax.grad``, ``jax.vmap``, ``lax.scan``
bodies...) an ``exla.jit`` function becomes a nested call in the outer program,
like ``jax.jit``; when the outer program is compiled, exla rewrites the *whole*
outer program with this function's settings (the smallest threshold, if several
``exla.jit`` functions are nested in it). The numbers are the same either way.
"""

from __future__ import annotations

import functools
import logging
from typing import Any, Callable, Iterable, Sequence

__all__ = ["jit", "is_exla_jit"]

_log = logging.getLogger("exla")


def _check_passes(passes: Sequence[str] | str | None) -> tuple[str, ...] | None:
    if passes is None:
        return None
    from exla.optimize import available_passes

    names = (passes,) if isinstance(passes, str) else tuple(passes)
    unknown = [p for p in names if p not in available_passes()]
    if unknown:
        raise ValueError(f"unknown exla passes {unknown}; available: {available_passes()}")
    return names


def jit(fun: Callable[..., Any] | None = None, *,
        static_argnums: int | Sequence[int] | None = None,
        static_argnames: str | Iterable[str] | None = None,
        donate_argnums: int | Sequence[int] | None = None,
        donate_argnames: str | Iterable[str] | None = None,
        memory_limit: int | str | None = None,
        threshold: int | str | None = None,
        split_size: int | str | None = None,
        passes: Sequence[str] | None = None,
        strict: bool = False,
        fast_math: bool = False,
        **jax_jit_kwargs: Any) -> Any:
    """``jax.jit`` whose programs exla rewrites so that no tensor exceeds ``threshold``.

    Usable as ``exla.jit(f, ...)``, ``@exla.jit`` or ``@exla.jit(threshold=...)``.

    >>> import jax.numpy as jnp, numpy as np, exla
    >>> @exla.jit(memory_limit="4MB")
    ... def kernel_sum(x):
    ...     return jnp.exp(-(x[:, None] - x[None, :]) ** 2).sum(1)   # 2000 x 2000: 16 MB
    >>> x = np.linspace(0, 1, 2000, dtype=np.float32)
    >>> bool(jnp.allclose(kernel_sum(x), kernel_sum.__wrapped__(x), rtol=1e-5))
    True

    Args:
      fun: the function to compile, as for ``jax.jit``.
      static_argnums, static_argnames, donate_argnums, donate_argnames: as
        for ``jax.jit``; ``**jax_jit_kwargs`` (``keep_unused``, ``inline``...)
        go to ``jax.jit`` unchanged.
      threshold: no tensor larger than this may remain outside a loop, e.g.
        ``"100MB"`` (see :func:`exla.parse_size`); default: ``EXLA_FLAGS`` /
        ``XLA_FLAGS`` (``--xla_tensor_size_threshold``), else no limit.
      split_size: the size of the slices of the splitter's loops.
      passes: the exla passes to run, in order; default: the whole pipeline.
      strict: raise :class:`exla.ExlaError` when exla fails, or cannot meet
        ``threshold``/``memory_limit``, instead of warning once and compiling
        the program as it is.
      memory_limit: XLA's planned peak memory of the whole program (its
        buffer assignment: arguments, outputs and temporaries), e.g.
        ``"4GB"``; exla searches for the split that fits it at the lowest
        cost (see :func:`exla.optimize_hlo`). Default: ``--xla_memory_limit``.
      fast_math: allow rewrites that change results beyond the program's own
        rounding (the squared-distance expansion, see
        :func:`exla.optimize_hlo`); default: ``--exla_fast_math``, else off.

    Returns:
      A ``jax.jit`` function (``jax.stages.Wrapped``): pytrees in and out,
      JAX arrays out, one compiled program per abstract signature.

    Raises:
      TypeError: ``fun`` is not callable.
      ValueError: a bad size, an unknown pass name, a boolean keyword that is
        not True or False, or (from ``jax.jit``) a static or donated argument
        the function does not have.
    """
    if fun is None:
        return functools.partial(
            jit, static_argnums=static_argnums, static_argnames=static_argnames,
            donate_argnums=donate_argnums, donate_argnames=donate_argnames,
            memory_limit=memory_limit, threshold=threshold, split_size=split_size,
            passes=passes, strict=strict, fast_math=fast_math, **jax_jit_kwargs)
    if not callable(fun):
        raise TypeError(f"exla.jit needs a callable, got {type(fun).__name__}: {fun!r}")
    from exla.options import keyword_bool, parse_size

    overrides = {
        "threshold": None if threshold is None else parse_size(threshold, flag="threshold"),
        "split_size": None if split_size is None else parse_size(split_size, flag="split_size"),
        "passes": _check_passes(passes),
        "memory_limit": None if memory_limit is None else parse_size(memory_limit, flag="memory_limit"),
        "strict": keyword_bool(strict, name="strict") or None,
        "fast_math": keyword_bool(fast_math, name="fast_math") or None,
    }

    import jax

    from exla import _jax_compile

    key = _jax_compile.register(overrides)
    name = getattr(fun, "__name__", None) or type(fun).__name__

    @functools.wraps(fun)
    def marked(*args: Any, **kwargs: Any) -> Any:
        return fun(*args, **kwargs)

    # The name is how the settings reach the module JAX compiles (module
    # jit_exla_<key>_<name>, or func exla_<key>_<name> when nested).
    marked.__name__ = marked.__qualname__ = _jax_compile.marker(key, name)
    jitted = jax.jit(marked, static_argnums=static_argnums, static_argnames=static_argnames,
                     donate_argnums=donate_argnums, donate_argnames=donate_argnames,
                     **jax_jit_kwargs)
    jitted.__name__ = name
    jitted.__qualname__ = getattr(fun, "__qualname__", name)
    jitted.__wrapped__ = fun
    jitted.exla_settings = {k: v for k, v in overrides.items() if v is not None}
    return jitted


def is_exla_jit(fn: Any) -> bool:
    """Whether ``fn`` was made by :func:`jit` (never imports jax)."""
    return isinstance(getattr(fn, "exla_settings", None), dict) and hasattr(fn, "lower")
