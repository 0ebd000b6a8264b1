"""The examples in the experiments harness's docstrings run and give what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize("name", ["experiments.harness.backends", "experiments.harness.plots",
                                  "experiments.harness.executed", "experiments.harness.tables",
                                  "experiments.harness.headline",
                                  "experiments.harness.sweep", "experiments.workloads.sgpr_floor",
                                  "experiments.tools.noop_run", "experiments.tools.mutation_score"])
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0
