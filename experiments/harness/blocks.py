"""Blocked reference computations that stay small next to what is measured.

The peak memory of a child process covers everything it does, its reference
computation included, so every reference works over blocks whose temporaries
stay near :data:`BUDGET_BYTES`.
"""

from __future__ import annotations

from typing import Iterator

__all__ = ["BUDGET_BYTES", "block_slices"]

BUDGET_BYTES = 32 * 2**20


def block_slices(total: int, bytes_per_item: int,
                 budget_bytes: int = BUDGET_BYTES) -> Iterator[slice]:
    """Consecutive slices of ``range(total)`` of at most ``budget_bytes // bytes_per_item`` items."""
    step = max(1, budget_bytes // max(1, bytes_per_item))
    for start in range(0, total, step):
        yield slice(start, min(total, start + step))
