"""exla.memory_limit.runtime_memory: the process's fixed cost, read from /proc/self/status."""

from __future__ import annotations

import json
import subprocess
import sys

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


# Run in a fresh interpreter: in a long pytest process glibc already holds
# gigabytes of freed pages, which the fragmenting allocations reuse instead of
# growing the heap, so the growth this test needs to see would not show.
_FRAGMENT_AND_SEARCH = """
import ctypes, json
from exla.memory_limit import runtime_memory

def fragment_the_heap(megabytes):
    # Leaves freed, touched malloc blocks below one still in use: what a compile
    # leaves behind (glibc keeps the pages; only a trim returns them).
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
    return pin

residue = runtime_memory.around_search(lambda: fragment_the_heap(64))[1]
print(json.dumps([residue.before_bytes, residue.searched_bytes, residue.kept_bytes,
                  residue.growth_bytes, residue.summary()]))
"""


def test_search_residue_is_what_stays_after_returning_free_memory():
    out = subprocess.run([sys.executable, "-c", _FRAGMENT_AND_SEARCH], check=True,
                         capture_output=True, text=True).stdout
    before, searched, kept, growth, summary = json.loads(out.splitlines()[-1])
    assert searched - before >= 48 * _MIB, out
    assert searched - kept >= 48 * _MIB, out
    assert growth < 16 * _MIB, out
    assert summary.startswith("exla's search left ")


def test_free_memory_is_returned_also_when_the_search_raises(monkeypatch):
    released = []
    monkeypatch.setattr(runtime_memory, "_release_free_memory", lambda: released.append(1))

    def failing():
        raise ValueError("no plan")

    with pytest.raises(ValueError, match="no plan"):
        runtime_memory.around_search(failing)
    assert released == [1]
    assert runtime_memory.around_search(lambda: 7)[0] == 7 and released == [1, 1]
