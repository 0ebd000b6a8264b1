"""exla's experiments: the paper's workloads measured against the alternatives.

Run ``python -m experiments NAME [options]`` (``--help`` lists the names);
see README.md. The parts, lowest first: this package's paths; corpus/ (real
programs as HLO) and harness/ (capped children, CSV rows, plots); workloads/,
tools/ and fuzzing/; report.py (RESULTS.md); the command line (commands.py, the
table; sweep_command.py; launcher.py). tests/experiments/test_imports.py keeps imports pointing
down.
"""

import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = REPO_ROOT / "experiments" / "results"
"""Where every experiment and tool writes its results, and the report reads them."""


def exla_source_paths() -> list[str]:
    """Where experiments (and their children) import exla from.

    The checkout's `python/` when its extension has been built in place
    (`setup.py build_ext --inplace`); otherwise nothing, so that the installed
    package is used (`pip install .`), whose extension is built.
    """
    source = REPO_ROOT / "python"
    return [str(source)] if any((source / "exla").glob("_exla*.so")) else []


def prefer_checkout_exla() -> None:
    """Puts :func:`exla_source_paths` first on ``sys.path`` (once), before exla is imported."""
    sys.path[:0] = [path for path in exla_source_paths() if path not in sys.path]

