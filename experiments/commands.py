"""The commands of ``python -m experiments NAME``: the one table of them.

Each is a module with ``main(argv)``, or a sweep: a workload that declares its
configurations instead (experiments/sweep_command.py runs it). The launcher
dispatches from this table, and the report takes the sweeps from it, in its
order. Modules are named, not imported: a command's module is imported only
when it runs.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib.util

__all__ = ["Command", "COMMANDS"]


@dataclasses.dataclass(frozen=True)
class Command:
    """A command: its module, and whether it is a sweep (run by experiments.sweep_command)."""

    module: str
    sweep: bool = False

    @property
    def part(self) -> str:
        """The part of experiments/ it belongs to: workloads, tools, fuzzing, report."""
        return self.module.split(".")[1]

    def summary(self) -> str:
        """The first line of its module's docstring, read without importing the module."""
        path = importlib.util.find_spec(self.module).origin
        with open(path) as source:
            doc = ast.get_docstring(ast.parse(source.read())) or ""
        return doc.splitlines()[0] if doc else ""


def _commands(part: str, names: str, sweep: bool = False) -> dict[str, Command]:
    """The modules ``names`` of ``part``, each a command of its own name."""
    return {name: Command(f"experiments.{part}.{name}", sweep) for name in names.split()}


COMMANDS: dict[str, Command] = {
    **_commands("workloads", "kernel_matvec sgpr sgpr_scale knn knn_split transformer wide_mlp "
                "jax_kernel_matvec jax_wide_mlp jax_sharded", sweep=True),
    **_commands("workloads", "attention memory_limit knn_keops sgpr_floor bench_splitter overhead "
                "jax_overhead gpu_check"),
    **_commands("tools", "calibrate_cost cost_rank memory_model corpus_report optimizer_replay "
                "noop_run mutation_score"),
    **_commands("fuzzing", "fuzz fuzz_mutate heldout_corpus"),
    "report": Command("experiments.report"),
}
"""Every command, by name; the sweeps' order is RESULTS.md's."""
