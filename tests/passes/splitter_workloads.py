"""The paper's workloads as TensorFlow programs, for the tensor-splitter tests.

Each builder returns the jit-compiled function and its arguments; sizes are
the ones the splitter issue names. References that avoid the oversized
intermediates (blocked NumPy or eager TensorFlow) live here too, so that a
test can check programs whose unsplit form would not fit in memory.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf


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


def knn_reference(queries: np.ndarray, points: np.ndarray, k: int = 10, block: int = 1000):
    """Brute-force neighbours with eager TensorFlow kernels (no XLA), in blocks."""
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

    @tf.function(jit_compile=True)
    def loss_and_grads():
        with tf.GradientTape() as tape:
            loss = model.training_loss()
        return loss, tape.gradient(loss, model.trainable_variables)

    return loss_and_grads, ()


# With a million hidden units every Adam step moves the output by about
# hidden * lr; 1e-6 keeps the loss well-scaled (1e-3 makes it explode).
MLP_LEARNING_RATE = 1e-6


def wide_mlp_adam(hidden: int, steps: int = 3, n: int = 2000, dim: int = 32, seed: int = 0):
    """`steps` full-batch Adam steps of a one-hidden-layer ReLU network.

    Returns the jit-compiled step function (whose program updates the
    weights and Adam's slots), its arguments and the variables to read back.
    """
    import tf_keras

    rng = np.random.default_rng(seed)
    x = tf.constant(rng.normal(size=(n, dim)).astype(np.float32))
    y = tf.constant(rng.normal(size=(n, 1)).astype(np.float32))
    w1 = tf.Variable(rng.normal(size=(dim, hidden)).astype(np.float32) / np.sqrt(dim))
    b1 = tf.Variable(np.zeros(hidden, np.float32))
    w2 = tf.Variable(rng.normal(size=(hidden, 1)).astype(np.float32) / np.sqrt(hidden))
    params = [w1, b1, w2]
    optimizer = tf_keras.optimizers.Adam(MLP_LEARNING_RATE)
    optimizer.build(params)

    @tf.function(jit_compile=True)
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((tf.nn.relu(x @ w1 + b1) @ w2 - y) ** 2)
        optimizer.apply_gradients(zip(tape.gradient(loss, params), params))
        return loss

    return step, (x, y), params


def wide_mlp_adam_reference(x, y, w1, b1, w2, steps: int = 3, lr: float = MLP_LEARNING_RATE,
                            block: int = 50_000):
    """The same Adam steps in float64 NumPy, in blocks of hidden units.

    Every quantity but the network output decomposes over hidden units, so no
    block needs more than n x block numbers. Adam as tf_keras implements it.
    """
    x, y = np.float64(x), np.float64(y)
    params = [np.float64(w1), np.float64(b1), np.float64(w2)]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    beta1, beta2, eps = 0.9, 0.999, 1e-7
    hidden, n = params[1].shape[0], x.shape[0]
    losses = []
    for step in range(1, steps + 1):
        w1, b1, w2 = params
        out = np.zeros((n, 1))
        for i in range(0, hidden, block):
            out += np.maximum(x @ w1[:, i : i + block] + b1[i : i + block], 0) @ w2[i : i + block]
        residual = out - y
        losses.append(float(np.mean(residual**2)))
        d_out = 2.0 * residual / n
        grads = [np.empty_like(p) for p in params]
        for i in range(0, hidden, block):
            pre = x @ w1[:, i : i + block] + b1[i : i + block]
            grads[2][i : i + block] = np.maximum(pre, 0).T @ d_out
            d_pre = (d_out @ w2[i : i + block].T) * (pre > 0)
            grads[0][:, i : i + block] = x.T @ d_pre
            grads[1][i : i + block] = d_pre.sum(0)
        alpha = lr * np.sqrt(1 - beta2**step) / (1 - beta1**step)
        for p, g, mk, vk in zip(params, grads, m, v):
            mk += (g - mk) * (1 - beta1)
            vk += (g * g - vk) * (1 - beta2)
            p -= mk * alpha / (np.sqrt(vk) + eps)
    return params, losses
