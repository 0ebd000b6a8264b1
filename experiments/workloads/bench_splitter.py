"""Benchmarks of the tensor splitter (issue 4): time, peak memory, pass time.

Run: python -m experiments bench_splitter [--large]

1. Kernel matvec, N = 20,000, f64: plain TensorFlow jit vs the same program
   rewritten by exla (threshold 100MB, split 20MB); both fit in memory here.
   Median of 3 runs after a warm-up.
2. Kernel matvec beyond memory: N = 60,000 (28.8 GB kernel matrix) and, with
   --large, N = 200,000 (320 GB): exla's wall time and the child's peak memory
   (cgroup), each in its own process.
3. Time of the tensor-splitter pass itself on the GPflow SGPR loss-and-gradient
   program (N = 20,000, M = 1,000).
4. Pass time against program size: an elementwise chain of n oversized
   f32[100,100] instructions (threshold 1 KB) ending in the program's output
   (nothing can be split) or in a reduction, n = 400 ... 5,000
   (``--chain-only`` runs just this part).
Results are printed and appended to experiments/results/bench_splitter.json.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import statistics
import sys
import time

from experiments import REPO_ROOT, RESULTS_DIR



def _kernel_matvec_program():
    import tensorflow as tf

    @tf.function(jit_compile=True)
    def kmv(x, v):
        d = tf.reduce_sum((x[:, None, :] - x[None, :, :]) ** 2, -1)
        return tf.matmul(tf.exp(-0.5 * d), v)

    return kmv


def _inputs(n: int):
    import numpy as np

    rng = np.random.default_rng(0)
    return rng.uniform(size=(n, 3)), rng.normal(size=(n, 1))


def _rewritten(function, args, threshold="100MB", split_size="20MB") -> str:
    from exla.bridge import xla as bridge
    from exla.optimize import optimize_hlo

    text = bridge.proto_to_text(function.experimental_get_compiler_ir(*args)(stage="hlo_serialized"))
    out, report = optimize_hlo(text, threshold=threshold, split_size=split_size)
    assert report.changed, "exla did not rewrite the program"
    return out


def _median_seconds(run, repeats: int = 3) -> float:
    run()  # warm-up: compilation
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench_overhead(n: int = 20_000) -> dict:
    from exla.bridge.tensorflow_call import call_hlo

    kmv = _kernel_matvec_program()
    x, v = _inputs(n)
    plain = _median_seconds(lambda: kmv(x, v).numpy())
    text = _rewritten(kmv, (x, v))
    split = _median_seconds(lambda: call_hlo(text, [x, v])[0].numpy())
    # The rewritten program's output, against the plain program's.
    difference = _relative_error(call_hlo(text, [x, v])[0].numpy(), kmv(x, v).numpy())
    return {"n": n, "plain_s": plain, "exla_s": split, "ratio": split / plain,
            "rel_difference_vs_plain": difference}


def _relative_error(actual, expected) -> float:
    """Largest absolute difference over the largest magnitude of ``expected``."""
    import numpy as np

    return float(np.max(np.abs(actual - expected)) / max(float(np.max(np.abs(expected))), 1e-300))


def _sampled_reference(x, v, rows):
    """K(x[rows], x) v in float64 with NumPy: the exact result at a sample of rows."""
    import numpy as np

    d = ((x[rows, None, :] - x[None, :, :]) ** 2).sum(-1)
    return np.exp(-0.5 * d) @ v


def _child(n: int) -> None:
    """Runs one kernel matvec with exla in this process (for peak memory)."""
    import numpy as np
    import tensorflow as tf

    from exla.bridge.tensorflow_call import call_hlo

    kmv = _kernel_matvec_program()
    x, v = _inputs(n)
    spec = (tf.TensorSpec((n, 3), tf.float64), tf.TensorSpec((n, 1), tf.float64))
    text = _rewritten(kmv, spec)
    start = time.perf_counter()
    result = call_hlo(text, [x, v])[0].numpy()
    seconds = time.perf_counter() - start
    # 64 rows checked against NumPy (all n rows would be O(n^2) work here).
    rows = np.random.default_rng(1).choice(n, size=min(n, 64), replace=False)
    error = _relative_error(result[rows], _sampled_reference(x, v, rows))
    print(json.dumps({"seconds": seconds, "rel_error_sampled_rows": error}))


def bench_beyond_memory(n: int, cap: int = 8 * 10**9) -> dict:
    from exla.memory_cap import run_capped

    import exla

    exla_path = str(pathlib.Path(exla.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([exla_path, str(REPO_ROOT)]),
               TF_CPP_MIN_LOG_LEVEL="2")
    run = run_capped([sys.executable, "-m", "experiments", "bench_splitter", "--child", str(n)],
                     cap, env=env)
    if run.returncode != 0:
        return {"n": n, "failed": run.returncode, "out_of_memory": run.out_of_memory,
                "stderr": run.stderr[-500:]}
    child = json.loads(run.stdout.strip().splitlines()[-1])
    return {"n": n, "kernel_matrix_GB": n * n * 8 / 1e9, "wall_s": child["seconds"],
            "process_s": run.seconds, "rel_error_sampled_rows": child["rel_error_sampled_rows"],
            # None where the cap could not measure the child (no cgroup): not 0.
            "peak_GB": run.peak_bytes / 1e9 if run.peak_bytes else None, "cap_GB": cap / 1e9}


def bench_pass_time() -> dict:
    from exla import _core
    from exla.bridge import xla as bridge
    from exla.options import Options

    import tensorflow as tf

    from experiments.workloads import sgpr

    # The SGPR experiment's program at N = 20,000, M = 1,000: the same GPflow
    # program as the tests' splitter workload that this used to build, with other
    # data and starting hyperparameters (the same instructions).
    function = tf.function(sgpr.loss_and_gradients(sgpr.make_model(1_000, 20_000)), jit_compile=True)
    text = bridge.proto_to_text(function.experimental_get_compiler_ir()(stage="hlo_serialized"))
    seconds = []
    for _ in range(5):
        optimized = _core.optimize(text, Options(passes=["tensor-splitter"], threshold=20 * 10**6,
                                                 split_size=5 * 10**6))
        seconds.append(optimized.passes[0].seconds)
    return {"instructions": _core.module_summary(text).instructions,
            "splitter_s_best": min(seconds), "splitter_s_median": statistics.median(seconds)}


def chain_program(n: int, ends_in_reduction: bool) -> str:
    """An elementwise chain of ``n`` f32[100,100] instructions from a broadcast."""
    ops = ("exponential", "negate", "tanh", "abs")
    lines = ["HloModule chain", "", "add {", "  a = f32[] parameter(0)", "  b = f32[] parameter(1)",
             "  ROOT c = f32[] add(a, b)", "}", "", "ENTRY main {", "  p = f32[100] parameter(0)",
             "  v0 = f32[100,100] broadcast(p), dimensions={0}"]
    for i in range(1, n):
        root = "ROOT " if i == n - 1 and not ends_in_reduction else ""
        lines.append(f"  {root}v{i} = f32[100,100] {ops[i % 4]}(v{i - 1})")
    if ends_in_reduction:
        lines += ["  zero = f32[] constant(0)",
                  f"  ROOT r = f32[100] reduce(v{n - 1}, zero), dimensions={{1}}, to_apply=add"]
    return "\n".join(lines + ["}", ""])


def bench_chain(sizes=(400, 800, 2000, 5000)) -> list[dict]:
    from exla import _core
    from exla.options import Options

    rows = []
    for n in sizes:
        for ending in ("output", "reduction"):
            text = chain_program(n, ending == "reduction")
            seconds = []
            for _ in range(3):
                optimized = _core.optimize(text, Options(passes=["tensor-splitter"], threshold=1000))
                out = optimized.text
                seconds.append(optimized.passes[0].seconds)
            rows.append({"n": n, "ending": ending, "splitter_s_median": statistics.median(seconds),
                         "loops": out.count(" while(")})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments bench_splitter",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--large", action="store_true", help="also N = 200,000 (takes minutes)")
    parser.add_argument("--chain-only", action="store_true", help="only the pass-time chain")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args.child)
        return 0
    results = {"machine": {"cores": os.cpu_count(), "python": platform.python_version()}}
    results["pass_time_chain"] = bench_chain()
    for row in results["pass_time_chain"]:
        print("splitter pass on a chain:", row, flush=True)
    if args.chain_only:
        _append(results)
        return 0
    results["overhead_20k"] = bench_overhead()
    print("kernel matvec N=20,000:", results["overhead_20k"], flush=True)
    results["pass_time_sgpr"] = bench_pass_time()
    print("splitter pass on SGPR gradients:", results["pass_time_sgpr"], flush=True)
    for n in [60_000] + ([200_000] if args.large else []):
        results[f"beyond_memory_{n}"] = bench_beyond_memory(n)
        print(f"kernel matvec N={n:,}:", results[f"beyond_memory_{n}"], flush=True)
    _append(results)
    return 0


def _append(results: dict) -> None:
    RESULTS_DIR.mkdir(exist_ok=True)
    with open(RESULTS_DIR / "bench_splitter.json", "a") as f:
        f.write(json.dumps(results) + "\n")
