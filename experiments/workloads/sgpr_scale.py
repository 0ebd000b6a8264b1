"""GPflow SGPR at the paper's data size, beside GPyTorch's SGPR and GPflow's SVGP.

The paper's flagship workload is SGPR on 3droad (434,874 points, d = 3; the
usual training split 278,319) with thousands of inducing points. The UCI file
cannot be downloaded on this machine (only package registries are reachable)
and no package on them ships it, so the data are generated with its shape
(:func:`make_data`): N = 278,319 training and 69,580 test points, d = 3, inputs
scaled to [0, 1], a target smooth in two coordinates (a terrain), piecewise
constant in the third (a road's own offset), noise of 0.1 of the signal's
standard deviation, standardised as GP benchmarks standardise 3droad.

Every system fits the same model: a squared-exponential ARD kernel
(lengthscales 0.2, variance 1), Gaussian noise (variance 0.1), inducing points
initialised at the first M training inputs and trained, f64, under the same
memory cap, optimised with Adam (learning rate 0.02) for ``--iterations``
steps:

* ``tf``: unchanged GPflow ``SGPR``; the loss and its gradients compiled with
  plain XLA (``tf.function(jit_compile=True)``); Adam applied eagerly.
* ``exla``: the same program through exla with ``memory_limit`` only (no
  threshold or split size chosen by hand).
* ``gpytorch``: GPyTorch's SGPR (``InducingPointKernel`` with the exact
  marginal likelihood, which adds the Titsias trace term), torch on the CPU.
* ``svgp``: GPflow ``SVGP`` with minibatches of 1,024, the memory-light model
  a GP user reaches for; ``--svgp-epochs`` passes over the data, natural
  gradients (step 0.1) on the variational distribution and Adam on the rest.

Per row: time per iteration (one loss and gradient, or one minibatch step for
SVGP), the process's peak RSS, XLA's planned peak where XLA ran, and test RMSE
and NLPD (predictions in batches of 10,000 test points, compiled the same way).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from experiments.workloads import sgpr as _sgpr
from experiments.harness.child import Recorder, current_rss_mb, peak_rss_so_far_mb, record_times
from experiments.harness.sweep import grid

NAME = "sgpr_scale"
SIZE = "m"
PARAMS = ["m", "n_train", "n_test", "iterations", "svgp_epochs"]
METRICS = ["loss0", "loss_final", "opt_s", "loss_peak_rss_mb", "rmse", "nlpd"]
DEFAULT_CAP_GB = 8.0
DEFAULT_MS = [500, 1000, 1500, 2000, 3000, 4000, 5000, 6000]
LIMITS: list[str] = []  # a limit on the whole program only
# Under the 8 GiB cap: the process holds 1.2-2 GB besides the plan (TensorFlow, GPflow,
# the data), and the rows of 2026-11-26 ran at 6GB up to M = 1,000 with 1.6 GB to
# spare; from M = 2,000 the plan fills its limit, so the limit leaves that room.
MEMORY_LIMITS = ["5GB"]
SPLIT_SIZE: dict[str, str] = {}
BACKENDS = ["tf", "exla", "gpytorch", "svgp"]
N_TRAIN, N_TEST = 278_319, 69_580
LEARNING_RATE = 0.02
SVGP_BATCH = 1024
PREDICT_BATCH = 10_000
LENGTHSCALE, VARIANCE, NOISE = 0.2, 1.0, 0.1
JITTER = 1e-6  # on K_uu, gpflow.config.default_jitter()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Experiment-specific options."""
    parser.add_argument("--ms", type=int, nargs="+", help="numbers of inducing points")
    parser.add_argument("--n-train", type=int, default=N_TRAIN)
    parser.add_argument("--n-test", type=int, default=N_TEST)
    parser.add_argument("--iterations", type=int, default=10, help="Adam steps (SGPR)")
    parser.add_argument("--svgp-epochs", type=int, default=1, help="passes over the data (SVGP)")


