"""One of two processes running the same sharded program (tests/python/jax/test_two_processes.py).

``python _two_processes.py PROCESS_ID PORT OUT.json``, with 4 CPU devices
per process: ``jax.distributed.initialize`` on 127.0.0.1 joins them into 8
devices (jaxlib's CPU collectives over gloo, the default of jax 0.7.1), and
the kernel matvec with its points cut by rows over all 8 runs through
:func:`exla.jit`. Each process checks the rows it holds.
"""

from __future__ import annotations

import json
import logging
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

import exla
from exla.jax import compile_hook

process_id, port, out_path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
jax.config.update("jax_cpu_collectives_implementation", "gloo")
jax.distributed.initialize(coordinator_address=f"127.0.0.1:{port}", num_processes=2,
                           process_id=process_id, initialization_timeout=60)

lines: list[str] = []
handler = logging.Handler()
handler.emit = lambda record: lines.append(record.getMessage())
logging.getLogger("exla").addHandler(handler)
logging.getLogger("exla").setLevel(logging.INFO)


def kernel_matvec(x, v):
    d = jnp.sum((x[:, None, :] - x[None, :, :]) ** 2, -1)
    return jnp.exp(-0.5 * d) @ v


mesh = Mesh(np.array(jax.devices()), ("x",))
rng = np.random.default_rng(0)
x64, v64 = rng.uniform(size=(2048, 3)), rng.normal(size=2048)
x = jax.make_array_from_callback((2048, 3), NamedSharding(mesh, P("x")),
                                 lambda index: x64.astype(np.float32)[index])
v = jax.make_array_from_callback((2048,), NamedSharding(mesh, P()),
                                 lambda index: v64.astype(np.float32)[index])
compiled = exla.jit(kernel_matvec, threshold="1MB", strict=True).lower(x, v).compile()
ours = compiled(x, v)
plain = jax.jit(kernel_matvec).lower(x, v).compile()
theirs = plain(x, v)
reference = np.exp(-0.5 * ((x64[:, None] - x64[None]) ** 2).sum(-1)) @ v64
scale = float(np.max(np.abs(reference)))
rows = [(shard.index, np.asarray(shard.data, np.float64)) for shard in ours.addressable_shards]
result = {
    "devices": jax.device_count(), "local_devices": jax.local_device_count(),
    "rows": sum(len(data) for _, data in rows),
    "error_vs_float64": max(float(np.max(np.abs(data - reference[index]))) for index, data in rows) / scale,
    "error_vs_jit": max(float(np.max(np.abs(np.asarray(a.data, np.float64) - np.asarray(b.data))))
                        for a, b in zip(ours.addressable_shards, theirs.addressable_shards)) / scale,
    "temp": int(compiled.memory_analysis().temp_size_in_bytes),
    "plain_temp": int(plain.memory_analysis().temp_size_in_bytes),
    "rewrote": any("exla rewrote" in line for line in lines),
    "compiled_rewrite": len(compile_hook.rewritten_programs()),
}
with open(out_path, "w") as out:
    json.dump(result, out)
jax.distributed.shutdown()
