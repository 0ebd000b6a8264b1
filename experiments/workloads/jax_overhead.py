"""Per-call overhead of exla's JAX integration on a program exla leaves unchanged.

Run: python -m experiments jax_overhead [--calls 5000] [--rounds 7]

A small step (a 64 x 64 matmul layer) called eagerly, median time per call of

* plain ``jax.jit``,
* ``exla.jit`` with a threshold no tensor reaches (nothing to split),
* plain ``jax.jit`` with exla's compile hook in place (the ``XLA_FLAGS`` path),

measured in interleaved rounds, each the median of ``--calls`` calls. exla.jit
is a ``jax.jit`` function and the hook acts only at compile time, so the three
should agree within noise. Also printed: the first call (trace + exla's passes
+ XLA compile) of each.
"""

from __future__ import annotations

import argparse
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

import exla


def layer(w, x):
    return jnp.tanh(x @ w) + 1.0


def _per_call_us(fn, args, calls: int) -> float:
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        fn(*args).block_until_ready()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def _first_call_s(fn, args) -> float:
    start = time.perf_counter()
    fn(*args).block_until_ready()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments jax_overhead",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    w = jnp.asarray(rng.normal(size=(64, 64)).astype(np.float32))
    x = jnp.asarray(rng.normal(size=(64, 64)).astype(np.float32))

    from exla.jax import compile_hook as _jax_compile

    plain = jax.jit(layer)
    ours = exla.jit(layer, threshold="1GB")
    first = {"jax.jit": _first_call_s(plain, (w, x)), "exla.jit": _first_call_s(ours, (w, x))}
    _jax_compile.enable_environment()  # what XLA_FLAGS does: every jax.jit through exla
    hooked = jax.jit(lambda w, x: layer(w, x))
    first["jax.jit + hook"] = _first_call_s(hooked, (w, x))
    fns = {"jax.jit": plain, "exla.jit": ours, "jax.jit + hook": hooked}
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(args.rounds):
        for name, fn in fns.items():
            samples[name].append(_per_call_us(fn, (w, x), args.calls))
    print(f"jax {jax.__version__}, {args.rounds} interleaved rounds x {args.calls} calls "
          f"(median per round; spread = min..max over rounds)")
    for name, values in samples.items():
        print(f"  {name:15s} {statistics.median(values):7.2f} us/call "
              f"(spread {min(values):.2f}..{max(values):.2f}); first call {first[name] * 1e3:.1f} ms")
    return 0
