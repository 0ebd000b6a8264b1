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

import jax

from exla._entry_settings import check_passes, split_settings, takes_settings
from exla.jax import compile_hook
from exla.options import explicit_settings

__all__ = ["jit"]

_log = logging.getLogger("exla")


@takes_settings(keep_kwargs=True)
def jit(fun: Callable[..., Any] | None = None, *,
        static_argnums: int | Sequence[int] | None = None,
        static_argnames: str | Iterable[str] | None = None,
        donate_argnums: int | Sequence[int] | None = None,
        donate_argnames: str | Iterable[str] | None = None,
        **kwargs: Any) -> Any:
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
        for ``jax.jit``; the other keywords that are not settings
        (``keep_unused``, ``inline``...) go to ``jax.jit`` unchanged.
      {SETTINGS}

    A setting left None comes from its environment variable, then
    ``EXLA_FLAGS``, then ``XLA_FLAGS``, read when a program is compiled. With
    ``memory_limit`` exla searches for the split that fits it at the lowest
    cost (see :func:`exla.optimize_hlo`).

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
            donate_argnums=donate_argnums, donate_argnames=donate_argnames, **kwargs)
    if not callable(fun):
        raise TypeError(f"exla.jit needs a callable, got {type(fun).__name__}: {fun!r}")
    settings, jax_jit_kwargs = split_settings(kwargs)
    settings = explicit_settings(settings, where="exla.jit")
    check_passes(settings)

    key = compile_hook.register(settings)
    name = getattr(fun, "__name__", None) or type(fun).__name__

    @functools.wraps(fun)
    def marked(*args: Any, **kwargs: Any) -> Any:
        return fun(*args, **kwargs)

    # The name is how the settings reach the module JAX compiles (module
    # jit_exla_<key>_<name>, or func exla_<key>_<name> when nested).
    marked.__name__ = marked.__qualname__ = compile_hook.marker(
        key, name, strict=bool(settings.get("strict")))
    jitted = jax.jit(marked, static_argnums=static_argnums, static_argnames=static_argnames,
                     donate_argnums=donate_argnums, donate_argnames=donate_argnames,
                     **jax_jit_kwargs)
    jitted.__name__ = name
    jitted.__qualname__ = getattr(fun, "__qualname__", name)
    jitted.__wrapped__ = fun
    jitted.exla_settings = settings
    return jitted

