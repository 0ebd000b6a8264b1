"""exla's JAX path on the machine's accelerator: four workloads, plain and under a memory limit.

    python -m experiments gpu_check [--scale gpu|cpu] [--out results.json] [--timeout 150]

JAX only (no TensorFlow), one command, for one GPU in under 8 minutes; it
runs on a CPU too (``--scale cpu``: sizes for a laptop, which is how the tests
exercise it). Workloads, each plain (``jax.jit``) and under ``exla.jit(...,
memory_limit=...)``:

* ``kernel_matvec``: ``exp(-|x_i - x_j|^2 / 2) @ v``, f32, d = 3; on the GPU
  n = 200,000, whose 160 GB kernel matrix exceeds an H200's 141 GB;
* ``attention``: ``jax.nn.dot_product_attention(q, k, v, is_causal=True,
  implementation="xla")``, the loss ``sum(o * g)`` and its gradients in q, k,
  v (1 x seq x 8 heads x 64, f32);
* ``cross_entropy``: an LM head, ``log_softmax(h @ W)`` at integer labels,
  mean loss and gradients in h and W (f32);
* ``sgpr``: the collapsed SGPR bound of GPflow's ``SGPR`` written in JAX
  (squared-exponential kernel, f64), with its gradients in the inducing
  points and the hyperparameters.

Each (workload, mode) runs in its own child process, so that the device's
peak-memory counter starts from zero. A row gives XLA's planned peak of the
executable that ran (``Compiled.memory_analysis()``: temporaries, arguments,
outputs, less aliased outputs), the device's measured peak
(``device.memory_stats()["peak_bytes_in_use"]``, where the backend offers
it: GPUs do, the CPU does not), the median time of the timed calls after a
warm-up, whether exla's rewrite is what ran and whether its planned peak is
within the limit, and errors: normwise relative error against plain
``jax.jit`` (where that ran) and against a float64 reference, computed by
NumPy on the host for 256 sampled rows (kernel matvec) or by a float64
``jax.jit`` of the same function (float32 workloads), at the size itself or,
where plain float64 would not fit, at a check size with a limit that still
makes exla split (:class:`Setting`). The float64 SGPR is compared with plain
only. A plain run that runs out of memory is a row with its error message:
that is the point of the check.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, NamedTuple

import numpy as np

from experiments import REPO_ROOT

__all__ = ["WORKLOADS", "SCALES", "run_child", "main"]


class Workload(NamedTuple):
    """A program, its inputs at a size, and how its error is judged."""

    fn: Callable[..., Any]
    make_args: Callable[[dict, Any], tuple]
    float64_rows: Callable[[tuple, Any], float] | None  # sampled float64 check (None: jit's)


# ----- the programs ------------------------------------------------------------


def kernel_matvec(x, v):
    import jax.numpy as jnp

    d = jnp.sum((x[:, None, :] - x[None, :, :]) ** 2, -1)
    return jnp.exp(-0.5 * d) @ v


def _kernel_matvec_args(size: dict, dtype) -> tuple:
    rng = np.random.default_rng(0)
    n = size["n"]
    return rng.uniform(size=(n, 3)).astype(dtype), rng.normal(size=n).astype(dtype)


def _kernel_matvec_rows(args: tuple, out: Any) -> float:
    """Normwise error of 256 sampled rows against NumPy in float64."""
    x, v = (np.asarray(a, np.float64) for a in args)
    rows = np.random.default_rng(1).choice(len(x), size=min(256, len(x)), replace=False)
    exact = np.exp(-0.5 * ((x[rows, None, :] - x[None, :, :]) ** 2).sum(-1)) @ v
    got = np.asarray(out, np.float64)[rows]
    return float(np.linalg.norm(got - exact) / np.linalg.norm(exact))


def attention(q, k, v, g):
    import jax
    import jax.numpy as jnp

    def loss(q, k, v):
        o = jax.nn.dot_product_attention(q, k, v, is_causal=True, implementation="xla")
        return jnp.sum(o * g)

    return jax.value_and_grad(loss, argnums=(0, 1, 2))(q, k, v)


def _attention_args(size: dict, dtype) -> tuple:
    rng = np.random.default_rng(0)
    shape = (1, size["seq"], 8, 64)
    return tuple(rng.normal(size=shape).astype(dtype) * s for s in (0.5, 0.5, 1.0, 1.0))


def cross_entropy(h, w, labels):
    import jax
    import jax.numpy as jnp

    def loss(h, w):
        logits = jax.nn.log_softmax(h @ w, axis=-1)
        return -jnp.mean(jnp.take_along_axis(logits, labels[:, None], axis=1))

    return jax.value_and_grad(loss, argnums=(0, 1))(h, w)


def _cross_entropy_args(size: dict, dtype) -> tuple:
    rng = np.random.default_rng(0)
    n, d, vocab = size["tokens"], size["hidden"], size["vocab"]
    return (rng.normal(size=(n, d)).astype(dtype), (rng.normal(size=(d, vocab)) / d ** 0.5).astype(dtype),
            rng.integers(0, vocab, size=n).astype(np.int32))


def sgpr_bound(x, y, z, log_lengthscale, log_variance, log_noise):
    """GPflow's SGPR collapsed evidence lower bound (Titsias 2009), squared-exponential kernel."""
    import jax.numpy as jnp
    from jax.scipy.linalg import cholesky, solve_triangular

    ls, var, noise = jnp.exp(log_lengthscale), jnp.exp(log_variance), jnp.exp(log_noise)

    def k(a, b):
        d = jnp.sum(a ** 2, 1)[:, None] + jnp.sum(b ** 2, 1)[None, :] - 2 * a @ b.T
        return var * jnp.exp(-0.5 * jnp.maximum(d, 0) / ls ** 2)

    n, m = x.shape[0], z.shape[0]
    kuu = k(z, z) + 1e-6 * jnp.eye(m, dtype=x.dtype)
    kuf = k(z, x)
    sigma = jnp.sqrt(noise)
    chol = cholesky(kuu, lower=True)
    a = solve_triangular(chol, kuf, lower=True) / sigma
    b = jnp.eye(m, dtype=x.dtype) + a @ a.T
    chol_b = cholesky(b, lower=True)
    c = solve_triangular(chol_b, a @ y, lower=True) / sigma
    bound = -0.5 * n * jnp.log(2 * jnp.pi) - jnp.sum(jnp.log(jnp.diag(chol_b)))
    bound -= 0.5 * n * jnp.log(noise) + 0.5 * jnp.sum(y ** 2) / noise - 0.5 * jnp.sum(c ** 2)
    bound -= 0.5 * (n * var / noise - jnp.sum(a ** 2))
    return bound


