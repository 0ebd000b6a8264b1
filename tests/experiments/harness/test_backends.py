"""experiments.harness.backends: exla's limits as the flags and keywords a user gives."""

from __future__ import annotations

import pytest

from experiments.harness import backends


def test_each_kind_of_limit_reaches_exla_by_its_own_flag(monkeypatch):
    monkeypatch.setenv("EXLA_EXPERIMENT_PATH", "flags")
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_enable_fast_math=false")
    memory = backends.limit_of({"limit": "3GB", "limit_kind": "memory", "split_size": ""})
    assert backends.flags_env(memory)["XLA_FLAGS"] == (
        "--xla_cpu_enable_fast_math=false --xla_memory_limit=3GB")
    threshold = backends.limit_of({"limit": "200MB", "split_size": "20MB"})
    assert backends.flags_env(threshold, fast_math=True)["XLA_FLAGS"] == (
        "--xla_cpu_enable_fast_math=false --xla_tensor_size_threshold=200MB "
        "--xla_tensor_split_size=20MB --exla_fast_math")
    assert "XLA_FLAGS" not in backends.flags_env(None)
    assert memory.keywords() == {"memory_limit": "3GB"}


def test_an_unknown_kind_of_limit_is_refused():
    with pytest.raises(ValueError, match="limit kind 'peak'"):
        backends.limit_of({"limit": "1GB", "limit_kind": "peak"})
