"""exla's experiments: the paper's workloads measured against the alternatives.

Run ``python -m experiments <name> [--smoke] [options]``; see README.md.
"""

EXPERIMENTS = {
    "kernel_matvec": "experiments.kernel_matvec",
    "sgpr": "experiments.sgpr",
    "knn": "experiments.knn",
}