def sgpr(x, y, z, log_lengthscale, log_variance, log_noise):
    import jax

    return jax.value_and_grad(sgpr_bound, argnums=(2, 3, 4, 5))(
        x, y, z, log_lengthscale, log_variance, log_noise)


def _sgpr_args(size: dict, dtype) -> tuple:
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(size["n"], 3))
    y = np.sin(3 * x).sum(1, keepdims=True) + 0.1 * rng.normal(size=(size["n"], 1))
    z = x[rng.choice(size["n"], size["m"], replace=False)]
    scalars = (np.log(0.5), np.log(1.0), np.log(0.01))
    return (x.astype(dtype), y.astype(dtype), z.astype(dtype)) + tuple(dtype(s) for s in scalars)


WORKLOADS = {
    "kernel_matvec": Workload(kernel_matvec, _kernel_matvec_args, _kernel_matvec_rows),
    "attention": Workload(attention, _attention_args, None),
    "cross_entropy": Workload(cross_entropy, _cross_entropy_args, None),
    "sgpr": Workload(sgpr, _sgpr_args, None),
}

class Setting(NamedTuple):
    """A workload's size at one scale, exla's memory limit there, and where
    its float32 error is judged against a float64 ``jax.jit``: at a check
    size with a limit that still makes exla split (plain float64 must fit),
    or at the size itself (``check`` None)."""

    size: dict
    limit: str
    dtype: str = "float32"
    check: dict | None = None
    check_limit: str | None = None


SCALES = {
    "gpu": {
        "kernel_matvec": Setting({"n": 200_000}, "2GB"),  # float64 rows sampled on the host
        "attention": Setting({"seq": 32_768}, "4GB", check={"seq": 4_096}, check_limit="64MB"),
        "cross_entropy": Setting({"tokens": 8_192, "hidden": 4_096, "vocab": 262_144}, "4GB",
                                 check={"tokens": 1_024, "hidden": 512, "vocab": 32_768},
                                 check_limit="64MB"),
        "sgpr": Setting({"n": 1_000_000, "m": 2_000}, "4GB", dtype="float64"),
    },
    "cpu": {
        "kernel_matvec": Setting({"n": 2_000}, "4MB"),
        "attention": Setting({"seq": 512}, "16MB"),
        "cross_entropy": Setting({"tokens": 256, "hidden": 64, "vocab": 4_096}, "4MB"),
        # On the CPU, jax lowers solve_triangular to a LAPACK custom call,
        # which the splitter cannot slice: the M x N solve stays whole.
        "sgpr": Setting({"n": 4_000, "m": 200}, "48MB", dtype="float64"),
    },
}