def configs(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The configurations to run."""
    if args.smoke:
        # A limit below the plain program's planned peak (about 5 MB at M = 80),
        # above its arguments and outputs, so that exla really rewrites.
        ms, n_train, n_test, iters, epochs = [80], 2000, 500, 2, 1
        memory_limits = ["2MB"]
    else:
        ms, n_train, n_test = args.ms or DEFAULT_MS, args.n_train, args.n_test
        iters, epochs = args.iterations, args.svgp_epochs
        memory_limits = args.memory_limits or MEMORY_LIMITS
    args = argparse.Namespace(**{**vars(args), "memory_limits": memory_limits, "limits": None})
    return grid(args, "m", ms, LIMITS, SPLIT_SIZE, n_train=n_train, n_test=n_test,
                iterations=iters, svgp_epochs=epochs)


def make_data(n_train: int, n_test: int, seed: int = 0) -> tuple[np.ndarray, ...]:
    """A road network's elevation: ``(x_train, y_train, x_test, y_test)``, f64.

    Points lie along 600 straight roads (x1, x2, scaled to [0, 1]); x3 is the
    road's number scaled to [0, 1], so the target is piecewise in x3: each
    road has its own offset (a cut or an embankment), on top of a terrain that
    is smooth in (x1, x2) (40 random Fourier features, lengthscale about 0.15).
    Noise: 0.1 of the noiseless target's standard deviation. Both splits come
    from one shuffled draw; targets are standardised with the training split.
    """
    rng = np.random.default_rng(seed)
    n, roads = n_train + n_test, 600
    start = rng.uniform(size=(roads, 2))
    angle = rng.uniform(0, 2 * np.pi, size=roads)
    length = rng.uniform(0.05, 0.4, size=roads)
    road = rng.integers(roads, size=n)
    along = rng.uniform(size=n) * length[road]
    xy = start[road] + along[:, None] * np.stack([np.cos(angle), np.sin(angle)], 1)[road]
    xy = xy + 0.002 * rng.normal(size=xy.shape)
    xy = (xy - xy.min(0)) / (xy.max(0) - xy.min(0))  # inputs scaled to [0, 1]
    x = np.concatenate([xy, (road / (roads - 1))[:, None]], axis=1)
    freq = rng.normal(scale=1 / 0.15, size=(40, 2))
    phase = rng.uniform(0, 2 * np.pi, size=40)
    terrain = np.cos(xy @ freq.T + phase) @ rng.normal(size=40) / np.sqrt(40)
    offset = 0.3 * rng.normal(size=roads)[road]
    clean = terrain + offset
    y = (clean + 0.1 * clean.std() * rng.normal(size=n))[:, None]
    mean, std = y[:n_train].mean(), y[:n_train].std()
    y = (y - mean) / std
    return x[:n_train], y[:n_train], x[n_train:], y[n_train:]


def _gpflow_kernel() -> Any:
    import gpflow

    return gpflow.kernels.SquaredExponential(lengthscales=[LENGTHSCALE] * 3, variance=VARIANCE)


def _scores(mean: np.ndarray, var: np.ndarray, y: np.ndarray) -> dict[str, float]:
    rmse = float(np.sqrt(np.mean((mean - y) ** 2)))
    nlpd = float(np.mean(0.5 * np.log(2 * np.pi * var) + (y - mean) ** 2 / (2 * var)))
    return {"rmse": rmse, "nlpd": nlpd}


def _batched_predict(predict: Callable[[Any], tuple[Any, Any]], x: np.ndarray) -> tuple[np.ndarray, ...]:
    """Predictions over batches of PREDICT_BATCH rows (the last one padded, so one program)."""
    means, variances = [], []
    for start in range(0, len(x), PREDICT_BATCH):
        block = x[start:start + PREDICT_BATCH]
        rows = len(block)
        if rows < PREDICT_BATCH and len(x) > PREDICT_BATCH:
            block = np.concatenate([block, np.repeat(block[-1:], PREDICT_BATCH - rows, 0)])
        mean, var = (np.asarray(t)[:rows] for t in predict(block))
        means.append(mean)
        variances.append(var)
    return np.concatenate(means), np.concatenate(variances)


def _run_sgpr(config: dict[str, Any], rec: Recorder, data: tuple[np.ndarray, ...]) -> None:
    """GPflow SGPR through plain XLA (``tf``) or exla (``exla``)."""
    import gpflow
    import tensorflow as tf

    from experiments.harness import backends

    x, y, xt, yt = data
    m = int(config["m"])
    model = gpflow.models.SGPR((x, y), _gpflow_kernel(), inducing_variable=x[:m].copy(),
                               noise_variance=NOISE)
    loss_and_grads = _sgpr.loss_and_gradients(model)
    rec.update(program=loss_and_grads.__name__)
    compile_, limit = backends.jit, backends.limit_of(config)
    if limit is not None:
        rec.update(exla_path=backends.exla_path(),
                   loops_plain=backends.tf_loops(backends.jit(loss_and_grads), ()))
        compile_ = lambda f: backends.exla_compile(f, limit)  # noqa: E731
    step = compile_(loss_and_grads)
    predict = compile_(lambda xs: model.predict_y(xs))
    optimizer = tf.keras.optimizers.Adam(LEARNING_RATE)
    variables = list(model.trainable_variables)
    rec.update(base_rss_mb=current_rss_mb())
    times: list[float] = []
    start_all = time.perf_counter()
    for i in range(int(config["iterations"]) + 1):  # the first call compiles: not timed
        start = time.perf_counter()
        loss, grads = step()
        loss = float(loss)  # waits for the result
        if i == 0:
            rec.update(first_call_s=time.perf_counter() - start, loss0=loss)
            if limit is not None:
                rec.update(**backends.plan_fields(step))
        else:
            times.append(time.perf_counter() - start)
            record_times(rec, times)
        optimizer.apply_gradients(zip(grads, variables))
    rec.update(opt_s=time.perf_counter() - start_all, loss_final=float(step()[0]),
               loss_peak_rss_mb=peak_rss_so_far_mb())
    mean, var = _batched_predict(lambda b: predict(tf.constant(b)), xt)
    rec.update(**_scores(mean, var, yt))


def _run_svgp(config: dict[str, Any], rec: Recorder, data: tuple[np.ndarray, ...]) -> None:
    """GPflow SVGP with minibatches: natural gradients on q(u), Adam on the rest."""
    import gpflow
    import tensorflow as tf

    x, y, xt, yt = data
    m = int(config["m"])
    model = gpflow.models.SVGP(_gpflow_kernel(), gpflow.likelihoods.Gaussian(variance=NOISE),
                               inducing_variable=x[:m].copy(), num_data=len(x), whiten=True)
    gpflow.set_trainable(model.q_mu, False)
    gpflow.set_trainable(model.q_sqrt, False)
    natgrad = gpflow.optimizers.NaturalGradient(gamma=0.1)
    adam = tf.keras.optimizers.Adam(LEARNING_RATE)
    batches = iter(tf.data.Dataset.from_tensor_slices((x, y)).repeat().shuffle(10_000, seed=0)
                   .batch(SVGP_BATCH, drop_remainder=True))
    loss_fn = model.training_loss_closure(batches, compile=False)

    @tf.function
    def step() -> Any:
        natgrad.minimize(loss_fn, var_list=[(model.q_mu, model.q_sqrt)])
        with tf.GradientTape() as tape:
            loss = loss_fn()
        variables = model.trainable_variables
        adam.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    steps = max(3, int(config["svgp_epochs"]) * (len(x) // SVGP_BATCH))
    rec.update(base_rss_mb=current_rss_mb())
    start_all = time.perf_counter()
    start = time.perf_counter()
    rec.update(loss0=float(step()), first_call_s=time.perf_counter() - start)
    start = time.perf_counter()
    for _ in range(steps - 1):
        loss = float(step())
    per_step = (time.perf_counter() - start) / max(1, steps - 1)
    rec.update(time_s=per_step, time_min_s=per_step, time_max_s=per_step, repeats=steps - 1,
               loss_final=loss, opt_s=time.perf_counter() - start_all,
               loss_peak_rss_mb=peak_rss_so_far_mb())
    mean, var = _batched_predict(lambda b: model.predict_y(tf.constant(b)), xt)
    rec.update(**_scores(mean, var, yt))


def _run_gpytorch(config: dict[str, Any], rec: Recorder, data: tuple[np.ndarray, ...]) -> None:
    """GPyTorch's SGPR (``InducingPointKernel``), f64, torch CPU."""
    import gpytorch
    import torch

    x_np, y_np, xt_np, yt_np = data
    m = int(config["m"])
    x, y = torch.from_numpy(x_np), torch.from_numpy(y_np[:, 0])

    class _JitteredInducingPointKernel(gpytorch.kernels.InducingPointKernel):
        # GPflow's SGPR adds gpflow.config.default_jitter() (1e-6) to K_uu and
        # GPyTorch adds none: the same jitter here makes both fit one model
        # (their first losses then agree to 1e-6, where inducing points that
        # nearly coincide otherwise put them 8e-4 apart).
        @property
        def _inducing_mat(self) -> Any:
            k_uu = super()._inducing_mat
            return k_uu + JITTER * torch.eye(k_uu.shape[-1], dtype=k_uu.dtype)

    class SGPR(gpytorch.models.ExactGP):
        def __init__(self) -> None:
            likelihood = gpytorch.likelihoods.GaussianLikelihood()
            super().__init__(x, y, likelihood)
            self.mean_module = gpytorch.means.ZeroMean()
            base = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel(ard_num_dims=3))
            base.base_kernel.lengthscale = LENGTHSCALE
            base.outputscale = VARIANCE
            self.covar_module = _JitteredInducingPointKernel(
                base, inducing_points=x[:m].clone(), likelihood=likelihood)

        def forward(self, inputs: Any) -> Any:
            return gpytorch.distributions.MultivariateNormal(self.mean_module(inputs),
                                                             self.covar_module(inputs))

    model = SGPR().double()
    model.likelihood.noise = NOISE
    model.train()
    mll = gpytorch.mlls.ExactMarginalLogLikelihood(model.likelihood, model)
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    rec.update(base_rss_mb=current_rss_mb())
    times: list[float] = []
    start_all = time.perf_counter()
    for i in range(int(config["iterations"]) + 1):
        start = time.perf_counter()
        optimizer.zero_grad()
        loss = -mll(model(x), y) * len(y)  # GPyTorch divides by N; GPflow's loss does not
        loss.backward()
        if i == 0:
            rec.update(first_call_s=time.perf_counter() - start, loss0=float(loss))
        else:
            times.append(time.perf_counter() - start)
            record_times(rec, times)
        optimizer.step()
    rec.update(opt_s=time.perf_counter() - start_all, loss_final=float(loss),
               loss_peak_rss_mb=peak_rss_so_far_mb())
    model.eval()

    def predict(block: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        with torch.no_grad(), gpytorch.settings.fast_pred_var():
            out = model.likelihood(model(torch.from_numpy(block)))
            return out.mean.numpy()[:, None], out.variance.numpy()[:, None]

    mean, var = _batched_predict(predict, xt_np)
    rec.update(**_scores(mean, var, yt_np))


def run(config: dict[str, Any], rec: Recorder) -> None:
    """Runs one configuration in the child."""
    data = make_data(int(config["n_train"]), int(config["n_test"]))
    runner = {"tf": _run_sgpr, "exla": _run_sgpr, "gpytorch": _run_gpytorch,
              "svgp": _run_svgp}[config["backend"]]
    runner(config, rec, data)


# exla's initial loss against plain XLA's at the same M, as in experiments.workloads.sgpr.
fill_error = _sgpr.fill_error


def plot(rows: list[dict[str, str]], results_dir: Path) -> list[Path]:
    """RMSE and NLPD against M for each system (largest M reached marked), and time per iteration."""
    from experiments.harness.plots import latest_rows, series_label

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = latest_rows(rows, SIZE)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for label in sorted({series_label(r) for r in rows}):
        ok = sorted((r for r in rows if series_label(r) == label and r.get("status") == "ok"),
                    key=lambda r: int(r[SIZE]))
        if not ok:
            continue
        ms = [int(r[SIZE]) for r in ok]
        for ax, metric in zip(axes, ("rmse", "nlpd", "time_s")):
            values = [float(r[metric]) if r.get(metric) not in (None, "") else np.nan for r in ok]
            line, = ax.plot(ms, values, marker="o", label=label)
            ax.plot(ms[-1:], values[-1:], marker="*", markersize=14, color=line.get_color())
    for ax, ylabel in zip(axes, ("test RMSE", "test NLPD", "time per iteration (s)")):
        ax.set_xlabel("inducing points M")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    axes[2].set_yscale("log")
    axes[0].legend(fontsize=8)
    fig.suptitle("SGPR at N = 278,319 (3droad-like data), 8 GiB cap: * = largest M reached")
    fig.tight_layout()
    out = results_dir / f"{NAME}.png"
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return [out]
