"""``python -m experiments NAME``: one table of every runnable, one way to launch each."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from experiments import REPO_ROOT, launcher
from experiments.commands import COMMANDS
from tests import _import_graph as import_graph

PACKAGE = REPO_ROOT / "experiments"
# Children of the harness and of the corpus, started by file or module name;
# they are plumbing, not commands.
INTERNAL_SCRIPTS = {"experiments.harness.child", "experiments.corpus.xla_verdicts",
                    "experiments.__main__"}
SWEEP_DECLARATIONS = ["SIZE", "PARAMS", "METRICS", "BACKENDS", "DEFAULT_CAP_GB", "add_arguments",
                      "configs", "run", "plot"]


def _functions(path: Path) -> set[str]:
    return {node.name for node in ast.parse(path.read_text()).body
            if isinstance(node, ast.FunctionDef)}


def _env() -> dict[str, str]:
    import exla

    return dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH=os.pathsep.join(
        [str(REPO_ROOT), str(Path(exla.__file__).resolve().parents[1])]))


def test_every_runnable_is_a_command_of_its_own_name():
    modules = import_graph.modules(PACKAGE)
    runnable = {name for name, path in modules.items() if "main" in _functions(path)}
    runnable -= {"experiments.launcher", "experiments.sweep_command"} | INTERNAL_SCRIPTS
    assert runnable == {c.module for c in COMMANDS.values() if not c.sweep}
    assert all(c.module.rpartition(".")[2] == name for name, c in COMMANDS.items()
               if name != "report")


@pytest.mark.parametrize("name", sorted(n for n, c in COMMANDS.items() if c.sweep))
def test_a_sweep_declares_what_its_command_line_needs(name):
    import importlib

    module = importlib.import_module(COMMANDS[name].module)
    assert [d for d in SWEEP_DECLARATIONS if not hasattr(module, d)] == []
    assert not hasattr(module, "main")


def test_no_module_is_run_as_a_script_but_the_internal_ones():
    scripts = {name for name, path in import_graph.modules(PACKAGE).items()
               if "if __name__ ==" in path.read_text()}
    assert scripts <= INTERNAL_SCRIPTS


def test_help_lists_every_command_once_with_one_line(capsys):
    assert launcher.main(["--help"]) == 0
    lines = capsys.readouterr().out.splitlines()
    for name, command in COMMANDS.items():
        (line,) = [l for l in lines if l.split()[:1] == [name]]
        assert command.summary() and command.summary() in line


def test_an_unknown_name_is_refused_with_the_list(capsys):
    assert launcher.main(["kernel_matrix"]) == 2
    err = capsys.readouterr().err
    assert "no command 'kernel_matrix'" in err and "kernel_matvec" in err


def test_gpu_check_is_launched_without_the_harness_or_tensorflow():
    code = ("import json, sys\nfrom experiments import launcher\ntry:\n"
            "    launcher.main(['gpu_check', '--help'])\nexcept SystemExit:\n    pass\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('tensorflow', 'matplotlib') or m.startswith(('experiments.harness', "
            "'experiments.report', 'experiments.sweep_command')))))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, env=_env(),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "python -m experiments gpu_check" in done.stdout  # its own --help ran
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


def test_a_sweep_gets_the_common_options_and_its_own():
    done = subprocess.run([sys.executable, "-m", "experiments", "kernel_matvec", "--help"],
                          cwd=REPO_ROOT, env=_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "usage: python -m experiments kernel_matvec" in done.stdout
    for option in ("--smoke", "--cap-gb", "--results-dir", "--limits", "--memory-limits",
                   "--sizes", "--large"):
        assert option in done.stdout
