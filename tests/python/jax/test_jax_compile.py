"""Unchanged JAX scripts under XLA_FLAGS: every jax.jit program goes through exla."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from exla.memory_cap import run_capped

pytestmark = pytest.mark.usefixtures("extension")

import exla

# Children import the exla this test process imported: the installed package
# in CI, the checkout's python/ when built in place.
PYTHON_DIR = Path(exla.__file__).resolve().parents[1]

# An ordinary JAX script: a kernel matvec on one device and a sharded program
# over eight, printing what it sees; its last line (the test's probe) names the
# programs JAX compiled from exla's rewrite, which it then ran.
SCRIPT = textwrap.dedent("""
    import os, sys
    import jax, jax.numpy as jnp, numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    @jax.jit
    def kmv(x, v):
        d = jnp.sum((x[:, None, :] - x[None, :, :]) ** 2, -1)
        return jnp.exp(-0.5 * d) @ v

    x = np.random.default_rng(0).random((600, 3)).astype(np.float32)
    v = np.ones(600, np.float32)
    print("devices", jax.device_count())
    print("XLA_FLAGS", os.environ.get("XLA_FLAGS"))
    print("kmv", float(kmv(x, v).sum()))
    mesh = Mesh(np.array(jax.devices()), ("d",))
    y = jax.device_put(jnp.arange(16.0), NamedSharding(mesh, P("d")))
    print("sharded", float(jax.jit(lambda y: jnp.sum(y * 2))(y)))
    print("cache", jax.config.jax_enable_compilation_cache)
    hook = sys.modules.get("exla.jax.compile_hook")
    print("rewritten", ",".join(hook.rewritten_programs()) if hook else "")
""")


def _run(tmp_path: Path, env_changes: dict[str, str]) -> subprocess.CompletedProcess:
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "EXLA_FLAGS", "EXLA_DISABLE")}
    env["PYTHONPATH"] = os.pathsep.join([str(PYTHON_DIR), env.get("PYTHONPATH", "")])
    env.update(env_changes)
    return subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                          timeout=300)


def _values(stdout: str) -> dict[str, str]:
    return dict(line.split(" ", 1) for line in stdout.splitlines() if " " in line)


def test_xla_flags_route_jax_jit_through_exla(tmp_path):
    dump = tmp_path / "dump"
    plain = _run(tmp_path, {"XLA_FLAGS": "--xla_force_host_platform_device_count=8"})
    assert plain.returncode == 0, plain.stderr
    run = _run(tmp_path, {"XLA_FLAGS": f"--xla_force_host_platform_device_count=8 "
                                       f"--xla_tensor_size_threshold=500KB --exla_dump_to={dump}"})
    assert run.returncode == 0, run.stderr
    ours, theirs = _values(run.stdout), _values(plain.stdout)
    # XLA's own flag reached jaxlib; exla's were taken out before it read them.
    assert ours["devices"] == "8" and ours["XLA_FLAGS"] == "--xla_force_host_platform_device_count=8"
    assert abs(float(ours["kmv"]) - float(theirs["kmv"])) <= 1e-5 * abs(float(theirs["kmv"]))
    assert ours["sharded"] == theirs["sharded"] == "240.0"
    # JAX's persistent cache is looked up before exla sees a program: off under exla.
    assert theirs["cache"] == "True" and ours["cache"] == "False"
    dumped = {p.name for p in dump.iterdir()}
    # The program over eight devices went through exla as well (unchanged).
    assert "jit_kmv" in dumped and "jit__lambda" in dumped
    assert any("tensor-splitter" in p.name for p in (dump / "jit_kmv").iterdir())
    # The dump is written before XLA compiles: what ran is read from the run.
    assert ours["rewritten"] == "jit_kmv" and theirs["rewritten"] == ""


def test_exla_disable_turns_it_off(tmp_path):
    dump = tmp_path / "dump"
    run = _run(tmp_path, {"EXLA_FLAGS": f"--xla_tensor_size_threshold=500KB --exla_dump_to={dump}",
                          "EXLA_DISABLE": "1"})
    assert run.returncode == 0, run.stderr
    assert not dump.exists()


def test_misspelt_flag_fails_import_jax_clearly(tmp_path):
    run = _run(tmp_path, {"XLA_FLAGS": "--xla_tensor_size_treshold=1MB"})
    assert run.returncode == 1  # an ImportError, not jaxlib aborting the process
    assert "unknown flag '--xla_tensor_size_treshold'" in run.stderr
    assert "EXLA_DISABLE=1" in run.stderr


def _reference_rows(n: int, rows: np.ndarray) -> np.ndarray:
    rng = np.random.default_rng(0)
    x, v = rng.uniform(size=(n, 3)), rng.normal(size=(n, 1))
    return np.exp(-0.5 * ((x[rows, None, :] - x[None, :, :]) ** 2).sum(-1)) @ v


def test_unmodified_script_fits_under_a_memory_cap_only_with_exla(tmp_path):
    # N = 20,000 in float64: plain XLA plans a 3.2 GB kernel matrix.
    n, cap = 20_000, 1536 * 2**20
    output = tmp_path / "result.npy"
    argv = [sys.executable, "-m", "exla.demo.jax_program", str(n), str(output)]
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "EXLA_FLAGS")}
    env["PYTHONPATH"] = os.pathsep.join([str(PYTHON_DIR), env.get("PYTHONPATH", "")])
    plain = run_capped(argv, cap, env=env, timeout=300)
    assert plain.returncode != 0 and plain.out_of_memory, plain.stderr[-2000:]
    env["XLA_FLAGS"] = "--xla_tensor_size_threshold=100MB --xla_tensor_split_size=20MB"
    ours = run_capped(argv, cap, env=env, timeout=300)
    assert ours.returncode == 0, ours.stderr[-2000:]
    rows = np.arange(0, n, 997)
    np.testing.assert_allclose(np.load(output)[rows], _reference_rows(n, rows), rtol=1e-10)
