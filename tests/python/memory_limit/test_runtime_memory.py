"""exla.memory_limit.runtime_memory: the process's fixed cost, read from /proc/self/status."""

from __future__ import annotations

import numpy as np

from exla.memory_limit import runtime_memory

_MIB = 2**20


def test_runtime_bytes_is_what_starting_the_runtime_adds(monkeypatch):
    monkeypatch.setattr(runtime_memory, "_measured", {})
    held = []

    def start_runtime():  # a runtime that holds 64 MiB once started
        held.append(np.ones(8 * _MIB))

    cost = runtime_memory.measure("tensorflow", start_runtime)
    assert 60 * _MIB <= cost.runtime_bytes <= 128 * _MIB, cost
    assert cost.resident_bytes >= 10 * _MIB  # the interpreter and NumPy, in bytes
    assert runtime_memory.measure("tensorflow", start_runtime) is cost and len(held) == 1


def test_jax_adds_no_runtime_of_its_own(monkeypatch):
    monkeypatch.setattr(runtime_memory, "_measured", {})
    cost = runtime_memory.measure("jax")
    assert (cost.framework, cost.runtime_bytes) == ("JAX", 0)
    assert cost.fixed_bytes == cost.resident_bytes > 0
