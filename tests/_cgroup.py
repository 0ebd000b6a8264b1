"""Tests that need a memory cgroup: the ``needs_cgroup`` marker.

A hard memory cap that TensorFlow cannot escape needs a cgroup (an
address-space limit is no cap on it). Where none can be created (no
permission, no cgroup filesystem, as on some CI machines) such a test is
skipped, but never silently: only a test marked ``needs_cgroup`` may skip
for that (tests/conftest.py skips them), an unmarked one that asks fails
under ``EXLA_REQUIRE_EXTENSION`` (CI), and the run's summary counts the skips.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest

from tests._extension import extension_required

__all__ = ["cgroup_available", "skip_without_cgroup", "skipped"]

MARKER = "needs_cgroup"
_skipped: list[str] = []


@functools.lru_cache(maxsize=None)
def cgroup_available() -> bool:
    """Whether this process can create (and remove) a memory cgroup."""
    from exla.memory_cap import make_cgroup

    probe = make_cgroup(64 * 2**20)
    if probe is None:
        return False
    probe.remove()
    return True


def skip_without_cgroup(node: Any) -> None:
    """Skips the test ``node`` where no memory cgroup can be created (fails: see the module)."""
    if cgroup_available():
        return
    if node.get_closest_marker(MARKER) is None and extension_required():
        pytest.fail(f"{node.nodeid} needs a memory cgroup and none can be created here; under "
                    f"EXLA_REQUIRE_EXTENSION only a test marked {MARKER} may skip for that")
    _skipped.append(node.nodeid)
    pytest.skip(f"no memory cgroup can be created here ({MARKER})")


def skipped() -> list[str]:
    """The tests skipped so far for want of a cgroup."""
    return list(_skipped)
