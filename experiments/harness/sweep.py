"""The grid of configurations most experiments run: sizes × backends × exla's limits.

Only the ``exla`` backend takes a limit; every other backend runs once per
size, with an empty ``limit``. exla's limits are of two kinds (the
``limit_kind`` column, see :class:`experiments.harness.backends.Limit`):

* ``--limits SIZE...``: per-tensor thresholds (``--xla_tensor_size_threshold``),
  each with the experiment's split size for it (``--xla_tensor_split_size``);
* ``--memory-limits SIZE...``: XLA's planned peak of the whole program
  (``--xla_memory_limit``).

Without ``--limits``, the experiment's default thresholds run, unless memory
limits were asked for: then only those. Keeping the grid here gives every
experiment (and each one's JAX twin) the same columns and the same split sizes.
"""

from __future__ import annotations

import argparse
from typing import Any, Iterable, Mapping

__all__ = ["add_limit_arguments", "exla_limits", "grid"]


def add_limit_arguments(parser: argparse.ArgumentParser, default_limits: Iterable[str]) -> None:
    """The options that choose exla's limits (every experiment with an ``exla`` backend)."""
    parser.add_argument("--limits", nargs="+", metavar="SIZE",
                        help="exla's per-tensor thresholds, --xla_tensor_size_threshold "
                             f"(default: {' '.join(default_limits) or 'none'}, unless "
                             "--memory-limits)")
    parser.add_argument("--memory-limits", nargs="+", metavar="SIZE", default=[],
                        help="exla's limits on the whole program's planned peak, "
                             "--xla_memory_limit")


def exla_limits(args: argparse.Namespace, thresholds: Iterable[str],
                split_size: Mapping[str, str]) -> list[dict[str, str]]:
    """exla's limits for a run: ``limit``, ``limit_kind`` and ``split_size`` of each.

    ``thresholds`` are the experiment's defaults (its smoke thresholds with
    ``--smoke``); ``split_size`` maps a threshold to the split size it runs with.

    >>> ns = argparse.Namespace(limits=None, memory_limits=["3GB"])
    >>> exla_limits(ns, ["200MB"], {"200MB": "20MB"})
    [{'limit': '3GB', 'limit_kind': 'memory', 'split_size': ''}]
    >>> ns = argparse.Namespace(limits=["1GB"], memory_limits=["3GB"])
    >>> [(l["limit"], l["limit_kind"], l["split_size"]) for l in exla_limits(ns, [], {"1GB": "100MB"})]
    [('1GB', 'threshold', '100MB'), ('3GB', 'memory', '')]
    """
    memory = list(getattr(args, "memory_limits", None) or [])
    chosen = getattr(args, "limits", None)
    thresholds = list(chosen) if chosen is not None else ([] if memory else list(thresholds))
    out = [{"limit": t, "limit_kind": "threshold", "split_size": split_size.get(t, "")}
           for t in thresholds]
    return out + [{"limit": m, "limit_kind": "memory", "split_size": ""} for m in memory]


def grid(args: argparse.Namespace, size_key: str, sizes: Iterable[int], limits: Iterable[str],
         split_size: Mapping[str, str], **fixed: Any) -> list[dict[str, Any]]:
    """One configuration per size, backend (``args.backends``) and, for exla, limit.

    ``limits`` are the experiment's default thresholds (see :func:`exla_limits`);
    ``fixed`` holds the parameters every configuration shares (the feature
    dimension, the batch size...). ``split_size`` maps a threshold to the split
    size exla is given with it (empty: exla's default).

    >>> ns = argparse.Namespace(backends=["tf", "exla"], repeats=3)
    >>> [(c["backend"], c["n"], c["limit"]) for c in grid(ns, "n", [10], ["1MB", "1GB"], {})]
    [('tf', 10, ''), ('exla', 10, '1MB'), ('exla', 10, '1GB')]
    """
    plain = [{"limit": "", "limit_kind": "", "split_size": ""}]
    exla = exla_limits(args, limits, split_size)
    return [{"backend": backend, size_key: size, **fixed, **limit, "repeats": args.repeats}
            for size in sizes for backend in args.backends
            for limit in (exla if backend == "exla" else plain)]
