"""Sharded JAX programs over 8 CPU devices: what each device holds, with and without exla.

Three workloads, each an ordinary JAX program over a mesh of 8 devices
(``--xla_force_host_platform_device_count=8``: eight simulated CPU devices in
one process, so the process's memory is all eight devices' together):

* ``kernel_matvec``: the squared-exponential kernel matvec K(X, X) v of
  :mod:`experiments.workloads.jax_kernel_matvec` (f64, d = 3), the points X cut by rows
  over the devices (``NamedSharding(mesh, P("x"))``), v on every device. At
  n = 80,000 the kernel is 51 GB, 6.4 GB per device.
* ``knn``: the k = 10 nearest of ``n`` database points (on every device) for
  40,000 queries cut over the devices, in ``shard_map`` (top-k needs whole
  rows of distances: under plain ``jax.jit`` XLA's partitioner gathers the
  whole distance matrix onto every device, and exla refuses a loop over the
  cut queries; see python/README.md, "More than one device").
* ``mlp``: one full-batch Adam step of :mod:`experiments.workloads.jax_wide_mlp`, data
  parallel: the examples cut over the devices, the parameters and the Adam
  state on every device, the gradients summed across devices.

Backends: ``jax`` = plain sharded ``jax.jit``; ``exla (LIMIT)`` = the same
unchanged script with exla's flags in ``XLA_FLAGS``. Columns beyond the
harness's: XLA's planned memory of one device's partitioned executable
(``planned_temp_mb``, ``planned_total_mb``: temporaries + arguments + outputs,
before exla in the ``*_plain_*`` columns), and the collectives of the
partitioned executable (``collectives``, ``collectives_in_loops``,
``largest_gather_mb``). ``error``: kernel matvec, relative to a blocked
float64 NumPy reference on 256 rows; kNN, 1 - recall of the 10 nearest on 256
queries against float64 NumPy; MLP, the losses against the float64 NumPy Adam
steps of :mod:`experiments.workloads.wide_mlp`.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import numpy as np

from experiments.harness.blocks import block_slices
from experiments.harness.child import Recorder, measure
from experiments.harness.sweep import exla_limits

NAME = "jax_sharded"
SIZE = "n"
GROUPS = ("workload",)
PARAMS = ["workload", "n", "queries", "examples"]
METRICS = ["devices", "planned_total_mb", "planned_total_plain_mb", "collectives",
           "collectives_in_loops", "largest_gather_mb"]
DEFAULT_CAP_GB = 8.0
DEVICES = 8
WORKLOADS = {  # workload: sizes n (points, database points, hidden units)
    "kernel_matvec": [20_000, 80_000],
    "knn": [20_000, 100_000],
    "mlp": [10_000, 100_000, 200_000],
}
QUERIES = 40_000
EXAMPLES = 8_000
LIMITS = ["100MB"]
SPLIT_SIZE = {"100MB": "20MB", "1MB": "200KB"}
BACKENDS = ["jax", "exla"]
FRAMEWORK = "jax"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Experiment-specific options."""
    parser.add_argument("--workloads", nargs="+", choices=sorted(WORKLOADS), default=sorted(WORKLOADS))
    parser.add_argument("--sizes", type=int, nargs="+", help="values of n (default: per workload)")


