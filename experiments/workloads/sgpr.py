"""Experiment 2: GPflow SGPR, unchanged model code, plain XLA vs exla as M grows.

Data (seed 0): inputs x ~ U[0, 1]^3, targets
``y = sin(6 x1) + cos(4 x2) x3 + 0.1 eps``, eps ~ N(0, 1); N = 20,000 training
points and 2,000 test points from the same distribution. Model: ``gpflow.models.SGPR``
with an ARD squared-exponential kernel (lengthscales 0.3, variance 1), noise
variance 0.1, inducing points = the first M training inputs (trainable).

The compiled program is the training loss and its gradient with respect to all
trainable variables (``tf.function(jit_compile=True)``; through exla for the
``exla`` backend). Reported: the first call (tracing, compilation, one
evaluation), the median, min and max time of the evaluations during a fixed
number of L-BFGS iterations (SciPy L-BFGS-B on that function; topped up to
``--repeats`` evaluations at the optimum while they take under a minute in
all; ``repeats`` says how many were timed), the process's peak RSS
by the end of those (``loss_peak_rss_mb``; the row's ``peak_rss_mb`` also
covers the prediction), test RMSE and NLPD of ``predict_y`` (compiled the same
way), and ``error``: the relative difference of exla's initial loss from plain
XLA's at the same M.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from experiments.harness.child import Recorder, current_rss_mb, peak_rss_so_far_mb, record_times
from experiments.harness.sweep import grid

NAME = "sgpr"
SIZE = "m"
PARAMS = ["m", "n_train", "iterations"]
# Rows run under another memory cap (an uncapped plain run beside a limit)
# are summarised apart: under another cap, "largest m that ran" means another thing.
GROUPS = ["cap_gb"]
METRICS = ["loss0", "opt_s", "loss_peak_rss_mb", "rmse", "nlpd"]
DEFAULT_CAP_GB = 4.0
DEFAULT_MS = [500, 1000, 2000, 3000, 4000]
LARGE_MS = [5000, 6000]
LIMITS: list[str] = []  # no per-tensor threshold by default: a limit on the whole program
MEMORY_LIMITS = ["2GB"]
SPLIT_SIZE = {"1GB": "100MB", "200MB": "20MB", "100KB": "20KB"}
BACKENDS = ["tf", "exla"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Experiment-specific options."""
    parser.add_argument("--ms", type=int, nargs="+", help="numbers of inducing points")
    parser.add_argument("--large", action="store_true", help="also M = 5,000 and 6,000 (slow)")
    parser.add_argument("--n-train", type=int, default=20_000)
    parser.add_argument("--iterations", type=int, default=1, help="L-BFGS iterations")
    parser.add_argument("--planned", action="store_true",
                        help="also XLA's planned memory (slow: compiles each program twice)")


