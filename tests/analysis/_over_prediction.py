"""The over-prediction bound both memory model tests hold the model to."""

from __future__ import annotations

from typing import Callable, Sequence


def assert_bounded(comparisons: Sequence, max_ratio: float,
                   over_predicted: dict[str, tuple[float, str]],
                   summary: Callable[[Sequence], str]) -> None:
    """No module above ``max_ratio`` but the programs of ``over_predicted``,
    each under its own bound; and no exception that no module needs, so that
    one bounds nothing unseen."""
    bound = {name: limit for name, (limit, _) in over_predicted.items()}
    over = [c for c in comparisons if c.ratio > bound.get(c.module.program, max_ratio)]
    assert not over, summary(over)
    needed = {c.module.program for c in comparisons if c.ratio > max_ratio}
    assert needed == set(over_predicted), (needed, set(over_predicted))
