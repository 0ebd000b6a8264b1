"""Sharded JAX programs on 8 CPU devices, measured for tests/python/jax/test_sharded.py.

Run as a child process (``python _sharded_programs.py MODE OUT.json``) with
``XLA_FLAGS=--xla_force_host_platform_device_count=8`` set before jax starts.
``MODE`` is ``jit`` (every program through :func:`exla.jit`) or ``flags``
(plain ``jax.jit``; exla reached only through exla's flags in ``XLA_FLAGS``,
as an unchanged script would). Each case writes what the tests check: errors
against plain sharded ``jax.jit`` and float64 references, XLA's per-device
planned memory of the partitioned executables, their collectives, and
whether exla rewrote the program.
"""

from __future__ import annotations

import json
import logging
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from exla.bridge.jax import enable_x64
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

import exla
from exla._collectives import collectives

MODE = sys.argv[1]
THRESHOLD = "1MB"

mesh = Mesh(np.array(jax.devices()), ("x",))


def on(array, *spec):
    return jax.device_put(array, NamedSharding(mesh, P(*spec)))


class Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.INFO)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


records = Records()
logging.getLogger("exla").addHandler(records)
logging.getLogger("exla").setLevel(logging.INFO)


def compiled(fn, args, **settings):
    """(exla's executable, plain sharded jax.jit's executable, exla's log lines)."""
    start = len(records.messages)
    if MODE == "jit":
        ours = exla.jit(fn, **{"threshold": THRESHOLD, **settings}).lower(*args).compile()
    else:  # exla's flags in XLA_FLAGS route every jax.jit through exla
        ours = jax.jit(fn).lower(*args).compile()
    exla_lines = records.messages[start:]
    # Without the splitter exla compiles JAX's own module: plain jax.jit.
    plain = exla.jit(fn, passes=["dce"]).lower(*args).compile()
    return ours, plain, exla_lines


def relative_error(actual, expected):
    actual, expected = np.asarray(actual, np.float64), np.asarray(expected, np.float64)
    return float(np.max(np.abs(actual - expected)) / max(float(np.max(np.abs(expected))), 1e-300))


def memory(executable):
    stats = executable.memory_analysis()
    return {"temp": int(stats.temp_size_in_bytes),
            "total": int(stats.temp_size_in_bytes + stats.argument_size_in_bytes
                         + stats.output_size_in_bytes - stats.alias_size_in_bytes)}


def described(executable):
    return [c._asdict() for c in collectives(executable.as_text())]


def kernel_matvec(x, v):
    d = jnp.sum((x[:, None, :] - x[None, :, :]) ** 2, -1)
    return jnp.exp(-0.5 * d) @ v


def kernel_matvec_case(results):
    # 2048 points cut by rows: the 2048 x 2048 x 3 f32 difference is 50 MB,
    # 6.3 MB on each device.
    rng = np.random.default_rng(0)
    x64, v64 = rng.uniform(size=(2048, 3)), rng.normal(size=2048)
    x, v = on(x64.astype(np.float32), "x"), on(v64.astype(np.float32))
    ours, plain, lines = compiled(kernel_matvec, (x, v), strict=True)
    out, expected = ours(x, v), plain(x, v)
    reference = np.exp(-0.5 * ((x64[:, None] - x64[None]) ** 2).sum(-1)) @ v64
    results["kernel_matvec"] = {
        "error_vs_jit": relative_error(out, expected),
        "error_vs_float64": relative_error(out, reference),
        "jit_error_vs_float64": relative_error(expected, reference),
        "sharding": spec(out), "plain_sharding": spec(expected),
        "memory": memory(ours), "plain_memory": memory(plain),
        "collectives": described(ours), "x_bytes": 2048 * 3 * 4,
        "rewrote": any("exla rewrote" in line for line in lines),
    }


def mlp_step(w1, w2, x, y):
    def loss(w1, w2):
        h = jax.nn.relu(x @ w1)  # batch x hidden: the activations
        return jnp.mean((h @ w2 - y) ** 2)

    value, (g1, g2) = jax.value_and_grad(loss, argnums=(0, 1))(w1, w2)
    return value, w1 - 0.1 * g1, w2 - 0.1 * g2


def mlp_case(results):
    # Data parallel: the batch is cut 8 ways, the weights are on every
    # device, and the gradients are summed across devices. Activations
    # 2048 x 1024 f32: 8 MB, 1 MB per device.
    rng = np.random.default_rng(1)
    arrays64 = [rng.normal(size=(16, 1024)) / 4, rng.normal(size=(1024, 4)) / 32,
                rng.normal(size=(2048, 16)), rng.normal(size=(2048, 4))]
    arrays = [a.astype(np.float32) for a in arrays64]
    args = (on(arrays[0]), on(arrays[1]), on(arrays[2], "x"), on(arrays[3], "x"))
    ours, plain, lines = compiled(mlp_step, args, threshold="256KB", strict=True)
    out = ours(*args)
    unsharded = jax.jit(mlp_step)(*arrays)  # one device, no sharding
    with enable_x64():
        reference = jax.jit(mlp_step)(*arrays64)
    results["mlp"] = {
        "error_vs_unsharded": max(relative_error(a, b) for a, b in zip(out, unsharded)),
        "error_vs_float64": max(relative_error(a, b) for a, b in zip(out, reference)),
        "unsharded_error_vs_float64": max(relative_error(a, b) for a, b in zip(unsharded, reference)),
        "memory": memory(ours), "plain_memory": memory(plain),
        "collectives": described(ours), "plain_collectives": described(plain),
        "rewrote": any("exla rewrote" in line for line in lines),
    }