def configs(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The configurations to run."""
    if args.smoke:
        ms, limits, n_train, iters = [40], ["100KB"], 2000, 2
    else:
        ms = args.ms or DEFAULT_MS + (LARGE_MS if args.large else [])
        limits, n_train, iters = LIMITS, args.n_train, args.iterations
        if args.limits is None and not args.memory_limits:  # the default: MEMORY_LIMITS
            args = argparse.Namespace(**{**vars(args), "memory_limits": MEMORY_LIMITS})
    return grid(args, "m", ms, limits, SPLIT_SIZE, n_train=n_train, iterations=iters,
                planned=args.planned)


def make_data(n_train: int, n_test: int = 2000) -> tuple[np.ndarray, ...]:
    """The synthetic regression data set described in the module docstring."""
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(n_train + n_test, 3))
    y = np.sin(6 * x[:, :1]) + np.cos(4 * x[:, 1:2]) * x[:, 2:3]
    y = y + 0.1 * rng.normal(size=y.shape)
    return x[:n_train], y[:n_train], x[n_train:], y[n_train:]


def make_model(m: int, n_train: int) -> Any:
    """The SGPR model described in the module docstring, on :func:`make_data`'s data."""
    import gpflow

    x, y, _, _ = make_data(n_train)
    return gpflow.models.SGPR(
        (x, y), gpflow.kernels.SquaredExponential(lengthscales=[0.3] * 3, variance=1.0),
        inducing_variable=x[:m].copy(), noise_variance=0.1)


def loss_and_gradients(model: Any) -> Callable[[], tuple[Any, list[Any]]]:
    """The user's code: a function returning a GPflow model's training loss and
    its gradients with respect to the model's trainable variables."""
    import tensorflow as tf

    variables = list(model.trainable_variables)

    def loss_and_grads() -> tuple[Any, list[Any]]:
        with tf.GradientTape() as tape:
            loss = model.training_loss()
        return loss, tape.gradient(loss, variables)

    return loss_and_grads


def run(config: dict[str, Any], rec: Recorder) -> None:
    """Runs one configuration in the child."""
    import scipy.optimize
    import tensorflow as tf

    from experiments.harness import backends

    m, n_train = int(config["m"]), int(config["n_train"])
    _, _, xt, yt = make_data(n_train)
    model = make_model(m, n_train)
    params = list(model.trainable_variables)
    xt_tf = tf.constant(xt)
    loss_and_grads = loss_and_gradients(model)

    def predict(xs: Any) -> Any:
        return model.predict_y(xs)

    limit = backends.limit_of(config)
    compile_ = backends.jit
    # The timed program; its loops and XLA's planned memory are read from
    # TensorFlow's XLA dump of it (experiments.harness.executed).
    rec.update(program=loss_and_grads.__name__)
    if limit is not None:
        rec.update(exla_path=backends.exla_path(),
                   loops_plain=backends.tf_loops(backends.jit(loss_and_grads), ()))
        compile_ = lambda f: backends.exla_compile(f, limit)  # noqa: E731
    if config.get("planned"):
        rec.update(**backends.planned(backends.tf_hlo(backends.jit(loss_and_grads), ())))
    f, pred = compile_(loss_and_grads), compile_(predict)

    shapes = [p.shape for p in params]
    sizes = [int(np.prod(s)) for s in shapes]

    def assign(theta: np.ndarray) -> None:
        for p, part, shape in zip(params, np.split(theta, np.cumsum(sizes)[:-1]), shapes):
            p.assign(part.reshape(shape))

    times: list[float] = []

    def objective(theta: np.ndarray) -> tuple[float, np.ndarray]:
        assign(theta)
        start = time.perf_counter()
        loss, grads = f()
        grad = np.concatenate([g.numpy().ravel() for g in grads])  # waits for every result
        times.append(time.perf_counter() - start)
        return float(loss), grad

    # The first call (tracing, exla, compilation, one run) is the warm-up; the
    # optimiser's evaluations are the timed calls (one evaluation at M in the
    # thousands takes tens of seconds here), topped up to --repeats below
    # while they take less than a minute in all.
    theta0 = np.concatenate([p.numpy().ravel() for p in params])
    rec.update(base_rss_mb=current_rss_mb())
    first = objective(theta0)
    rec.update(first_call_s=times.pop(), loss0=first[0])
    if limit is not None:
        rec.update(**backends.plan_fields(f))

    def objective_after_first(theta: np.ndarray) -> tuple[float, np.ndarray]:
        # L-BFGS-B starts by evaluating theta0 again: reuse the warm-up's value.
        return first if np.array_equal(theta, theta0) else objective(theta)

    start = time.perf_counter()
    result = scipy.optimize.minimize(objective_after_first, theta0, jac=True,
                                     method="L-BFGS-B",
                                     options={"maxiter": int(config["iterations"])})
    # At least --repeats timed evaluations where they are short (L-BFGS's few
    # iterations may make fewer): the rest at the optimum.
    while len(times) < int(config.get("repeats", 3)) and sum(times) < 60.0:
        objective(result.x)
    assign(result.x)
    # The peak before the prediction, which is a second program (compiled
    # through exla too): the loss and gradients' own.
    rec.update(opt_s=time.perf_counter() - start, loss_peak_rss_mb=peak_rss_so_far_mb())
    record_times(rec, times)
    mean, var = (t.numpy() for t in pred(xt_tf))
    rmse = float(np.sqrt(np.mean((mean - yt) ** 2)))
    nlpd = float(np.mean(0.5 * np.log(2 * np.pi * var) + (yt - mean) ** 2 / (2 * var)))
    rec.update(rmse=rmse, nlpd=nlpd)


def fill_error(row: dict[str, Any], previous: list[dict[str, Any]]) -> None:
    """exla's initial loss against plain XLA's at the same M (when that ran)."""
    if row.get("backend") != "exla" or row.get("status") != "ok":
        return
    for other in previous:
        if (other.get("backend") == "tf" and other.get("status") == "ok"
                and other.get("m") == row.get("m") and other.get("loss0") is not None):
            ref = float(other["loss0"])
            row["error"] = abs(float(row["loss0"]) - ref) / abs(ref)


def plot(rows: list[dict[str, str]], results_dir: Path) -> list[Path]:
    """Peak memory vs M and time per loss-and-gradient evaluation vs M."""
    from experiments.harness.plots import memory_and_time

    return memory_and_time(rows, results_dir, NAME, SIZE, "GPflow SGPR loss+gradient, N=20,000", "time per loss+gradient (s)")
