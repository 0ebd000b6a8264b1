"""The same sharded program as two processes on this machine (jax.distributed, CPU collectives)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import exla

pytestmark = pytest.mark.usefixtures("extension")

PYTHON_DIR = Path(exla.__file__).resolve().parents[1]
CHILD = Path(__file__).with_name("_two_processes.py")


def _reserved_port() -> socket.socket:
    """A socket bound to a free port, to hold while the children run.

    Bound with SO_REUSEPORT and never listened on: the coordinator that
    ``jax.distributed`` starts in process 0 (a gRPC server, which sets
    SO_REUSEPORT too) binds the same port, and no other program can take it
    between the choice and that bind (a port closed before the children
    start could be).
    """
    reserved = socket.socket()
    reserved.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    reserved.bind(("127.0.0.1", 0))
    return reserved


def _run_children(env: dict, port: int, outs: list[Path]) -> None:
    children = [subprocess.Popen([sys.executable, str(CHILD), str(i), str(port), str(outs[i])],
                                 env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for i in range(2)]
    for child in children:
        try:
            _, stderr = child.communicate(timeout=180)
        finally:
            child.kill()
        assert child.returncode == 0, stderr[-4000:]


def test_kernel_matvec_over_two_processes(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "EXLA_FLAGS", "EXLA_DISABLE")}
    env["PYTHONPATH"] = os.pathsep.join([str(PYTHON_DIR), env.get("PYTHONPATH", "")])
    env["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
    outs = [tmp_path / f"process{i}.json" for i in range(2)]
    with _reserved_port() as reserved:
        _run_children(env, reserved.getsockname()[1], outs)
    results = [json.loads(out.read_text()) for out in outs]
    for result in results:
        assert result["devices"] == 8 and result["local_devices"] == 4
        assert result["rewrote"] and result["compiled_rewrite"] == 1  # exla's executable ran
        assert result["rows"] == 2048 // 2  # each process holds its half of the result
        assert result["error_vs_jit"] <= 1e-5
        assert result["error_vs_float64"] <= 1e-5
        assert result["temp"] <= 1_000_000 < result["plain_temp"]
