"""Experiment 5: full-batch Adam on a one-hidden-layer MLP as the width grows.

Data (seed 0): 2,000 examples, x ~ N(0, 1)^32, y ~ N(0, 1), float32. Model:
``relu(x @ W1 + b1) @ W2``, mean squared error, ``tf_keras.optimizers.Adam``
(learning rate 1e-6; with a million hidden units every step moves the output
by about width * lr). The compiled program is one whole training step
(``tf.function(jit_compile=True)``: forward, gradients and the Adam update of
the weights and slots, which are captured variables). Plain XLA materialises
the 2,000 x width activations and their gradients (8 GB each at width 1e6).
``error``: largest relative difference of the losses of every step that ran
(warm-up and timed calls) from the same Adam steps in float64 NumPy, computed
over blocks of hidden units.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from experiments.harness.blocks import block_slices
from experiments.harness.child import Recorder, measure
from experiments.harness.sweep import grid

NAME = "wide_mlp"
SIZE = "hidden"
PARAMS = ["hidden", "examples"]
METRICS = ["final_loss"]
DEFAULT_CAP_GB = 4.0
DEFAULT_SIZES = [10_000, 30_000, 100_000, 300_000, 1_000_000]
LIMITS = ["100MB"]
SPLIT_SIZE = {"100MB": "20MB", "1GB": "100MB", "1MB": "200KB"}
BACKENDS = ["tf", "exla"]
LEARNING_RATE = 1e-6
INPUT_DIM = 32


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Experiment-specific options."""
    parser.add_argument("--sizes", type=int, nargs="+", help="hidden widths")
    parser.add_argument("--examples", type=int, default=2000)


def configs(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The configurations to run."""
    if args.smoke:
        sizes, limits, examples = [2000], ["1MB"], 500
    else:
        sizes, limits, examples = args.sizes or DEFAULT_SIZES, LIMITS, args.examples
    return grid(args, "hidden", sizes, limits, SPLIT_SIZE, examples=examples)


def make_mlp(hidden: int, examples: int = 2000, dim: int = INPUT_DIM, seed: int = 0,
             lr: float = LEARNING_RATE) -> tuple[Any, tuple[Any, Any], list[Any]]:
    """The user's code: data, variables and a jit-compiled full-batch Adam step.

    Returns ``(step, (x, y), [W1, b1, W2])``; ``step(x, y)`` returns the loss
    before the update and updates the variables and Adam's slots in place.
    """
    import tensorflow as tf
    import tf_keras

    rng = np.random.default_rng(seed)
    x = tf.constant(rng.normal(size=(examples, dim)).astype(np.float32))
    y = tf.constant(rng.normal(size=(examples, 1)).astype(np.float32))
    w1 = tf.Variable(rng.normal(size=(dim, hidden)).astype(np.float32) / np.sqrt(dim))
    b1 = tf.Variable(np.zeros(hidden, np.float32))
    w2 = tf.Variable(rng.normal(size=(hidden, 1)).astype(np.float32) / np.sqrt(hidden))
    params = [w1, b1, w2]
    optimizer = tf_keras.optimizers.Adam(lr)
    optimizer.build(params)

    def step(x: Any, y: Any) -> Any:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((tf.nn.relu(x @ w1 + b1) @ w2 - y) ** 2)
        optimizer.apply_gradients(zip(tape.gradient(loss, params), params))
        return loss

    return step, (x, y), params


def adam_reference(x: np.ndarray, y: np.ndarray, w1: np.ndarray, b1: np.ndarray,
                   w2: np.ndarray, steps: int = 3,
                   lr: float = LEARNING_RATE) -> tuple[list[np.ndarray], list[float]]:
    """The same Adam steps in float64 NumPy, in blocks of hidden units.

    Every quantity but the network output decomposes over hidden units, so a
    block of units needs examples x block numbers (blocks of about 32 MiB).
    Adam as tf_keras implements it. Returns the final ``[W1, b1, W2]`` and the
    loss before each step.
    """
    x, y = np.float64(x), np.float64(y)
    params = [np.float64(w1), np.float64(b1), np.float64(w2)]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    beta1, beta2, eps = 0.9, 0.999, 1e-7
    hidden, n = params[1].shape[0], x.shape[0]
    blocks = list(block_slices(hidden, 8 * n))
    losses = []
    for step in range(1, steps + 1):
        w1, b1, w2 = params
        out = np.zeros((n, 1))
        for b in blocks:
            out += np.maximum(x @ w1[:, b] + b1[b], 0) @ w2[b]
        residual = out - y
        losses.append(float(np.mean(residual**2)))
        d_out = 2.0 * residual / n
        grads = [np.empty_like(p) for p in params]
        for b in blocks:
            pre = x @ w1[:, b] + b1[b]
            grads[2][b] = np.maximum(pre, 0).T @ d_out
            d_pre = (d_out @ w2[b].T) * (pre > 0)
            grads[0][:, b] = x.T @ d_pre
            grads[1][b] = d_pre.sum(0)
        alpha = lr * np.sqrt(1 - beta2**step) / (1 - beta1**step)
        for p, g, mk, vk in zip(params, grads, m, v):
            mk += (g - mk) * (1 - beta1)
            vk += (g * g - vk) * (1 - beta2)
            p -= mk * alpha / (np.sqrt(vk) + eps)
    return params, losses


def run(config: dict[str, Any], rec: Recorder) -> None:
    """Runs one configuration in the child."""
    from experiments.harness import backends

    step, args, params = make_mlp(int(config["hidden"]), int(config["examples"]))
    initial = [p.numpy() for p in params]
    plain, limit = backends.jit(step), backends.limit_of(config)
    rec.update(program=step.__name__, **backends.planned(backends.tf_hlo(plain, args)))
    # Planning traced the step without running it: the variables are untouched.
    fn = plain
    if limit is not None:
        rec.update(exla_path=backends.exla_path(), loops_plain=backends.tf_loops(plain, args))
        fn = backends.exla_compile(step, limit)
    losses: list[float] = []
    measure(lambda: losses.append(float(fn(*args))), rec, repeats=int(config.get("repeats", 3)))
    if limit is not None:
        rec.update(**backends.plan_fields(fn))
    _, expected = adam_reference(args[0].numpy(), args[1].numpy(), *initial, steps=len(losses))
    rec.update(final_loss=losses[-1],
               error=float(np.max(np.abs(np.subtract(losses, expected)) / np.abs(expected))))


def plot(rows: list[dict[str, str]], results_dir: Path) -> list[Path]:
    """Peak memory vs width and time per Adam step vs width."""
    from experiments.harness.plots import memory_and_time

    return memory_and_time(rows, results_dir, NAME, SIZE, "Wide MLP, full-batch Adam step (2,000 examples)", "time per Adam step (s)")
