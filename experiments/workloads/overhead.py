"""Overhead of exla's TensorFlow integration (issue 3).

Run: python -m experiments overhead [--calls 3000] [--json PATH]

1. Per-call overhead when no pass changes anything: a small jit-compiled step
   (a 64x64 matmul layer that also updates a variable) called eagerly. Median
   time per call of
     * plain ``tf.function(jit_compile=True)``,
     * the same wrapped by ``exla.function`` (no threshold: nothing to split),
     * the plain function with exla's autoload patch installed (the
       ``XLA_FLAGS`` path),
   measured in interleaved rounds, each the median of ``--calls`` calls.
2. First-call cost on the GPflow SGPR loss-and-gradients program (N = 2,000,
   M = 100, threshold 100KB, where the tensor splitter rewrites the program):
   the first call of plain TensorFlow (trace + XLA compile + run) and of
   exla (trace + lowering + passes + StableHLO conversion + XLA compile +
   run), exla's own share from ``exla.explain`` (lowering, passes,
   conversion), and the steady-state time per call of both, with the
   *original* module run through ``XlaCallModule`` as a control (it separates
   the cost of the integration from the run time of the rewritten program).
Figures are printed (and written as JSON with --json).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from typing import Any, Callable

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")


def _median_call_us(fn: Callable[[], Any], calls: int) -> float:
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def per_call_overhead(calls: int, rounds: int = 5) -> dict:
    """Median µs per eager call: plain jit vs exla.function vs the autoload patch."""
    import numpy as np
    import tensorflow as tf

    import exla
    from exla.tensorflow import patch as _tf_patch

    rng = np.random.default_rng(0)
    w = tf.Variable(rng.normal(size=(64, 64)).astype(np.float32))
    steps = tf.Variable(0)

    def step(x):
        steps.assign_add(1)
        return tf.tanh(x @ w) + 1.0

    x = tf.constant(rng.normal(size=(64, 64)).astype(np.float32))
    plain = tf.function(step, jit_compile=True)
    wrapped = exla.function(step)
    patched = tf.function(step, jit_compile=True)
    for f in (plain, wrapped):
        f(x)
    _tf_patch.install()
    try:
        patched(x)
        programs = wrapped.programs + patched._exla_function.programs
        assert programs and not any(p.changed for p in programs), "a pass changed the program"
        results: dict[str, list[float]] = {"plain": [], "exla.function": [], "autoload patch": []}
        for _ in range(rounds):
            for name, f in (("plain", plain), ("exla.function", wrapped), ("autoload patch", patched)):
                for _ in range(50):
                    f(x)
                results[name].append(_median_call_us(lambda: f(x), calls))
    finally:
        _tf_patch.uninstall()
    return {name: statistics.median(values) for name, values in results.items()} | {
        "rounds": {name: values for name, values in results.items()}}


def _sgpr(n: int, m: int):
    import gpflow
    import numpy as np

    from experiments.workloads import sgpr

    rng = np.random.default_rng(1)
    x = rng.uniform(0, 10, (n, 1))
    y = np.sin(x) + 0.1 * rng.standard_normal(x.shape)
    z = np.linspace(0, 10, m)[:, None]
    model = gpflow.models.SGPR((x, y), gpflow.kernels.SquaredExponential(), inducing_variable=z)
    return sgpr.loss_and_gradients(model)


def _original_through_xla_call_module(exla_fn: Any, hlo: str, calls: int) -> float:
    """ms per call of the unmodified module run the way exla runs programs (XlaCallModule)."""
    import tensorflow as tf

    from exla.bridge.tensorflow_call import call_hlo

    concrete = exla_fn.original.get_concrete_function()
    variables = {id(v.handle): v for v in concrete.variables}
    args = [variables[id(c)].value() if c.dtype == tf.resource else c
            for c in concrete.captured_inputs]
    call_hlo(hlo, args)
    return _median_call_us(lambda: call_hlo(hlo, args), calls) / 1e3


def first_call_cost(n: int = 2000, m: int = 100, threshold: str = "100KB",
                    calls: int = 50) -> dict:
    """First and steady-state call times of the SGPR loss+gradients, plain vs exla."""
    import tensorflow as tf

    import exla

    tf.function(lambda x: x + 1, jit_compile=True)(tf.constant(1.0))  # XLA's one-time start-up
    plain = tf.function(_sgpr(n, m), jit_compile=True)
    start = time.perf_counter()
    plain_out = plain()
    plain_first = time.perf_counter() - start

    exla_fn = exla.function(_sgpr(n, m), threshold=threshold)
    start = time.perf_counter()
    exla_out = exla_fn()
    exla_first = time.perf_counter() - start
    program = exla_fn.programs[0]
    assert program.changed, "exla did not rewrite the SGPR program"
    difference = max(float(tf.reduce_max(tf.abs(a - b)))
                     for a, b in zip(tf.nest.flatten(plain_out), tf.nest.flatten(exla_out)))

    report = exla.explain(_sgpr(n, m), threshold=threshold)
    plain_steady = _median_call_us(plain, calls) / 1e3
    exla_steady = _median_call_us(exla_fn, calls) / 1e3
    control_steady = _original_through_xla_call_module(exla_fn, report.hlo_before, calls)
    return {
        "n": n, "m": m, "threshold": threshold,
        "changed_passes": report.changed_passes,
        "plain_first_call_s": plain_first,
        "exla_first_call_s": exla_first,
        "exla_program_build_s": program.seconds,
        "explain_lowering_s": report.lowering_seconds,
        "explain_passes_s": report.seconds,
        "explain_conversion_s": report.conversion_seconds,
        "largest_tensor_bytes": [report.largest_tensor_bytes_before, report.largest_tensor_bytes_after],
        "planned_temp_bytes": [report.planned_temp_bytes_before, report.planned_temp_bytes_after],
        "plain_steady_ms": plain_steady,
        "exla_steady_ms": exla_steady,
        "original_via_xla_call_module_ms": control_steady,
        "max_abs_difference": difference,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments overhead",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args(argv)
    import tensorflow as tf

    overhead = per_call_overhead(args.calls)
    first = first_call_cost()
    out = sys.stdout
    out.write(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
              f"TensorFlow {tf.__version__}\n\n")
    out.write(f"1. per-call time, eager, nothing rewritten (median of {args.calls} calls, "
              f"median of {len(overhead['rounds']['plain'])} rounds):\n")
    base = overhead["plain"]
    for name in ("plain", "exla.function", "autoload patch"):
        rounds = ", ".join(f"{v:.1f}" for v in overhead["rounds"][name])
        out.write(f"   {name:<15} {overhead[name]:8.1f} us  ({overhead[name] - base:+.1f} us; "
                  f"rounds: {rounds})\n")
    out.write(f"\n2. SGPR loss+gradients, N={first['n']}, M={first['m']}, threshold "
              f"{first['threshold']} (passes that changed it: {', '.join(first['changed_passes'])}):\n")
    out.write(f"   first call, plain TF (trace + compile + run):  {first['plain_first_call_s']:.2f} s\n")
    out.write(f"   first call, exla (trace + lower + passes + convert + compile + run): "
              f"{first['exla_first_call_s']:.2f} s\n")
    out.write(f"     of which exla's program build (lower + passes + convert): "
              f"{first['exla_program_build_s']:.2f} s\n")
    out.write(f"     explain: lowering {first['explain_lowering_s'] * 1e3:.0f} ms, passes "
              f"{first['explain_passes_s'] * 1e3:.0f} ms, conversion "
              f"{first['explain_conversion_s'] * 1e3:.0f} ms\n")
    out.write(f"   largest tensor {first['largest_tensor_bytes'][0]:,} B -> "
              f"{first['largest_tensor_bytes'][1]:,} B; XLA planned temp "
              f"{first['planned_temp_bytes'][0]:,} B -> {first['planned_temp_bytes'][1]:,} B\n")
    out.write(f"   steady state per call: plain {first['plain_steady_ms']:.2f} ms, "
              f"original module via XlaCallModule {first['original_via_xla_call_module_ms']:.2f} ms, "
              f"exla's rewritten program {first['exla_steady_ms']:.2f} ms; max |difference| "
              f"{first['max_abs_difference']:.2e}\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"per_call_us": overhead, "sgpr_first_call": first}, f, indent=2)
    return 0