# ----- one (workload, mode) in this process ----------------------------------------


def _norm_error(got: Any, expected: Any) -> float:
    import jax

    pairs = zip(jax.tree.leaves(got), jax.tree.leaves(expected))
    errors = []
    for a, b in pairs:
        a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
        errors.append(float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300)))
    return max(errors)


def _planned_peak(compiled: Any) -> int:
    m = compiled.memory_analysis()
    return int(m.temp_size_in_bytes + m.argument_size_in_bytes + m.output_size_in_bytes
               - m.alias_size_in_bytes)


def _device_peak() -> int | None:
    import jax

    stats = jax.devices()[0].memory_stats()
    return None if not stats else int(stats.get("peak_bytes_in_use", 0))


def _timed(compiled: Any, args: tuple, repeats: int) -> tuple[Any, list[float]]:
    import jax

    out = jax.block_until_ready(compiled(*args))  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = jax.block_until_ready(compiled(*args))
        times.append(time.perf_counter() - start)
    return out, times


def _compile(workload: Workload, mode: str, limit: str, args: tuple) -> tuple[Any, bool]:
    """The executable of ``mode`` and whether exla's rewrite is what it runs."""
    import jax

    import exla
    from exla.jax import compile_hook as _jax_compile

    if mode == "plain":
        return jax.jit(workload.fn).lower(*args).compile(), False
    before = len(_jax_compile.rewritten_programs())
    compiled = exla.jit(workload.fn, memory_limit=limit).lower(*args).compile()
    return compiled, len(_jax_compile.rewritten_programs()) > before


def _float64_check(workload: Workload, mode: str, setting: Setting, args32: tuple,
                   out: Any) -> float:
    """The mode's float32 error against a float64 jax.jit, at the check size
    (compiled again there, with the check's limit) or at the size itself."""
    import jax

    from exla.bridge.xla import enable_x64

    check = setting.size
    if setting.check is not None:
        check = setting.check
        args32 = workload.make_args(check, np.float32)
        compiled, _ = _compile(workload, mode, setting.check_limit, args32)
        out = compiled(*args32)
    got = out
    with enable_x64():
        args64 = workload.make_args(check, np.float64)
        expected = jax.jit(workload.fn)(*args64)
    return _norm_error(got, expected)


def run_child(name: str, mode: str, scale: str, repeats: int) -> dict:
    """One row: ``name`` in ``mode`` ("plain" or "exla") at ``scale``, in this process."""
    import jax

    from exla.bridge.xla import enable_x64

    workload, setting = WORKLOADS[name], SCALES[scale][name]
    size, limit, dtype_name = setting.size, setting.limit, setting.dtype
    dtype = np.dtype(dtype_name).type
    row: dict[str, Any] = {"workload": name, "mode": mode, "size": size,
                           "limit": limit if mode == "exla" else "", "dtype": dtype_name,
                           "backend": jax.default_backend(), "device": str(jax.devices()[0])}
    context = enable_x64() if dtype_name == "float64" else _null()
    with context:
        args = workload.make_args(size, dtype)
        start = time.perf_counter()
        compiled, rewritten = _compile(workload, mode, limit, args)
        row.update(compile_s=time.perf_counter() - start, ran_rewritten=rewritten,
                   planned_peak_bytes=_planned_peak(compiled))
        out, times = _timed(compiled, args, repeats)
        row.update(time_s=statistics.median(times), times_s=times, device_peak_bytes=_device_peak())
        if workload.float64_rows is not None:
            row["error_vs_float64"] = workload.float64_rows(args, out)
        elif dtype_name == "float32":
            row["error_vs_float64"] = _float64_check(workload, mode, setting, args, out)
            row["error_at"] = setting.check or size
        row["outputs"] = _save(out)
    if mode == "exla":
        from exla.options import parse_size

        row["meets_limit"] = row["planned_peak_bytes"] <= parse_size(limit)
    return row


class _null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


