"""Small JAX programs with one oversized intermediate each, for exla's JAX tests.

Each workload is ``(function, make_args, threshold)``: ``make_args(dtype)`` gives
the arguments as NumPy arrays, ``threshold`` is a limit that the program's
largest intermediate exceeds.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax


def kernel_matvec(x, v):
    d = jnp.sum((x[:, None, :] - x[None, :, :]) ** 2, -1)  # n x n x 3
    return jnp.exp(-0.5 * d) @ v


def kernel_matvec_grads(x, v):
    return jax.grad(lambda x, v: jnp.sum(kernel_matvec(x, v) ** 2), argnums=(0, 1))(x, v)


def knn(queries, points):
    d = jnp.sum((queries[:, None, :] - points[None, :, :]) ** 2, -1)
    neg, idx = lax.top_k(-d, 5)
    return {"distances": -neg, "indices": idx}


def attention(q, k, v):
    s = jnp.einsum("hqd,hkd->hqk", q, k) / np.sqrt(q.shape[-1])
    return jnp.einsum("hqk,hkd->hqd", jax.nn.softmax(s, -1), v)


def attention_fwd_bwd(q, k, v):
    return jax.value_and_grad(lambda q, k, v: jnp.sum(attention(q, k, v) ** 2), argnums=(0, 1, 2))(q, k, v)


def scan_rnn(w_in, w, xs):
    """Loss and gradients of an RNN whose input projection (T x B x H) is the big tensor."""
    def loss(w_in, w):
        u = jnp.tanh(xs @ w_in)  # T x B x H, computed before the scan

        def step(h, u_t):
            h = jnp.tanh(h @ w + u_t)
            return h, jnp.mean(h ** 2)

        _, ys = lax.scan(step, jnp.zeros(u.shape[1:], u.dtype), u)
        return jnp.sum(ys)

    return jax.value_and_grad(loss, argnums=(0, 1))(w_in, w)


def _rng():
    return np.random.default_rng(0)


WORKLOADS = {
    "kernel_matvec": (kernel_matvec, lambda dt: (_rng().random((800, 3)).astype(dt),
                                                   _rng().normal(size=800).astype(dt)), "1MB"),
    "kernel_matvec_grads": (kernel_matvec_grads, lambda dt: (_rng().random((800, 3)).astype(dt),
                                                               _rng().normal(size=800).astype(dt)), "1MB"),
    "knn_top_k": (knn, lambda dt: (_rng().random((300, 3)).astype(dt),
                                   _rng().random((2000, 3)).astype(dt)), "1MB"),
    "attention_fwd_bwd": (attention_fwd_bwd, lambda dt: tuple(
        _rng().normal(size=(2, 256, 16)).astype(dt) for _ in range(3)), "300KB"),
    "scan_rnn": (scan_rnn, lambda dt: ((_rng().normal(size=(8, 64)) * 0.3).astype(dt),
                                       (_rng().normal(size=(64, 64)) * 0.1).astype(dt),
                                       _rng().normal(size=(50, 32, 8)).astype(dt)), "100KB"),
}
