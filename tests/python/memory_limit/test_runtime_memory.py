"""exla.memory_limit.runtime_memory: the process's fixed cost, read from /proc/self/status."""

from __future__ import annotations

import numpy as np
import pytest

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


def _fragment_the_heap(megabytes: int) -> None:
    """Leaves ``megabytes`` of freed, touched malloc blocks below one still in use:
    what a compile leaves behind (glibc keeps the pages; only a trim returns them)."""
    import ctypes

    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    blocks = []
    for _ in range(megabytes * 1024):
        block = libc.malloc(1000)  # below malloc's mmap threshold: on the heap
        ctypes.memset(block, 1, 1000)
        blocks.append(block)
    pin = libc.malloc(1000)  # keeps the heap's top, so freeing cannot shrink it
    for block in blocks:
        libc.free(block)
    _fragment_the_heap.pins.append(pin)


_fragment_the_heap.pins = []


def test_search_residue_is_what_stays_after_returning_free_memory():
    residue_of = runtime_memory.around_search(lambda: _fragment_the_heap(64))[1]
    assert residue_of.searched_bytes - residue_of.before_bytes >= 48 * _MIB, residue_of
    assert residue_of.searched_bytes - residue_of.kept_bytes >= 48 * _MIB, residue_of
    assert residue_of.growth_bytes < 16 * _MIB, residue_of
    assert residue_of.summary().startswith("exla's search left ")


def test_free_memory_is_returned_also_when_the_search_raises(monkeypatch):
    released = []
    monkeypatch.setattr(runtime_memory, "_release_free_memory", lambda: released.append(1))

    def failing():
        raise ValueError("no plan")

    with pytest.raises(ValueError, match="no plan"):
        runtime_memory.around_search(failing)
    assert released == [1]
    assert runtime_memory.around_search(lambda: 7)[0] == 7 and released == [1, 1]
