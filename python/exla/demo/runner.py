"""`python -m exla demo`: a program that needs more memory than the machine has.

The program (:mod:`exla.demo.tensorflow_program`) is ordinary TensorFlow; with ``--jax``
its twin :mod:`exla.demo.jax_program` is ordinary JAX (``jax.jit``). Both are a
Gaussian-kernel matrix-vector product whose kernel matrix alone is
N² × 8 bytes (28.8 GB at N = 60,000). It runs twice in a child process under a
hard memory cap: once as it is, once with exla's flags in ``XLA_FLAGS``. The
demonstration then checks exla's result against a NumPy reference computed in
row blocks and prints XLA's planned memory for both versions of the program.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from typing import Iterator

import numpy as np

from exla.bridge import xla as bridge
from exla.memory_cap import run_capped
from exla.optimize import optimize_hlo
from exla.options import format_size, parse_size


def _reference_rows(n: int, rows: np.ndarray) -> np.ndarray:
    """K(X, X) v for the chosen rows only, as the program's data."""
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(n, 3))
    v = rng.normal(size=(n, 1))
    d = ((x[rows, None, :] - x[None, :, :]) ** 2).sum(-1)
    return np.exp(-0.5 * d) @ v


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Silences what C++ libraries write to file descriptor 2 (TensorFlow's CUDA probing).

    absl prints those lines before TF_CPP_MIN_LOG_LEVEL is read, so only
    redirecting the descriptor keeps the demonstration's output its own.
    """
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _program_hlo(n: int, use_jax: bool) -> str:
    """HLO text of the demonstration's program for N points."""
    # Only the framework the demonstration runs is imported (--jax: jax, else TensorFlow).
    if use_jax:
        import jax

        from exla.demo.jax_program import kernel_matvec  # enables float64

        spec = jax.ShapeDtypeStruct
        return kernel_matvec.lower(spec((n, 3), "float64"), spec((n, 1), "float64")).as_text(dialect="hlo")
    import tensorflow as tf

    from exla.demo.tensorflow_program import kernel_matvec

    x = tf.TensorSpec((n, 3), tf.float64)
    v = tf.TensorSpec((n, 1), tf.float64)
    return bridge.proto_to_text(kernel_matvec.experimental_get_compiler_ir(x, v)(stage="hlo_serialized"))


def _planned_memory(n: int, threshold: int, split_size: int, use_jax: bool = False) -> tuple[int, int]:
    """XLA's planned temporary memory for the program, before and after exla."""
    with _quiet_stderr():
        before = _program_hlo(n, use_jax)
    after, _ = optimize_hlo(before, threshold=threshold, split_size=split_size)
    return bridge.planned_memory(before).temp_bytes, bridge.planned_memory(after).temp_bytes


def _run(n: int, cap: int, xla_flags: str | None, output: str, use_jax: bool = False):
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "EXLA_FLAGS")}
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    if xla_flags:
        env["XLA_FLAGS"] = xla_flags
    program = "exla.demo.jax_program" if use_jax else "exla.demo.tensorflow_program"
    return run_capped([sys.executable, "-m", program, str(n), output], cap, env=env)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m exla demo", description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=60_000, help="number of points (default 60000)")
    parser.add_argument("--cap", default="8GB", help="memory cap for each run (default 8GB)")
    parser.add_argument("--threshold", default="100MB")
    parser.add_argument("--split-size", default="20MB")
    parser.add_argument("--jax", action="store_true",
                        help="run the JAX twin of the program (jax.jit) instead of TensorFlow's")
    args = parser.parse_args(argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # this process imports TF later
    n, cap = args.n, parse_size(args.cap)
    threshold, split_size = parse_size(args.threshold), parse_size(args.split_size)
    flags = f"--xla_tensor_size_threshold={args.threshold} --xla_tensor_split_size={args.split_size}"

    print(f"K(X, X) v with N = {n:,} points (float64): the kernel matrix alone is "
          f"{format_size(n * n * 8)}; each run is capped at {format_size(cap)}.\n")
    with tempfile.TemporaryDirectory() as tmp:
        output = os.path.join(tmp, "result.npy")
        plain_name = "plain JAX (jax.jit)" if args.jax else "plain TensorFlow + XLA (jit_compile=True)"
        print(f"1. {plain_name} ...", flush=True)
        plain = _run(n, cap, None, output, args.jax)
        if plain.returncode == 0:
            print(f"   finished in {plain.seconds:.1f} s (peak {format_size(plain.peak_bytes)})")
        else:
            what = "ran out of memory" if plain.out_of_memory else f"failed ({plain.returncode})"
            print(f"   {what} after {plain.seconds:.1f} s (limit {format_size(cap)}, {plain.mechanism})")

        print(f"2. the same script with XLA_FLAGS=\"{flags}\" ...", flush=True)
        exla_run = _run(n, cap, flags, output, args.jax)
        if exla_run.returncode != 0:
            print(f"   failed ({exla_run.returncode}):\n{exla_run.stderr[-3000:]}")
            return 1
        print(f"   {exla_run.stdout.strip()}; peak memory {format_size(exla_run.peak_bytes)}")
        result = np.load(output)

    rows = np.random.default_rng(1).choice(n, size=min(n, 200), replace=False)
    expected = _reference_rows(n, rows)
    error = np.abs(result[rows] - expected).max() / np.abs(expected).max()
    print(f"   result[:3] = {result[:3, 0]}; relative error on 200 rows vs NumPy: {error:.1e}")
    before, after = _planned_memory(n, threshold, split_size, args.jax)
    print(f"\nXLA's planned temporary memory: {format_size(before)} without exla, "
          f"{format_size(after)} with exla.")
    return 0 if error < 1e-10 else 1

