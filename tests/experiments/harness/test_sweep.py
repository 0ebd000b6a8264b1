"""experiments.harness.sweep: which exla limits an experiment's options give."""

from __future__ import annotations

import argparse

import pytest

from experiments.harness import sweep

_SPLIT = {"200MB": "20MB"}


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backends", nargs="+", default=["tf", "exla"])
    parser.add_argument("--repeats", type=int, default=1)
    sweep.add_limit_arguments(parser, ["200MB"])
    return parser.parse_args(argv)


def _limits(*argv: str) -> list[tuple[str, str, str]]:
    return [(c["limit"], c["limit_kind"], c["split_size"])
            for c in sweep.grid(_args(*argv), "m", [100], ["200MB"], _SPLIT)]


@pytest.mark.parametrize("argv, expected", [
    ((), [("", "", ""), ("200MB", "threshold", "20MB")]),
    (("--memory-limits", "3GB"), [("", "", ""), ("3GB", "memory", "")]),
    (("--limits", "200MB", "--memory-limits", "3GB"),
     [("", "", ""), ("200MB", "threshold", "20MB"), ("3GB", "memory", "")]),
    (("--limits", "1GB", "--backends", "exla"), [("1GB", "threshold", "")]),
])
def test_memory_limits_replace_the_default_thresholds_not_explicit_ones(argv, expected):
    assert _limits(*argv) == expected


def test_every_configuration_has_the_same_columns():
    configs = sweep.grid(_args("--memory-limits", "1GB", "2GB"), "n", [10, 20], ["200MB"],
                         _SPLIT, d=3)
    assert len(configs) == 2 * 3
    assert len({tuple(c) for c in configs}) == 1
