"""The program-level memory limit on three gradient workloads.

    PYTHONPATH=python python -m experiments.memory_limit [attention|sgpr|cross_entropy ...]

* attention forward + backward, 2 x 4 heads x 4,096 x 64 f32,
  ``memory_limit="256MB"``;
* GPflow SGPR loss + gradients, N = 20,000, M = 1,500, f64,
  ``memory_limit="300MB"``;
* large-vocabulary cross entropy, loss and gradients, batch 1,024 x width 256
  x vocabulary 500,000, f32, ``memory_limit="1500MB"``.

For each: XLA's planned peak (CPU buffer assignment) of the plain and the
rewritten program against the limit, the plan exla chose and how many XLA
compilations the search took, exla's own time, the time per evaluation of
exla's program and of plain XLA (median of ``--repeats`` calls after a
warm-up) and the largest difference of the results. Heavy: minutes per
workload on a small machine, hence not a test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
for _path in (str(REPO_ROOT), str(REPO_ROOT / "python")):
    if _path not in sys.path:
        sys.path.insert(0, _path)


def attention(batch: int = 2, heads: int = 4, seq: int = 4096, head_size: int = 64):
    """Multi-head self-attention: loss and gradients w.r.t. the three projections."""
    import tensorflow as tf

    rng = np.random.default_rng(0)
    width = heads * head_size
    x = tf.constant(rng.normal(size=(batch, seq, width)).astype(np.float32))
    weights = [tf.Variable(rng.normal(size=(width, width)).astype(np.float32) * 0.05)
               for _ in range(3)]

    def split_heads(t):
        return tf.transpose(tf.reshape(t, (batch, seq, heads, head_size)), (0, 2, 1, 3))

    def fwd_bwd(x):
        with tf.GradientTape() as tape:
            q, k, v = (split_heads(x @ w) for w in weights)
            scores = tf.matmul(q, k, transpose_b=True) / np.sqrt(head_size)
            o = tf.matmul(tf.nn.softmax(scores, axis=-1), v)
            loss = tf.reduce_sum(o**2)
        return loss, tape.gradient(loss, weights)

    return fwd_bwd, (x,)


def sgpr(n: int = 20_000, m: int = 1_500):
    """GPflow SGPR training loss and its gradients (f64)."""
    import gpflow

    from experiments import sgpr as sgpr_experiment

    x, y, _, _ = sgpr_experiment.make_data(n)
    model = gpflow.models.SGPR((x, y), gpflow.kernels.SquaredExponential(lengthscales=[0.5] * 3),
                               inducing_variable=x[:m].copy())
    return sgpr_experiment.loss_and_gradients(model), ()


def cross_entropy(batch: int = 1024, width: int = 256, vocab: int = 500_000):
    """Large-vocabulary softmax cross entropy (f32): loss and gradients for h and W.

    The logits are batch x vocab (2 GB); the weight gradient (512 MB) is a
    program output, so a loop over the batch must accumulate it whole.
    """
    import tensorflow as tf

    rng = np.random.default_rng(0)
    h = rng.normal(size=(batch, width)).astype(np.float32)
    w = (rng.normal(size=(width, vocab)) * 0.05).astype(np.float32)
    labels = rng.integers(0, vocab, size=(batch,)).astype(np.int32)

    def loss_and_gradients(h, w, labels):
        with tf.GradientTape() as tape:
            tape.watch([h, w])
            logits = h @ w
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=labels, logits=logits))
        return loss, tape.gradient(loss, [h, w])

    return loss_and_gradients, (h, w, labels)


WORKLOADS = {"attention": (attention, "256MB"), "sgpr": (sgpr, "300MB"),
             "cross_entropy": (cross_entropy, "1500MB")}


def _flat(result) -> list[np.ndarray]:
    import tensorflow as tf

    return [np.asarray(t) for t in tf.nest.flatten(result)]


def _time_both(plain, rewritten, args, repeats: int):
    """Median seconds per call of both functions, timed alternately.

    Alternating puts both under the same load on a shared machine; the first
    call of each (tracing, exla, compilation) is not timed.
    """
    expected, actual = _flat(plain(*args)), _flat(rewritten(*args))
    times: dict[str, list[float]] = {"plain": [], "exla": []}
    for _ in range(repeats):
        for key, fn in (("plain", plain), ("exla", rewritten)):
            start = time.perf_counter()
            _flat(fn(*args))
            times[key].append(time.perf_counter() - start)
    return (statistics.median(times["plain"]), statistics.median(times["exla"]), expected, actual)


def measure(name: str, repeats: int) -> None:
    import tensorflow as tf

    import exla
    from exla.bridge import xla as bridge
    from exla.options import format_size

    build, limit = WORKLOADS[name]
    fn, args = build()
    start = time.perf_counter()
    explanation = exla.explain(fn, *args, memory_limit=limit)
    explain_seconds = time.perf_counter() - start
    plan = explanation.limit_plan
    print(f"== {name}, memory_limit={limit}")
    print(explanation)
    before = bridge.planned_memory(explanation.hlo_before).total_bytes
    after = bridge.planned_memory(explanation.hlo_after).total_bytes
    print(f"planned peak (XLA CPU): plain {format_size(before)}, exla {format_size(after)}, "
          f"limit {limit}: {'met' if after <= exla.parse_size(limit) else 'NOT met'}")
    print(f"search: {len(plan.candidates)} candidates, {plan.xla_compiles} XLA compilations "
          f"{plan.xla_seconds:.2f} s; exla passes {plan.exla_seconds:.2f} s; explain in all "
          f"{explain_seconds:.1f} s")
    plain_seconds, exla_seconds, expected, actual = _time_both(
        tf.function(fn, jit_compile=True), exla.function(fn, memory_limit=limit), args, repeats)
    worst = max(float(np.max(np.abs(a - e)) / (np.max(np.abs(e)) or 1.0))
                for a, e in zip(actual, expected))
    print(f"time per evaluation: plain XLA {plain_seconds:.3f} s, exla {exla_seconds:.3f} s "
          f"({exla_seconds / plain_seconds:.2f}x); largest relative difference {worst:.2e}; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workloads", nargs="*", default=list(WORKLOADS), choices=list(WORKLOADS))
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    for name in args.workloads:
        measure(name, args.repeats)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