def _save(out: Any) -> str:
    """The outputs, to a temporary .npz the parent compares with plain's."""
    import tempfile

    import jax

    with tempfile.NamedTemporaryFile(suffix=".npz", prefix="exla_gpu_check_", delete=False) as f:
        np.savez(f, *[np.asarray(leaf) for leaf in jax.tree.leaves(out)])
    return f.name


# ----- the parent: one child per row, then the table ------------------------------


def _child(name: str, mode: str, args: argparse.Namespace) -> dict:
    command = [sys.executable, "-m", "experiments", "gpu_check", "--child", name, mode,
               "--scale", args.scale, "--repeats", str(args.repeats)]
    start = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout,
                              cwd=REPO_ROOT)
    except subprocess.TimeoutExpired:
        return {"workload": name, "mode": mode, "status": f"timeout after {args.timeout:.0f} s"}
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        status = "out of memory" if "RESOURCE_EXHAUSTED" in done.stderr or "out of memory" in \
            done.stderr.lower() else f"failed (exit {done.returncode})"
        return {"workload": name, "mode": mode, "status": status, "message": " | ".join(tail)[-600:],
                "wall_s": time.perf_counter() - start}
    row = json.loads(done.stdout.strip().splitlines()[-1])
    row.update(status="ok", wall_s=time.perf_counter() - start)
    return row


def _compare(rows: list[dict]) -> None:
    """exla's outputs against plain's, where both ran."""
    by_key = {(r["workload"], r["mode"]): r for r in rows}
    for (name, mode), row in by_key.items():
        plain = by_key.get((name, "plain"), {})
        path = row.get("outputs")
        if mode != "exla" or path is None:
            continue
        if plain.get("status") == "ok" and plain.get("outputs"):
            with np.load(path) as ours, np.load(plain["outputs"]) as theirs:
                row["error_vs_plain"] = max(
                    float(np.linalg.norm(ours[k].astype(np.float64) - theirs[k]) /
                          max(np.linalg.norm(theirs[k].astype(np.float64)), 1e-300))
                    for k in ours.files)
    for row in rows:
        if row.get("outputs"):
            os.remove(row.pop("outputs"))


def _mb(value: Any) -> str:
    return "-" if value is None else f"{value / 2**20:,.1f} MiB"


def table(rows: list[dict]) -> str:
    """The rows as a Markdown table (sizes in MiB)."""
    lines = ["| workload | mode | status | planned peak | within limit | device peak | time | "
             "error vs float64 | error vs plain | exla's program ran |", "|" + "---|" * 10]
    for r in rows:
        f64 = r.get("error_vs_float64")
        time_s = f"{r['time_s']:.3g} s" if "time_s" in r else "-"
        lines.append(
            f"| {r['workload']} {r.get('size', '')} | {r['mode']} {r.get('limit', '')} | "
            f"{r.get('status')} | {_mb(r.get('planned_peak_bytes'))} | "
            f"{r.get('meets_limit', '-')} | {_mb(r.get('device_peak_bytes'))} | {time_s} | "
            f"{'-' if f64 is None else f'{f64:.2e}'} | "
            f"{'-' if 'error_vs_plain' not in r else format(r['error_vs_plain'], '.2e')} | "
            f"{r.get('ran_rewritten', '-')} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments gpu_check", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", choices=sorted(SCALES), default=None,
                        help="sizes: gpu (one large GPU) or cpu; default: by jax's backend")
    parser.add_argument("--workloads", nargs="+", choices=sorted(WORKLOADS), default=list(WORKLOADS))
    parser.add_argument("--repeats", type=int, default=3, help="timed calls after the warm-up")
    parser.add_argument("--timeout", type=float, default=150.0, help="seconds per child")
    parser.add_argument("--out", type=Path, default=None, help="write the rows as JSON here")
    parser.add_argument("--child", nargs=2, metavar=("WORKLOAD", "MODE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(run_child(*args.child, args.scale, args.repeats)))
        return 0
    if args.scale is None:
        import jax

        args.scale = "cpu" if jax.default_backend() == "cpu" else "gpu"
    rows = []
    for name in args.workloads:
        for mode in ("plain", "exla"):
            rows.append(_child(name, mode, args))
            print(f"{name} {mode}: {rows[-1].get('status')} ({rows[-1].get('wall_s', 0):.1f} s)",
                  file=sys.stderr, flush=True)
    _compare(rows)
    print(table(rows))
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"scale": args.scale, "rows": rows}, indent=1))
    return 0
