"""Framework programs of the memory model's held-out set (`heldout.py`).

Six programs written for the held-out set, none of them in the corpus
(`programs.py`, `frameworks.py`) at these sizes or in this form: a
TensorFlow kernel matrix-vector product in f32, GPflow's SGPR with a Matern52
kernel (loss and gradients), and JAX gradients of an MLP, a causal attention
head and a scanned RNN, with a JAX kNN. Each builder returns the HLO text its
framework lowers, printed as exla reads it; nothing runs.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .frameworks import _loss_and_grads

__all__ = ["BUILDERS"]


def _tf_text(fn, *args) -> str:
    from exla.bridge import xla

    return xla.proto_to_text(fn.experimental_get_compiler_ir(*args)(stage="hlo_serialized"))


def _jax_text(fn, *args) -> str:
    import jax

    from exla.bridge import xla

    lowered = jax.jit(fn, keep_unused=True).lower(*args)
    return xla.proto_to_text(lowered.compiler_ir("hlo").as_serialized_hlo_module_proto())


def tf_kernel_matvec() -> str:
    import tensorflow as tf

    rng = np.random.default_rng(430)
    x = rng.normal(size=(1200, 3)).astype(np.float32)
    v = rng.normal(size=(1200, 4)).astype(np.float32)
    lengthscale = tf.Variable(0.8, dtype=tf.float32)

    @tf.function(jit_compile=True)
    def f(x, v):
        norms = tf.reduce_sum(x * x, axis=1)
        d = norms[:, None] + norms[None, :] - 2.0 * tf.matmul(x, x, transpose_b=True)
        return tf.matmul(tf.exp(-0.5 * d / lengthscale ** 2), v)

    return _tf_text(f, x, v)


def gpflow_sgpr_matern52() -> str:
    import gpflow

    rng = np.random.default_rng(431)
    x = rng.uniform(size=(700, 2))
    y = np.cos(3.0 * x[:, :1]) * x[:, 1:] + 0.1 * rng.normal(size=(700, 1))
    model = gpflow.models.SGPR((x, y), kernel=gpflow.kernels.Matern52(lengthscales=[0.4, 0.6]),
                               inducing_variable=x[::10].copy())
    return _tf_text(_loss_and_grads(model))


def jax_mlp_grad() -> str:
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(432)
    sizes = [(32, 384), (384, 384), (384, 10)]
    params = [(rng.normal(size=s).astype(np.float32) / np.sqrt(s[0]),
               np.zeros(s[1], np.float32)) for s in sizes]
    x = rng.normal(size=(512, 32)).astype(np.float32)
    labels = rng.integers(10, size=512)

    def loss(params, x, labels):
        h = x
        for w, b in params[:-1]:
            h = jax.nn.gelu(h @ w + b)
        logits = h @ params[-1][0] + params[-1][1]
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], 1))

    return _jax_text(jax.grad(loss), params, x, labels)


def jax_knn() -> str:
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(433)
    queries = rng.normal(size=(384, 8)).astype(np.float32)
    points = rng.normal(size=(3000, 8)).astype(np.float32)

    def f(q, p):
        d = jnp.sum(q * q, 1)[:, None] + jnp.sum(p * p, 1)[None, :] - 2.0 * q @ p.T
        neg, index = jax.lax.top_k(-d, 10)
        return -neg, index

    return _jax_text(f, queries, points)


def jax_attention_grad() -> str:
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(434)
    q, k, v = (rng.normal(size=(4, 384, 32)).astype(np.float32) for _ in range(3))

    def loss(q, k, v):
        scores = jnp.einsum("hqd,hkd->hqk", q, k) / np.sqrt(32.0)
        causal = jnp.tril(jnp.ones((384, 384), bool))
        weights = jax.nn.softmax(jnp.where(causal, scores, -1e9), axis=-1)
        return jnp.sum(jnp.einsum("hqk,hkd->hqd", weights, v) ** 2)

    return _jax_text(jax.grad(loss, argnums=(0, 1, 2)), q, k, v)


def jax_rnn_grad() -> str:
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(435)
    w_in = rng.normal(size=(16, 192)).astype(np.float32) / 4.0
    w_h = rng.normal(size=(192, 192)).astype(np.float32) / np.sqrt(192.0)
    xs = rng.normal(size=(48, 32, 16)).astype(np.float32)

    def loss(w_in, w_h, xs):
        def step(h, x):
            h = jnp.tanh(x @ w_in + h @ w_h)
            return h, jnp.sum(h * h)

        _, out = jax.lax.scan(step, jnp.zeros((32, 192), jnp.float32), xs)
        return jnp.sum(out)

    return _jax_text(jax.grad(loss, argnums=(0, 1)), w_in, w_h, xs)


BUILDERS: dict[str, tuple[str, str, Callable[[], str]]] = {
    "tf_kernel_matvec": ("tensorflow", "tensorflow", tf_kernel_matvec),
    "gpflow_sgpr_matern52": ("tensorflow", "gpflow", gpflow_sgpr_matern52),
    "jax_mlp_grad_heldout": ("jax", "jax", jax_mlp_grad),
    "jax_knn": ("jax", "jax", jax_knn),
    "jax_attention_grad_heldout": ("jax", "jax", jax_attention_grad),
    "jax_rnn_grad": ("jax", "jax", jax_rnn_grad),
}
"""Program name: (source, framework, builder of its HLO text)."""
