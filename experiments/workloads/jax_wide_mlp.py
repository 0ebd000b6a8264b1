"""Experiment 5 in JAX: full-batch Adam on a one-hidden-layer MLP as the width grows.

The JAX twin of :mod:`experiments.workloads.wide_mlp`: the same data, model and Adam
(as tf_keras implements it, written by hand in JAX), one ``jax.jit`` training
step (forward, gradients, update; parameters and Adam state donated).
Backends ``jax`` (plain) and ``exla`` (the unchanged script with exla's flags in
``XLA_FLAGS``). ``error``: largest relative difference of the losses from the
float64 NumPy reference of :mod:`experiments.workloads.wide_mlp`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from experiments.harness import backends
from experiments.harness.child import Recorder, measure
# The same options and grid as the TensorFlow twin.
from experiments.workloads.wide_mlp import (INPUT_DIM, LEARNING_RATE, LIMITS,  # noqa: F401
                                  adam_reference, add_arguments, configs)

NAME = "jax_wide_mlp"
SIZE = "hidden"
PARAMS = ["hidden", "examples"]
METRICS = ["final_loss"]
DEFAULT_CAP_GB = 4.0
BACKENDS = ["jax", "exla"]
FRAMEWORK = "jax"


def make_mlp(hidden: int, examples: int = 2000, dim: int = INPUT_DIM, seed: int = 0,
             lr: float = LEARNING_RATE) -> tuple[Any, tuple[Any, Any], Any]:
    """The user's code: data, parameters and a jit-compiled full-batch Adam step.

    Returns ``(step, (x, y), state)``; ``step(state, x, y)`` returns
    ``(loss before the update, new state)``.
    """
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(seed)  # the same numbers as experiments.workloads.wide_mlp
    x = jnp.asarray(rng.normal(size=(examples, dim)).astype(np.float32))
    y = jnp.asarray(rng.normal(size=(examples, 1)).astype(np.float32))
    params = {"w1": jnp.asarray(rng.normal(size=(dim, hidden)).astype(np.float32) / np.sqrt(dim)),
              "b1": jnp.zeros(hidden, jnp.float32),
              "w2": jnp.asarray(rng.normal(size=(hidden, 1)).astype(np.float32) / np.sqrt(hidden))}
    zeros = jax.tree.map(jnp.zeros_like, params)
    state = {"params": params, "m": zeros, "v": zeros, "t": jnp.zeros((), jnp.float32)}
    beta1, beta2, eps = 0.9, 0.999, 1e-7

    def loss_fn(p: Any, x: Any, y: Any) -> Any:
        return jnp.mean((jax.nn.relu(x @ p["w1"] + p["b1"]) @ p["w2"] - y) ** 2)

    @jax.jit
    def step(state: Any, x: Any, y: Any) -> Any:
        loss, grads = jax.value_and_grad(loss_fn)(state["params"], x, y)
        t = state["t"] + 1
        alpha = lr * jnp.sqrt(1 - beta2**t) / (1 - beta1**t)
        m = jax.tree.map(lambda m, g: m + (g - m) * (1 - beta1), state["m"], grads)
        v = jax.tree.map(lambda v, g: v + (g * g - v) * (1 - beta2), state["v"], grads)
        params = jax.tree.map(lambda p, m, v: p - m * alpha / (jnp.sqrt(v) + eps),
                              state["params"], m, v)
        return loss, {"params": params, "m": m, "v": v, "t": t}

    return step, (x, y), state


def run(config: dict[str, Any], rec: Recorder) -> None:
    """Runs one configuration in the child (exla, if any, came with XLA_FLAGS)."""
    step, (x, y), state = make_mlp(int(config["hidden"]), int(config["examples"]))
    initial = [np.asarray(state["params"][k]) for k in ("w1", "b1", "w2")]
    # The executable that runs, compiled ahead of time (exla's flags rewrite it
    # at JAX's compile step): its loops and planned memory are the row's.
    compiled, fields = backends.jax_compiled(step, (state, x, y), config["backend"])
    rec.update(program="step", **fields)
    if config["backend"] == "exla":
        rec.update(exla_path="flags")
    losses: list[float] = []
    current = [state]

    def call() -> None:
        loss, current[0] = compiled(current[0], x, y)
        losses.append(float(loss))

    measure(call, rec, repeats=int(config.get("repeats", 3)))
    _, expected = adam_reference(np.asarray(x), np.asarray(y), *initial, steps=len(losses))
    rec.update(final_loss=losses[-1],
               error=float(np.max(np.abs(np.subtract(losses, expected)) / np.abs(expected))))


def plot(rows: list[dict[str, str]], results_dir: Path) -> list[Path]:
    """Peak memory vs width and time per Adam step vs width."""
    from experiments.harness.plots import memory_and_time

    return memory_and_time(rows, results_dir, NAME, SIZE,
                           "Wide MLP in JAX, full-batch Adam step (2,000 examples)", "time per Adam step (s)")