def spec(array) -> list:
    """An array's PartitionSpec as JSON: one entry per dimension (its repr
    changed between jax releases: ``PartitionSpec('x',)``, ``P('x',)``)."""
    return [list(e) if isinstance(e, tuple) else e for e in array.sharding.spec]


def knn(queries, points):
    d = jnp.sum((queries[:, None, :] - points[None, :, :]) ** 2, -1)
    neg, idx = lax.top_k(-d, 4)
    return -neg, idx


def knn_case(results):
    # 1024 queries cut 8 ways, 2048 points on every device: the 1024 x 2048
    # x 3 f32 difference is 25 MB, 3.1 MB per device.
    rng = np.random.default_rng(2)
    queries, points = rng.uniform(size=(1024, 3)), rng.uniform(size=(2048, 3))
    args = (on(queries.astype(np.float32), "x"), on(points.astype(np.float32)))
    unsharded = jax.jit(knn)(queries.astype(np.float32), points.astype(np.float32))
    exact = np.argsort(((queries[:, None] - points[None]) ** 2).sum(-1), axis=1, kind="stable")[:, :4]
    per_device = jax.shard_map(knn, mesh=mesh, in_specs=(P("x"), P()), out_specs=P("x"))
    for name, fn, strict in (("knn_shard_map", per_device, True), ("knn_jit", knn, False)):
        ours, plain, lines = compiled(fn, args, strict=strict)
        distances, indices = ours(*args)
        results[name] = {
            "indices_equal_unsharded": bool(np.array_equal(np.asarray(indices),
                                                           np.asarray(unsharded[1]))),
            "indices_equal_float64": bool(np.array_equal(np.asarray(indices), exact)),
            "error_vs_unsharded": relative_error(distances, unsharded[0]),
            "memory": memory(ours), "plain_memory": memory(plain),
            "collectives": described(ours), "log": lines,
            "rewrote": any("exla rewrote" in line for line in lines),
        }


def kernel_matvec_and_sum(x, v):
    d = jnp.sum((x[:, None, :] - x[None, :, :]) ** 2, -1)
    return jnp.exp(-0.5 * d) @ v, jnp.sum(d)


def out_shardings_case(results):
    # A 4 x 2 mesh, the points cut over both axes, the results asked for cut
    # over "a" only and whole: the partitioner reshards them at the end.
    grid = Mesh(np.array(jax.devices()).reshape(4, 2), ("a", "b"))
    cut = NamedSharding(grid, P(("a", "b")))
    settings = {"in_shardings": (cut, NamedSharding(grid, P())),
                "out_shardings": (NamedSharding(grid, P("a")), NamedSharding(grid, P()))}
    rng = np.random.default_rng(4)
    x, v = rng.uniform(size=(2048, 3)).astype(np.float32), rng.normal(size=2048).astype(np.float32)
    start = len(records.messages)
    ours = exla.jit(kernel_matvec_and_sum, threshold=THRESHOLD, strict=True,
                    **settings).lower(x, v).compile()
    lines = records.messages[start:]
    plain = jax.jit(kernel_matvec_and_sum, **settings).lower(x, v).compile()
    out, expected = ours(x, v), plain(x, v)
    results["out_shardings"] = {
        "error_vs_jit": max(relative_error(a, b) for a, b in zip(out, expected)),
        "shardings": [spec(a) for a in out],
        "memory": memory(ours), "plain_memory": memory(plain), "collectives": described(ours),
        "rewrote": any("exla rewrote" in line for line in lines),
    }


def memory_limit_case(results):
    rng = np.random.default_rng(3)
    x64, v64 = rng.uniform(size=(2048, 3)), rng.normal(size=2048)
    # Put each array on the devices once, as float64: jax 0.12 can hand a
    # program an earlier float32 copy of the same NumPy array (plain jax.jit
    # too: RuntimeProgramInputMismatch) when it was also put without x64.
    with enable_x64():
        x, v = on(x64, "x"), on(v64)
        ours = exla.jit(kernel_matvec, memory_limit="2MB", strict=True).lower(x, v).compile()
        out = ours(x, v)
    reference = np.exp(-0.5 * ((x64[:, None] - x64[None]) ** 2).sum(-1)) @ v64
    results["memory_limit"] = {"memory": memory(ours), "limit": 2_000_000,
                               "error_vs_float64": relative_error(out, reference)}


def gspmd_case(results):
    # The same kernel matvec with XLA's older partitioner (GSPMD).
    jax.config.update("jax_use_shardy_partitioner", False)
    try:
        gspmd = {}
        kernel_matvec_case(gspmd)
        results["kernel_matvec_gspmd"] = gspmd["kernel_matvec"]
    finally:
        jax.config.update("jax_use_shardy_partitioner", True)


def main():
    results = {"devices": jax.device_count()}
    kernel_matvec_case(results)
    if MODE == "jit":
        mlp_case(results)
        knn_case(results)
        out_shardings_case(results)
        memory_limit_case(results)
        gspmd_case(results)
    with open(sys.argv[2], "w") as out:
        json.dump(results, out)


if __name__ == "__main__":
    main()
