"""The grid of configurations most experiments run: sizes × backends × exla's limits.

Only the ``exla`` backend takes a size threshold; every other backend runs once
per size, with an empty ``limit``. Keeping the grid here gives every experiment
(and each one's JAX twin) the same column names and the same split sizes.
"""

from __future__ import annotations

import argparse
from typing import Any, Iterable, Mapping

__all__ = ["grid"]


def grid(args: argparse.Namespace, size_key: str, sizes: Iterable[int], limits: Iterable[str],
         split_size: Mapping[str, str], **fixed: Any) -> list[dict[str, Any]]:
    """One configuration per size, backend (``args.backends``) and, for exla, limit.

    ``fixed`` holds the parameters every configuration shares (the feature
    dimension, the batch size...). ``split_size`` maps a limit to the split size
    exla is given with it (empty: exla's default).

    >>> ns = argparse.Namespace(backends=["tf", "exla"], repeats=3)
    >>> [(c["backend"], c["n"], c["limit"]) for c in grid(ns, "n", [10], ["1MB", "1GB"], {})]
    [('tf', 10, ''), ('exla', 10, '1MB'), ('exla', 10, '1GB')]
    """
    limits = list(limits)
    return [{"backend": backend, size_key: size, **fixed, "limit": limit,
             "split_size": split_size.get(limit, ""), "repeats": args.repeats}
            for size in sizes for backend in args.backends
            for limit in (limits if backend == "exla" else [""])]