def configs(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The configurations to run: workloads x sizes x backends (x exla's limits)."""
    out = []
    for workload in args.workloads:
        if args.smoke:
            sizes, limits, queries, examples = [1_000], ["1MB"], 800, 4_000
        else:
            sizes, limits = args.sizes or WORKLOADS[workload], LIMITS
            queries, examples = QUERIES, EXAMPLES
        plain = [{"limit": "", "limit_kind": "", "split_size": ""}]
        for n in sizes:
            for backend in args.backends:
                exla = exla_limits(args, limits, SPLIT_SIZE)
                for limit in (exla if backend == "exla" else plain):
                    out.append({"backend": backend, "workload": workload, "n": n,
                                "queries": queries if workload == "knn" else "",
                                "examples": examples if workload == "mlp" else "",
                                **limit, "repeats": args.repeats})
    return out


def _mesh() -> Any:
    import jax
    from jax.sharding import Mesh

    return Mesh(np.array(jax.devices()), ("x",))


def _put(array: np.ndarray, mesh: Any, *spec: Any) -> Any:
    import jax
    from jax.sharding import NamedSharding, PartitionSpec as P

    return jax.device_put(array, NamedSharding(mesh, P(*spec)))


def kernel_matvec(config: dict[str, Any], mesh: Any) -> tuple[Any, tuple, Any]:
    """``(function, arguments, check)``: the kernel matvec, points cut by rows."""
    import jax

    from experiments.workloads.jax_kernel_matvec import kmv
    from experiments.workloads.kernel_matvec import _inputs, _reference_rows

    jax.config.update("jax_enable_x64", True)
    n = int(config["n"])
    x_np, v_np = _inputs(n, 3)
    args = (_put(x_np, mesh, "x"), _put(v_np, mesh))

    def check(out: Any) -> float:
        rows = np.random.default_rng(1).choice(n, size=min(n, 256), replace=False)
        reference = _reference_rows(x_np, v_np, rows)
        return float(np.abs(np.asarray(out)[rows] - reference).max() / np.abs(reference).max())

    return kmv, args, check


def knn(queries: Any, points: Any) -> Any:
    """The user's code: the 10 nearest points of each query (squared L2)."""
    import jax
    import jax.numpy as jnp

    d = jnp.sum((queries[:, None, :] - points[None, :, :]) ** 2, -1)
    _, indices = jax.lax.top_k(-d, 10)
    return indices


def knn_case(config: dict[str, Any], mesh: Any) -> tuple[Any, tuple, Any]:
    """``(function, arguments, check)``: kNN in shard_map, the queries cut, the points whole."""
    import jax
    from jax.sharding import PartitionSpec as P

    n, q = int(config["n"]), int(config["queries"])
    rng = np.random.default_rng(0)
    points, queries = rng.uniform(size=(n, 3)), rng.uniform(size=(q, 3))
    args = (_put(queries.astype(np.float32), mesh, "x"), _put(points.astype(np.float32), mesh))
    fn = jax.shard_map(knn, mesh=mesh, in_specs=(P("x"), P()), out_specs=P("x"))

    def check(out: Any) -> float:
        rows = np.random.default_rng(1).choice(q, size=min(q, 256), replace=False)
        found = np.asarray(out)[rows]
        missed = 0
        for i, row in enumerate(rows):
            d = np.concatenate([((queries[row] - points[cols]) ** 2).sum(-1)
                                for cols in block_slices(n, 3 * 8)])
            missed += 10 - len(set(np.argpartition(d, 10)[:10]) & set(found[i]))
        return missed / (10 * len(rows))

    return fn, args, check


def mlp_case(config: dict[str, Any], mesh: Any) -> tuple[Any, tuple, Any]:
    """``(function, arguments, check)``: one data-parallel full-batch Adam step."""
    import jax

    from experiments.workloads.jax_wide_mlp import make_mlp
    from experiments.workloads.wide_mlp import adam_reference

    step, (x, y), state = make_mlp(int(config["n"]), int(config["examples"]))
    initial = [np.asarray(state["params"][k]) for k in ("w1", "b1", "w2")]
    x_np, y_np = np.asarray(x), np.asarray(y)
    state = jax.tree.map(lambda a: _put(np.asarray(a), mesh), state)
    losses: list[float] = []
    current = [state]

    runs = [step]

    def call(state: Any, x: Any, y: Any) -> Any:
        loss, current[0] = runs[0](current[0], x, y)  # one step after another, as training does
        losses.append(float(loss))
        return loss

    call.step = step  # what is compiled and measured
    call.use = lambda compiled: runs.__setitem__(0, compiled)  # run that executable

    def check(_: Any) -> float:
        _, expected = adam_reference(x_np, y_np, *initial, steps=len(losses))
        return float(np.max(np.abs(np.subtract(losses, expected)) / np.abs(expected)))

    return call, (state, _put(x_np, mesh, "x"), _put(y_np, mesh, "x")), check


CASES = {"kernel_matvec": kernel_matvec, "knn": knn_case, "mlp": mlp_case}


def _planned(compiled: Any) -> tuple[float, float]:
    stats = compiled.memory_analysis()
    total = (stats.temp_size_in_bytes + stats.argument_size_in_bytes
             + stats.output_size_in_bytes - stats.alias_size_in_bytes)
    return stats.temp_size_in_bytes / 2**20, total / 2**20


def run(config: dict[str, Any], rec: Recorder) -> None:
    """Runs one configuration in the child (exla, if any, came with XLA_FLAGS)."""
    os.environ["XLA_FLAGS"] = " ".join(
        [os.environ.get("XLA_FLAGS", ""), f"--xla_force_host_platform_device_count={DEVICES}"])
    import jax

    import exla
    from exla._collectives import collectives

    from experiments.harness.executed import jax_executed

    mesh = _mesh()
    fn, args, check = CASES[config["workload"]](config, mesh)
    target = getattr(fn, "step", None) or fn
    # What runs: plain sharded jax.jit, or (exla backend) the program exla's
    # flags rewrite when JAX compiles it.
    compiled = jax.jit(target).lower(*args).compile()
    temp, total = _planned(compiled)
    found = collectives(compiled.as_text())
    gathers = [c.bytes for c in found if c.opcode == "all-gather"]
    rec.update(devices=jax.device_count(), planned_temp_mb=temp, planned_total_mb=total,
               collectives=len(found), collectives_in_loops=sum(c.in_loop for c in found),
               largest_gather_mb=max(gathers, default=0) / 2**20)
    plain = None
    if config["backend"] == "exla":
        # The same program with the splitter off: what plain jax.jit plans.
        plain = exla.jit(target, passes=["dce"]).lower(*args).compile()
        plain_temp, plain_total = _planned(plain)
        rec.update(exla_path="flags", planned_temp_plain_mb=plain_temp,
                   planned_total_plain_mb=plain_total)
    else:
        rec.update(planned_temp_plain_mb=temp, planned_total_plain_mb=total)
    # Loops, planned peak and whether it is exla's program: of the executable timed below.
    rec.update(program=getattr(target, "__name__", "fn"), **jax_executed(compiled, plain))
    if hasattr(fn, "use"):
        fn.use(compiled)
    run_once = (lambda: fn(*args)) if hasattr(fn, "step") else (lambda: compiled(*args))
    out = measure(lambda: jax.block_until_ready(run_once()), rec,
                  repeats=int(config.get("repeats", 3)))
    rec.update(error=check(out))


def plot(rows: list[dict[str, str]], results_dir: Path) -> list[Path]:
    """Peak memory and time against n, one panel per workload."""
    from experiments.harness.plots import memory_and_time

    return memory_and_time(rows, results_dir, NAME, SIZE, "Sharded JAX programs over 8 CPU devices",
                           "time per call (s)", groups=GROUPS, params=PARAMS)
