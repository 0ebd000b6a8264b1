"""exla's experiments: the paper's workloads measured against the alternatives.

Run ``python -m experiments <name> [--smoke] [options]``; see README.md.
"""

import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


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


EXPERIMENTS = {
    "kernel_matvec": "experiments.kernel_matvec",
    "sgpr": "experiments.sgpr",
    "sgpr_scale": "experiments.sgpr_scale",
    "knn": "experiments.knn",
    "knn_split": "experiments.knn_split",
    "transformer": "experiments.transformer",
    "wide_mlp": "experiments.wide_mlp",
    "jax_kernel_matvec": "experiments.jax_kernel_matvec",
    "jax_wide_mlp": "experiments.jax_wide_mlp",
    "jax_sharded": "experiments.jax_sharded",
}
