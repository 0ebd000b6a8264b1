"""An optax training loop under exla.jit: the loss curve of jax.jit, in less memory."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import exla

pytestmark = pytest.mark.usefixtures("extension")

BATCH, FEATURES, HIDDEN = 1024, 16, 512  # activations: 1024 x 512 x 4 B = 2 MB each
THRESHOLD = "1MB"


def _init(key):
    k1, k2, k3 = jax.random.split(key, 3)
    return {
        "w1": jax.random.normal(k1, (FEATURES, HIDDEN)) / np.sqrt(FEATURES),
        "w2": jax.random.normal(k2, (HIDDEN, HIDDEN)) / np.sqrt(HIDDEN),
        "w3": jax.random.normal(k3, (HIDDEN, 1)) / np.sqrt(HIDDEN),
    }


def _loss(params, x, y):
    h = jax.nn.gelu(x @ params["w1"])
    h = jax.nn.gelu(h @ params["w2"])
    return jnp.mean((h @ params["w3"] - y) ** 2)


_optimizer = optax.adam(1e-3)


def _step(params, state, x, y):
    loss, grads = jax.value_and_grad(_loss)(params, x, y)
    updates, state = _optimizer.update(grads, state, params)
    return optax.apply_updates(params, updates), state, loss


def _curve(jit, steps=6):
    params = _init(jax.random.PRNGKey(0))
    state = _optimizer.init(params)
    x = jax.random.normal(jax.random.PRNGKey(1), (BATCH, FEATURES))
    y = jnp.sin(x[:, :1] * 3.0)
    step = jit(_step, donate_argnums=(0, 1))
    losses = []
    for _ in range(steps):
        params, state, loss = step(params, state, x, y)
        losses.append(float(loss))
    return np.array(losses), step.lower(params, state, x, y).compile()


def test_loss_curve_matches_jax_jit_in_less_memory(caplog):
    # Not strict: the weights, their gradients and Adam's slots are program
    # inputs and outputs of the threshold's size, and activations feeding the
    # weight gradient stay whole, so exla says it cannot meet the threshold
    # everywhere (once) and still rewrites what it can.
    with caplog.at_level("WARNING", logger="exla"):
        ours, compiled = _curve(lambda f, **kw: exla.jit(f, threshold=THRESHOLD, **kw))
    assert [r for r in caplog.records if "cannot meet the threshold" in r.getMessage()]
    assert not [r for r in caplog.records if "running without exla" in r.getMessage()]
    theirs, plain = _curve(jax.jit)
    assert ours[-1] < 0.8 * ours[0]  # it trains
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)
    limit = exla.parse_size(THRESHOLD)
    planned_ours = compiled.memory_analysis().temp_size_in_bytes
    planned_theirs = plain.memory_analysis().temp_size_in_bytes
    assert planned_theirs > 2 * limit
    assert planned_ours < 0.6 * planned_theirs
