"""The paper's workloads as TensorFlow programs, for the tensor-splitter tests.

Each builder returns the jit-compiled function and its arguments; sizes are
the ones the splitter issue names. References that avoid the oversized
intermediates (blocked NumPy or eager TensorFlow) live here too, so that a
test can check programs whose unsplit form would not fit in memory.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from experiments.workloads import sgpr, wide_mlp


def kernel_matvec(form: str):
    """Gaussian-kernel matrix-vector product K(X, X) v, in two spellings."""

    if form == "broadcast":

        @tf.function(jit_compile=True)
        def kmv(x, v):
            d = tf.reduce_sum((x[:, None, :] - x[None, :, :]) ** 2, -1)
            return tf.matmul(tf.exp(-0.5 * d), v)

    elif form == "expanded":

        @tf.function(jit_compile=True)
        def kmv(x, v):
            n = tf.reduce_sum(x * x, 1)
            d = n[:, None] + n[None, :] - 2.0 * tf.matmul(x, x, transpose_b=True)
            return tf.matmul(tf.exp(-0.5 * d), v)

    else:
        raise ValueError(form)
    return kmv


def kernel_matvec_inputs(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    return rng.uniform(size=(n, 3)), rng.normal(size=(n, 1))


def kernel_matvec_reference(x: np.ndarray, v: np.ndarray, block: int = 2000) -> np.ndarray:
    """K(X, X) v in row blocks (never more than block x n in memory)."""
    sq = (x * x).sum(1)
    out = np.empty((x.shape[0], v.shape[1]))
    for i in range(0, x.shape[0], block):
        xb = x[i : i + block]
        d = (xb * xb).sum(1)[:, None] + sq[None, :] - 2.0 * xb @ x.T
        np.maximum(d, 0.0, out=d)
        out[i : i + block] = np.exp(-0.5 * d) @ v
    return out


@tf.function(jit_compile=True)
def knn(queries, points):
    d = tf.reduce_sum((queries[:, None, :] - points[None, :, :]) ** 2, -1)
    return tf.math.top_k(-d, k=10)[1]


def knn_reference(queries: np.ndarray, points: np.ndarray, k: int = 10, block: int = 100):
    """Brute-force neighbours with eager TensorFlow kernels (no XLA), in blocks.

    Small blocks because eager TensorFlow's CPU allocator keeps what it once
    held: blocks of 1,000 queries against 50,000 points left 2 GB resident in
    the test process for the rest of the run, blocks of 100 leave 0.2 GB (and
    ran in 48 s against 69 s).
    """
    p = tf.constant(points)
    result = []
    for i in range(0, queries.shape[0], block):
        q = tf.constant(queries[i : i + block])
        d = tf.reduce_sum((q[:, None, :] - p[None, :, :]) ** 2, -1)
        result.append(tf.math.top_k(-d, k=k)[1].numpy())
    return np.concatenate(result)


def attention_fwd_bwd(batch: int, heads: int, seq: int, head_size: int, seed: int = 0):
    """Multi-head self-attention: output and gradients w.r.t. the projections."""
    rng = np.random.default_rng(seed)
    width = heads * head_size
    x = tf.constant(rng.normal(size=(batch, seq, width)).astype(np.float32))
    weights = [
        tf.Variable(rng.normal(size=(width, width)).astype(np.float32) * 0.05) for _ in range(3)
    ]

    def split_heads(t):
        return tf.transpose(tf.reshape(t, (batch, seq, heads, head_size)), (0, 2, 1, 3))

    @tf.function(jit_compile=True)
    def fwd_bwd(x):
        with tf.GradientTape() as tape:
            q, k, v = (split_heads(x @ w) for w in weights)
            a = tf.nn.softmax(tf.matmul(q, k, transpose_b=True) / np.sqrt(head_size), axis=-1)
            o = tf.reshape(tf.transpose(tf.matmul(a, v), (0, 2, 1, 3)), (batch, seq, width))
            loss = tf.reduce_sum(o**2)
        return loss, tape.gradient(loss, weights)

    return fwd_bwd, (x,)


def sgpr_loss_and_grads(n: int, m: int, seed: int = 0):
    """GPflow SGPR training loss and its gradients (f64)."""
    import gpflow

    rng = np.random.default_rng(seed)
    x = rng.uniform(size=(n, 3))
    y = np.sin(x.sum(1, keepdims=True)) + 0.1 * rng.normal(size=(n, 1))
    model = gpflow.models.SGPR(
        (x, y),
        gpflow.kernels.SquaredExponential(lengthscales=[0.5] * 3),
        inducing_variable=x[:m].copy(),
    )

    return tf.function(sgpr.loss_and_gradients(model), jit_compile=True), ()


# The wide-MLP workload and its float64 reference are the experiment's own
# (experiments/workloads/wide_mlp.py), so the test and the experiment measure one program.
MLP_LEARNING_RATE = wide_mlp.LEARNING_RATE


def wide_mlp_adam(hidden: int, n: int = 2000, dim: int = 32, seed: int = 0):
    """Full-batch Adam steps of a one-hidden-layer ReLU network (jit-compiled)."""
    step, args, params = wide_mlp.make_mlp(hidden, n, dim, seed)
    return tf.function(step, jit_compile=True), args, params


wide_mlp_adam_reference = wide_mlp.adam_reference
