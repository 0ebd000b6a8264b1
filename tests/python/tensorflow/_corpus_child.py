"""Child of test_executed_plan: real TensorFlow programs through exla under memory limits.

Run with TensorFlow's XLA dumping (``--xla_dump_to``, set by the parent before
TensorFlow starts). Prints one JSON line: for each program (named after its
function, as TensorFlow names the compiled module), exla's planned peak of
the plan chosen, whether it fits, and how often the rewritten program ran.
"""

from __future__ import annotations

import json
import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import exla  # noqa: E402

from tests.python.tensorflow import _workloads  # noqa: E402

_RNG = np.random.default_rng(0)


def _normal(*shape: int, scale: float = 1.0):
    return tf.constant(_RNG.standard_normal(shape) * scale, tf.float32)


def kernel_matvec(x, y, v):
    """exp(-x yᵀ) v: the 2,000 x 1,500 kernel (24 MB in f64) is materialised by plain XLA."""
    return tf.linalg.matvec(tf.exp(-tf.matmul(x, y, transpose_b=True)), v)


def softmax_xent(h, w, labels):
    """Mean softmax cross entropy over 8,000 classes: 16 MB of logits."""
    logits = tf.matmul(h, w)
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))


def attention(q, k, v):
    """Single-head attention, forward and backward: 1,024 x 1,024 scores."""
    with tf.GradientTape() as tape:
        tape.watch([q, k, v])
        scores = tf.matmul(q, k, transpose_b=True) / 8.0
        out = tf.matmul(tf.nn.softmax(scores, -1), v)
        loss = tf.reduce_sum(out * out)
    return loss, tape.gradient(loss, [q, k, v])


def _sgpr_loss_grads():
    model = _workloads.sgpr_model(3000, 200)
    variables = list(model.trainable_variables)

    def sgpr_loss_grads():
        with tf.GradientTape() as tape:
            loss = model.training_loss()
        return loss, tape.gradient(loss, variables)

    return sgpr_loss_grads


def programs() -> list[tuple]:
    """``(function, args, settings)``: limits well below each program's plain plan."""
    x, y, v = _workloads.kmv_inputs(2000, 1500)
    labels = tf.constant(_RNG.integers(0, 8000, 512), tf.int32)
    return [
        (kernel_matvec, (x, y, v), {"memory_limit": "8MB"}),
        (softmax_xent, (_normal(512, 64), _normal(64, 8000, scale=0.1), labels),
         {"memory_limit": "12MB"}),
        (attention, (_normal(1024, 64), _normal(1024, 64), _normal(1024, 64)),
         {"memory_limit": "3MB"}),
        # The search starts from the threshold: fewer compilations of a large module.
        (_sgpr_loss_grads(), (), {"memory_limit": "6MB", "threshold": "1MB",
                                  "split_size": "256KB"}),
    ]


def main() -> None:
    out = {}
    for fn, args, settings in programs():
        f = exla.function(fn, strict=True, **settings)
        f(*args)
        info = f.programs[0]
        plan = info.report.limit_plan
        out[fn.__name__] = {"planned_peak": plan.peak_bytes, "plain_planned_peak":
                            plan.peak_bytes_before, "fits": plan.fits, "runs": info.runs, "limit": plan.limit,
                            "rewritten": info.rewritten}
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
